#include "core/check.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace graphcheck {

absl::string_view CheckAreaName(CheckArea area) {
  switch (area) {
    case CheckArea::kCapture:
      return "capture";
    case CheckArea::kEagerRegion:
      return "eager-region";
    case CheckArea::kState:
      return "state";
    case CheckArea::kRng:
      return "rng";
    case CheckArea::kNumerics:
      return "numerics";
    case CheckArea::kEnvironment:
      return "environment";
    case CheckArea::kConfiguration:
      return "configuration";
    case CheckArea::kPerformance:
      return "performance";
    case CheckArea::kTorchCompile:
      return "torch-compile";
    case CheckArea::kDistributed:
      return "distributed";
    case CheckArea::kTraceIntegrity:
      return "trace-integrity";
  }
  return "unknown";
}

absl::Status CheckOptions::ParseAndSet(absl::string_view assignment) {
  const size_t eq = assignment.find('=');
  const size_t dot = assignment.substr(0, eq).find('.');
  if (eq == absl::string_view::npos || dot == absl::string_view::npos || dot == 0 || dot + 1 == eq) {
    return absl::InvalidArgumentError(
        absl::StrCat("check option '", assignment, "' is not of the form CHECK-ID.OPTION=VALUE"));
  }
  Set(std::string(assignment.substr(0, dot)), std::string(assignment.substr(dot + 1, eq - dot - 1)),
      std::string(assignment.substr(eq + 1)));
  return absl::OkStatus();
}

void CheckOptions::Set(std::string check_id, std::string name, std::string value) {
  values_[{std::move(check_id), std::move(name)}] = std::move(value);
}

const std::string* CheckOptions::Find(absl::string_view check_id, absl::string_view name) const {
  auto it = values_.find({std::string(check_id), std::string(name)});
  return it == values_.end() ? nullptr : &it->second;
}

std::string BoundOptions::Get(absl::string_view name) const {
  if (const std::string* value = options_.Find(info_.id, name)) return *value;
  for (const CheckOption& option : info_.options) {
    if (option.name == name) return option.default_value;
  }
  return "";
}

double BoundOptions::GetDouble(absl::string_view name) const {
  double value = 0;
  if (absl::SimpleAtod(Get(name), &value)) return value;
  for (const CheckOption& option : info_.options) {
    if (option.name == name && absl::SimpleAtod(option.default_value, &value)) return value;
  }
  return 0;
}

bool BoundOptions::GetBool(absl::string_view name) const {
  bool value = false;
  return absl::SimpleAtob(Get(name), &value) && value;
}

Finding Check::NewFinding() const { return NewFindingUnder(info().id, info().default_severity); }

Finding Check::NewFindingUnder(std::string check_id, Severity severity) const {
  Finding finding;
  finding.check_id = std::move(check_id);
  finding.severity = severity;
  finding.title = info().title;
  return finding;
}

}  // namespace graphcheck
