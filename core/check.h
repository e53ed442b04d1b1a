// A check: one class per diagnosis, registered under a stable kebab-case id (clang-tidy style). Checks are pure
// functions of their inputs (environment, trace, configuration) and emit findings; they never fail. Every check
// derives from CheckOf<its inputs>, passes its CheckInfo to the constructor, and is made by a New...Check() factory
// that cli/catalog.cc lists (docs/add-a-check.md).
#ifndef GRAPHCHECK_CORE_CHECK_H_
#define GRAPHCHECK_CORE_CHECK_H_

#include <limits>
#include <map>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/finding.h"
#include "core/severity.h"

namespace graphcheck {

enum class CheckArea {
  kCapture,
  kEagerRegion,
  kState,
  kRng,
  kNumerics,
  kEnvironment,
  kConfiguration,
  kPerformance,
  kTorchCompile,
  kDistributed,
  kTraceIntegrity,
};
absl::string_view CheckAreaName(CheckArea area);  // "capture", "eager-region", ...

struct CheckOption {
  std::string name;  // kebab-case, unique within the check
  std::string default_value;
  std::string description;
  // A numeric option (one whose default is a number) takes finite values in [min_value, max_value].
  double min_value = 0;
  double max_value = std::numeric_limits<double>::max();
  // An enumerated option takes one of these; empty: any text (then `validate` may check it).
  std::vector<std::string> choices;
  absl::Status (*validate)(absl::string_view value) = nullptr;
};

struct CheckInfo {
  std::string id;     // stable kebab-case id
  std::string title;  // one line
  Severity default_severity = Severity::kWarning;
  CheckArea area = CheckArea::kCapture;
  std::string summary;  // two or three sentences for list-checks
  std::vector<CheckOption> options;

  std::string DocPage() const { return "docs/checks/" + id + ".md"; }
};

// Option values set by the user (`--check-option ID.NAME=VALUE`); unset options fall back to the check's defaults.
class CheckOptions {
 public:
  // Parses "ID.NAME=VALUE". Whether ID and NAME exist is validated against the registry by the caller.
  absl::Status ParseAndSet(absl::string_view assignment);
  void Set(std::string check_id, std::string name, std::string value);
  const std::string* Find(absl::string_view check_id, absl::string_view name) const;
  const std::map<std::pair<std::string, std::string>, std::string>& values() const { return values_; }

 private:
  std::map<std::pair<std::string, std::string>, std::string> values_;
};

// The options of one check: the user's value or the default. CheckRegistry::ValidateOptions rejects unknown options
// and non-numeric values for numeric defaults up front, so the getters need no error path.
class BoundOptions {
 public:
  BoundOptions(const CheckInfo& info, const CheckOptions& options) : info_(info), options_(options) {}
  std::string Get(absl::string_view name) const;
  double GetDouble(absl::string_view name) const;
  bool GetBool(absl::string_view name) const;

 private:
  const CheckInfo& info_;
  const CheckOptions& options_;
};

// What checks can look at: at most one input of each type, owned by the caller. The layer that makes an input
// defines its type (trace::Trace, analysis::TraceAnalysis, analysis::JobSummary, ConfigDocument, EngineRun, ...);
// core carries them without naming them.
class CheckInputs {
 public:
  template <typename Input>
  CheckInputs& Add(const Input& input) {
    inputs_[std::type_index(typeid(Input))] = &input;
    return *this;
  }
  template <typename Input>
  const Input* Find() const {
    auto it = inputs_.find(std::type_index(typeid(Input)));
    return it == inputs_.end() ? nullptr : static_cast<const Input*>(it->second);
  }

 private:
  std::map<std::type_index, const void*> inputs_;
};

class Check {
 public:
  explicit Check(CheckInfo info) : info_(std::move(info)) {}
  virtual ~Check() = default;
  const CheckInfo& info() const { return info_; }
  // True when `inputs` hold what this check reads. A check that does not run is not listed as run.
  virtual bool CanRun(const CheckInputs& inputs) const = 0;
  virtual void Run(const CheckInputs& inputs, const BoundOptions& options, std::vector<Finding>* findings) const = 0;

 protected:
  // A finding with the check id, default severity and title filled in: the one way a check makes a finding.
  Finding NewFinding() const;
  // The same, under another check's id and severity, for a check that reports what belongs to other checks
  // (stderr-messages: each known text under the check whose problem it names).
  Finding NewFindingUnder(std::string check_id, Severity severity) const;

 private:
  CheckInfo info_;
};

// The base of every check: `Inputs` are the kinds of input it reads. It runs when the inputs hold any of them (a
// check that needs more, such as a trace with shadow comparisons, narrows CanRun), and Read is handed each kind,
// null where absent. With one kind of input, Read takes it by reference.
template <typename... Inputs>
class CheckOf : public Check {
 public:
  using Check::Check;
  bool CanRun(const CheckInputs& inputs) const override { return ((inputs.Find<Inputs>() != nullptr) || ...); }
  void Run(const CheckInputs& inputs, const BoundOptions& options, std::vector<Finding>* findings) const final {
    Read(inputs.Find<Inputs>()..., options, findings);
  }

 protected:
  virtual void Read(const Inputs*... inputs, const BoundOptions& options, std::vector<Finding>* findings) const = 0;
};

template <typename Input>
class CheckOf<Input> : public Check {
 public:
  using Check::Check;
  bool CanRun(const CheckInputs& inputs) const override { return inputs.Find<Input>() != nullptr; }
  void Run(const CheckInputs& inputs, const BoundOptions& options, std::vector<Finding>* findings) const final {
    Read(*inputs.Find<Input>(), options, findings);
  }

 protected:
  virtual void Read(const Input& input, const BoundOptions& options, std::vector<Finding>* findings) const = 0;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_CHECK_H_
