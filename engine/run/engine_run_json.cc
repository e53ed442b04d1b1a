#include "engine/run/engine_run_json.h"

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/json_fields.h"

namespace graphcheck {
namespace {

using nlohmann::json;

json LossesToJson(const std::vector<double>& losses) {
  json out = json::array();
  for (double v : losses) out.push_back(NumberToJson(v));
  return out;
}

std::vector<double> LossesFromJson(const json& j) {
  std::vector<double> losses;
  for (const json& v : j) losses.push_back(NumberFromJson(v));
  return losses;
}

absl::StatusOr<EngineRun> EngineRunFromParsed(const json& j) {
  if (!j.is_object() || j.value("schema", "") != kEngineRunSchema) {
    return absl::InvalidArgumentError(absl::StrCat("not an engine result of schema ", kEngineRunSchema));
  }
  EngineRun run;
  run.model = j.at("model").get<std::string>();
  run.scope = j.at("scope").get<std::string>();
  run.compute_dtype = j.at("compute_dtype").get<std::string>();
  for (const json& s : j.at("steps")) {
    absl::StatusOr<Step> step = StepFromJson(s);
    if (!step.ok()) return step.status();
    run.steps.push_back(*std::move(step));
  }
  for (const json& m : j.at("metrics")) run.metrics.push_back(MetricFromJson(m));
  run.eager_losses = LossesFromJson(j.at("eager_losses"));
  run.graphed_losses = LossesFromJson(j.at("graphed_losses"));
  run.eager_repeat_losses = LossesFromJson(j.at("eager_repeat_losses"));
  run.deterministic_settings = j.at("deterministic_settings").get<bool>();
  for (const json& s : j.at("samples")) {
    absl::StatusOr<NumericsSample> sample = SampleFromJson(s);
    if (!sample.ok()) return sample.status();
    run.samples.push_back(*std::move(sample));
  }
  if (j.contains("rng_draws") && !j.at("rng_draws").is_null()) {
    const json& r = j.at("rng_draws");
    RngDraws draws;
    draws.eager_redraw = NumberFromJson(r.at("eager_redraw"));
    draws.eager_reseeded = NumberFromJson(r.at("eager_reseeded"));
    draws.graphed_redraw = NumberFromJson(r.at("graphed_redraw"));
    draws.graphed_vs_eager = NumberFromJson(r.at("graphed_vs_eager"));
    draws.output_abs_max = NumberFromJson(r.at("output_abs_max"));
    draws.eager_offset = r.at("eager_offset").get<uint64_t>();
    draws.graphed_offset = r.at("graphed_offset").get<uint64_t>();
    run.rng_draws = draws;
  }
  if (j.contains("shape_variation") && !j.at("shape_variation").is_null()) {
    const json& v = j.at("shape_variation");
    ShapeVariation variation;
    variation.input = v.at("input").get<std::string>();
    variation.dim = v.at("dim").get<int>();
    variation.captured_size = v.at("captured_size").get<int64_t>();
    for (const json& e : v.at("variants")) {
      ShapeVariant variant;
      variant.size = e.at("size").get<int64_t>();
      variant.eager_ran = e.at("eager_ran").get<bool>();
      variant.captured = e.at("captured").get<bool>();
      variant.graph_nodes = e.at("graph_nodes").get<uint64_t>();
      variant.pool_bytes = e.at("pool_bytes").get<uint64_t>();
      variant.error = e.at("error").get<std::string>();
      variation.variants.push_back(std::move(variant));
    }
    run.shape_variation = std::move(variation);
  }
  if (j.contains("gpu") && !j.at("gpu").is_null()) {
    absl::StatusOr<GpuInfo> gpu = GpuFromJson(j.at("gpu"));
    if (!gpu.ok()) return gpu.status();
    run.gpu = *gpu;
  }
  return run;
}

}  // namespace

std::string EngineRunToJson(const EngineRun& run) {
  json steps = json::array();
  for (const Step& s : run.steps) steps.push_back(StepToJson(s));
  json metrics = json::array();
  for (const Metric& m : run.metrics) metrics.push_back(MetricToJson(m));
  json samples = json::array();
  for (const NumericsSample& s : run.samples) samples.push_back(SampleToJson(s));
  json out{{"schema", kEngineRunSchema},
           {"model", run.model},
           {"scope", run.scope},
           {"compute_dtype", run.compute_dtype},
           {"gpu", run.gpu ? GpuToJson(*run.gpu) : json(nullptr)},
           {"steps", steps},
           {"metrics", metrics},
           {"eager_losses", LossesToJson(run.eager_losses)},
           {"graphed_losses", LossesToJson(run.graphed_losses)},
           {"eager_repeat_losses", LossesToJson(run.eager_repeat_losses)},
           {"deterministic_settings", run.deterministic_settings},
           {"samples", samples}};
  if (run.rng_draws) {
    const RngDraws& r = *run.rng_draws;
    out["rng_draws"] = json{{"eager_redraw", NumberToJson(r.eager_redraw)},
                            {"eager_reseeded", NumberToJson(r.eager_reseeded)},
                            {"graphed_redraw", NumberToJson(r.graphed_redraw)},
                            {"graphed_vs_eager", NumberToJson(r.graphed_vs_eager)},
                            {"output_abs_max", NumberToJson(r.output_abs_max)},
                            {"eager_offset", r.eager_offset},
                            {"graphed_offset", r.graphed_offset}};
  }
  if (run.shape_variation) {
    const ShapeVariation& v = *run.shape_variation;
    json variants = json::array();
    for (const ShapeVariant& e : v.variants) {
      variants.push_back(json{{"size", e.size},
                              {"eager_ran", e.eager_ran},
                              {"captured", e.captured},
                              {"graph_nodes", e.graph_nodes},
                              {"pool_bytes", e.pool_bytes},
                              {"error", e.error}});
    }
    out["shape_variation"] =
        json{{"input", v.input}, {"dim", v.dim}, {"captured_size", v.captured_size}, {"variants", variants}};
  }
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

absl::StatusOr<EngineRun> EngineRunFromJson(absl::string_view text) {
  return ParseJsonText<EngineRun>(text, "engine result", EngineRunFromParsed);
}

}  // namespace graphcheck
