// ddp-default-stream: DistributedDataParallel was constructed on the default stream, and backward inside a capture
// then used the legacy default stream. DDP's constructor creates the parameters' gradient accumulators, and autograd
// runs each accumulator on the stream current when it was created; inside a capture on a side stream, backward then
// makes the legacy stream wait on the capturing one, which CUDA refuses. Seen with one rank on an H100 (torch 2.11):
// DDP built on the default stream, 11 warmup iterations, capture failed at cudaStreamWaitEvent on the legacy stream;
// built under torch.cuda.stream(side), the same program captured and replayed.
#include "absl/strings/str_cat.h"
#include "analysis/ddp.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "core/check_ids.h"
#include "trace/python_frames.h"

namespace graphcheck::checks {

using analysis::CaptureCause;
using analysis::CaptureProblem;
using analysis::DdpCapturedForward;
using analysis::DdpModule;
using analysis::DdpModules;
using analysis::DescribeProblem;
using analysis::FirstProblemIn;
using analysis::ProbeEventLocation;
using analysis::TraceAnalysis;

namespace {

class DdpDefaultStreamCheck : public CheckOf<TraceAnalysis> {
 public:
  DdpDefaultStreamCheck()
      : CheckOf(CheckInfo{
            check_id::kDdpDefaultStream,
            "DistributedDataParallel constructed on the default stream broke a capture",
            Severity::kError,
            CheckArea::kCapture,
            "DDP was constructed while the default stream was current, so its gradient accumulators run on the legacy "
            "default stream in backward, and a capture of backward on a side stream failed on the legacy stream.",
            {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions&, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    for (const DdpModule& module : DdpModules(analysis)) {
      if (module.constructed == nullptr || !module.constructed->on_default_stream) continue;
      for (const DdpCapturedForward& forward : module.captured_forwards) {
        if (!forward.window) continue;
        const CaptureProblem* problem =
            FirstProblemIn(analysis.captures(), *forward.window, CaptureCause::kLegacyStream);
        if (problem == nullptr) continue;
        Finding finding = NewFinding();
        finding.where = ProbeEventLocation(trace, module.constructed->at);
        finding.message =
            "DistributedDataParallel was constructed on the default stream: autograd runs its gradient accumulators "
            "on that stream, so backward inside the capture made the legacy default stream wait on the capturing "
            "stream and the capture failed (the AccumulateGrad stream error, cudaErrorStreamCaptureImplicit, 906).";
        finding.evidence.push_back(absl::StrCat("the capture failed: ", DescribeProblem(trace, *problem)));
        const std::string forward_site = trace::ProgramSite(trace::PythonFrames(trace, forward.record->at.stack));
        if (!forward_site.empty()) finding.evidence.push_back(absl::StrCat("the captured forward: ", forward_site));
        finding.fix =
            "Construct DDP under a side stream: s = torch.cuda.Stream(); with torch.cuda.stream(s): model = "
            "DistributedDataParallel(model, ...); then warm up and capture as before.";
        findings->push_back(std::move(finding));
        break;
      }
    }
  }
};

}  // namespace

std::unique_ptr<Check> NewDdpDefaultStreamCheck() { return std::make_unique<DdpDefaultStreamCheck>(); }

}  // namespace graphcheck::checks
