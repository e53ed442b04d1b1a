#include "core/json_fields.h"

#include "core/metrics.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace graphcheck {

using nlohmann::json;

namespace {

absl::StatusOr<StepStatus> ParseStepStatus(const std::string& name) {
  for (StepStatus s : {StepStatus::kOk, StepStatus::kFailed, StepStatus::kSkipped}) {
    if (name == StepStatusName(s)) return s;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown step status '", name, "'"));
}

}  // namespace

json GpuToJson(const GpuInfo& gpu) {
  return json{{"name", gpu.name},
              {"compute_capability", absl::StrCat(gpu.cc_major, ".", gpu.cc_minor)},
              {"driver", gpu.driver}};
}

absl::StatusOr<GpuInfo> GpuFromJson(const json& j) {
  GpuInfo gpu;
  gpu.name = j.at("name").get<std::string>();
  const std::string cc = j.value("compute_capability", "0.0");
  if (std::sscanf(cc.c_str(), "%d.%d", &gpu.cc_major, &gpu.cc_minor) != 2) {
    return absl::InvalidArgumentError(absl::StrCat("bad compute_capability '", cc, "'"));
  }
  gpu.driver = j.value("driver", "");
  return gpu;
}

json StepToJson(const Step& s) {
  return json{{"name", s.name},
              {"status", std::string(StepStatusName(s.status))},
              {"duration_ms", s.duration_ms},
              {"message", s.message}};
}

absl::StatusOr<Step> StepFromJson(const json& s) {
  absl::StatusOr<StepStatus> status = ParseStepStatus(s.at("status").get<std::string>());
  if (!status.ok()) return status.status();
  return Step{s.at("name").get<std::string>(), *status, s.value("duration_ms", 0.0), s.value("message", "")};
}

json MetricToJson(const Metric& m) {
  return json{{"name", m.ScopedName()}, {"value", m.value}, {"unit", m.unit}, {"description", m.description}};
}

Metric MetricFromJson(const json& m) {
  Metric metric{"", m.at("value").get<double>(), m.value("unit", ""), m.value("description", ""), {}};
  metric::SplitScopedName(m.at("name").get<std::string>(), &metric.name, &metric.scope);
  return metric;
}

json NumberToJson(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double NumberFromJson(const json& v) { return v.is_null() ? std::nan("") : v.get<double>(); }

json SampleToJson(const NumericsSample& s) {
  return json{{"name", s.name},
              {"role", std::string(TensorRoleName(s.role))},
              {"dtype", s.dtype},
              {"numel", s.numel},
              {"max_abs_error", NumberToJson(s.max_abs_error)},
              {"worst_index", s.worst_index},
              {"eager_at_worst", NumberToJson(s.eager_at_worst)},
              {"graphed_at_worst", NumberToJson(s.graphed_at_worst)},
              {"eager_abs_max", NumberToJson(s.eager_abs_max)},
              {"eager_nonfinite", s.eager_nonfinite},
              {"graphed_nonfinite", s.graphed_nonfinite},
              {"eager_spread", NumberToJson(s.eager_spread)},
              {"changed_in_eager", s.changed_in_eager},
              {"changed_in_graphed", s.changed_in_graphed}};
}

absl::StatusOr<NumericsSample> SampleFromJson(const json& j) {
  NumericsSample s;
  s.name = j.at("name").get<std::string>();
  absl::StatusOr<TensorRole> role = ParseTensorRole(j.at("role").get<std::string>());
  if (!role.ok()) return role.status();
  s.role = *role;
  s.dtype = j.at("dtype").get<std::string>();
  s.numel = j.at("numel").get<int64_t>();
  s.max_abs_error = NumberFromJson(j.at("max_abs_error"));
  s.worst_index = j.at("worst_index").get<int64_t>();
  s.eager_at_worst = NumberFromJson(j.at("eager_at_worst"));
  s.graphed_at_worst = NumberFromJson(j.at("graphed_at_worst"));
  s.eager_abs_max = NumberFromJson(j.at("eager_abs_max"));
  s.eager_nonfinite = j.at("eager_nonfinite").get<int64_t>();
  s.graphed_nonfinite = j.at("graphed_nonfinite").get<int64_t>();
  s.eager_spread = NumberFromJson(j.at("eager_spread"));
  s.changed_in_eager = j.at("changed_in_eager").get<bool>();
  s.changed_in_graphed = j.at("changed_in_graphed").get<bool>();
  return s;
}

}  // namespace graphcheck
