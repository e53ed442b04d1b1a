#include "analysis/collectives.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace graphcheck::analysis {

namespace {

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
  for (const DomainRange& call : nccl) {
    if (call.start_ns >= start_ns && call.start_ns <= end_ns) AppendCall(call.name, &runs);
  }
  return runs;
}

std::map<uint64_t, std::vector<CollectiveRun>> CollectivesByCommunicator(const std::vector<DomainRange>& nccl,
                                                                         uint64_t start_ns, uint64_t end_ns) {
  std::map<uint64_t, std::vector<CollectiveRun>> runs;
  for (const DomainRange& call : nccl) {
    if (call.start_ns >= start_ns && call.start_ns <= end_ns) AppendCall(call.name, &runs[call.communicator]);
  }
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
