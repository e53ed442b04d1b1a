// The eager-region checks (sync-in-region, dynamic-control-flow, dynamic-shape) judge the eager steps as the region a
// user would graph. In a program that already replays graphs, its eager steps are another phase of it (an eager twin
// trained first to compare, an evaluation loop, the eager reference after the graphed run): what they do is worth a
// note, not a warning against the graphed loop that works.
#ifndef GRAPHCHECK_CHECKS_TRACE_INTERNAL_EAGER_PHASE_H_
#define GRAPHCHECK_CHECKS_TRACE_INTERNAL_EAGER_PHASE_H_

#include "absl/strings/str_cat.h"
#include "analysis/iterations.h"
#include "core/finding.h"
#include "core/plural.h"

namespace graphcheck::checks {

// Makes `finding` a note, saying why, when the program also has graphed steps.
inline void NoteWhenAnotherPhase(const analysis::Iterations& iterations, Finding* finding) {
  if (iterations.graphed.empty()) return;
  finding->severity = Severity::kNote;
  finding->evidence.push_back(absl::StrCat("the program also replays graphs in ",
                                           Plural(iterations.graphed.size(), "step", "steps"),
                                           ": these eager steps are another phase of it"));
}

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_TRACE_INTERNAL_EAGER_PHASE_H_
