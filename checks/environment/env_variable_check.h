// Shared shape of the environment checks that fire when one variable holds a given value: each check supplies its
// CheckInfo, the variable, the value and the wording; this class does the matching and builds the finding.
#ifndef GRAPHCHECK_CHECKS_ENVIRONMENT_ENV_VARIABLE_CHECK_H_
#define GRAPHCHECK_CHECKS_ENVIRONMENT_ENV_VARIABLE_CHECK_H_

#include <string>
#include <vector>

#include "core/check.h"
#include "core/environment.h"

namespace graphcheck::checks {

class EnvVariableCheck : public CheckOf<Environment> {
 public:
  struct Spec {
    CheckInfo info;
    std::string variable;   // "CUDA_LAUNCH_BLOCKING"
    std::string bad_value;  // compared after trimming spaces: "1"
    std::string message;    // what it does to graphs
    std::string fix;
  };
  explicit EnvVariableCheck(Spec spec) : CheckOf(spec.info), spec_(std::move(spec)) {}

 protected:
  void Read(const Environment& env, const BoundOptions& options, std::vector<Finding>* findings) const override;

 private:
  Spec spec_;
};

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_ENVIRONMENT_ENV_VARIABLE_CHECK_H_
