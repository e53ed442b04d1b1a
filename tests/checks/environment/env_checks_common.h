// Shared test helper for the environment checks: runs one registered check on an environment.
#ifndef GRAPHCHECK_TESTS_CHECKS_ENVIRONMENT_ENV_CHECKS_COMMON_H_
#define GRAPHCHECK_TESTS_CHECKS_ENVIRONMENT_ENV_CHECKS_COMMON_H_

#include <string>
#include <vector>

#include "core/check.h"
#include "core/environment.h"

namespace graphcheck::testing_env {

inline std::vector<Finding> RunOn(const Check& check, const Environment& env, const CheckOptions& options = {}) {
  CheckInputs inputs;
  inputs.Add(env);
  std::vector<Finding> findings;
  check.Run(inputs, BoundOptions(check.info(), options), &findings);
  return findings;
}

inline Environment Env(std::initializer_list<std::pair<const char*, const char*>> variables) {
  Environment env;
  for (const auto& [name, value] : variables) env.Set(name, value);
  return env;
}

}  // namespace graphcheck::testing_env

#endif  // GRAPHCHECK_TESTS_CHECKS_ENVIRONMENT_ENV_CHECKS_COMMON_H_
