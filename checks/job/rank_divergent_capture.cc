// rank-divergent-capture: the ranks of a distributed job did not capture the same graphs. Collectives inside captured
// graphs (DDP's gradient all-reduce, tensor-parallel all-gathers) must be issued in the same order, with the same
// sizes, on every rank; a rank whose capture failed, issued other NCCL calls (the calls are NVTX ranges of NCCL's
// domain, so even a job of one rank per GPU that launches no NCCL kernel shows them), captured another kernel sequence
// or made another number of graphs hangs or corrupts the collectives when the graphs are replayed. Compares each rank's
// captures, in order, with those of the most ranks of the same world size and pipeline stage (the Megatron layers it
// graphed), and names the ranks that differ and the first capture where.
#include <algorithm>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/job_summary.h"
#include "checks/checks.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::CaptureSummary;
using analysis::CollectiveRun;
using analysis::DescribeCollectives;
using analysis::JobStage;
using analysis::JobSummary;
using analysis::ProcessSummary;
using analysis::StageOf;

namespace {

using Signature = std::vector<std::tuple<bool, std::vector<CollectiveRun>, uint32_t, uint64_t>>;

Signature SignatureOf(const ProcessSummary& process) {
  Signature signature;
  for (const CaptureSummary& c : process.captures) {
    signature.emplace_back(c.made_graph, c.collectives, c.nodes, c.kernel_sequence);
  }
  return signature;
}

// How `other` first departs from `reference`, for the message.
std::string Difference(const ProcessSummary& other, const ProcessSummary& reference, size_t* capture) {
  const size_t common = std::min(other.captures.size(), reference.captures.size());
  for (size_t i = 0; i < common; ++i) {
    const CaptureSummary& a = other.captures[i];
    const CaptureSummary& b = reference.captures[i];
    *capture = i;
    if (a.made_graph != b.made_graph) {
      return absl::StrCat(
          "capture ", i + 1,
          a.made_graph ? " made a graph where the others' failed" : " failed (no graph) where the others made one");
    }
    if (a.collectives != b.collectives) {
      return absl::StrCat("capture ", i + 1, " issued ", DescribeCollectives(a.collectives),
                          " where the others' issued ", DescribeCollectives(b.collectives));
    }
    if (a.nodes != b.nodes) {
      return absl::StrCat("capture ", i + 1, " holds ", Plural(a.nodes, "node", "nodes"), " where the others' hold ",
                          b.nodes);
    }
    if (a.kernel_sequence != b.kernel_sequence) {
      return absl::StrCat("capture ", i + 1, " holds another kernel sequence (", Plural(a.nodes, "node", "nodes"),
                          " each)");
    }
  }
  *capture = common;
  return absl::StrCat("made ", Plural(other.captures.size(), "capture", "captures"), " where the others made ",
                      reference.captures.size());
}

class RankDivergentCaptureCheck : public CheckOf<JobSummary> {
 public:
  RankDivergentCaptureCheck()
      : CheckOf(CheckInfo{
            check_id::kRankDivergentCapture,
            "The ranks of a distributed job captured different graphs",
            Severity::kError,
            CheckArea::kDistributed,
            "Every rank must capture the same graphs: collectives inside them pair up by order. A rank whose capture "
            "failed, or captured another kernel sequence or another number of graphs, hangs or corrupts the "
            "collectives at replay.",
            {}}) {}

 protected:
  void Read(const JobSummary& job, const BoundOptions& options, std::vector<Finding>* findings) const override {
    // Ranks by world size and pipeline stage, then by what they captured.
    std::map<JobStage, std::map<Signature, std::vector<const ProcessSummary*>>> jobs;
    for (const ProcessSummary& process : job.processes) {
      if (process.rank >= 0) {
        jobs[StageOf(process)][SignatureOf(process)].push_back(&process);
      }
    }
    for (auto& [stage, groups] : jobs) {
      const int32_t world_size = stage.first;
      if (groups.size() < 2) continue;
      // The reference: what the most ranks captured (ties: the group holding the lowest rank).
      auto by_size = [](const auto& a, const auto& b) {
        return std::make_tuple(a.second.size(), -MinRank(a.second)) <
               std::make_tuple(b.second.size(), -MinRank(b.second));
      };
      const auto reference = std::max_element(groups.begin(), groups.end(), by_size);
      const std::vector<int32_t> reference_ranks = Ranks(reference->second);
      for (const auto& [signature, processes] : groups) {
        if (&processes == &reference->second) continue;
        size_t capture = 0;
        const std::string difference = Difference(*processes.front(), *reference->second.front(), &capture);
        Finding finding = NewFinding();
        const ProcessSummary& first = *processes.front();
        if (capture < first.captures.size()) finding.where = first.captures[capture].where;
        finding.where.pid.reset();
        finding.where.ranks = Ranks(processes);
        finding.message = absl::StrCat(RanksText(finding.where.ranks), " of ", world_size, " ", difference, " (",
                                       RanksText(reference_ranks),
                                       "): collectives inside these graphs will not pair "
                                       "up at replay, so the job hangs or computes wrong values.");
        if (capture < reference->second.front()->captures.size()) {
          if (const SourceFrame* line = FirstUserFrame(reference->second.front()->captures[capture].where)) {
            finding.evidence.push_back(absl::StrCat("the others' capture begins at ", line->file, ":", line->line));
          }
        }
        finding.fix =
            "Make every rank capture the same work: the same inputs' shapes and the same control flow in the captured "
            "region (no rank-dependent branch or data-dependent size), the same warmup, and every rank's capture "
            "succeeding; check the failing rank's own capture findings first.";
        findings->push_back(std::move(finding));
      }
    }
  }

 private:
  static int32_t MinRank(const std::vector<const ProcessSummary*>& processes) {
    int32_t rank = processes.front()->rank;
    for (const ProcessSummary* p : processes) rank = std::min(rank, p->rank);
    return rank;
  }
  static std::vector<int32_t> Ranks(const std::vector<const ProcessSummary*>& processes) {
    std::vector<int32_t> ranks;
    for (const ProcessSummary* p : processes) ranks.push_back(p->rank);
    std::sort(ranks.begin(), ranks.end());
    return ranks;
  }
};

}  // namespace

std::unique_ptr<Check> NewRankDivergentCaptureCheck() { return std::make_unique<RankDivergentCaptureCheck>(); }

}  // namespace graphcheck::checks
