// stderr-messages: the table-driven matcher over the program's stderr (see stderr_messages.h).
#include "checks/output/stderr_messages.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "core/check.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::MatchKnownMessage;
using analysis::ProgramOutput;
using analysis::StderrRule;
using analysis::StderrRules;

namespace {

constexpr size_t kMaxQuoted = 300;  // characters of a matched line quoted in a finding

class StderrMessagesCheck : public CheckOf<ProgramOutput> {
 public:
  StderrMessagesCheck()
      : CheckOf(CheckInfo{
            check_id::kStderrMessages,
            "Known error message in the program's stderr",
            Severity::kError,
            CheckArea::kCapture,
            "Matches the program's stderr against known PyTorch, Transformer Engine, Megatron and CUDA error texts and "
            "reports each under the id of the check it belongs to.",
            {}}) {}

 protected:
  void Read(const ProgramOutput& output, const BoundOptions& options, std::vector<Finding>* findings) const override {
    const std::vector<StderrRule>& rules = StderrRules();
    std::vector<size_t> finding_of_rule(rules.size(), ~size_t{0});
    std::vector<size_t> matched(rules.size(), 0);
    const std::vector<std::string>& lines = output.stderr_lines;
    for (size_t n = 0; n < lines.size(); ++n) {
      const std::string& line = lines[n];
      const StderrRule* rule = MatchKnownMessage(line);
      if (rule == nullptr) continue;
      const size_t r = rule - rules.data();
      if (++matched[r] > 1) {
        (*findings)[finding_of_rule[r]].evidence.back() = absl::StrCat("matched ", matched[r], " lines");
        continue;
      }
      finding_of_rule[r] = findings->size();
      Finding finding = NewFindingUnder(rule->check_id, rule->severity);
      finding.message = absl::StrCat("The program printed \"", line.substr(0, kMaxQuoted),
                                     line.size() > kMaxQuoted ? "..." : "", "\": ", rule->meaning, ".");
      finding.where.file = kStderrFile;
      finding.where.line = static_cast<int>(n + 1);
      finding.stderr_match = Finding::StderrMatch{n + 1, r};
      finding.fix = rule->fix;
      finding.evidence.push_back("matched 1 line");
      findings->push_back(std::move(finding));
    }
  }
};

}  // namespace

namespace {

// Whether a trace finding lists a call that returned `code` (its evidence or consequences: "... returned 901 ...").
bool ListsReturnCode(const Finding& finding, int32_t code) {
  const std::string returned = absl::StrCat("returned ", code, " ");
  auto lists = [&](const std::vector<std::string>& lines) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return absl::StrContains(l, returned); });
  };
  return lists(finding.evidence) || lists(finding.consequences);
}

}  // namespace

void FoldStderrFindings(const TraceSummary& traces, std::vector<Finding>* findings) {
  std::vector<Finding> kept;
  std::vector<Finding> from_stderr;
  for (Finding& finding : *findings) {
    (finding.stderr_match ? from_stderr : kept).push_back(std::move(finding));
  }
  const std::vector<StderrRule>& rules = StderrRules();
  for (Finding& line : from_stderr) {
    const Finding::StderrMatch match = *line.stderr_match;
    const StderrRule* rule = match.rule < rules.size() ? &rules[match.rule] : nullptr;
    // Only into a finding at least as severe: an eager pageable-copy note must not swallow PyTorch's refusal of the
    // same kind of copy inside a capture (seen on an H200: `.cpu()` in torch.cuda.graph).
    auto target = std::find_if(kept.begin(), kept.end(), [&](const Finding& f) {
      return f.check_id == line.check_id && !f.stderr_match && f.severity >= line.severity;
    });
    // CUDA's generic text ("operation not permitted when stream is capturing", "operation failed due to a previous
    // error during capture") repeats a failure the trace attributed to its root cause, whichever check that is.
    if (target == kept.end() && rule != nullptr && rule->cuda_error != 0) {
      target = std::find_if(kept.begin(), kept.end(), [&](const Finding& f) {
        return !f.stderr_match && f.severity >= line.severity && ListsReturnCode(f, rule->cuda_error);
      });
    }
    if (target != kept.end()) {
      target->evidence.push_back(absl::StrCat("stderr line ", match.line, ": ", line.message));
      continue;
    }
    auto stop = std::find_if(traces.stops.begin(), traces.stops.end(),
                             [&](const ProgramStop& s) { return s.check_id == line.check_id; });
    if (stop != traces.stops.end()) {
      line.evidence.push_back(absl::StrCat("stderr line ", match.line, "; the program stopped on it"));
      line.evidence.insert(line.evidence.end(), stop->details.begin(), stop->details.end());
      line.where = stop->where;
      line.stderr_match.reset();  // located at the raise site now, like a trace finding
    }
    if (rule != nullptr && rule->trace_decides && traces.recorded) {
      line.severity = Severity::kNote;
      absl::StrAppend(&line.message, " The trace shows no such problem in the ",
                      Plural(traces.captures, "recorded capture", "recorded captures"),
                      ": nothing breaks capture here.");
    }
    kept.push_back(std::move(line));
  }
  *findings = std::move(kept);
}

std::unique_ptr<Check> NewStderrMessagesCheck() { return std::make_unique<StderrMessagesCheck>(); }

}  // namespace graphcheck::checks
