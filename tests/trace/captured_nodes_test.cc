// The join of replayed kernels to the capture-time launches of their graph nodes (trace/captured_nodes.h): on built
// traces (kernels of one name captured twice, a lost record, records past a launch-recording window that carry another
// graph's launch) and on the shipped graphed_training trace, recorded on an H200.
#include "trace/captured_nodes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "trace/trace_reader.h"

namespace graphcheck::trace {
namespace {

constexpr uint64_t kNodeBase = uint64_t{2} << 32;  // graph 2's node ids, as CUPTI numbers an instantiated graph's

class GraphedTrace {
 public:
  // A capture (id 1) on stream 9 that launches `kernels` (a memset where a name is "memset"), ending in graph 1.
  explicit GraphedTrace(const std::vector<std::string>& kernels) {
    Call(ApiKind::kCaptureBegin, "cudaStreamBeginCapture");
    for (const std::string& kernel : kernels) {
      if (kernel == "memset") {
        Call(ApiKind::kMemsetAsync, "cudaMemsetAsync");
      } else {
        launches_.push_back(trace_.api_calls.size());
        Call(ApiKind::kKernelLaunch, "cudaLaunchKernel", kernel);
      }
    }
    Call(ApiKind::kCaptureEnd, "cudaStreamEndCapture", "", /*graph=*/1);
  }
  // A launch of graph 1; returns its correlation id.
  uint64_t Replay() {
    const uint64_t correlation = next_correlation_;
    Call(ApiKind::kGraphLaunch, "cudaGraphLaunch", "", /*graph=*/1, /*capturing=*/false);
    return correlation;
  }
  // A kernel record of graph 2 (the instantiated copy), node `index`, under launch `correlation`.
  void Kernel(const std::string& name, uint64_t correlation, uint64_t index) {
    KernelRecord k;
    k.name = trace_.Intern(name);
    k.correlation_id = correlation;
    k.start_ns = k.end_ns = ++now_;
    k.stream_id = 7;
    k.graph_id = 2;
    k.graph_node_id = kNodeBase + index;
    trace_.AddKernel(k);
  }
  size_t launch(size_t i) const { return launches_[i]; }
  Trace& trace() { return trace_; }

 private:
  void Call(ApiKind kind, const char* name, const std::string& kernel = "", uint32_t graph = 0, bool capturing = true) {
    ApiCallRecord record;
    record.name = trace_.Intern(name);
    record.kind = kind;
    record.start_ns = record.end_ns = ++now_;
    record.correlation_id = next_correlation_++;
    record.stream_id = kind == ApiKind::kGraphLaunch ? 7 : 9;
    if (capturing) {
      record.capture_status = CaptureStatus::kActive;
      record.capture_id = 1;
    }
    if (!kernel.empty()) record.kernel_name = trace_.Intern(kernel);
    record.graph_id = graph;
    trace_.AddCall(record);
  }
  Trace trace_;
  std::vector<size_t> launches_;
  uint64_t now_ = 1000;
  uint64_t next_correlation_ = 100;
};

TEST(CapturedNodesTest, PairsEachReplayedNodeWithItsCaptureTimeLaunch) {
  // Nodes 0 (gemm), 1 (relu), 2 (the memset), 3 (gemm again): the two gemms pair by their order.
  GraphedTrace t({"gemm", "relu", "memset", "gemm"});
  for (int replay = 0; replay < 2; ++replay) {
    const uint64_t launch = t.Replay();
    for (const auto& [name, index] :
         std::vector<std::pair<std::string, uint64_t>>{{"gemm", 0}, {"relu", 1}, {"gemm", 3}}) {
      t.Kernel(name, launch, index);
    }
  }
  const CapturedNodes nodes(t.trace());
  ASSERT_EQ(t.trace().kernels.size(), 6u);
  for (size_t replay = 0; replay < 2; ++replay) {
    EXPECT_EQ(nodes.LaunchOf(t.trace().kernels[3 * replay]), t.launch(0));
    EXPECT_EQ(nodes.LaunchOf(t.trace().kernels[3 * replay + 1]), t.launch(1));
    EXPECT_EQ(nodes.LaunchOf(t.trace().kernels[3 * replay + 2]), t.launch(2));
  }
  EXPECT_EQ(nodes.attributed_nodes(), 3u);
}

TEST(CapturedNodesTest, LeavesANameWhoseCountsDifferUnattributed) {
  // The records lost the second gemm's node: which gemm node is which is not known, and none is guessed.
  GraphedTrace t({"gemm", "relu", "gemm"});
  const uint64_t launch = t.Replay();
  t.Kernel("gemm", launch, 0);
  t.Kernel("relu", launch, 1);
  const CapturedNodes nodes(t.trace());
  EXPECT_EQ(nodes.LaunchOf(t.trace().kernels[0]), std::nullopt);
  EXPECT_EQ(nodes.LaunchOf(t.trace().kernels[1]), t.launch(1));
}

TEST(CapturedNodesTest, AnEagerKernelHasNoCaptureTimeLaunch) {
  GraphedTrace t({"gemm"});
  KernelRecord eager;
  eager.name = t.trace().Intern("gemm");
  eager.correlation_id = 5;
  t.trace().AddKernel(eager);
  EXPECT_EQ(CapturedNodes(t.trace()).LaunchOf(t.trace().kernels[0]), std::nullopt);
}

TEST(CapturedNodesTest, WhichCaptureAGraphCopiesIsReadFromItsFirstRecord) {
  // Records past a launch-recording window carry the last recorded launch's correlation id, here an unknown one.
  GraphedTrace t({"gemm"});
  const uint64_t launch = t.Replay();
  t.Kernel("gemm", launch, 0);
  t.Kernel("gemm", /*correlation=*/9999, 0);
  const CapturedNodes nodes(t.trace());
  EXPECT_EQ(nodes.LaunchOf(t.trace().kernels[1]), t.launch(0));
}

// examples/traces/graphed_training (an H200): captured graph 1 ran as graph 2; its 28 kernel nodes, replayed 10 times,
// each pair with a launch of the capture, the first with the capture's first launch (correlation 266).
TEST(CapturedNodesTest, TheShippedGraphedTrainingTraceIsAttributedKernelByKernel) {
  absl::StatusOr<Trace> trace =
      ReadTrace(std::string(GRAPHCHECK_SOURCE_DIR) + "/examples/traces/graphed_training/trace.gctrace");
  ASSERT_TRUE(trace.ok()) << trace.status();
  const CapturedNodes nodes(*trace);
  EXPECT_EQ(nodes.attributed_nodes(), 28u);
  size_t replayed = 0;
  for (const KernelActivity& kernel : trace->kernels) {
    if (kernel.graph_id == 0) continue;
    ++replayed;
    const std::optional<size_t> launch = nodes.LaunchOf(kernel);
    ASSERT_TRUE(launch.has_value());
    const ApiCall& call = trace->api_calls[*launch];
    EXPECT_EQ(trace->String(trace->Detail(call).kernel_name), trace->String(trace->Shape(kernel).name));
    EXPECT_EQ(call.capture_status, CaptureStatus::kActive);
    if (replayed == 1) EXPECT_EQ(call.correlation_id, 266u);
  }
  EXPECT_EQ(replayed, 280u);
}

}  // namespace
}  // namespace graphcheck::trace
