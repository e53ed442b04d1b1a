// The check registry: every check by id, the selection syntax of --checks, and the runner that applies the selected
// checks to a set of inputs.
#ifndef GRAPHCHECK_CORE_REGISTRY_H_
#define GRAPHCHECK_CORE_REGISTRY_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/check.h"
#include "core/finding.h"

namespace graphcheck {

class CheckRegistry {
 public:
  // InvalidArgument for an id that is not kebab-case or an option without a name; AlreadyExists for a duplicate id.
  absl::Status Add(std::unique_ptr<Check> check);
  // Adds each in turn; the first refusal stops and is returned. How every module registers its checks.
  absl::Status AddAll(std::vector<std::unique_ptr<Check>> checks);
  const Check* Find(absl::string_view id) const;
  std::vector<const Check*> All() const;  // sorted by id

  // NotFound naming the check or option that does not exist; InvalidArgument for a value the option does not take:
  // not a finite number in its range where the default is numeric, not one of its choices, or refused by its
  // validate function.
  absl::Status ValidateOptions(const CheckOptions& options) const;

 private:
  std::map<std::string, std::unique_ptr<Check>, std::less<>> checks_;
};

// `--checks` syntax, as in clang-tidy: a comma list of globs, applied in order; a leading '-' removes.
// "" or "*" selects everything; "env-*,-env-launch-blocking" selects the environment checks but one.
class CheckSelection {
 public:
  static absl::StatusOr<CheckSelection> Parse(absl::string_view spec);
  bool Selects(absl::string_view id) const;
  // NotFound when a glob without '*' names no registered check (a typo would otherwise silently select nothing).
  absl::Status ValidateAgainst(const CheckRegistry& registry) const;
  // Whether any check of `registry` is selected: "nonexistent-*" or "-*" select none, and a run of no checks would
  // pass whatever the program does.
  bool SelectsAnyOf(const CheckRegistry& registry) const;

 private:
  struct Pattern {
    std::string glob;
    bool include = true;
  };
  std::vector<Pattern> patterns_;
};

struct CheckRun {
  std::vector<std::string> checks_run;  // ids, sorted
  std::vector<Finding> findings;        // in the checks' order: a report's finishing step sorts them once
};

CheckRun RunChecks(const CheckRegistry& registry, const CheckSelection& selection, const CheckOptions& options,
                   const CheckInputs& inputs);

// Orders findings most severe first, then by check id; stable otherwise.
void SortFindings(std::vector<Finding>* findings);

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_REGISTRY_H_
