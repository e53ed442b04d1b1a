// The launch model's numbers (analysis/launch_model.h) as the user sets them: options of launch-bound, the check whose
// forecast they shape (`--check-option launch-bound.graph-launch-us=3`, .graphcheck.yaml), listed with the model's own
// values as their defaults. The analysis gets the plain model, read once into its settings (AnalysisSettings::launch),
// so the checks that forecast agree on it.
#ifndef GRAPHCHECK_CHECKS_TRACE_LAUNCH_MODEL_OPTIONS_H_
#define GRAPHCHECK_CHECKS_TRACE_LAUNCH_MODEL_OPTIONS_H_

#include "analysis/launch_model.h"
#include "core/check.h"

namespace graphcheck::checks {

// The model with the values `options` sets for launch-bound (validated against the catalogue before), and
// LaunchModel's own for the rest.
analysis::LaunchModel LaunchModelFromOptions(const CheckOptions& options);

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_TRACE_LAUNCH_MODEL_OPTIONS_H_
