// What `graphcheck check`'s engine measured: the pipeline's steps and metrics, and the snapshots the checks read
// (the loss of every eager and every graphed training step, run from the same initial state on the same inputs, a
// second eager run that measures eager's own run-to-run noise, and per-tensor numerics samples).
// The engine process writes it as JSON (engine/run/engine_run_json.h); the CLI reads it back and merges it with the
// analysis of the engine's trace.
#ifndef GRAPHCHECK_ENGINE_RUN_ENGINE_RUN_H_
#define GRAPHCHECK_ENGINE_RUN_ENGINE_RUN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/environment.h"
#include "core/numerics_sample.h"
#include "core/report.h"

namespace graphcheck {

// The forward run twice in a row on the first batch, the random generators advancing in between, by eager and by the
// graphs, each right after the same seed: whether outputs depend on random draws, and whether replays draw as eager
// does. Differences are the largest |a - b| over the outputs' elements (NaN and Inf pairs skipped).
struct RngDraws {
  double eager_redraw = 0;      // eager's second draw against its first
  double eager_reseeded = 0;    // eager's first draw again after the same seed: its own run-to-run noise
  double graphed_redraw = 0;    // the second replay against the first
  double graphed_vs_eager = 0;  // the first replay against eager's first draw
  double output_abs_max = 0;    // the largest |output| of eager's first draw, the scale of the above
  uint64_t eager_offset = 0;    // how far one eager forward advanced the default CUDA generator (Philox offset)
  uint64_t graphed_offset = 0;  // how far one forward replay advanced it

  bool operator==(const RngDraws& o) const {
    return eager_redraw == o.eager_redraw && eager_reseeded == o.eager_reseeded && graphed_redraw == o.graphed_redraw &&
           graphed_vs_eager == o.graphed_vs_eager && output_abs_max == o.output_abs_max &&
           eager_offset == o.eager_offset && graphed_offset == o.graphed_offset;
  }
};

// A model input whose dimension the user said varies (--vary): what each size needs. A graph replays the shapes it
// captured, so each size needs graphs of its own.
struct ShapeVariant {
  int64_t size = 0;
  bool eager_ran = false;  // the eager forward and backward ran at this size
  bool captured = false;   // MakeGraphedCallables captured graphs for it
  uint64_t graph_nodes = 0;
  uint64_t pool_bytes = 0;  // what the caching allocator held for their pool
  std::string error;        // why eager or capture failed at this size

  bool operator==(const ShapeVariant& o) const {
    return size == o.size && eager_ran == o.eager_ran && captured == o.captured && graph_nodes == o.graph_nodes &&
           pool_bytes == o.pool_bytes && error == o.error;
  }
};
struct ShapeVariation {
  std::string input;          // the model's argument
  int dim = 0;                // its dimension
  int64_t captured_size = 0;  // the size the pipeline's graphs captured
  std::vector<ShapeVariant> variants;

  bool operator==(const ShapeVariation& o) const {
    return input == o.input && dim == o.dim && captured_size == o.captured_size && variants == o.variants;
  }
};

struct EngineRun {
  std::string model;          // "builtin:transformer" or the TorchScript path
  std::string scope;          // "callables" or "full-iteration"
  std::string compute_dtype;  // "float32", "bfloat16", "float16": the precision the losses were computed in
  std::vector<Step> steps;
  std::vector<Metric> metrics;
  std::vector<double> eager_losses;    // eager reference steps, in order
  std::vector<double> graphed_losses;  // replayed steps from the same initial state and inputs; empty if none ran
  // The eager steps again from the same state: where they equal eager_losses bitwise (and every sample's spread is
  // 0), the model computes deterministically and graphed must match eager exactly. Empty: no repeat ran.
  std::vector<double> eager_repeat_losses;
  // The engine asked for deterministic kernels: cuDNN deterministic, its benchmark off, TF32 off.
  bool deterministic_settings = false;
  std::vector<NumericsSample> samples;
  std::optional<RngDraws> rng_draws;  // absent: not measured (full-iteration scope, or a step before it failed)
  std::optional<ShapeVariation> shape_variation;  // --vary
  std::optional<GpuInfo> gpu;

  bool operator==(const EngineRun& o) const {
    return model == o.model && scope == o.scope && compute_dtype == o.compute_dtype && steps == o.steps &&
           metrics == o.metrics && eager_losses == o.eager_losses && graphed_losses == o.graphed_losses &&
           eager_repeat_losses == o.eager_repeat_losses && deterministic_settings == o.deterministic_settings &&
           samples == o.samples && rng_draws == o.rng_draws && shape_variation == o.shape_variation && gpu == o.gpu;
  }
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_ENGINE_RUN_ENGINE_RUN_H_
