// Known error and warning texts that PyTorch, torch.compile, Transformer Engine, Megatron and CUDA print or raise,
// mapped to check ids, so a failure that never reaches CUDA (or a run recorded without a trace) still gets a
// diagnosis. Two readers: the stderr-messages check (checks/output/stderr_messages.h) matches the program's stderr
// lines and emits findings that carry the matched row's check id (a sync-in-capture finding for "operation not
// permitted when stream is capturing"), located at the stderr line; the Python probe's exceptions (python_probe.h) are
// matched by their message.
#ifndef GRAPHCHECK_ANALYSIS_STDERR_RULES_H_
#define GRAPHCHECK_ANALYSIS_STDERR_RULES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/severity.h"

namespace graphcheck::analysis {

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

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_STDERR_RULES_H_
