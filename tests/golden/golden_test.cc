// Golden tests: every tests/golden/<name>.trace.json fixture is analyzed with all built-in checks and the result, in
// the text form of golden_trace.h, must equal tests/golden/<name>.expected.txt. GRAPHCHECK_UPDATE_GOLDEN=1 rewrites
// the expected files instead (review the diff before committing it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/catalog.h"
#include "core/registry.h"
#include "tests/golden/golden_trace.h"

namespace graphcheck::golden {
namespace {

const std::filesystem::path kDir = std::filesystem::path(GRAPHCHECK_SOURCE_DIR) / "tests" / "golden";

std::vector<std::string> FixtureNames() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".trace.json";
    if (file.size() > suffix.size() && file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0) {
      names.push_back(file.substr(0, file.size() - suffix.size()));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, MatchesExpected) {
  const std::filesystem::path fixture = kDir / (GetParam() + ".trace.json");
  const std::filesystem::path expected_path = kDir / (GetParam() + ".expected.txt");
  const Fixture f = FixtureLoader().Load(nlohmann::json::parse(Slurp(fixture)));
  checks::AnalysisResult result = checks::AnalyzeTraces({&f.trace}, f.has_stderr ? &f.stderr_lines : nullptr,
                                                        BuiltinChecks(), CheckSelection(), CheckOptions());
  SortFindings(&result.findings);  // in report order, as FinishReport (report/finish.h) puts every report's findings
  const std::string actual = ExpectedText(result);
  if (const char* update = std::getenv("GRAPHCHECK_UPDATE_GOLDEN"); update != nullptr && std::string(update) == "1") {
    std::ofstream(expected_path) << actual;
    GTEST_SKIP() << "rewrote " << expected_path;
  }
  ASSERT_TRUE(std::filesystem::exists(expected_path))
      << expected_path << " is missing; run with GRAPHCHECK_UPDATE_GOLDEN=1 to create it";
  EXPECT_EQ(actual, Slurp(expected_path)) << "fixture " << fixture;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenTest, ::testing::ValuesIn(FixtureNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace graphcheck::golden
