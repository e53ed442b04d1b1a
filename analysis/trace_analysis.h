// One trace's shared analysis and the base class of the trace checks. TraceAnalysis builds, on first use, what
// several checks read (capture windows and their root causes, the NVTX index, iterations per option set, the kernel
// index) so each is computed once per trace; it also turns a call into a finding's Location. Whoever runs the checks
// on a trace builds one and adds both (AddTrace). Not thread-safe: checks run one after another.
#ifndef GRAPHCHECK_ANALYSIS_TRACE_ANALYSIS_H_
#define GRAPHCHECK_ANALYSIS_TRACE_ANALYSIS_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/capture_windows.h"
#include "analysis/iterations.h"
#include "analysis/launch_model.h"
#include "analysis/nvtx_index.h"
#include "analysis/python_probe.h"
#include "core/check.h"
#include "core/finding.h"
#include "trace/events.h"

namespace graphcheck::analysis {

// Correlation id -> index into Trace::kernels, for kernels launched one by one (graph nodes share their graph
// launch's id and are left out). CUPTI numbers correlations densely, so the index is usually a flat table (a lookup
// is one load, and launches looked up in call order walk it sequentially); sparse ids fall back to a hash map.
class CorrelationIndex {
 public:
  explicit CorrelationIndex(const std::vector<trace::KernelActivity>& kernels);
  // Kernel index, or -1.
  int64_t Find(uint64_t correlation_id) const;

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};
  uint64_t base_ = 0;
  std::vector<uint32_t> dense_;
  absl::flat_hash_map<uint64_t, uint32_t> sparse_;
};

// What the analysis is asked, made once by whoever runs it (cli/: --region, --step-range and launch-bound's model
// options) and read by every check from its TraceAnalysis: which steps, and the launch model of the forecast.
struct AnalysisSettings {
  IterationOptions steps;
  LaunchModel launch;
};

class TraceAnalysis {
 public:
  explicit TraceAnalysis(const trace::Trace& trace, AnalysisSettings settings = {})
      : trace_(trace), settings_(std::move(settings)) {}

  const trace::Trace& trace() const { return trace_; }
  const AnalysisSettings& settings() const { return settings_; }
  // The steps the settings select.
  const Iterations& steps() const { return iterations(settings_.steps); }
  const CaptureAnalysis& captures() const;
  const NvtxIndex& nvtx() const;
  const Iterations& iterations(const IterationOptions& options) const;
  const CorrelationIndex& kernel_by_correlation() const;
  const ProbeIndex& probe() const;

  // Where api_calls[call] happened: API, thread, stream, NVTX path, its Python frames (CPython programs), the first
  // frames of its backtrace, the PyTorch operator they show, and the process.
  Location Locate(size_t call) const;
  std::vector<std::string> Frames(size_t call) const;  // all frames, innermost first

 private:
  const trace::Trace& trace_;
  const AnalysisSettings settings_;
  mutable std::unique_ptr<CaptureAnalysis> captures_;
  mutable std::unique_ptr<NvtxIndex> nvtx_;
  mutable absl::flat_hash_map<std::string, std::unique_ptr<Iterations>> iterations_;
  mutable std::unique_ptr<CorrelationIndex> kernel_by_correlation_;
  mutable std::unique_ptr<ProbeIndex> probe_;
};

// Whether `call` was made by CUDA-graph machinery rather than by the program: its Python stack reaches
// torch.cuda.graph / make_graphed_callables (torch/cuda/graphs.py), torch.compile (torch/_inductor, torch/_dynamo) or
// DistributedDataParallel's forward (its warmup iterations' timing) before any frame of the program's own. False
// without a Python stack.
bool CalledByGraphMachinery(const trace::Trace& trace, const trace::ApiCall& call);

// Whether `call` ran while make_graphed_callables warmed up the program's callables before capturing them: its Python
// stack holds make_graphed_callables' frame (torch/cuda/graphs.py) anywhere. The capture that follows says what of that
// work a graph can hold. False without a Python stack.
bool InGraphedCallablesWarmup(const trace::Trace& trace, const trace::ApiCall& call);

// Adds `analysis` and its trace to `inputs`: the trace checks read the one, checks of the raw trace the other.
inline CheckInputs& AddTrace(const TraceAnalysis& analysis, CheckInputs* inputs) {
  return inputs->Add(analysis.trace()).Add(analysis);
}

// Calls grouped by call site (API name and backtrace), so a defect repeated every step is one finding.
class CallSites {
 public:
  struct Site {
    size_t first_call = 0;
    uint32_t calls = 0;
    uint32_t groups = 0;  // distinct group keys (steps, captures) it was seen in
  };
  explicit CallSites(const trace::Trace& trace) : trace_(trace) {}
  void Add(size_t call, size_t group);
  // In order of first occurrence.
  const std::vector<Site>& sites() const { return sites_; }

 private:
  const trace::Trace& trace_;
  absl::flat_hash_map<uint64_t, size_t> by_key_;
  std::vector<Site> sites_;
  std::vector<size_t> last_group_;
};

// The calls outside captures in `steps` that `wanted` picks, grouped by call site, each step a group.
CallSites StepCallSites(const trace::Trace& trace, const std::vector<Iteration>& steps,
                        bool (*wanted)(const trace::Trace& trace, const trace::ApiCall& call));

// "thread 12", "stream 7" and the like joined for evidence lines.
std::string DescribeCall(const trace::Trace& trace, size_t call);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_TRACE_ANALYSIS_H_
