// The metric catalogue (core/metrics.h): names are unique and described, lookups see through a job's prefixes and
// suffixes, and every metric the analysis of the shipped traces reports is in it with its unit.
#include "core/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "analyzers/analyze.h"
#include "cli/catalog.h"
#include "trace/trace_reader.h"

namespace graphcheck {
namespace {

TEST(MetricCatalogueTest, NamesAreUniqueAndDescribed) {
  std::set<std::string> names;
  for (const metric::Spec* spec : metric::All()) {
    EXPECT_TRUE(names.insert(spec->name).second) << spec->name << " listed twice";
    EXPECT_NE(std::string(spec->unit), "") << spec->name;
    EXPECT_NE(std::string(spec->description), "") << spec->name;
  }
}

TEST(MetricCatalogueTest, FindSeesThroughPrefixesAndSuffixes) {
  EXPECT_EQ(metric::Find("launch.iteration_us"), &metric::kLaunchIterationUs);
  EXPECT_EQ(metric::Find("pid4242.launch.iteration_us"), &metric::kLaunchIterationUs);
  EXPECT_EQ(metric::Find("launch.iteration_us.min"), &metric::kLaunchIterationUs);
  EXPECT_EQ(metric::Find("coverage.graphed_gpu_time_share.make_graphed_callables"),
            &metric::kCoverageGraphedGpuTimeShare);
  EXPECT_EQ(metric::Find("launch.no_such_metric"), nullptr);
}

TEST(MetricCatalogueTest, EveryMetricOfTheShippedTracesIsCatalogued) {
  size_t seen = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GRAPHCHECK_SOURCE_DIR) + "/examples/traces")) {
    const std::filesystem::path path = entry.path() / "trace.gctrace";
    if (!std::filesystem::exists(path)) continue;
    absl::StatusOr<trace::Trace> trace = trace::ReadTrace(path.string());
    ASSERT_TRUE(trace.ok()) << path << ": " << trace.status();
    const analyzers::AnalysisResult result =
        analyzers::AnalyzeTraces({&*trace}, nullptr, BuiltinChecks(), CheckSelection(), CheckOptions());
    for (const Metric& m : result.metrics) {
      const metric::Spec* spec = metric::Find(m.name);
      ASSERT_NE(spec, nullptr) << m.name << " (" << path << ") is not in core/metrics.h";
      EXPECT_EQ(m.unit, spec->unit) << m.name;
      ++seen;
    }
  }
  EXPECT_GT(seen, 20u);
}

}  // namespace
}  // namespace graphcheck
