// megatron-graphs-not-created: Megatron Core's CudaGraphManager (cuda_graph_impl="local") records each layer's graphs
// in the first iteration and captures them only when the program calls create_cudagraphs() (Megatron-LM's training
// loop does after its first iteration; Megatron's forward-backward schedule does at its end). A program with its own
// loop that never calls it trains with every layer eager, and nothing says so. The Python probe announces the first
// layer graph recorded; no capture begun by CudaGraphManager in the whole trace is the finding.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "core/check_ids.h"

namespace graphcheck::checks {

using analysis::ProbeEventLocation;
using analysis::TraceAnalysis;

namespace {

using trace::ProbeOrigin;

class MegatronGraphsNotCreatedCheck : public CheckOf<TraceAnalysis> {
 public:
  MegatronGraphsNotCreatedCheck()
      : CheckOf(CheckInfo{
            check_id::kMegatronGraphsNotCreated,
            "Megatron Core recorded its layers' CUDA graphs but never created them",
            Severity::kWarning,
            CheckArea::kPerformance,
            "With cuda_graph_impl=\"local\", CudaGraphManager only records each layer's graphs until the program calls "
            "create_cudagraphs(); a training loop that never calls it runs every layer eagerly.",
            {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions&, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    const trace::ProbeRecords& records = analysis.probe().records();
    if (records.megatron_graphs_recorded.empty()) return;
    const bool created =
        std::any_of(records.capture_begins.begin(), records.capture_begins.end(),
                    [](const trace::CaptureBegin& b) { return b.at.origin == ProbeOrigin::kMegatron; });
    if (created) return;
    Finding finding = NewFinding();
    const trace::MegatronGraphRecorded& recorded = records.megatron_graphs_recorded.front();
    finding.where = ProbeEventLocation(trace, recorded.at);
    finding.message =
        "Megatron Core's CudaGraphManager recorded the layers' CUDA graphs here, but the program never created them: "
        "no layer graph was captured, and every layer ran eagerly in every iteration.";
    finding.evidence = {recorded.layer > 0 ? absl::StrCat("first layer graph recorded: layer ", recorded.layer)
                                           : std::string("first layer graph recorded (layer number unknown)"),
                        "no capture begun by CudaGraphManager in the trace"};
    finding.fix =
        "Call megatron.core.transformer.cuda_graphs.create_cudagraphs() after the first training iteration, as "
        "Megatron-LM's training loop does, or train through get_forward_backward_func(), whose schedule calls it.";
    findings->push_back(std::move(finding));
  }
};

}  // namespace

std::unique_ptr<Check> NewMegatronGraphsNotCreatedCheck() { return std::make_unique<MegatronGraphsNotCreatedCheck>(); }

}  // namespace graphcheck::checks
