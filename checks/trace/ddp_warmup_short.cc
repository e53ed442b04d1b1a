// ddp-warmup-short: a DistributedDataParallel forward ran inside a capture before DDP had finished warming up. DDP's
// reducer times its first ten iterations with CUDA events that it synchronizes at the next forward, and rebuilds its
// gradient buckets at the second; neither can happen inside a capture. With one rank on an H100 (torch 2.11), capture
// after 0, 1, 2, 5 and 10 warmup iterations failed (cudaEventSynchronize inside the capture) and after 11 succeeded:
// the seeds' recipe warms up 11 iterations on a side stream.
#include "absl/strings/str_cat.h"
#include "analysis/ddp.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "core/check_ids.h"

namespace graphcheck::checks {

using analysis::CaptureProblem;
using analysis::DdpCapturedForward;
using analysis::DdpModule;
using analysis::DdpModules;
using analysis::DescribeProblem;
using analysis::FirstProblemIn;
using analysis::ProbeEventLocation;
using analysis::TraceAnalysis;

namespace {

class DdpWarmupShortCheck : public CheckOf<TraceAnalysis> {
 public:
  DdpWarmupShortCheck()
      : CheckOf(CheckInfo{
            check_id::kDdpWarmupShort,
            "DistributedDataParallel captured before its warmup iterations were done",
            Severity::kError,
            CheckArea::kCapture,
            "A DDP forward ran inside a capture after fewer eager iterations than DDP needs: its reducer synchronizes "
            "CUDA "
            "timing events during its first ten iterations and rebuilds its gradient buckets in the second, which a "
            "capture forbids.",
            {{"min-warmup",
              absl::StrCat(analysis::kDdpWarmupIterations),
              "eager iterations with gradient synchronization DDP needs before capture",
              0,
              1e6,
              {}}}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions& options, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    const uint64_t min_warmup = static_cast<uint64_t>(options.GetDouble("min-warmup"));
    for (const DdpModule& module : DdpModules(analysis)) {
      for (const DdpCapturedForward& forward : module.captured_forwards) {
        const uint64_t warmup = analysis::WarmupIterations(forward);
        const CaptureProblem* problem = forward.window ? FirstProblemIn(analysis.captures(), *forward.window) : nullptr;
        // A capture that failed that early is this check's whatever min-warmup says: the capture checks leave it here
        // (analysis::DdpNamesTheCause).
        const bool failed_early = problem != nullptr && warmup < analysis::kDdpWarmupIterations;
        if (warmup >= min_warmup && !failed_early) continue;
        Finding finding = NewFinding();
        finding.where = ProbeEventLocation(trace, forward.record->at);
        finding.message = absl::StrCat(
            "DistributedDataParallel's forward ran inside a capture after ", warmup, " eager iteration",
            warmup == 1 ? "" : "s", " (DDP needs ", min_warmup,
            "): its reducer still times iterations with CUDA events it synchronizes, and rebuilds its gradient buckets "
            "after the first, and a capture forbids both.");
        finding.evidence.push_back(
            absl::StrCat("forward ", forward.record->forwards, " of the DDP module ran inside the capture"));
        if (forward.record->rebuilt_buckets) {
          finding.evidence.push_back("DDP rebuilt its gradient buckets inside the capture");
        }
        if (problem != nullptr) {
          finding.evidence.push_back(absl::StrCat("the capture failed: ", DescribeProblem(trace, *problem)));
        }
        finding.fix = absl::StrCat(
            "Run at least ", min_warmup,
            " full training iterations (forward, backward, optimizer step) on a side stream before capturing: "
            "s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream()); with torch.cuda.stream(s): "
            "for _ in range(",
            min_warmup, "): step(); torch.cuda.current_stream().wait_stream(s).");
        findings->push_back(std::move(finding));
        break;  // the first capture of this module says it; later ones repeat it
      }
    }
  }
};

}  // namespace

std::unique_ptr<Check> NewDdpWarmupShortCheck() { return std::make_unique<DdpWarmupShortCheck>(); }

}  // namespace graphcheck::checks
