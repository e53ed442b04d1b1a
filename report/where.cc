#include "report/where.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace graphcheck {

std::string FrameText(const SourceFrame& frame) {
  std::string out = frame.file;
  if (frame.line > 0) absl::StrAppend(&out, ":", frame.line);
  if (!frame.function.empty()) absl::StrAppend(&out, " in ", frame.function);
  return out;
}

std::string FileText(const Location& w) {
  if (w.file.empty()) return "";
  std::string out = w.file;
  if (w.line > 0) absl::StrAppend(&out, ":", w.line);
  if (w.column > 0) absl::StrAppend(&out, ":", w.column);
  return out;
}

std::vector<std::string> WhereParts(const Location& w) {
  std::vector<std::string> parts;
  if (const SourceFrame* frame = FirstUserFrame(w)) parts.push_back(FrameText(*frame));
  if (!w.file.empty()) parts.push_back(FileText(w));
  if (!w.key.empty()) parts.push_back(absl::StrCat("key ", w.key));
  if (!w.api.empty()) parts.push_back(absl::StrCat("call ", w.api));
  if (!w.torch_op.empty()) parts.push_back(absl::StrCat("op ", w.torch_op));
  if (!w.ranks.empty()) parts.push_back(RanksText(w.ranks));
  if (w.pid) parts.push_back(absl::StrCat("pid ", *w.pid));
  if (w.thread_id) parts.push_back(absl::StrCat("thread ", *w.thread_id));
  if (w.stream_id) parts.push_back(absl::StrCat("stream ", *w.stream_id));
  if (!w.nvtx_path.empty()) parts.push_back(absl::StrCat("in ", w.nvtx_path));
  return parts;
}

}  // namespace graphcheck
