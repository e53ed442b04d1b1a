// The JSON form of core's records that more than one file format holds: a run's steps and metrics, the GPU,
// numerics samples, numbers that may be NaN or infinite, and the parse that turns nlohmann's exceptions into a Status.
// The report format (report/json.h) and the engine's run format (engine/run/engine_run_json.h) are built from these.
// The ...FromJson readers throw nlohmann's exceptions on a missing or mistyped field: call them only inside
// ParseJsonText, which turns them into a Status, so that none leaves the format's reader.
#ifndef GRAPHCHECK_CORE_JSON_FIELDS_H_
#define GRAPHCHECK_CORE_JSON_FIELDS_H_

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/environment.h"
#include "core/numerics_sample.h"
#include "core/report.h"

namespace graphcheck {

nlohmann::json GpuToJson(const GpuInfo& gpu);
absl::StatusOr<GpuInfo> GpuFromJson(const nlohmann::json& j);

nlohmann::json StepToJson(const Step& s);
absl::StatusOr<Step> StepFromJson(const nlohmann::json& s);

nlohmann::json MetricToJson(const Metric& m);
Metric MetricFromJson(const nlohmann::json& m);

nlohmann::json SampleToJson(const NumericsSample& s);
absl::StatusOr<NumericsSample> SampleFromJson(const nlohmann::json& j);

// Losses and numerics may be NaN or infinite, which JSON cannot spell: they are written as null and read back as NaN.
nlohmann::json NumberToJson(double v);
double NumberFromJson(const nlohmann::json& v);

// Runs `parse` on `text`, turning nlohmann's exceptions into InvalidArgument naming `what`.
template <typename T, typename Parse>
absl::StatusOr<T> ParseJsonText(absl::string_view text, absl::string_view what, Parse parse) {
  try {
    return parse(nlohmann::json::parse(text.begin(), text.end()));
  } catch (const nlohmann::json::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat("not valid JSON: ", e.what()));
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not a valid ", what, ": ", e.what()));
  }
}

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_JSON_FIELDS_H_
