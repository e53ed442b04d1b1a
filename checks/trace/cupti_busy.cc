// cupti-busy: the recorder could not subscribe to CUPTI because another tool holds it (Kineto's torch.profiler,
// Nsight Systems or Compute, another graphcheck). The program ran, but nothing was recorded about it.
#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "core/check_ids.h"
#include "trace/events.h"

namespace graphcheck::checks {
namespace {

class CuptiBusyCheck : public CheckOf<trace::Trace> {
 public:
  CuptiBusyCheck()
      : CheckOf(CheckInfo{
            check_id::kCuptiBusy,
            "Another CUPTI subscriber kept graphcheck from recording",
            Severity::kError,
            CheckArea::kEnvironment,
            "CUPTI allows one subscriber per process. Another tool (torch.profiler/Kineto, Nsight) held it, so "
            "graphcheck recorded nothing for this process and every other check is blind to it.",
            {}}) {}

 protected:
  void Read(const trace::Trace& trace, const BoundOptions& options, std::vector<Finding>* findings) const override {
    if (trace.recorder.subscribed) return;
    Finding finding = NewFinding();
    const std::string who =
        trace.recorder.other_subscriber.empty() ? std::string("another tool") : trace.recorder.other_subscriber;
    finding.message = absl::StrCat("CUPTI is held by ", who,
                                   ": graphcheck could not subscribe, so this process ran unrecorded and its capture "
                                   "problems, if any, are not in this report.");
    if (!trace.recorder.message.empty()) finding.evidence.push_back(trace.recorder.message);
    finding.where.pid = trace.process.pid;
    finding.fix =
        "Run graphcheck without other profilers: remove torch.profiler / Kineto on-demand tracing "
        "(KINETO_USE_DAEMON, KINETO_CONFIG) and do not start the program under nsys or ncu; then run it again.";
    findings->push_back(std::move(finding));
  }
};

}  // namespace

std::unique_ptr<Check> NewCuptiBusyCheck() { return std::make_unique<CuptiBusyCheck>(); }

}  // namespace graphcheck::checks
