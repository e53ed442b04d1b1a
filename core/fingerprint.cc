#include "core/fingerprint.h"

#include <algorithm>
#include <regex>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace graphcheck {
namespace {

constexpr size_t kFramesHashed = 3;

// Symbolized frames may carry load addresses and offsets ("foo+0x1a", "0x7f3a...", "libx.so(+0x2b)"), which ASLR and
// rebuilds change.
std::string WithoutAddresses(const std::string& frame) {
  static const std::regex kAddress("\\+?0x[0-9a-fA-F]+");
  return std::regex_replace(frame, kAddress, "");
}

bool HasCallSite(const Location& w) {
  return !w.api.empty() || !w.torch_op.empty() || FirstUserFrame(w) != nullptr || !w.backtrace.empty() ||
         !w.file.empty() || !w.key.empty();
}

}  // namespace

uint64_t StableHash(absl::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string FindingFingerprint(const Finding& finding) {
  const Location& w = finding.where;
  // Fields are separated by a byte no field holds, so that ("ab", "c") and ("a", "bc") differ.
  std::string facts = absl::StrCat(finding.check_id, "\x1f", w.api, "\x1f", w.torch_op, "\x1f", w.file, "\x1f", w.key,
                                   "\x1f", w.nvtx_path, "\x1f");
  if (const SourceFrame* frame = FirstUserFrame(w)) absl::StrAppend(&facts, frame->file, ":", frame->line);
  const size_t frames = std::min(kFramesHashed, w.backtrace.size());
  for (size_t i = 0; i < frames; ++i) absl::StrAppend(&facts, "\x1f", WithoutAddresses(w.backtrace[i]));
  return absl::StrFormat("%016x", StableHash(facts));
}

void FoldRepeatedFindings(std::vector<Finding>* findings) {
  using Site = std::tuple<std::string, Severity, int, int>;
  absl::flat_hash_map<Site, size_t> first_at;  // call site -> index in `kept`
  std::vector<Finding> kept;
  for (Finding& finding : *findings) {
    if (HasCallSite(finding.where)) {
      Site site{FindingFingerprint(finding), finding.severity, finding.where.line, finding.where.column};
      auto [it, inserted] = first_at.emplace(std::move(site), kept.size());
      if (!inserted) {
        kept[it->second].occurrences += finding.occurrences;
        continue;
      }
    }
    kept.push_back(std::move(finding));
  }
  *findings = std::move(kept);
}

}  // namespace graphcheck
