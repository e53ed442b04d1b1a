// Known error and warning texts that PyTorch, torch.compile, Transformer Engine, Megatron and CUDA print or raise,
// mapped to check ids, so a failure that never reaches CUDA (or a run recorded without a trace) still gets a
// diagnosis. Two readers: the stderr-messages check matches the program's stderr lines and emits findings that carry
// the matched row's check id (a sync-in-capture finding for "operation not permitted when stream is capturing"),
// located at the stderr line; the Python probe's exceptions (python_probe.h) are matched by their message. Then
// FoldStderrFindings merges each stderr finding into the trace's finding of the same root cause, as evidence.
#ifndef GRAPHCHECK_ANALYZERS_STDERR_MESSAGES_H_
#define GRAPHCHECK_ANALYZERS_STDERR_MESSAGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
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
  // CUDA's own text for a stream-capture error (900-910): the line repeats a failure of that code, which the trace
  // attributes to its root cause, whatever check that is.
  int32_t cuda_error = 0;
  // A warning about a danger the trace can confirm (PyTorch's AccumulateGrad stream warning): when traces were
  // recorded and none shows it, the line is a note saying so.
  bool trace_decides = false;
  // Only for a Python exception that PyTorch's graph code raised (the probe saw it leave torch/cuda/graphs.py), never
  // for a line of stderr: the message alone says nothing about graphs.
  bool raised_in_graph_code = false;
};

// In match order: a line matches the first rule whose needles it holds.
const std::vector<StderrRule>& StderrRules();
// The first rule whose needles `text` holds; null when none does. `raised_in_graph_code`: the text is a Python
// exception raised in torch/cuda/graphs.py, which the rules marked raised_in_graph_code also match.
const StderrRule* MatchKnownMessage(absl::string_view text, bool raised_in_graph_code = false);

// The program's stderr as a check input (`run` tees it; `analyze --stderr FILE`), one entry per line.
struct ProgramOutput {
  const std::vector<std::string>& stderr_lines;
};

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

// Merges each stderr finding (located at line N of `stderr_lines`) into the trace finding of its root cause, as
// evidence: one with the same check id, or, for CUDA's generic capture-error texts, one that lists a call that
// failed with that code. A stderr finding with no such finding, whose line the program stopped on (a ProgramStop of its
// check: Megatron's refusal of an RNG tracker raised while the model is built), takes the raise site's location. A
// trace_decides warning that no trace finding confirms becomes a note.
void FoldStderrFindings(const std::vector<std::string>& stderr_lines, const TraceSummary& traces,
                        std::vector<Finding>* findings);

}  // namespace graphcheck::analyzers

#endif  // GRAPHCHECK_ANALYZERS_STDERR_MESSAGES_H_
