// empty-graph: a capture ended successfully with no nodes. Usually the work was launched on another stream than the
// capturing one (an explicit stream, or one made before capture), so it ran eagerly and replay does nothing.
// torch.compile's cudagraph trees capture nothing on purpose once, to create their memory pool, and a capture that a
// Python exception cut short ends empty too (the Python probe says which captures these are): not findings.
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "checks/checks.h"
#include "checks/trace/internal/capture_problem_check.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::CallSites;
using analysis::CaptureWindow;
using analysis::DescribeCapture;
using analysis::IsGraphMachinery;
using analysis::TraceAnalysis;

namespace {

class EmptyGraphCheck : public CheckOf<TraceAnalysis> {
 public:
  EmptyGraphCheck()
      : CheckOf(CheckInfo{check_id::kEmptyGraph,
                          "A capture produced an empty graph",
                          Severity::kWarning,
                          CheckArea::kCapture,
                          "A capture ended without error but captured nothing. The work ran eagerly on another stream "
                          "during capture, "
                          "and replaying the graph does nothing.",
                          {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions& options, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    const std::vector<CaptureWindow>& windows = analysis.captures().windows();
    CallSites sites(trace);
    std::vector<size_t> window_of_site;  // first empty window per site
    std::vector<uint32_t> escaped_launches;
    std::vector<absl::flat_hash_set<uint64_t>> escaped_streams;
    for (size_t w = 0; w < windows.size(); ++w) {
      const CaptureWindow& window = windows[w];
      if (!window.end_call || window.captured_operations != 0) continue;
      // Not the program's doing: cudagraph trees' pool capture, or a capture a Python exception cut short (reported
      // by the exception's own check).
      if (IsGraphMachinery(analysis.probe().Origin(w)) || analysis.probe().HasException(w)) continue;
      const trace::CallDetail& end = trace.Detail(trace.api_calls[*window.end_call]);
      if (end.return_code != 0 || end.node_count != 0) continue;
      sites.Add(window.begin_call, w);
      if (sites.sites().size() > window_of_site.size()) {
        window_of_site.push_back(w);
        escaped_launches.push_back(0);
        escaped_streams.emplace_back();
      }
      // Launches by the capturing thread that escaped the capture, for the first window of each site.
      if (window_of_site.back() != w) continue;
      for (size_t i = window.begin_call + 1; i < *window.end_call; ++i) {
        const trace::ApiCall& call = trace.api_calls[i];
        if (call.thread_id == window.thread_id && call.kind == trace::ApiKind::kKernelLaunch &&
            call.capture_status == trace::CaptureStatus::kNone) {
          ++escaped_launches.back();
          escaped_streams.back().insert(call.stream_id);
        }
      }
    }
    for (size_t s = 0; s < sites.sites().size(); ++s) {
      const CallSites::Site& site = sites.sites()[s];
      const CaptureWindow& window = windows[window_of_site[s]];
      Finding finding = NewFinding();
      finding.where = analysis.Locate(site.first_call);
      finding.message = absl::StrCat(DescribeCapture(trace, window),
                                     " ended with an empty graph: nothing was launched on a captured stream, so "
                                     "replaying it does nothing.");
      if (site.calls > 1) finding.evidence.push_back(absl::StrCat(site.calls, " empty captures from this call site"));
      if (escaped_launches[s] > 0) {
        std::vector<uint64_t> streams(escaped_streams[s].begin(), escaped_streams[s].end());
        std::sort(streams.begin(), streams.end());
        finding.evidence.push_back(
            absl::StrCat(Plural(escaped_launches[s], "kernel", "kernels"), " launched by the capturing thread on ",
                         streams.size() == 1 ? "stream " : "streams ", absl::StrJoin(streams, ", "),
                         " during the capture ran eagerly instead"));
      }
      finding.fix =
          "Launch the captured work on the capturing stream: inside torch.cuda.graph use the current stream (do not "
          "pass a stream created earlier, or make that stream wait on the capturing stream first so it joins the "
          "capture), and check that the captured function actually runs GPU work.";
      findings->push_back(std::move(finding));
    }
  }
};

}  // namespace

std::unique_ptr<Check> NewEmptyGraphCheck() { return std::make_unique<EmptyGraphCheck>(); }

}  // namespace graphcheck::checks
