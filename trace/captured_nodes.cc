#include "trace/captured_nodes.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"

namespace graphcheck::trace {
namespace {

using GraphKernel = std::pair<uint32_t, std::string>;  // (graph id, kernel name)

// Each successful capture's kernel launches, by the graph its end made and the kernel's name, in call order.
absl::flat_hash_map<GraphKernel, std::vector<size_t>> CapturedLaunches(const Trace& trace) {
  absl::flat_hash_map<uint64_t, uint32_t> graph_of_capture;  // capture id -> graph id
  for (const ApiCall& call : trace.api_calls) {
    const CallDetail& detail = trace.Detail(call);
    if (call.kind == ApiKind::kCaptureEnd && detail.return_code == 0 && detail.graph_id != 0 && call.capture_id != 0) {
      graph_of_capture[call.capture_id] = detail.graph_id;
    }
  }
  absl::flat_hash_map<GraphKernel, std::vector<size_t>> launches;
  for (size_t i = 0; i < trace.api_calls.size(); ++i) {
    const ApiCall& call = trace.api_calls[i];
    if (call.kind != ApiKind::kKernelLaunch || call.capture_status != CaptureStatus::kActive) continue;
    const CallDetail& detail = trace.Detail(call);
    const auto graph = graph_of_capture.find(call.capture_id);
    if (graph == graph_of_capture.end() || detail.return_code != 0) continue;
    launches[{graph->second, std::string(trace.String(detail.kernel_name))}].push_back(i);
  }
  return launches;
}

}  // namespace

CapturedNodes::CapturedNodes(const Trace& trace) : trace_(trace) {
  absl::flat_hash_map<uint64_t, uint32_t> graph_of_launch;  // graph launch's correlation id -> captured graph id
  for (const ApiCall& call : trace.api_calls) {
    const CallDetail& detail = trace.Detail(call);
    if (call.kind == ApiKind::kGraphLaunch && detail.return_code == 0 && detail.graph_id != 0) {
      graph_of_launch[call.correlation_id] = detail.graph_id;
    }
  }
  const absl::flat_hash_map<GraphKernel, std::vector<size_t>> launches = CapturedLaunches(trace);
  absl::flat_hash_map<uint32_t, uint32_t> captured_of;                    // instantiated graph id -> captured graph id
  absl::flat_hash_map<GraphKernel, absl::flat_hash_set<uint64_t>> nodes;  // by instantiated graph id
  for (const KernelActivity& kernel : trace.kernels) {
    const KernelShape& shape = trace.Shape(kernel);
    if (kernel.graph_id == 0 || shape.graph_node_id == 0) continue;
    if (!captured_of.contains(kernel.graph_id)) {
      const auto launch = graph_of_launch.find(kernel.correlation_id);
      if (launch == graph_of_launch.end()) continue;
      captured_of[kernel.graph_id] = launch->second;
    }
    nodes[{kernel.graph_id, std::string(trace.String(shape.name))}].insert(shape.graph_node_id);
  }
  for (const auto& [key, node_set] : nodes) {
    const auto captured = launches.find({captured_of.at(key.first), key.second});
    if (captured == launches.end() || captured->second.size() != node_set.size()) continue;
    std::vector<uint64_t> ordered(node_set.begin(), node_set.end());
    std::sort(ordered.begin(), ordered.end());
    for (size_t i = 0; i < ordered.size(); ++i) launch_of_node_[{key.first, ordered[i]}] = captured->second[i];
  }
}

std::optional<size_t> CapturedNodes::LaunchOf(const KernelActivity& kernel) const {
  if (kernel.graph_id == 0) return std::nullopt;
  const auto it = launch_of_node_.find({kernel.graph_id, trace_.Shape(kernel).graph_node_id});
  if (it == launch_of_node_.end()) return std::nullopt;
  return it->second;
}

}  // namespace graphcheck::trace
