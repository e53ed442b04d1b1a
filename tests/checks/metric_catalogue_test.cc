// The metric catalogue (core/metrics.h): names are unique and described, lookups see through a job's prefixes and
// suffixes, and every metric the analysis of the shipped traces reports is in it with its unit.
#include "core/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"

#include <filesystem>
#include <set>
#include <string>

#include "checks/analyze.h"
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
    const checks::AnalysisResult result =
        checks::AnalyzeTraces({&*trace}, nullptr, BuiltinChecks(), CheckSelection(), CheckOptions());
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
// Which way each metric improves is its catalogue entry's field (diff and --baseline read it, not the name): the
// speedups, the savings, the GPU utilization and the shares replayed from graphs improve upwards, everything else
// downwards. A new speedup or saving added without its direction fails here.
TEST(MetricCatalogueTest, EachMetricSaysWhichWayItImproves) {
  for (const metric::Spec* spec : metric::All()) {
    const std::string name = spec->name;
    const bool upwards = absl::StrContains(name, "speedup") || absl::StrContains(name, "savings") ||
                         absl::StrContains(name, "utilization") || absl::StartsWith(name, "coverage.graphed_");
    EXPECT_EQ(spec->better == metric::Better::kHigher, upwards) << name;
  }
  EXPECT_EQ(metric::Find("pid852.graphed.speedup"), &metric::kGraphedSpeedup);
  EXPECT_EQ(metric::Find("rank3.coverage.graphed_kernel_share.megatron"), &metric::kCoverageGraphedKernelShare);
  EXPECT_EQ(metric::Find("graphed.speedup.max"), &metric::kGraphedSpeedup);
  EXPECT_EQ(metric::Find("pidx.graphed.speedup"), nullptr);
}

}  // namespace graphcheck
