// The capture contract's test traces: the program's capture of one graph with its manifest and the probe's names for
// the memory it uses (the contract checks' tests: grad_aliases_graph_test.cc, state_made_in_capture_test.cc, ...).
#ifndef GRAPHCHECK_TESTS_CHECKS_TRACE_CONTRACT_TEST_UTIL_H_
#define GRAPHCHECK_TESTS_CHECKS_TRACE_CONTRACT_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "tests/checks/trace/probe_test_util.h"

namespace graphcheck::testing_trace {

inline constexpr uint64_t kCudaGraph = 55;
inline constexpr uint64_t kWeight = 0x7f0000100000;
inline constexpr uint64_t kBuffer = 0x7f0000200000;
inline constexpr uint64_t kPoolSegment = 0x7f0000800000;

inline uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// The program's capture (Python graph kGraph, CUDA graph kCudaGraph) at train.py:12, its manifest naming a weight, a
// buffer and an address of its pool, and the probe's names for them.
inline void Capture(TraceBuilder& b, ProbeOrigin origin = ProbeOrigin::kUser) {
  b.Probe(900, 1, ProbeEventKind::kCaptureBegin, kGraph, origin).stack = TrainPyStack(b, 12);
  b.Begin(1000, 1, kStream);
  TraceBuilder::In(b.Launch(2000, 1, kStream, "gemm"), kCaptureId);
  b.End(3000, 1, kStream, kCaptureId, 0, 1).graph_id = kCudaGraph;
  b.Probe(3500, 1, ProbeEventKind::kCaptureEnd, kGraph);
  trace::ProbeEvent& tensors = b.Probe(3600, 1, ProbeEventKind::kGraphTensors, kGraph, origin);
  tensors.text = b.Intern(
      "parameter\tmodel.fc.weight\t7f0000100000\t40000\n"
      "buffer\tmodel.buf\t7f0000200000\t400\n"
      "pool\t\t7f0000800000\t200000\n");
  tensors.value = 3;
  tensors.value_now = 2;
  trace::GraphManifest& manifest = b.trace().graph_manifests.emplace_back();
  manifest.graph_id = kCudaGraph;
  manifest.time_ns = 3000;
  manifest.kernel_nodes = 1;
  manifest.uses = {{trace::GraphMemoryUse::Access::kArgument, kWeight, 0},
                   {trace::GraphMemoryUse::Access::kArgument, kBuffer + 0x10, 0},
                   {trace::GraphMemoryUse::Access::kArgument, kPoolSegment + 0x100, 0},
                   {trace::GraphMemoryUse::Access::kArgument, 0x7f0000500000, 0}};
}

inline void Allocation(TraceBuilder& b, uint64_t t, trace::AllocatorEvent::Action action, uint64_t address,
                       uint64_t bytes) {
  b.trace().allocations.push_back({action, 0, t, address, bytes});
}

inline std::vector<Finding> Findings(std::unique_ptr<Check> check, TraceBuilder& b) {
  return RunCheck(*check, b.Build());
}

}  // namespace graphcheck::testing_trace

#endif  // GRAPHCHECK_TESTS_CHECKS_TRACE_CONTRACT_TEST_UTIL_H_
