// Known error and warning texts that PyTorch, Transformer Engine and Megatron print, mapped to check ids, so a failure
// that never reaches CUDA (or a run recorded without a trace) still gets a diagnosis. The stderr-messages check
// matches the program's stderr against this table and emits findings that carry the matched row's check id (a
// sync-in-capture finding for "operation not permitted when stream is capturing"); their location names the stderr
// line. FoldStderrFindings then merges each into a finding of the same id from the trace, as evidence.
#ifndef GRAPHCHECK_ANALYZERS_STDERR_MESSAGES_H_
#define GRAPHCHECK_ANALYZERS_STDERR_MESSAGES_H_

#include <string>
#include <vector>

#include "core/finding.h"
#include "core/severity.h"

namespace graphcheck::analyzers {

// Location::file of the findings made from stderr.
inline constexpr char kStderrFile[] = "<stderr>";

struct StderrRule {
  std::string check_id;  // the check the message belongs to
  Severity severity;
  std::vector<std::string> needles;  // all must occur in the line (case-sensitive)
  std::string meaning;
  std::string fix;
};

// In match order: a line matches the first rule whose needles it holds.
const std::vector<StderrRule>& StderrRules();

// Moves each stderr finding into the first other finding with the same check id (as evidence) when there is one.
void FoldStderrFindings(std::vector<Finding>* findings);

}  // namespace graphcheck::analyzers

#endif  // GRAPHCHECK_ANALYZERS_STDERR_MESSAGES_H_
