// The known texts of stderr_rules.h, in match order.
#include "analysis/stderr_rules.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "analysis/capture_error_table.h"
#include "core/check_ids.h"

namespace graphcheck::analysis {
namespace {

constexpr char kMegatronShapeFix[] =
    "Keep a graphed layer's inputs as they were at capture: a fixed sequence length and micro-batch size (pad or drop "
    "a shorter last batch); run shapes that vary without CUDA graphs.";

// PyTorch's texts about what a capture cannot hold (streams, copies, generators). Specific texts come before the
// CUDA error they contain.
std::vector<StderrRule> PyTorchCaptureRules() {
  return {
      {check_id::kUnsafeApiInCapture,
       Severity::kError,
       {"watchdog", "operation not permitted when stream is capturing"},
       "NCCL's watchdog thread queried its events while a global-mode capture was under way",
       "Set TORCH_NCCL_ASYNC_ERROR_HANDLING=0 while capturing, or capture with capture_error_mode='thread_local'."},
      {check_id::kPageableMemcpy,
       Severity::kError,
       {"Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is pinned"},
       "PyTorch refused a copy from pageable host memory inside the capture (seen with torch 2.11 on an H200: "
       "x.copy_(cpu_tensor) in torch.cuda.graph)",
       "Copy new inputs into a static device tensor before replay, outside the graph; if a host tensor must be read "
       "inside, allocate it with pin_memory=True."},
      {check_id::kLegacyStreamInCapture,
       Severity::kWarning,
       {"AccumulateGrad node's stream does not match"},
       "an AccumulateGrad node was created on another stream (usually the default stream) than the one backward "
       "runs on; under capture its work would land on the legacy stream (906)",
       "Run warmup iterations on the side stream you capture on, and construct DDP inside "
       "`with torch.cuda.stream(side_stream)`.",
       0,
       /*trace_decides=*/true},
      {check_id::kLegacyStreamInCapture,
       Severity::kError,
       {"CUDA graphs must be captured on a non-default stream"},
       "capture was begun on the default stream",
       "Capture under `with torch.cuda.stream(side_stream)` (torch.cuda.graph does this for you)."},
      {check_id::kRngUnregisteredGenerator,
       Severity::kError,
       {"Attempt to increase offset for a CUDA generator not in capture mode"},
       "a CUDA generator used during capture was not registered with the graph",
       "Register every generator the captured code uses: graph.register_generator_state(gen); with Megatron use "
       "--te-rng-tracker."},
      {check_id::kRngUnregisteredGenerator,
       Severity::kError,
       {"Offset increment outside graph capture encountered"},
       "a CUDA generator's offset was advanced in a way capture did not expect",
       "Register the generator with the graph (graph.register_generator_state(gen)) and keep RNG state changes out of "
       "the captured region."},
      {check_id::kRngUnregisteredGenerator,
       Severity::kError,
       {"Cannot call CUDAGeneratorImpl::", "during CUDA graph capture"},
       "the captured code read or reset a CUDA generator's seed or state while capturing",
       "Do not call torch.cuda.manual_seed / get_rng_state / initial_seed inside the captured region; with Megatron "
       "use --te-rng-tracker."},
      {check_id::kRngInferenceState,
       Severity::kError,
       {"Inplace update to inference tensor outside InferenceMode"},
       "the graph code updated a CUDA generator's graph-safe state in place, and that state was made under "
       "torch.inference_mode() (an inference tensor). torch 2.11 on an H100 accepts generator state cloned, "
       "registered or first captured under inference mode; earlier versions raise this",
       "Make or clone generator state outside torch.inference_mode(), or repair it in place before capture as "
       "Megatron's _ensure_generator_state_is_cudagraph_safe does: clone its state outside inference mode and set it "
       "back (gen.graphsafe_set_state(gen.clone_state())).",
       0,
       /*trace_decides=*/false,
       /*raised_in_graph_code=*/true},
  };
}

// Transformer Engine's, Megatron's and NCCL's texts, and PyTorch's for shapes a graph did not capture.
std::vector<StderrRule> LibraryRules() {
  return {
      {check_id::kConfigTeRngTracker,
       Severity::kError,
       {"RNG tracker is required for cudagraphs"},
       "Megatron requires Transformer Engine's graph-safe RNG tracker with CUDA graphs",
       "Set use_te_rng_tracker=True and rng.te_rng_tracker=True (--te-rng-tracker)."},
      {check_id::kConfigTeRngTracker,
       Severity::kError,
       {"RNG tracker does not support cudagraphs"},
       "Megatron Core's CudaGraphManager refuses an RNG tracker that is not graph-safe (megatron-core 0.19: "
       "model_parallel_cuda_manual_seed without use_cudagraphable_rng)",
       "Seed with model_parallel_cuda_manual_seed(seed, use_cudagraphable_rng=True), or use Transformer Engine's "
       "tracker (use_te_rng_tracker=True, --te-rng-tracker)."},
      {check_id::kDynamicShape,
       Severity::kError,
       {"CUDA graph argument mismatch"},
       "a layer Megatron Core graphed was called with other shapes, dtypes or arguments than it captured",
       kMegatronShapeFix},
      {check_id::kDynamicShape,
       Severity::kError,
       {"no matching cudagraph runners were found"},
       "a layer Megatron Core graphed was called with other shapes, dtypes or arguments than any graph it created "
       "(megatron-core 0.19 without pipeline parallelism)",
       kMegatronShapeFix},
      {check_id::kConfigFullIterationNanCheck,
       Severity::kError,
       {"check_for_nan_in_loss must be disabled"},
       "Megatron's NaN check reads the loss on the host, a synchronization that full-iteration capture forbids",
       "Set rerun_state_machine.check_for_nan_in_loss=False (--no-check-for-nan-in-loss-and-grad) with "
       "full_iteration graphs."},
      {check_id::kEnvExpandableSegmentsNcclRegister,
       Severity::kError,
       {"NCCL_GRAPH_REGISTER", "expandable_segments"},
       "expandable segments with NCCL buffer registration corrupt graphed collectives (illegal memory access)",
       "Set NCCL_GRAPH_REGISTER=0 when PYTORCH_CUDA_ALLOC_CONF has expandable_segments:True."},
  };
}

// torch.compile's texts, capture failures PyTorch words itself, and the process's own (a profiler, sync debug mode).
std::vector<StderrRule> CompileAndProcessRules() {
  return {
      {check_id::kOutputOverwritten,
       Severity::kError,
       {"overwritten by a subsequent run"},
       "the program read an output of a torch.compile CUDA graph (cudagraph trees) after a later run of that graph "
       "overwrote it",
       "Clone the output (`out.clone()`) before calling the compiled function again, or call "
       "torch.compiler.cudagraph_mark_step_begin() at the start of each step and keep no output across steps."},
      {check_id::kCompileCudagraphSkipped,
       Severity::kWarning,
       {"skipping cudagraph"},
       "torch.compile ran a function without CUDA graphs",
       "Remove the reason inductor names (a CPU tensor or device, an input mutated in place, dynamic shapes, "
       "re-recording past the limit), or mark the step with torch.compiler.cudagraph_mark_step_begin()."},
      {check_id::kCompileCudagraphSkipped,
       Severity::kWarning,
       {"Unable to hit fast path of CUDAGraphs"},
       "torch.compile's CUDA graphs fell back to a slow path because a backward pass of an earlier call was still "
       "pending",
       "Run inference under torch.no_grad(), or call torch.compiler.cudagraph_mark_step_begin() before each "
       "invocation."},
      {check_id::kDynamicShape,
       Severity::kError,
       {"CUDA graph argument mismatch"},
       "a Megatron Core CUDA-graphed layer was called with arguments (shape, dtype, device, or a non-tensor value) "
       "other than those it was captured with",
       "Keep every replayed call's arguments like the captured ones (pad sequences to the captured length, fixed "
       "micro-batch size), or capture one graph per shape."},
      {check_id::kCaptureError,
       Severity::kError,
       {"graph capture of step() for an instance of", "capturable is False"},
       "an optimizer stepped inside a capture without capturable=True: its step counts and bias corrections live on "
       "the host, which a graph cannot update",
       "Construct the optimizer with capturable=True (torch.optim.Adam(params, lr=..., capturable=True)), which keeps "
       "its state on the GPU; with a learning rate that changes, pass it as a CUDA tensor too. Or step the optimizer "
       "outside the graph."},
      {check_id::kCaptureError,
       Severity::kError,
       {"make_graphed_callables does not support the autocast caching"},
       "make_graphed_callables refuses autocast with its weight cache on",
       "Capture under torch.autocast(..., cache_enabled=False)."},
      {check_id::kRecaptureChurn,
       Severity::kWarning,
       {"recording a new graph for each distinct input size"},
       "torch.compile's CUDA graphs record a graph per input shape and saw many shapes",
       "Pad inputs to a few fixed shapes, or set torch._inductor.config.triton.cudagraph_skip_dynamic_graphs=True."},
      {check_id::kCuptiBusy,
       Severity::kWarning,
       {"CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"},
       "the program's own CUPTI client (torch.profiler's Kineto, seen with torch 2.11 on an H200) could not "
       "subscribe because graphcheck's recorder holds CUPTI: its CUDA activities are missing from the program's own "
       "profile, while graphcheck's trace is whole",
       "Profile with torch.profiler in a run without graphcheck, or leave the profiler off under graphcheck run; "
       "with CUDA 13.3+ and r610+ drivers CUPTI accepts several subscribers."},
      {check_id::kSyncInRegion,
       Severity::kWarning,
       {"called a synchronizing CUDA operation"},
       "torch.cuda.set_sync_debug_mode reported a synchronizing operation",
       "Remove the synchronization from the region to graph (see the traceback printed with the warning)."},
  };
}

// Every rule in match order: the specific texts, then CUDA's own texts for 900-910 ("CUDA error: operation not
// permitted when stream is capturing"), by description and by name.
std::vector<StderrRule> BuildRules() {
  std::vector<StderrRule> rules;
  for (std::vector<StderrRule> (*group)() : {PyTorchCaptureRules, LibraryRules, CompileAndProcessRules}) {
    for (StderrRule& rule : group()) rules.push_back(std::move(rule));
  }
  for (const CaptureErrorCode& error : CaptureErrorCodes()) {
    for (absl::string_view needle : {error.description, error.name}) {
      rules.push_back({std::string(error.owner),
                       Severity::kError,
                       {std::string(needle)},
                       absl::StrCat(error.code, " ", error.name, ": ", error.meaning),
                       std::string(error.fix),
                       error.code});
    }
  }
  return rules;
}

}  // namespace

const std::vector<StderrRule>& StderrRules() {
  static const auto* const kRules = new std::vector<StderrRule>(BuildRules());
  return *kRules;
}

const StderrRule* MatchKnownMessage(absl::string_view text, bool raised_in_graph_code) {
  const std::vector<StderrRule>& rules = StderrRules();
  auto rule = std::find_if(rules.begin(), rules.end(), [&](const StderrRule& r) {
    return (!r.raised_in_graph_code || raised_in_graph_code) &&
           std::all_of(r.needles.begin(), r.needles.end(),
                       [&](const std::string& needle) { return absl::StrContains(text, needle); });
  });
  return rule == rules.end() ? nullptr : &*rule;
}

}  // namespace graphcheck::analysis
