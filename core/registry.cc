#include "core/registry.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/fingerprint.h"

namespace graphcheck {
namespace {

bool IsKebabCase(absl::string_view id) {
  if (id.empty() || id.front() == '-' || id.back() == '-') return false;
  return std::all_of(id.begin(), id.end(),
                     [](char c) { return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-'; });
}

bool GlobMatches(const std::string& glob, absl::string_view id) {
  return fnmatch(glob.c_str(), std::string(id).c_str(), 0) == 0;
}

absl::Status ValidateOptionValue(absl::string_view check_id, const CheckOption& option, const std::string& value) {
  const std::string name = absl::StrCat(check_id, ".", option.name);
  double number;
  if (absl::SimpleAtod(option.default_value, &number)) {
    if (!absl::SimpleAtod(value, &number) || !std::isfinite(number)) {
      return absl::InvalidArgumentError(absl::StrCat("option ", name, " needs a finite number, got '", value, "'"));
    }
    if (number < option.min_value || number > option.max_value) {
      return absl::InvalidArgumentError(
          absl::StrCat("option ", name, " must be in [", option.min_value, ", ", option.max_value, "], got ", value));
    }
  }
  if (!option.choices.empty() &&
      std::find(option.choices.begin(), option.choices.end(), value) == option.choices.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("option ", name, " takes ", absl::StrJoin(option.choices, ", "), "; got '", value, "'"));
  }
  if (option.validate != nullptr) {
    if (absl::Status s = option.validate(value); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("option ", name, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckRegistry::Add(std::unique_ptr<Check> check) {
  const CheckInfo& info = check->info();
  if (!IsKebabCase(info.id)) {
    return absl::InvalidArgumentError(absl::StrCat("check id '", info.id, "' is not kebab-case"));
  }
  for (const CheckOption& option : info.options) {
    if (!IsKebabCase(option.name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("check '", info.id, "' has an option named '", option.name, "', which is not kebab-case"));
    }
  }
  if (checks_.count(info.id) != 0) {
    return absl::AlreadyExistsError(absl::StrCat("check '", info.id, "' is registered twice"));
  }
  std::string id = info.id;
  checks_.emplace(std::move(id), std::move(check));
  return absl::OkStatus();
}

absl::Status CheckRegistry::AddAll(std::vector<std::unique_ptr<Check>> checks) {
  for (std::unique_ptr<Check>& check : checks) {
    if (absl::Status status = Add(std::move(check)); !status.ok()) return status;
  }
  return absl::OkStatus();
}

const Check* CheckRegistry::Find(absl::string_view id) const {
  auto it = checks_.find(id);
  return it == checks_.end() ? nullptr : it->second.get();
}

std::vector<const Check*> CheckRegistry::All() const {
  std::vector<const Check*> all;
  all.reserve(checks_.size());
  for (const auto& [id, check] : checks_) all.push_back(check.get());
  return all;
}

absl::Status CheckRegistry::ValidateOptions(const CheckOptions& options) const {
  for (const auto& [key, value] : options.values()) {
    const auto& [check_id, name] = key;
    const Check* check = Find(check_id);
    if (check == nullptr) return absl::NotFoundError(absl::StrCat("no check named '", check_id, "'"));
    const auto& declared = check->info().options;
    auto option =
        std::find_if(declared.begin(), declared.end(), [&name = name](const CheckOption& o) { return o.name == name; });
    if (option == declared.end()) {
      return absl::NotFoundError(absl::StrCat("check '", check_id, "' has no option '", name, "'"));
    }
    if (absl::Status s = ValidateOptionValue(check_id, *option, value); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<CheckSelection> CheckSelection::Parse(absl::string_view spec) {
  CheckSelection selection;
  for (absl::string_view part : absl::StrSplit(spec, ',', absl::SkipWhitespace())) {
    part = absl::StripAsciiWhitespace(part);
    Pattern pattern;
    pattern.include = !absl::ConsumePrefix(&part, "-");
    if (part.empty() || !std::all_of(part.begin(), part.end(), [](char c) {
          return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-' || c == '*';
        })) {
      return absl::InvalidArgumentError(absl::StrCat("bad check pattern '", part, "' in --checks '", spec, "'"));
    }
    pattern.glob = std::string(part);
    selection.patterns_.push_back(std::move(pattern));
  }
  return selection;
}

bool CheckSelection::Selects(absl::string_view id) const {
  // With only exclusions (or nothing), start from everything.
  bool selected = std::none_of(patterns_.begin(), patterns_.end(), [](const Pattern& p) { return p.include; });
  for (const Pattern& pattern : patterns_) {
    if (GlobMatches(pattern.glob, id)) selected = pattern.include;
  }
  return selected;
}

absl::Status CheckSelection::ValidateAgainst(const CheckRegistry& registry) const {
  for (const Pattern& pattern : patterns_) {
    if (!absl::StrContains(pattern.glob, '*') && registry.Find(pattern.glob) == nullptr) {
      return absl::NotFoundError(absl::StrCat("unknown check id '", pattern.glob, "' (see graphcheck list-checks)"));
    }
  }
  return absl::OkStatus();
}

bool CheckSelection::SelectsAnyOf(const CheckRegistry& registry) const {
  const std::vector<const Check*> checks = registry.All();
  return std::any_of(checks.begin(), checks.end(), [&](const Check* check) { return Selects(check->info().id); });
}

void SortFindings(std::vector<Finding>* findings) {
  std::stable_sort(findings->begin(), findings->end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.check_id < b.check_id;
  });
}

CheckRun RunChecks(const CheckRegistry& registry, const CheckSelection& selection, const CheckOptions& options,
                   const CheckInputs& inputs) {
  CheckRun run;
  for (const Check* check : registry.All()) {
    if (!selection.Selects(check->info().id) || !check->CanRun(inputs)) continue;
    run.checks_run.push_back(check->info().id);
    check->Run(inputs, BoundOptions(check->info(), options), &run.findings);
  }
  // Some checks report under other checks' ids (stderr-messages emits a sync-in-capture finding for PyTorch's text):
  // a finding is kept only if its own id is selected, and then that id counts as run.
  run.findings.erase(std::remove_if(run.findings.begin(), run.findings.end(),
                                    [&](const Finding& f) { return !selection.Selects(f.check_id); }),
                     run.findings.end());
  for (Finding& finding : run.findings) {
    if (std::find(run.checks_run.begin(), run.checks_run.end(), finding.check_id) == run.checks_run.end()) {
      run.checks_run.push_back(finding.check_id);
    }
    // A finding carries the title of the check it is reported under, whichever check made it.
    if (const Check* owner = registry.Find(finding.check_id)) finding.title = owner->info().title;
  }
  std::sort(run.checks_run.begin(), run.checks_run.end());
  FoldRepeatedFindings(&run.findings);
  return run;
}

}  // namespace graphcheck
