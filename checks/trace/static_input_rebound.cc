// static-input-rebound: a name that held a static input of a manual capture (torch.cuda.graph) holds another tensor at
// a later replay: `static_x = batch` where `static_x.copy_(batch)` was meant. The graph keeps reading the memory the
// old tensor had, which is freed (and reused by later allocations) unless something else holds it, so replays compute
// on stale or unrelated data and their outputs change for no reason. The Python probe finds the static inputs from
// the capture's body (the names it read that held CUDA tensors) and compares them at replays from the same function.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "core/check_ids.h"

namespace graphcheck::checks {

using analysis::ProbeEventLocation;
using analysis::TraceAnalysis;

namespace {

class StaticInputReboundCheck : public CheckOf<TraceAnalysis> {
 public:
  StaticInputReboundCheck()
      : CheckOf(CheckInfo{
            check_id::kStaticInputRebound,
            "A captured graph's static input was replaced instead of refilled",
            Severity::kError,
            CheckArea::kState,
            "A variable that held a static input of a manual capture holds another tensor at a replay: the graph still "
            "reads the old memory, freed or reused, so its outputs no longer follow the inputs.",
            {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions&, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    for (const trace::StateRebound& rebound : analysis.probe().records().state_rebound) {
      if (rebound.role != trace::TensorRole::kStaticInput) continue;
      if (rebound.freed) continue;  // its memory was freed: graph-reads-freed names the line that dropped it
      const std::string name(rebound.name);
      Finding finding = NewFinding();
      finding.message =
          absl::StrCat("`", name, "`, a static input of the graph", trace::CapturedAt(trace, rebound.graph),
                       ", holds another tensor at this replay: the graph still reads the memory the captured tensor "
                       "had, so the replay computes on stale or reused data.");
      finding.evidence.push_back(absl::StrFormat("%s: 0x%x at capture, 0x%x at the replay", name,
                                                 rebound.address_at_capture, rebound.address_now));
      finding.where = ProbeEventLocation(trace, rebound.at);
      finding.where.key = name;
      finding.fix = absl::StrCat("Copy each batch into the captured tensor before replaying (", name,
                                 ".copy_(batch)) instead of assigning the name a new tensor.");
      findings->push_back(std::move(finding));
    }
  }
};

}  // namespace

std::unique_ptr<Check> NewStaticInputReboundCheck() { return std::make_unique<StaticInputReboundCheck>(); }

}  // namespace graphcheck::checks
