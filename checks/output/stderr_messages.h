// The stderr-messages check's other half: the program's stderr lines matched against the known texts
// (analysis/stderr_rules.h) become findings located at the line, and FoldStderrFindings merges each into the trace's
// finding of the same root cause, as evidence.
#ifndef GRAPHCHECK_CHECKS_OUTPUT_STDERR_MESSAGES_H_
#define GRAPHCHECK_CHECKS_OUTPUT_STDERR_MESSAGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/stderr_rules.h"
#include "core/finding.h"
#include "core/severity.h"

namespace graphcheck::checks {

// Location::file of the findings made from stderr, as reports show them (`<stderr>:LINE`); what the analysis reads
// is Finding::stderr_match.
inline constexpr char kStderrFile[] = "<stderr>";

// Where a program stopped on an uncaught Python exception a rule knows, as the Python probe recorded it raising.
struct ProgramStop {
  std::string check_id;              // the rule's check
  Location where;                    // the raise site's frames, the process's pid and rank
  std::vector<std::string> details;  // the exception's further lines (ExceptionDetails)
};

// What the traces of the run showed, for folding.
struct TraceSummary {
  bool recorded = false;  // at least one trace was analyzed
  size_t captures = 0;    // capture windows in all traces
  std::vector<ProgramStop> stops;
};

// Merges each stderr finding (one with a stderr_match: its line and the known text it matched) into the trace finding
// of its root cause, as evidence: one with the same check id, or, for CUDA's generic capture-error texts, one that
// lists a call that failed with that code. A stderr finding with no such finding, whose line the program stopped on (a
// ProgramStop of its check: Megatron's refusal of an RNG tracker raised while the model is built), takes the raise
// site's location. A trace_decides warning that no trace finding confirms becomes a note.
void FoldStderrFindings(const TraceSummary& traces, std::vector<Finding>* findings);

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_OUTPUT_STDERR_MESSAGES_H_
