#include "analysis/collectives.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace graphcheck::analysis {

std::vector<CollectiveRun> CollectivesBetween(const std::vector<DomainRange>& nccl, uint64_t start_ns,
                                              uint64_t end_ns) {
  std::vector<CollectiveRun> runs;
  for (const DomainRange& call : nccl) {
    if (call.start_ns < start_ns || call.start_ns > end_ns) continue;
    if (!runs.empty() && runs.back().name == call.name) {
      ++runs.back().count;
    } else {
      runs.push_back({std::string(call.name), 1});
    }
  }
  return runs;
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
