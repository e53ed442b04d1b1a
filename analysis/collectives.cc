#include "analysis/collectives.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace graphcheck::analysis {

namespace {

// The calls of `nccl` (sorted by start) that began in [start_ns, end_ns], as a range of it.
std::pair<std::vector<DomainRange>::const_iterator, std::vector<DomainRange>::const_iterator> CallsBetween(
    const std::vector<DomainRange>& nccl, uint64_t start_ns, uint64_t end_ns) {
  auto starts_before = [](const DomainRange& call, uint64_t t) { return call.start_ns < t; };
  auto first = std::lower_bound(nccl.begin(), nccl.end(), start_ns, starts_before);
  auto last = std::find_if(first, nccl.end(), [&](const DomainRange& call) { return call.start_ns > end_ns; });
  return {first, last};
}

void AppendCall(absl::string_view name, std::vector<CollectiveRun>* runs) {
  if (!runs->empty() && runs->back().name == name) {
    ++runs->back().count;
  } else {
    runs->push_back({std::string(name), 1});
  }
}

}  // namespace

std::vector<CollectiveRun> CollectivesBetween(const std::vector<DomainRange>& nccl, uint64_t start_ns,
                                              uint64_t end_ns) {
  std::vector<CollectiveRun> runs;
  const auto [first, last] = CallsBetween(nccl, start_ns, end_ns);
  for (auto call = first; call != last; ++call) AppendCall(call->name, &runs);
  return runs;
}

std::map<uint64_t, std::vector<CollectiveRun>> CollectivesByCommunicator(const std::vector<DomainRange>& nccl,
                                                                         uint64_t start_ns, uint64_t end_ns) {
  std::map<uint64_t, std::vector<CollectiveRun>> runs;
  const auto [first, last] = CallsBetween(nccl, start_ns, end_ns);
  for (auto call = first; call != last; ++call) AppendCall(call->name, &runs[call->communicator]);
  return runs;
}

std::string CommunicatorText(uint64_t communicator) {
  if (communicator == 0) return "";
  return absl::StrCat("communicator ", absl::Hex(communicator >> 32, absl::kZeroPad8));
}

bool IsNcclKernel(absl::string_view kernel_name) {
  return absl::StrContains(kernel_name, "ncclDevKernel") || absl::StrContains(kernel_name, "ncclKernel");
}

std::string DescribeCollectives(const std::vector<CollectiveRun>& runs) {
  if (runs.empty()) return "no NCCL call";
  return absl::StrJoin(runs, ", ", [](std::string* out, const CollectiveRun& run) {
    absl::StrAppend(out, run.name, run.count > 1 ? absl::StrCat(" x", run.count) : "");
  });
}

}  // namespace graphcheck::analysis
