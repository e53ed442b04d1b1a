// The metric catalogue (core/metrics.h): names are unique and described, a metric's scope survives the name a report
// writes, and every metric the analysis of the shipped traces reports is in it with its unit.
#include "core/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"

#include <filesystem>
#include <set>
#include <string>

#include "checks/analyze.h"
#include "cli/catalog.h"
#include "core/json_fields.h"
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

// A metric's scope is its fields; the name a report writes spells it, and reading the name back gives the same fields.
TEST(MetricCatalogueTest, ScopesSurviveTheWrittenName) {
  Metric job_extreme = metric::kCoverageGraphedKernelShare.With(0.5);
  job_extreme.scope.origin = "make_graphed_callables";
  job_extreme.scope.extreme = MetricScope::Extreme::kMax;
  Metric process = metric::kLaunchIterationUs.With(812);
  process.scope.pid = 852;
  const Metric whole = metric::kLaunchIterationUs.With(812);
  EXPECT_EQ(job_extreme.ScopedName(), "coverage.graphed_kernel_share.make_graphed_callables.max");
  EXPECT_EQ(process.ScopedName(), "pid852.launch.iteration_us");
  EXPECT_EQ(whole.ScopedName(), "launch.iteration_us");
  for (const Metric& m : {job_extreme, process, whole}) {
    std::string name;
    MetricScope scope;
    metric::SplitScopedName(m.ScopedName(), &name, &scope);
    EXPECT_EQ(name, m.name) << m.ScopedName();
    EXPECT_TRUE(scope == m.scope) << m.ScopedName();
    EXPECT_EQ(metric::Find(m.ScopedName()), metric::Find(m.name)) << m.ScopedName();
    EXPECT_TRUE(MetricFromJson(MetricToJson(m)) == m) << m.ScopedName();
  }
  // A name the catalogue does not know keeps its dots: only a catalogued share takes a maker.
  std::string name;
  MetricScope scope;
  metric::SplitScopedName("custom.metric.part", &name, &scope);
  EXPECT_EQ(name, "custom.metric.part");
  EXPECT_TRUE(scope.Whole());
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
      const metric::Spec* spec = metric::Find(m.name);  // the catalogue's name: the scope is beside it
      ASSERT_NE(spec, nullptr) << m.name << " (" << path << ") is not in core/metrics.h";
      EXPECT_EQ(m.unit, spec->unit) << m.name;
      EXPECT_TRUE(m.scope.origin.empty() || spec->by_origin) << m.ScopedName() << ": a maker's share of a metric "
                                                             << "whose entry is not by_origin";
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
