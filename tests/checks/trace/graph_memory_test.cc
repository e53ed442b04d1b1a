// graph-memory: sequential graphs captured into separate private pools are reported with what one shared pool would
// save; the same graphs sharing a pool, small pools, and captures the probe did not see (no pools known) are not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "tests/checks/trace/probe_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr uint64_t kMiB = 1024 * 1024;

// `pools[i]`: the pool of capture i (0: the probe did not see it); each capture allocates `mib[i]` MiB and, when
// `left_mib` is given, leaves `left_mib[i]` MiB of it allocated at its end (format 1.5's capture-end event).
trace::Trace Captures(const std::vector<uint64_t>& pools, const std::vector<uint64_t>& mib,
                      const std::vector<uint64_t>& left_mib = {}) {
  constexpr uint64_t kAllocatedBefore = 1024 * kMiB;  // the program's own tensors, allocated before any capture
  uint64_t allocated = kAllocatedBefore;
  TraceBuilder b;
  uint64_t t = 1000;
  for (size_t i = 0; i < pools.size(); ++i, t += 10000) {
    const uint64_t graph = kGraph + i;
    if (pools[i] != 0) {
      b.Probe(t, 1, ProbeEventKind::kCaptureBegin, graph, ProbeOrigin::kUser).stack = TrainPyStack(b, 10 + i);
    }
    b.Begin(t + 100, 1, kStream);
    ApiCall& malloc = b.Call(t + 200, 1, "cudaMalloc", ApiKind::kMalloc);
    malloc.bytes = mib[i] * kMiB;
    TraceBuilder::In(b.Launch(t + 300, 1, kStream, "gemm"), kCaptureId + i);
    b.End(t + 400, 1, kStream, kCaptureId + i, 0, 1);
    if (pools[i] == 0) continue;
    trace::ProbeEvent& end = b.Probe(t + 500, 1, ProbeEventKind::kCaptureEnd, graph);
    end.pool = pools[i];
    if (!left_mib.empty()) {
      end.value_now = allocated;
      allocated += left_mib[i] * kMiB;
      end.value = allocated;
    }
  }
  return b.Build();
}

TEST(GraphMemoryTest, SequentialGraphsInPrivatePoolsAreReported) {
  const std::vector<Finding> findings = RunCheck(checks::NewGraphMemoryCheck(), Captures({1, 2, 3}, {300, 100, 200}));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "graph-memory");
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_THAT(findings[0].message, HasSubstr("3 graphs were captured into 3 private memory pools that hold 600 MiB in "
                                             "all; captured one after another, they could share one pool and hold "
                                             "as little as 300 MiB: up to 300 MiB avoidable."));
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("pool 1: 1 graph, 300 MiB allocated during their captures "
                                                 "(captured at /home/me/train.py:10 in body)"));
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 10u);
  EXPECT_THAT(findings[0].fix, HasSubstr("pool=g1.pool()"));
}

// The H100 case of tests/gpu/programs/probe_cases.py: private pools of 98, 64 and 64 MiB, each graph keeping its
// 32 MiB output (the first also a 34 MiB cuBLAS workspace). One pool holds what the earlier graphs left plus what the
// next capture needs: 162 MiB, as torch.cuda.memory._snapshot showed there.
TEST(GraphMemoryTest, SharedPoolKeepsWhatEarlierCapturesLeftAllocated) {
  const std::vector<Finding> findings =
      RunCheck(checks::NewGraphMemoryCheck(), Captures({1, 2, 3}, {98, 64, 64}, {66, 32, 32}));
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("hold 226 MiB in all; captured one after another, they could share one "
                                             "pool and hold about 162 MiB: 64 MiB avoidable."));
  // Graphs that keep most of what they allocate gain little from sharing: 600 MiB private, 540 MiB shared.
  EXPECT_THAT(RunCheck(checks::NewGraphMemoryCheck(), Captures({1, 2, 3}, {300, 100, 200}, {250, 90, 0})), IsEmpty());
}

TEST(GraphMemoryTest, GraphsSharingAPoolAreClean) {
  EXPECT_THAT(RunCheck(checks::NewGraphMemoryCheck(), Captures({5, 5, 5}, {300, 100, 200})), IsEmpty());
}

TEST(GraphMemoryTest, SmallSavingsAndUnknownPoolsAreNotReported) {
  EXPECT_THAT(RunCheck(checks::NewGraphMemoryCheck(), Captures({1, 2}, {100, 20})), IsEmpty());  // 20 < 64 MiB
  EXPECT_THAT(RunCheck(checks::NewGraphMemoryCheck(), Captures({0, 0, 0}, {300, 100, 200})), IsEmpty());
  CheckOptions options;
  options.Set("graph-memory", "min-avoidable-mib", "10");
  EXPECT_THAT(RunCheck(checks::NewGraphMemoryCheck(), Captures({1, 2}, {100, 20}), options), SizeIs(1));
}

}  // namespace
}  // namespace graphcheck::testing_trace
