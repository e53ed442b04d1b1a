// Shared by the trace format tests: realistic events for the writer, field-by-field equality, and a temporary folder.
#ifndef GRAPHCHECK_TESTS_CORE_TRACE_TEST_EVENTS_H_
#define GRAPHCHECK_TESTS_CORE_TRACE_TEST_EVENTS_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>

#include "trace/events.h"

namespace graphcheck::trace::testing {

// A kernel launch as the recorder sees it on a launch-bound step: ~7 us apart, a few us long.
inline ApiCallRecord LaunchCall(uint64_t i, StringId name, StringId kernel) {
  ApiCallRecord c;
  c.correlation_id = 1000 + i;
  c.start_ns = 1'700'000'000'000'000'000ull + i * 7'000;
  c.end_ns = c.start_ns + 3'500;
  c.thread_id = 4242;
  c.name = name;
  c.domain = ApiDomain::kRuntime;
  c.kind = ApiKind::kKernelLaunch;
  c.callback_id = 211;
  c.stream_id = 7;
  c.kernel_name = kernel;
  c.grid = {128, 1, 1};
  c.block = {256, 1, 1};
  return c;
}

inline KernelRecord KernelRun(uint64_t i, StringId name) {
  KernelRecord k;
  k.correlation_id = 1000 + i;
  k.start_ns = 1'700'000'000'000'010'000ull + i * 7'000;
  k.end_ns = k.start_ns + 5'000;
  k.device = 0;
  k.stream_id = 7;
  k.name = name;
  k.grid = {128, 1, 1};
  k.block = {256, 1, 1};
  return k;
}

// Every field set, to check that nothing is lost in the encoding.
inline ApiCallRecord FullApiCall() {
  ApiCallRecord c;
  c.correlation_id = 99;
  c.start_ns = 5'000;
  c.end_ns = 4'000;  // end before start must still round-trip
  c.thread_id = 0xfffffffe;
  c.name = 3;
  c.domain = ApiDomain::kDriver;
  c.kind = ApiKind::kContextCreate;
  c.callback_id = 4000;
  c.return_code = -901;
  c.stream_id = 0xfffffffe;  // CUPTI stream ids are 32-bit, and so is ApiCall::stream_id
  c.legacy_stream = true;
  c.capture_status = CaptureStatus::kInvalidated;
  c.capture_mode = CaptureMode::kRelaxed;
  c.capture_id = 77;
  c.backtrace = 1;
  c.python_stack = 1;
  c.bytes = uint64_t{1} << 40;
  c.direction = MemcpyDirection::kDefault;
  c.host_memory = HostMemory::kPinned;
  c.kernel_name = 2;
  c.grid = {1, 2, 3};
  c.block = {4, 5, 0xffffffff};
  c.graph_id = 12;
  c.node_count = 34;
  c.other_stream_id = 56;
  return c;
}

inline auto Fields(const ApiCallRecord& c) {
  return std::make_tuple(c.correlation_id, c.start_ns, c.end_ns, c.thread_id, c.name, c.domain, c.kind, c.callback_id,
                         c.return_code, c.stream_id, c.legacy_stream, c.capture_status, c.capture_mode, c.capture_id,
                         c.backtrace, c.bytes, c.direction, c.host_memory, c.kernel_name, c.grid, c.block, c.graph_id,
                         c.node_count, c.other_stream_id, c.python_stack);
}
inline auto Fields(const KernelRecord& k) {
  return std::make_tuple(k.correlation_id, k.start_ns, k.end_ns, k.device, k.stream_id, k.graph_id, k.graph_node_id,
                         k.name, k.grid, k.block);
}
inline auto Fields(const MemoryActivity& m) {
  return std::make_tuple(m.kind, m.correlation_id, m.start_ns, m.end_ns, m.device, m.stream_id, m.graph_id, m.bytes,
                         m.direction, m.host_memory);
}
inline auto Fields(const GraphLaunchActivity& g) {
  return std::make_tuple(g.correlation_id, g.start_ns, g.end_ns, g.device, g.stream_id, g.graph_id);
}
inline auto Fields(const ProbeEvent& p) {
  return std::make_tuple(p.kind, p.origin, p.thread_id, p.time_ns, p.graph, p.pool, p.value, p.type, p.text, p.stack,
                         p.value_now);
}
inline auto Fields(const ShadowComparison& c) {
  return std::make_tuple(c.thread_id, c.time_ns, c.module, c.module_type, c.call, c.name, c.dtype, c.precision, c.stack,
                         c.numel, c.max_abs_error, c.worst_index, c.eager_at_worst, c.graphed_at_worst, c.eager_abs_max,
                         c.eager_spread, c.eager_nonfinite, c.graphed_nonfinite, c.random, c.shadow_ns);
}
inline auto Fields(const Hang& h) {
  return std::make_tuple(h.thread_id, h.time_ns, h.since_ns, h.timeout_ns, h.call, h.stream_id, h.last_graph_id,
                         h.stack);
}
inline auto Fields(const NvtxEvent& n) {
  return std::make_tuple(n.kind, n.thread_id, n.time_ns, n.domain, n.message, n.range_id, n.communicator);
}
inline auto Fields(const ProcessInfo& p) {
  return std::make_tuple(p.pid, p.parent_pid, p.rank, p.local_rank, p.world_size, p.start_ns, p.hostname,
                         p.command_line);
}

inline ProcessInfo SampleProcess() {
  ProcessInfo p;
  p.pid = static_cast<uint32_t>(getpid());
  p.parent_pid = static_cast<uint32_t>(getppid());
  p.rank = 3;
  p.local_rank = 1;
  p.world_size = 8;
  p.start_ns = 123456789;
  p.hostname = "node-7";
  p.command_line = {"python", "train.py", "--name=\"quoted\""};
  return p;
}

// A fresh folder under the test temp dir, unique per test.
inline std::string TempDir() {
  std::string dir = ::testing::TempDir() + "trace_test_XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
  return dir;
}

// The bytes of a file written by a test.
inline std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace graphcheck::trace::testing

#endif  // GRAPHCHECK_TESTS_CORE_TRACE_TEST_EVENTS_H_
