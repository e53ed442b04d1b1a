// Constructed engine runs for the numerics and state validators' tests: losses of an eager run, its repeat and a
// graphed run, and per-tensor samples.
#ifndef GRAPHCHECK_TESTS_CHECKS_ENGINE_NUMERICS_TEST_UTIL_H_
#define GRAPHCHECK_TESTS_CHECKS_ENGINE_NUMERICS_TEST_UTIL_H_

#include <string>
#include <utility>
#include <vector>

#include "core/check.h"
#include "engine/run/engine_run.h"

namespace graphcheck {
namespace testing_util {

// A run of builtin:mlp in float32 with deterministic settings; `repeat` empty means no eager repeat ran.
inline EngineRun Losses(std::vector<double> eager, std::vector<double> graphed, std::vector<double> repeat = {},
                        std::string dtype = "float32") {
  EngineRun run;
  run.model = "builtin:mlp";
  run.scope = "callables";
  run.compute_dtype = std::move(dtype);
  run.deterministic_settings = true;
  run.eager_losses = std::move(eager);
  run.graphed_losses = std::move(graphed);
  run.eager_repeat_losses = std::move(repeat);
  return run;
}

// A sample of `role` whose eager values reach `scale`, graphed differs by `error` and the eager repeat by `spread`.
inline NumericsSample Sample(std::string name, TensorRole role, double error, double spread = 0, double scale = 1) {
  NumericsSample s;
  s.name = std::move(name);
  s.role = role;
  s.dtype = "float32";
  s.numel = 1024;
  s.max_abs_error = error;
  s.worst_index = error > 0 ? 7 : -1;
  s.eager_at_worst = scale;
  s.graphed_at_worst = scale + error;
  s.eager_abs_max = scale;
  s.eager_spread = spread;
  return s;
}

inline std::vector<Finding> RunEngineCheck(const Check& check, const EngineRun& run, const CheckOptions& options = {}) {
  CheckInputs inputs;
  inputs.Add(run);
  std::vector<Finding> findings;
  check.Run(inputs, BoundOptions(check.info(), options), &findings);
  return findings;
}

}  // namespace testing_util
}  // namespace graphcheck

#endif  // GRAPHCHECK_TESTS_CHECKS_ENGINE_NUMERICS_TEST_UTIL_H_
