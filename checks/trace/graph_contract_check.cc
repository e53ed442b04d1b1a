// graph-contract: what each captured graph holds, one line per graph (a note): the device memory its nodes name, by
// what the program calls it (parameters, gradients, optimizer state, its pool), and the host values it baked in that
// the probe watches. A graph whose nodes could not be read (an unknown kernel, a driver without cuFuncGetParamInfo)
// is said to be not audited, with the reason: the checks of its memory then know less.
#include "absl/strings/str_cat.h"
#include "analysis/graph_contract.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::CaptureSite;
using analysis::DescribeContract;
using analysis::DescribeOrigin;
using analysis::GraphContract;
using analysis::ReadGraphContracts;
using analysis::TraceAnalysis;

namespace {

constexpr size_t kMaxGraphLines = 20;

class GraphContractCheck : public CheckOf<TraceAnalysis> {
 public:
  GraphContractCheck()
      : CheckOf(CheckInfo{check_id::kGraphContract,
                          "What each captured graph reads, writes and baked in",
                          Severity::kNote,
                          CheckArea::kState,
                          "One line per captured graph: the device memory its nodes name, by what the program calls "
                          "it, and the host values it baked in; a graph whose nodes could not be read is not audited.",
                          {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions&, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    if (trace.graph_manifests.empty()) return;
    const std::vector<GraphContract> contracts = ReadGraphContracts(analysis);
    if (contracts.empty()) return;
    Finding finding = NewFinding();
    size_t unaudited = 0;
    for (const GraphContract& contract : contracts) {
      if (contract.manifest != nullptr && !contract.manifest->Audited()) ++unaudited;
      if (finding.evidence.size() == kMaxGraphLines) continue;
      finding.evidence.push_back(absl::StrCat(
          "graph ", contract.graph_id, CaptureSite(analysis, contract),
          contract.origin == trace::ProbeOrigin::kUnknown ? "" : absl::StrCat(", by ", DescribeOrigin(contract.origin)),
          ": ", DescribeContract(trace, contract)));
    }
    if (contracts.size() > kMaxGraphLines) {
      finding.evidence.push_back(
          absl::StrCat("and ", Plural(contracts.size() - kMaxGraphLines, "more graph", "more graphs")));
    }
    finding.message = absl::StrCat(
        contracts.size(), contracts.size() == 1 ? " graph was" : " graphs were",
        " captured; what each reads and writes at fixed addresses and what it replays as it was at capture is below",
        unaudited > 0 ? absl::StrCat(" (", unaudited, " not audited: their nodes could not all be read)") : "", ".");
    finding.fix = unaudited > 0 ? "A graph whose nodes could not be read is checked less: graph-reads-freed cannot "
                                  "see the memory its unread kernels use. The reason is on its line."
                                : "Nothing to do: this is what the other contract checks hold the replays to.";
    if (trace.process.pid != 0) finding.where.pid = trace.process.pid;
    findings->push_back(std::move(finding));
  }
};

}  // namespace

std::unique_ptr<Check> NewGraphContractCheck() { return std::make_unique<GraphContractCheck>(); }

}  // namespace graphcheck::checks
