// The report: everything one graphcheck invocation found and measured. Renderers in report/ turn it into text,
// JSON, JUnit XML; the JSON form is the saved, versioned one (docs/report-schema.md).
#ifndef GRAPHCHECK_CORE_REPORT_H_
#define GRAPHCHECK_CORE_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/environment.h"
#include "core/finding.h"

namespace graphcheck {

struct Machine {
  std::string hostname;
  std::optional<GpuInfo> gpu;  // absent when no GPU was seen (lint, analyze on a CPU machine)
};

enum class StepStatus { kOk, kFailed, kSkipped };
absl::string_view StepStatusName(StepStatus status);  // "ok", "failed", "skipped"

// One named stage of a run: "eager-reference", "warmup", "forward-capture", "lint-config", ...
struct Step {
  std::string name;
  StepStatus status = StepStatus::kOk;
  double duration_ms = 0;
  std::string message;  // why it failed or was skipped

  bool operator==(const Step& o) const {
    return name == o.name && status == o.status && duration_ms == o.duration_ms && message == o.message;
  }
};

struct Metric {
  std::string name;  // dotted, e.g. "launch.kernels_per_iteration"
  double value = 0;
  std::string unit;  // "us", "count", "ratio", "bytes"
  std::string description;

  bool operator==(const Metric& o) const {
    return name == o.name && value == o.value && unit == o.unit && description == o.description;
  }
};

struct Report {
  std::string tool_version;
  std::string mode;                  // "lint", "run", "analyze", "check"
  std::vector<std::string> command;  // graphcheck's own argv
  Machine machine;
  std::vector<Step> steps;
  std::vector<std::string> checks_run;
  std::vector<Finding> findings;
  std::vector<Metric> metrics;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_REPORT_H_
