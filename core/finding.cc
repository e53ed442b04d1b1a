#include "core/finding.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "core/number_ranges.h"

namespace graphcheck {

bool Location::operator==(const Location& o) const {
  return std::tie(api, thread_id, stream_id, nvtx_path, backtrace, python, torch_op, file, line, column, key, pid,
                  ranks) == std::tie(o.api, o.thread_id, o.stream_id, o.nvtx_path, o.backtrace, o.python, o.torch_op,
                                     o.file, o.line, o.column, o.key, o.pid, o.ranks);
}

bool Finding::operator==(const Finding& o) const {
  return std::tie(check_id, severity, title, message, evidence, consequences, where, fix, occurrences) ==
         std::tie(o.check_id, o.severity, o.title, o.message, o.evidence, o.consequences, o.where, o.fix,
                  o.occurrences);
}

const SourceFrame* FirstUserFrame(const std::vector<SourceFrame>& frames) {
  auto user = std::find_if(frames.begin(), frames.end(), [](const SourceFrame& f) { return f.user; });
  return user == frames.end() ? nullptr : &*user;
}

std::string RanksText(const std::vector<int32_t>& ranks) {
  return absl::StrCat(ranks.size() == 1 ? "rank " : "ranks ", NumberRanges(ranks, ","));
}

}  // namespace graphcheck
