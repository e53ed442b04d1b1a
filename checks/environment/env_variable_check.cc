#include "checks/environment/env_variable_check.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace graphcheck::checks {

void EnvVariableCheck::Read(const Environment& env, const BoundOptions& options, std::vector<Finding>* findings) const {
  const std::string* value = env.Get(spec_.variable);
  if (value == nullptr || absl::StripAsciiWhitespace(*value) != spec_.bad_value) return;
  Finding finding = NewFinding();
  finding.message = spec_.message;
  finding.evidence.push_back(absl::StrCat(spec_.variable, "=", *value));
  finding.where.key = spec_.variable;
  finding.fix = spec_.fix;
  findings->push_back(std::move(finding));
}

}  // namespace graphcheck::checks
