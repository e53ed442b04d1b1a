#include "engine/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <utility>

#include <ATen/Context.h>
#include <ATen/core/grad_mode.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/metrics.h"
#include "core/plural.h"
#include "core/quantile.h"
#include "engine/fused_optimizer.h"
#include "engine/graphed_callables.h"
#include "engine/internal/training_steps.h"
#include "engine/models.h"
#include "engine/numerics_snapshot.h"
#include "engine/rng_draws.h"
#include "engine/torch_edge.h"

namespace graphcheck {
namespace {

constexpr int kDistinctBatches = 4;  // replays copy new data in, as a training loop does
// Untimed eager steps before the eager reference, then a restart. Seen on an H100 with torchvision's
// MobileNetV3-small exported to TorchScript: the profiling executor runs the first step unfused (hardsigmoid, then
// mul) and fuses from the second on, so an eager reference that started cold computed its first step with other
// kernels than every later run (the graph's included): a dynamic-control-flow warning and a first-step numerics
// difference that were the JIT's, not the model's. Three steps also leave cuBLAS/cuDNN handles and the allocator warm.
constexpr int kEagerWarmupSteps = 3;

// Steps run in order; after a failure the rest are recorded as skipped.
class StepLog {
 public:
  explicit StepLog(std::vector<Step>* steps) : steps_(steps) {}

  bool failed() const { return failed_; }

  // Runs `body` as step NAME; false when it failed or an earlier step had.
  bool Run(absl::string_view name, const std::function<absl::Status()>& body) {
    if (failed_) return false;
    const auto start = std::chrono::steady_clock::now();
    absl::Status status;
    {
      NvtxRange range(name);
      status = body();
    }
    Add(name, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(), status);
    return status.ok();
  }

  void Add(absl::string_view name, double ms, const absl::Status& status) {
    steps_->push_back(Step{std::string(name), status.ok() ? StepStatus::kOk : StepStatus::kFailed, ms,
                           status.ok() ? "" : std::string(status.message())});
    if (!status.ok()) {
      failed_ = true;
      failed_step_ = std::string(name);
    }
  }

  // Records every name in `planned` that has no step yet as skipped.
  void SkipRemaining(const std::vector<std::string>& planned) {
    for (const std::string& name : planned) {
      const bool present = std::any_of(steps_->begin(), steps_->end(), [&](const Step& s) { return s.name == name; });
      if (!present) {
        steps_->push_back(Step{name, StepStatus::kSkipped, 0, absl::StrCat("not run: ", failed_step_, " failed")});
      }
    }
  }

 private:
  std::vector<Step>* steps_;
  bool failed_ = false;
  std::string failed_step_;
};

struct Timing {
  double median = 0, p10 = 0, p90 = 0;
};

Timing Summarize(std::vector<double> values) {
  Timing t;
  if (values.empty()) return t;
  t.median = Quantile(values, 0.5);
  t.p10 = Quantile(values, 0.1);
  t.p90 = Quantile(std::move(values), 0.9);
  return t;
}

// The median, 10th and 90th percentile of `t` as the three metrics given.
void AddTimingMetrics(const metric::Spec& median, const metric::Spec& p10, const metric::Spec& p90, const Timing& t,
                      std::vector<Metric>* out) {
  out->push_back(median.With(t.median));
  out->push_back(p10.With(t.p10));
  out->push_back(p90.With(t.p90));
}

// Deterministic kernels, so that a second eager run can reproduce the first bitwise and graphed can be held to that
// (checks/engine/numerics_rule.h). TF32 off as well: it is a precision choice, not a determinism one, but it
// makes float32 comparisons loose.
void AskForDeterministicKernels() {
  at::globalContext().setDeterministicCuDNN(true);
  at::globalContext().setBenchmarkCuDNN(false);
  at::globalContext().setAllowTF32CuDNN(false);
  at::globalContext().setAllowTF32CuBLAS(false);
}

// Resolves the inputs: --inputs, --input, or the built-in's defaults; InvalidArgument when they do not fit.
absl::StatusOr<std::vector<std::vector<at::Tensor>>> ResolveBatches(const CheckPlan& plan, const Model& model,
                                                                    const at::Device& device) {
  if (!plan.inputs_file.empty()) {
    absl::StatusOr<std::vector<at::Tensor>> loaded = LoadInputs(plan.inputs_file, model.inputs, device);
    if (!loaded.ok()) return loaded.status();
    return std::vector<std::vector<at::Tensor>>{*std::move(loaded)};
  }
  std::vector<InputSpec> specs = plan.inputs;
  if (specs.empty()) {
    const bool shaped =
        std::all_of(model.inputs.begin(), model.inputs.end(), [](const InputSpec& s) { return !s.shape.empty(); });
    if (!shaped) {
      return absl::InvalidArgumentError(
          absl::StrCat("the model's forward takes (",
                       absl::StrJoin(model.inputs, ", ", [](std::string* o, const InputSpec& s) { o->append(s.name); }),
                       "): give each with --input NAME:DIMxDIM...:DTYPE, or --inputs FILE"));
    }
    specs = model.inputs;
  } else {
    std::vector<InputSpec> ordered;
    for (const InputSpec& wanted : model.inputs) {
      auto it = std::find_if(specs.begin(), specs.end(), [&](const InputSpec& s) { return s.name == wanted.name; });
      if (it == specs.end() && model.inputs.size() == 1 && specs.size() == 1) it = specs.begin();
      if (it == specs.end()) {
        return absl::InvalidArgumentError(absl::StrCat("no --input for the model's argument '", wanted.name, "'"));
      }
      ordered.push_back(*it);
    }
    if (specs.size() != model.inputs.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(specs.size(), " --input given; the model takes ", model.inputs.size()));
    }
    specs = std::move(ordered);
  }
  std::vector<std::vector<at::Tensor>> batches;
  for (int k = 0; k < kDistinctBatches; ++k) batches.push_back(MakeInputs(specs, device, plan.seed + 1 + k));
  return batches;
}

// For --vary: at each size of the varied dimension, an eager forward and backward, then MakeGraphedCallables' graphs
// of `callable` (a graph replays the shapes it captured: each size needs its own). A size that fails says why.
ShapeVariation MeasureShapeVariants(const VariedDimension& varied, size_t input, int64_t captured_size,
                                    const Callable& callable, const std::vector<at::Tensor>& batch,
                                    const GraphOptions& options, FusedOptimizer* optimizer) {
  ShapeVariation variation{varied.input, varied.dim, captured_size, {}};
  for (int64_t size : varied.sizes) {
    ShapeVariant& variant = variation.variants.emplace_back();
    variant.size = size;
    std::vector<at::Tensor> inputs = batch;
    std::vector<int64_t> shape = batch[input].sizes().vec();
    shape[varied.dim] = size;
    absl::Status status = CallTorch(absl::StrCat("eager step at size ", size), [&] {
      const at::Tensor& like = batch[input];
      inputs[input] =
          like.is_floating_point() ? at::randn(shape, like.options()) : at::randint(0, 10, shape, like.options());
      at::Tensor loss = LossOf(callable.forward(inputs));
      if (loss.requires_grad()) loss.backward();
      if (optimizer != nullptr) optimizer->ZeroGrad();
    });
    variant.eager_ran = status.ok();
    if (status.ok()) {
      std::vector<c10::IValue> sample(inputs.begin(), inputs.end());
      GraphOptions quiet = options;
      quiet.on_phase = nullptr;
      absl::StatusOr<GraphedCallables> made = MakeGraphedCallables({callable}, {sample}, quiet);
      status = made.status();
      if (made.ok()) {
        const GraphedCallable& graphed = made->callables.front();
        variant.captured = true;
        variant.graph_nodes = graphed.forward_nodes() + graphed.backward_nodes();
        variant.pool_bytes = GraphPoolBytes(made->pool);
      }
    }
    if (!status.ok()) variant.error = std::string(status.message());
  }
  return variation;
}

// The parts of a plan that must go together (the engine's command line has checked each name).
absl::Status ValidatePlan(const CheckPlan& plan) {
  if (plan.warmup < 0 || plan.steps < 1) return absl::InvalidArgumentError("--warmup must be >= 0 and --replays >= 1");
  if (plan.scope == GraphScope::kFullIteration && !plan.train) {
    return absl::InvalidArgumentError("--scope full-iteration graphs a training iteration: it needs --train");
  }
  if (plan.vary && plan.scope == GraphScope::kFullIteration) {
    return absl::InvalidArgumentError("--vary captures the forward and backward per size: it needs --scope callables");
  }
  return absl::OkStatus();
}

// The steps the plan runs, in order: those a failure leaves unrun are reported skipped.
std::vector<std::string> PlannedSteps(const CheckPlan& plan) {
  const bool full_iteration = plan.scope == GraphScope::kFullIteration;
  std::vector<std::string> planned = {"load-model", "eager-warmup"};
  if (!plan.timing_only) planned.insert(planned.end(), {"eager-reference", "eager-repeat"});
  if (full_iteration) {
    planned.insert(planned.end(), {"warmup", "full-iteration-capture"});
  } else {
    planned.insert(planned.end(), {"warmup", "forward-capture", "backward-capture"});
  }
  if (plan.timing_only) {
    planned.push_back("timing");
  } else {
    planned.push_back("replay");
    if (!full_iteration) planned.push_back("rng-draws");
    if (plan.vary) planned.push_back("shape-variants");
  }
  return planned;
}

// What the run measured, for its metrics.
struct RunFigures {
  const std::vector<double>& eager_us;
  const std::vector<double>& graphed_us;
  const std::vector<double>& outside_graphable_us;  // per timed eager step: its time less its forward's and backward's
  size_t graphs = 0;
  size_t nodes = 0;
  double capture_ms = 0;
  uint64_t pool_bytes = 0;
};

void AddRunMetrics(const RunFigures& figures, EngineRun* out) {
  EngineRun& run = *out;
  const Timing eager = Summarize(figures.eager_us), graphed_timing = Summarize(figures.graphed_us);
  if (!figures.eager_us.empty())
    AddTimingMetrics(metric::kCheckEagerStepUs, metric::kCheckEagerStepUsP10, metric::kCheckEagerStepUsP90, eager,
                     &run.metrics);
  if (!figures.graphed_us.empty()) {
    AddTimingMetrics(metric::kCheckGraphedStepUs, metric::kCheckGraphedStepUsP10, metric::kCheckGraphedStepUsP90,
                     graphed_timing, &run.metrics);
    run.metrics.push_back(metric::kCheckSpeedup.With(eager.median / graphed_timing.median));
  }
  if (!figures.outside_graphable_us.empty()) {
    run.metrics.push_back(metric::kCheckEagerOutsideGraphableUs.With(Summarize(figures.outside_graphable_us).median));
  }
  if (!run.eager_repeat_losses.empty() && run.eager_repeat_losses.size() == run.eager_losses.size()) {
    double spread = 0;
    for (size_t i = 0; i < run.eager_losses.size(); ++i) {
      spread = std::max(spread, std::fabs(run.eager_repeat_losses[i] - run.eager_losses[i]));
    }
    run.metrics.push_back(metric::kCheckEagerRepeatLossSpread.With(spread));
  }
  if (!run.samples.empty()) {
    run.metrics.push_back(metric::kCheckNumericsTensors.With(static_cast<double>(run.samples.size())));
  }
  if (figures.graphs > 0) {
    run.metrics.push_back(metric::kCheckGraphs.With(static_cast<double>(figures.graphs)));
    run.metrics.push_back(metric::kCheckGraphNodes.With(static_cast<double>(figures.nodes)));
    run.metrics.push_back(metric::kCheckCaptureMs.With(figures.capture_ms));
    run.metrics.push_back(metric::kCheckGraphPoolBytes.With(static_cast<double>(figures.pool_bytes)));
  }
}

// One run of the pipeline. Each step is a method; what a step leaves for the later ones (the model, the batches, the
// graphs, the timings, the snapshots) is a member.
class CheckPipeline {
 public:
  explicit CheckPipeline(const CheckPlan& plan)
      : plan_(plan), full_iteration_(plan.scope == GraphScope::kFullIteration), log_(&run_.steps) {}

  absl::StatusOr<EngineRun> Run() {
    if (absl::Status s = Start(); !s.ok()) return s;
    if (absl::Status s = LoadModelAndInputs(); !s.ok()) return s;  // bad input (exit 2), not a failed step
    if (absl::Status s = PrepareTraining(); !s.ok()) return s;
    RunEager();
    if (full_iteration_) {
      CaptureFullIteration();
    } else {
      CaptureCallables();
    }
    if (plan_.timing_only) {
      TimeEagerAndGraphedSteps();
    } else {
      Replay();
      if (!full_iteration_) DrawRandomNumbers();
      if (plan_.vary) CaptureShapeVariants();
    }
    log_.SkipRemaining(PlannedSteps(plan_));
    CompareNumerics();
    AddRunMetrics({eager_us_, graphed_us_, outside_graphable_us_, graphs_, nodes_, capture_ms_,
                   graphs_ > 0 ? GraphPoolBytes(pool_) : 0},
                  &run_);
    return std::move(run_);
  }

 private:
  // The model named and the plan checked, a GPU present, the deterministic settings asked for and the run's
  // description filled in.
  absl::Status Start() {
    absl::StatusOr<ModelRef> ref = ResolveModelRef(plan_.model);
    if (!ref.ok()) return ref.status();
    model_ref_ = *std::move(ref);
    if (absl::Status valid = ValidatePlan(plan_); !valid.ok()) return valid;
    if (!torch::cuda::is_available()) {
      return absl::FailedPreconditionError("no CUDA device is available to LibTorch: graphcheck check needs a GPU");
    }
    // The eager reference runs on the default stream and the warmup on a side stream, so parameters' AccumulateGrad
    // nodes change streams once; LibTorch's warning about it describes the engine's sequence, not the model.
    at::globalContext().setWarnOnAccumulateGradStreamMismatch(false);
    if (plan_.deterministic) AskForDeterministicKernels();
    run_.deterministic_settings = plan_.deterministic;
    run_.model = plan_.model;
    run_.scope = full_iteration_ ? "full-iteration" : "callables";
    run_.compute_dtype = plan_.amp == Autocast::kBf16   ? "bfloat16"
                         : plan_.amp == Autocast::kFp16 ? "float16"
                                                        : "float32";
    const cudaDeviceProp* properties = nullptr;
    if (CallTorch("device", [&] { properties = at::cuda::getDeviceProperties(0); }).ok() && properties) {
      run_.gpu = GpuInfo{properties->name, properties->major, properties->minor, ""};
    }
    return absl::OkStatus();
  }

  // Step "load-model": the model, its batches and --vary's input. Checked before anything runs.
  absl::Status LoadModelAndInputs() {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Model> loaded = LoadModel(model_ref_, device_, plan_.seed);
    if (!loaded.ok()) return loaded.status();
    model_ = *std::move(loaded);
    absl::StatusOr<std::vector<std::vector<at::Tensor>>> resolved = ResolveBatches(plan_, *model_, device_);
    if (!resolved.ok()) return resolved.status();
    batches_ = *std::move(resolved);
    if (plan_.vary) {
      auto it = std::find_if(model_->inputs.begin(), model_->inputs.end(),
                             [&](const InputSpec& s) { return s.name == plan_.vary->input; });
      if (it == model_->inputs.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--vary names '", plan_.vary->input, "', which is not an input of the model"));
      }
      varied_input_ = static_cast<size_t>(it - model_->inputs.begin());
      if (plan_.vary->dim >= batches_.front()[varied_input_].dim()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--vary: input '", plan_.vary->input, "' has ",
            Plural(batches_.front()[varied_input_].dim(), "dimension", "dimensions"), ", not ", plan_.vary->dim + 1));
      }
    }
    log_.Add("load-model", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
             absl::OkStatus());
    return absl::OkStatus();
  }

  // Training or evaluation mode, autocast, the optimizer, and the initial state every run restarts from.
  absl::Status PrepareTraining() {
    model_->set_training(plan_.train);
    forward_ = model_->callable.forward;
    if (plan_.amp != Autocast::kOff) {
      forward_ = WithAutocast(forward_, plan_.amp == Autocast::kBf16 ? at::kBFloat16 : at::kHalf);
    }
    if (!plan_.train) no_grad_.emplace();
    if (plan_.train) {
      if (absl::Status s =
              CallTorch("optimizer", [&] { optimizer_.emplace(plan_.optimizer, model_->callable.parameters); });
          !s.ok()) {
        return s;
      }
    }
    initial_.emplace(*model_);
    return absl::OkStatus();
  }

  FusedOptimizer* optimizer() { return optimizer_ ? &*optimizer_ : nullptr; }

  // The same parameters, optimizer state and random stream as the eager reference had.
  void Restart() {
    initial_->Restore(*model_);
    if (optimizer_) {
      optimizer_->Reset();
      optimizer_->ZeroGrad();
    }
    at::manual_seed(plan_.seed);
  }

  // Timed eager steps from the initial state, keeping what the checks compare (RunSnapshot).
  absl::Status EagerRun(absl::string_view what, std::vector<double>* step_us, std::vector<double>* losses,
                        RunSnapshot* snapshot) {
    if (absl::Status s = CallTorch(what, [&] { Restart(); }); !s.ok()) return s;
    std::vector<at::Tensor> first_outputs;
    const ForwardFn keeping = KeepingFirstOutputs(forward_, &first_outputs);
    FusedOptimizer* opt = optimizer();
    const bool mark_graphable = !full_iteration_;
    const StepFn step = [&](const std::vector<at::Tensor>& batch) {
      return RunStep(keeping, batch, opt, /*grads_in_place=*/false, mark_graphable);
    };
    absl::Status s = RunSteps(plan_.steps, batches_, SnapshottingFirstStep(step, *model_, &first_outputs, snapshot),
                              step_us, losses);
    if (s.ok()) s = CallTorch(what, [&] { snapshot->TakeFinalState(model_->named_state()); });
    return s;
  }

  // Steps "eager-warmup", "eager-reference" and "eager-repeat". Eager runs twice from the same state: the second
  // measures eager's own run-to-run noise, which the numerics checks must not take for a graph defect.
  void RunEager() {
    log_.Run("eager-warmup", [&] {
      return CallTorch("eager warmup", [&] {
        for (int i = 0; i < kEagerWarmupSteps; ++i) RunStep(forward_, batches_[i % batches_.size()], optimizer());
        c10::cuda::device_synchronize();
      });
    });
    if (plan_.timing_only) return;
    log_.Run("eager-reference",
             [&] { return EagerRun("eager reference", &eager_us_, &run_.eager_losses, &eager_snapshot_); });
    log_.Run("eager-repeat",
             [&] { return EagerRun("eager repeat", nullptr, &run_.eager_repeat_losses, &repeat_snapshot_); });
  }

  // Steps "warmup", "forward-capture" and "backward-capture", named by MakeGraphedCallables' phases.
  void CaptureCallables() {
    if (log_.failed()) return;
    GraphOptions options;
    options.warmup_iterations = plan_.warmup;
    options.on_phase = [&](absl::string_view phase, double ms, bool ok) {
      if (phase != "warmup") capture_ms_ += ms;
      log_.Add(phase, ms, ok ? absl::OkStatus() : absl::InternalError("(see below)"));
    };
    Callable callable = model_->callable;
    callable.forward = forward_;
    std::vector<c10::IValue> sample;
    for (const at::Tensor& t : batches_.front()) sample.emplace_back(t.clone());
    absl::StatusOr<GraphedCallables> made = MakeGraphedCallables({callable}, {sample}, options);
    if (!made.ok()) {
      if (!run_.steps.empty() && run_.steps.back().status == StepStatus::kFailed) {
        run_.steps.back().message = std::string(made.status().message());
      } else {
        log_.Add("warmup", 0, made.status());  // rejected before any phase ran
      }
      return;
    }
    graphed_ = *std::move(made);
    pool_ = graphed_->pool;
    const GraphedCallable& graphed = graphed_->callables.front();
    graphs_ = graphed.backward_nodes() > 0 ? 2 : 1;
    nodes_ = graphed.forward_nodes() + graphed.backward_nodes();
    graphed_forward_ = [&graphed](const std::vector<at::Tensor>& in) { return graphed(in); };
    const ForwardFn replay = KeepingFirstOutputs(graphed_forward_, &graphed_first_outputs_);
    FusedOptimizer* opt = optimizer();
    graphed_step_ = [replay, opt](const std::vector<at::Tensor>& batch) { return RunStep(replay, batch, opt); };
  }

  // Steps "warmup" and "full-iteration-capture": forward, backward and optimizer step in one graph, on static inputs.
  void CaptureFullIteration() {
    if (log_.failed()) return;
    pool_ = at::cuda::graph_pool_handle();
    for (const at::Tensor& t : batches_.front()) static_inputs_.push_back(t.clone());
    log_.Run("warmup", [&] {
      return CallTorch("warmup", [&] {
        c10::cuda::device_synchronize();
        c10::cuda::CUDAStreamGuard side(c10::cuda::getStreamFromPool());
        for (int i = 0; i < plan_.warmup; ++i) RunStep(forward_, static_inputs_, optimizer(), /*grads_in_place=*/true);
        c10::cuda::device_synchronize();
      });
    });
    log_.Run("full-iteration-capture", [&] {
      const auto start = std::chrono::steady_clock::now();
      full_graph_.emplace(/*keep_graph=*/true);
      absl::Status s = CaptureGraph(&*full_graph_, pool_, cudaStreamCaptureModeGlobal, "full-iteration capture", [&] {
        static_loss_ = RunStep(forward_, static_inputs_, optimizer(), /*grads_in_place=*/true);
      });
      if (s.ok()) s = CallTorch("full-iteration graph instantiation", [&] { full_graph_->instantiate(); });
      capture_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      if (s.ok()) {
        graphs_ = 1;
        nodes_ = GraphNodeCount(*full_graph_);
      }
      return s;
    });
    graphed_step_ = [this](const std::vector<at::Tensor>& batch) {
      for (size_t i = 0; i < batch.size(); ++i) static_inputs_[i].copy_(batch[i]);
      full_graph_->replay();
      return static_loss_.clone();
    };
  }

  // Step "timing" (the run without the recorder): eager steps, then graphed steps, each timed.
  void TimeEagerAndGraphedSteps() {
    log_.Run("timing", [&] {
      if (absl::Status s = CallTorch("timing", [&] { Restart(); }); !s.ok()) return s;
      std::vector<double> parts_us;
      FusedOptimizer* opt = optimizer();
      const StepFn eager_step = [&](const std::vector<at::Tensor>& batch) {
        double part_us = 0;
        at::Tensor loss = RunStep(forward_, batch, opt, /*grads_in_place=*/false, /*mark_graphable=*/false, &part_us);
        parts_us.push_back(part_us);
        return loss;
      };
      absl::Status s = RunSteps(plan_.steps, batches_, eager_step, &eager_us_, /*losses=*/nullptr);
      for (size_t i = 0; s.ok() && !full_iteration_ && i < eager_us_.size() && i + 1 < parts_us.size(); ++i) {
        outside_graphable_us_.push_back(std::max(0.0, eager_us_[i] - parts_us[i + 1]));  // the first step is untimed
      }
      if (s.ok()) s = RunSteps(plan_.steps, batches_, graphed_step_, &graphed_us_, nullptr);
      return s;
    });
  }

  // Step "replay": the graphed steps from the same initial state and batches as the eager reference.
  void Replay() {
    log_.Run("replay", [&] {
      if (absl::Status s = CallTorch("replay", [&] { Restart(); }); !s.ok()) return s;
      absl::Status s =
          RunSteps(plan_.steps, batches_,
                   SnapshottingFirstStep(graphed_step_, *model_, &graphed_first_outputs_, &graphed_snapshot_),
                   &graphed_us_, &run_.graphed_losses);
      if (s.ok()) s = CallTorch("replay", [&] { graphed_snapshot_.TakeFinalState(model_->named_state()); });
      return s;
    });
  }

  // Step "rng-draws": whether outputs depend on random draws, and whether replays draw as eager does.
  void DrawRandomNumbers() {
    log_.Run("rng-draws", [&] {
      return CallTorch("rng draws", [&] {
        run_.rng_draws = MeasureRngDraws(forward_, graphed_forward_, batches_.front(), [&] { Restart(); });
      });
    });
  }

  // Step "shape-variants" (--vary): graphs for each size of the varied dimension.
  void CaptureShapeVariants() {
    log_.Run("shape-variants", [&] {
      GraphOptions options;
      options.warmup_iterations = plan_.warmup;
      Callable callable = model_->callable;
      callable.forward = forward_;
      const at::Tensor& varied = batches_.front()[varied_input_];
      run_.shape_variation = MeasureShapeVariants(*plan_.vary, varied_input_, varied.size(plan_.vary->dim), callable,
                                                  batches_.front(), options, optimizer());
      return absl::OkStatus();
    });
  }

  // The per-tensor numerics samples: graphed against eager, with eager's repeat as its own noise.
  void CompareNumerics() {
    if (!graphed_snapshot_.took_first_step) return;
    const RunSnapshot* repeat = repeat_snapshot_.took_first_step ? &repeat_snapshot_ : nullptr;
    if (absl::Status s = CallTorch(
            "numerics samples",
            [&] { run_.samples = CompareSnapshots(eager_snapshot_, repeat, graphed_snapshot_, initial_->tensors()); });
        !s.ok()) {
      log_.Add("numerics-samples", 0, s);
    }
  }

  const CheckPlan& plan_;
  const bool full_iteration_;
  EngineRun run_;
  StepLog log_;
  const at::Device device_{at::kCUDA, 0};

  // What loading and preparing made.
  ModelRef model_ref_;
  std::optional<Model> model_;
  std::vector<std::vector<at::Tensor>> batches_;
  size_t varied_input_ = 0;  // --vary's input, by position
  ForwardFn forward_;        // the model's forward, autocast when asked
  std::optional<at::NoGradGuard> no_grad_;
  std::optional<FusedOptimizer> optimizer_;
  std::optional<ModelState> initial_;

  // What the eager runs measured.
  std::vector<double> eager_us_, outside_graphable_us_;
  RunSnapshot eager_snapshot_, repeat_snapshot_;

  // The graphs and what replaying them measured.
  size_t graphs_ = 0, nodes_ = 0;
  double capture_ms_ = 0;
  at::cuda::MempoolId_t pool_{0, 0};
  std::optional<GraphedCallables> graphed_;
  ForwardFn graphed_forward_;                      // the graphed callable's forward (not in full-iteration scope)
  std::optional<at::cuda::CUDAGraph> full_graph_;  // full-iteration scope
  std::vector<at::Tensor> static_inputs_;
  at::Tensor static_loss_;
  StepFn graphed_step_;
  std::vector<at::Tensor> graphed_first_outputs_;  // a full-iteration graph's outputs stay inside it: none
  std::vector<double> graphed_us_;
  RunSnapshot graphed_snapshot_;
};

}  // namespace

absl::StatusOr<EngineRun> RunCheckPipeline(const CheckPlan& plan) { return CheckPipeline(plan).Run(); }

}  // namespace graphcheck
