// The inputs the fuzzers found (fuzz/corpus/trace/regression_*), read and analyzed as `graphcheck analyze` does: each
// once crashed, hung or allocated without bound, and must now analyze like any other damaged trace.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "checks/analyze.h"
#include "cli/catalog.h"
#include "trace/trace_reader.h"

namespace graphcheck {
namespace {

TEST(FuzzRegressionsTest, EveryFoundTraceAnalyzes) {
  size_t found = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GRAPHCHECK_SOURCE_DIR) + "/fuzz/corpus/trace")) {
    if (!absl::StartsWith(entry.path().filename().string(), "regression_")) continue;
    ++found;
    SCOPED_TRACE(entry.path().string());
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    absl::StatusOr<trace::Trace> trace = trace::ReadTraceFromBytes(bytes.str());
    if (!trace.ok()) continue;  // refused as not a trace: also fine
    const checks::AnalysisResult result =
        checks::AnalyzeTraces({&*trace}, nullptr, BuiltinChecks(), *CheckSelection::Parse(""), CheckOptions());
    EXPECT_FALSE(result.checks_run.empty());
  }
  EXPECT_GT(found, 0u);
}

}  // namespace
}  // namespace graphcheck
