#include "trace/captured_nodes.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"

namespace graphcheck::trace {
namespace {

using GraphKernel = std::pair<uint32_t, std::string>;  // (graph id, kernel name)

// KernelLaunchesByGraph, by the kernel's name too.
absl::flat_hash_map<GraphKernel, std::vector<size_t>> CapturedLaunches(const Trace& trace) {
  absl::flat_hash_map<GraphKernel, std::vector<size_t>> launches;
  for (const auto& [graph, calls] : KernelLaunchesByGraph(trace)) {
    for (size_t call : calls) {
      launches[{graph, std::string(trace.String(trace.Detail(trace.api_calls[call]).kernel_name))}].push_back(call);
    }
  }
  return launches;
}

}  // namespace

absl::flat_hash_map<uint32_t, std::vector<size_t>> KernelLaunchesByGraph(const Trace& trace) {
  absl::flat_hash_map<uint64_t, std::vector<size_t>> by_capture;  // capture id -> its kernel launches
  absl::flat_hash_map<uint32_t, std::vector<size_t>> by_graph;
  for (size_t i = 0; i < trace.api_calls.size(); ++i) {
    const ApiCall& call = trace.api_calls[i];
    const CallDetail& detail = trace.Detail(call);
    if (call.kind == ApiKind::kKernelLaunch && call.capture_status == CaptureStatus::kActive &&
        detail.return_code == 0) {
      by_capture[call.capture_id].push_back(i);
    } else if (call.kind == ApiKind::kCaptureEnd && detail.return_code == 0 && detail.graph_id != 0 &&
               call.capture_id != 0) {
      if (auto it = by_capture.find(call.capture_id); it != by_capture.end()) by_graph[detail.graph_id] = it->second;
    }
  }
  return by_graph;
}

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
