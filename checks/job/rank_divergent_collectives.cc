// rank-divergent-collectives: the ranks of a distributed job issued their collective-bearing work in different orders
// (ledger_comparison.h): a graph replayed more often on one rank, a replay where another rank calls an eager
// collective, or eager collectives that do not pair up on one NCCL communicator (in the processes' ledgers, where a
// subgroup's collective parts by design, only when the job hung). Names the first parting, what each side
// did there and at which line, and the replay counts that differ. Where the parting is two replays of one capture
// whose collectives differ, rank-divergent-capture names the cause and this check stays silent.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/ledger_comparison.h"
#include "checks/checks.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {

using analysis::CollectiveLedger;
using analysis::CommunicatorText;
using analysis::CompareLedgers;
using analysis::DescribeDivergence;
using analysis::JobSummary;
using analysis::LedgerDivergence;
using analysis::LedgerEntry;
using analysis::LedgerGraph;
using analysis::LedgerSide;
using analysis::ProcessSummary;
using analysis::ReplayCountDifferences;

namespace {

using Kind = LedgerDivergence::Kind;

// Two replays of the same capture that holds other collectives on each side: the captures differ.
bool ExplainedByCaptures(const LedgerDivergence& divergence) {
  const LedgerSide& a = divergence.divergent;
  const LedgerSide& b = divergence.reference;
  if (!a.entry || !b.entry || a.entry->kind != LedgerEntry::Kind::kReplay ||
      b.entry->kind != LedgerEntry::Kind::kReplay) {
    return false;
  }
  const LedgerGraph& mine = a.ledger->graphs[a.entry->what];
  const LedgerGraph& theirs = b.ledger->graphs[b.entry->what];
  return mine.capture != 0 && mine.capture == theirs.capture && !(mine == theirs);
}

// The side that made extra work: of the fork's sides (else the parting's), the one whose program line never shows in
// the other side's ledger (the extra replay's, not the step's); none when the lines do not tell.
const LedgerSide* ExtraWorkSide(const LedgerDivergence& divergence) {
  const LedgerSide* sides[2] = {&divergence.divergent, &divergence.reference};
  if (divergence.fork) sides[0] = &divergence.fork->divergent, sides[1] = &divergence.fork->reference;
  for (int i = 0; i < 2; ++i) {
    const LedgerSide& side = *sides[i];
    if (!side.entry || side.ledger->site_frames[side.entry->site].file.empty()) continue;
    const std::vector<std::string>& their_sites = sides[1 - i]->ledger->sites;
    const std::string& site = side.ledger->sites[side.entry->site];
    if (std::find(their_sites.begin(), their_sites.end(), site) == their_sites.end()) return &side;
  }
  return nullptr;
}

// The side to point at: the extra work's, else the parting ranks'.
const LedgerSide& SideToShow(const LedgerDivergence& divergence) {
  const LedgerSide* extra = ExtraWorkSide(divergence);
  if (extra != nullptr) return *extra;
  return divergence.fork ? divergence.fork->divergent : divergence.divergent;
}

const char* FixFor(Kind kind) {
  switch (kind) {
    case Kind::kReplays:
      return "Replay every collective-bearing graph the same number of times, in the same order, on every rank: a "
             "replay that only some ranks make (to log a loss, to evaluate, in a rank-0-only branch) needs its "
             "partner on every rank, or must run eagerly without collectives.";
    case Kind::kInterleaving:
      return "Keep every rank's graph replays and eager collectives in the same order: an eager collective called "
             "before a replay on one rank and after it on another meets the graph's collectives instead of its own.";
    case Kind::kEager:
      return "Make every rank of a group call the same torch.distributed collectives in the same order (a rank-"
             "dependent branch around a collective, or a call skipped on one rank, leaves the others waiting).";
  }
  return "";
}

class RankDivergentCollectivesCheck : public CheckOf<JobSummary> {
 public:
  RankDivergentCollectivesCheck()
      : CheckOf(CheckInfo{
            check_id::kRankDivergentCollectives,
            "The ranks of a distributed job issued collectives in different orders",
            Severity::kError,
            CheckArea::kDistributed,
            "Collectives pair up across ranks by order. A rank that replays a graph holding collectives more often "
            "than the others, or where another rank calls an eager collective, leaves a collective without its "
            "partner: the job hangs or computes wrong values. Names the first place the ranks' collective ledgers "
            "part, with each side's line and the replay counts.",
            {}}) {}

 protected:
  void Read(const JobSummary& job, const BoundOptions& options, std::vector<Finding>* findings) const override {
    bool hung = false;
    for (const ProcessSummary& process : job.processes) hung = hung || process.hung;
    // A parting of the processes' ledgers was named here or by rank-divergent-capture: a communicator's parting
    // follows from it (seen on two H200s: captures holding their collectives in other orders, then a rank ended).
    bool explained = false;
    for (const LedgerDivergence& divergence : CompareLedgers(job)) {
      // Eager collectives alone may part by design in the processes' ledgers (a subgroup's collective): a cause only
      // of a hang. On one communicator they must pair up.
      if (divergence.kind == Kind::kEager && divergence.communicator == 0 && !hung) continue;
      if (divergence.communicator != 0 && explained) continue;
      explained = explained || divergence.communicator == 0;
      if (ExplainedByCaptures(divergence)) continue;
      Finding finding = NewFinding();
      finding.where.ranks = divergence.ranks;
      if (divergence.ranks.size() == divergence.reference_ranks.size()) {  // no majority: both sides
        finding.where.ranks.insert(finding.where.ranks.end(), divergence.reference_ranks.begin(),
                                   divergence.reference_ranks.end());
        std::sort(finding.where.ranks.begin(), finding.where.ranks.end());
      }
      const LedgerSide& shown = SideToShow(divergence);
      if (shown.entry) {
        const SourceFrame& frame = shown.ledger->site_frames[shown.entry->site];
        if (!frame.file.empty()) finding.where.python = {frame};
      }
      finding.message =
          absl::StrCat(DescribeDivergence(divergence),
                       ". Collectives pair up across ranks by order, so from there on each rank's collectives meet "
                       "other work on the other ranks: the job hangs or computes wrong values.");
      for (std::string& line : ReplayCountDifferences(divergence)) finding.evidence.push_back(std::move(line));
      for (const LedgerSide* side : {&divergence.divergent, &divergence.reference}) {
        const CollectiveLedger& ledger = *side->ledger;
        const std::string communicator = CommunicatorText(ledger.communicator);
        finding.evidence.push_back(absl::StrCat(
            "rank ", side->process->rank, "'s ledger", communicator.empty() ? "" : absl::StrCat(" of ", communicator),
            ": ", Plural(ledger.replays, "collective-bearing replay", "collective-bearing replays"), ", ",
            Plural(ledger.eager, "eager collective", "eager collectives"),
            ledger.truncated ? " (first runs kept)" : ""));
      }
      finding.fix = FixFor(divergence.kind);
      const LedgerSide* extra = ExtraWorkSide(divergence);
      for (const LedgerSide* side : {&divergence.divergent, &divergence.reference}) {
        if (side->entry || side->process->stopped.empty() || side->process->hung) continue;
        const std::string stop = absl::StrCat(side->process->rank, "'s process ", side->process->stopped);
        if (extra == nullptr) {
          // Its ledger ended because its process stopped, and nothing else parts: the parting follows from the stop.
          finding.fix = absl::StrCat("Rank ", stop,
                                     " where the others went on: fix what stopped it (its own findings); the other "
                                     "ranks' collectives after that have no partner.");
        } else {
          // One side worked at a line the other's ledger never shows: that extra work parts the ranks, and the stop
          // follows from it (seen on two H200s: rank 1 was killed after rank 0's extra replay hung the job).
          const LedgerEntry& entry = *extra->entry;
          const std::string work = entry.kind == LedgerEntry::Kind::kReplay
                                       ? std::string("replay")
                                       : absl::StrCat("eager ", extra->ledger->names[entry.what]);
          finding.fix = absl::StrCat("Rank ", extra->process->rank, "'s ", work, extra->ledger->SiteText(entry.site),
                                     " is the extra work that parts the ranks; rank ", stop,
                                     " only after the ranks had parted. ", FixFor(divergence.kind));
        }
      }
      findings->push_back(std::move(finding));
    }
  }
};

}  // namespace

std::unique_ptr<Check> NewRankDivergentCollectivesCheck() { return std::make_unique<RankDivergentCollectivesCheck>(); }

}  // namespace graphcheck::checks
