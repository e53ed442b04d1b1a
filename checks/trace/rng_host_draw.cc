// rng-host-draw: a random number drawn on the host (Python's random, numpy's functions and generators, torch's CPU
// generators, os.urandom and secrets) or the host clock read (time.time) inside a capture that is replayed. The graph
// holds the value drawn at capture: stochastic depth decided with random.random(), a noise scale from torch.rand() on
// the CPU, an augmentation chosen with numpy, all repeat the same choice on every replay. The Python probe sees the
// draw during the capture (a profile function while the capture runs, and the generators' states at its begin and end,
// host_draws.py); no --shadow run is needed.
#include "absl/strings/str_cat.h"
#include "analysis/python_probe.h"
#include "analysis/trace_analysis.h"
#include "checks/checks.h"
#include "checks/trace/probe_findings.h"
#include "core/check_ids.h"

namespace graphcheck::checks {

using analysis::ProbeEventLocation;
using analysis::TraceAnalysis;

namespace {

class RngHostDrawCheck : public CheckOf<TraceAnalysis> {
 public:
  RngHostDrawCheck()
      : CheckOf(CheckInfo{check_id::kRngHostDraw,
                          "A random number drawn on the host inside a capture is replayed as a constant",
                          Severity::kError,
                          CheckArea::kRng,
                          "The program drew a random number on the host (Python's random, numpy, torch's CPU "
                          "generator) inside a capture: every replay repeats the value drawn at capture.",
                          {}}) {}

 protected:
  void Read(const TraceAnalysis& analysis, const BoundOptions&, std::vector<Finding>* findings) const override {
    const trace::Trace& trace = analysis.trace();
    for (const trace::HostRandomDraw& draw : analysis.probe().records().host_random_draws) {
      if (!ReplayedAfter(analysis, draw.graph, draw.at.time_ns)) continue;
      Finding finding = NewFinding();
      finding.evidence.push_back(absl::StrCat("generator: ", trace::DrawSourceName(draw.source)));
      finding.where = ProbeEventLocation(trace, draw.at);
      finding.fix =
          "Draw on the GPU inside the graph, from CUDA's generator (torch.rand((), device=\"cuda\"), "
          "torch.bernoulli on a CUDA tensor), which a replay advances; or draw on the host outside the graph and copy "
          "the value into a static CUDA tensor the graph reads (flag.fill_(random.random() < p)).";
      const std::string captured_at = trace::CapturedAt(trace, draw.graph);
      if (draw.source == trace::DrawSource::kClock) {
        finding.message =
            absl::StrCat("This line reads the host clock (", draw.call, ") inside the capture of a graph", captured_at,
                         ": the graph holds the time read at capture, so every replay computes with "
                         "that moment.");
      } else if (draw.source == trace::DrawSource::kIterator) {
        finding.message = absl::StrCat(
            "This line takes the next item of an iterator the program keeps (", draw.call,
            ") inside the capture of a graph", captured_at,
            ": the graph holds the item taken at capture, so every replay makes the same choice, and a replay does "
            "not advance the iterator.");
        finding.fix =
            "Take the item outside the graph and hand it to the graph as data: copy it into a static CUDA tensor the "
            "graph reads (a one-hot mask, an index tensor). Or capture one graph per item and replay the one the "
            "iterator names.";
      } else {
        finding.message = absl::StrCat("This line draws a random number on the host (", draw.call,
                                       ") inside the capture of a graph", captured_at,
                                       ": the graph holds the value drawn at capture, so every replay makes the same "
                                       "choice.");
      }
      findings->push_back(std::move(finding));
    }
  }
};

}  // namespace

std::unique_ptr<Check> NewRngHostDrawCheck() { return std::make_unique<RngHostDrawCheck>(); }

}  // namespace graphcheck::checks
