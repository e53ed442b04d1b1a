// A check: one class per diagnosis, registered under a stable kebab-case id (clang-tidy style). Checks are pure
// functions of their inputs (environment, trace, configuration) and emit findings; they never fail.
#ifndef GRAPHCHECK_CORE_CHECK_H_
#define GRAPHCHECK_CORE_CHECK_H_

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/environment.h"
#include "core/finding.h"
#include "core/severity.h"

namespace graphcheck {

namespace trace {
struct Trace;
}  // namespace trace
namespace analyzers {
struct JobSummary;  // analyzers/job_summary.h
}  // namespace analyzers
class ConfigDocument;  // validators/config/config_document.h
struct EngineRun;      // core/engine_run.h
struct CaptureOrder;   // validators/schedule/capture_order.h

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

// Work that several checks derive from the same inputs, built once by whoever runs the checks (analyzers/ keeps its
// per-trace analysis here: capture windows, iterations, the kernel index). A check that finds none, or one built for
// other inputs, derives its own, so setting it only saves time.
class DerivedInputs {
 public:
  virtual ~DerivedInputs() = default;
};

// What checks can look at. A check whose input is absent does not run and is not listed as run.
struct CheckInputs {
  const Environment* environment = nullptr;
  const trace::Trace* trace = nullptr;     // one process's recorded events (analyzers/)
  const ConfigDocument* config = nullptr;  // a training configuration (lint --config)
  const CaptureOrder* order = nullptr;     // a capture order for make_graphed_callables (lint --order)
  // The program's stderr, one entry per line (`run` tees it; `analyze --stderr FILE`): known PyTorch, Transformer
  // Engine and Megatron error texts map to check ids (analyzers/stderr_messages.cc).
  const std::vector<std::string>* stderr_lines = nullptr;
  const EngineRun* engine = nullptr;  // what `check`'s engine measured (eager and graphed losses, steps)
  // Every process of a distributed job, summarized once its trace was analyzed (analyzers/job_summary.h).
  const analyzers::JobSummary* job = nullptr;
  const DerivedInputs* derived = nullptr;  // shared derived work for these inputs; optional
};

class Check {
 public:
  virtual ~Check() = default;
  virtual const CheckInfo& info() const = 0;
  // True when `inputs` hold what this check reads.
  virtual bool CanRun(const CheckInputs& inputs) const = 0;
  virtual void Run(const CheckInputs& inputs, const BoundOptions& options, std::vector<Finding>* findings) const = 0;

 protected:
  // A finding with the check id, default severity and title filled in.
  Finding NewFinding() const;
};

// Checks that read only the environment snapshot.
class EnvironmentCheck : public Check {
 public:
  bool CanRun(const CheckInputs& inputs) const final { return inputs.environment != nullptr; }
  void Run(const CheckInputs& inputs, const BoundOptions& options, std::vector<Finding>* findings) const final {
    CheckEnvironment(*inputs.environment, options, findings);
  }

 protected:
  virtual void CheckEnvironment(const Environment& env, const BoundOptions& options,
                                std::vector<Finding>* findings) const = 0;
};

// Checks that read one process's trace.
class TraceCheck : public Check {
 public:
  bool CanRun(const CheckInputs& inputs) const final { return inputs.trace != nullptr; }
  void Run(const CheckInputs& inputs, const BoundOptions& options, std::vector<Finding>* findings) const final {
    CheckTrace(*inputs.trace, options, findings);
  }

 protected:
  virtual void CheckTrace(const trace::Trace& trace, const BoundOptions& options,
                          std::vector<Finding>* findings) const = 0;
};

// Checks that read one training configuration (Megatron Bridge YAML / JSON or Megatron Core arguments).
class ConfigCheck : public Check {
 public:
  bool CanRun(const CheckInputs& inputs) const final { return inputs.config != nullptr; }
  void Run(const CheckInputs& inputs, const BoundOptions& options, std::vector<Finding>* findings) const final {
    CheckConfig(*inputs.config, options, findings);
  }

 protected:
  virtual void CheckConfig(const ConfigDocument& config, const BoundOptions& options,
                           std::vector<Finding>* findings) const = 0;
};

// Checks that read what `graphcheck check`'s engine measured.
class EngineCheck : public Check {
 public:
  bool CanRun(const CheckInputs& inputs) const final { return inputs.engine != nullptr; }
  void Run(const CheckInputs& inputs, const BoundOptions& options, std::vector<Finding>* findings) const final {
    CheckEngineRun(*inputs.engine, options, findings);
  }

 protected:
  virtual void CheckEngineRun(const EngineRun& run, const BoundOptions& options,
                              std::vector<Finding>* findings) const = 0;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_CHECK_H_
