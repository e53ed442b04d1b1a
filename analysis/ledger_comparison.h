// Where the collective ledgers (collective_ledger.h) of a distributed job's ranks part. Collectives pair up across
// ranks by order: the n-th collective a rank issues on a communicator meets the n-th of every other rank. A graph
// replay reissues every collective its capture holds, so a rank that replays a collective-bearing graph once more
// than the others, or replays it where another rank calls an eager all-reduce, leaves a collective without its
// partner: the job hangs, or two different collectives meet and compute wrong values.
//
// The processes' ledgers are compared across the ranks that must do the same work (one world size and pipeline stage,
// JobStage); then each named communicator's ledgers across the ranks that used it, whatever their stage. Within
// each, the ranks are grouped by their ledgers' fingerprints; the group of the most ranks is the reference, and each
// other group's first rank is walked against the reference's first rank to the first entry where they part. Three kinds
// of parting:
// - kReplays: the sequences of collective-bearing replays differ (a replay more, fewer, or of another graph);
// - kInterleaving: the replays agree and the eager collectives agree, but not their order between each other;
// - kEager: only the eager collectives differ. On a named communicator that is a cause; in the processes' ledgers it
//   may be a subgroup's collective, made by the subgroup's ranks only, so there it names a cause only when the job
//   hung.
// Where the eager collectives agree, the walk compares whole sequences (the parting of a skipped replay is where an
// eager collective meets it); else only the entries that differ. Entries pair by what they are, not where they were
// made (NCCL pairs by order alone); the first pair made from different program lines before the parting is kept as
// the fork, the likely cause.
// Cost: O(ranks x kept entries); the walk uses the runs, not every replay.
#ifndef GRAPHCHECK_ANALYSIS_LEDGER_COMPARISON_H_
#define GRAPHCHECK_ANALYSIS_LEDGER_COMPARISON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/job_summary.h"

namespace graphcheck::analysis {

// One rank's side of a parting.
struct LedgerSide {
  const ProcessSummary* process = nullptr;
  const CollectiveLedger* ledger = nullptr;  // its ledger of the communicator compared
  std::optional<LedgerEntry> entry;          // what it did there; none: its ledger had ended
  uint64_t occurrence = 0;                   // that entry's work's how-manyth occurrence on this rank, from 1
};

// Where two ranks did the same work from different program lines, before their ledgers part: the likely cause (a
// replay more on one rank pairs with the next step's replay on the other, and the counts part only at the end).
struct LedgerFork {
  uint64_t position = 0;  // 0-based, among the entries compared
  LedgerSide divergent;
  LedgerSide reference;
};

struct LedgerDivergence {
  enum class Kind { kReplays, kInterleaving, kEager };
  Kind kind = Kind::kReplays;
  enum class Compared { kAll, kReplays, kEager };  // which entries `position` counts
  Compared compared = Compared::kAll;
  int32_t world_size = 0;
  uint64_t communicator = 0;             // the communicator whose ledgers part; 0: the processes' ledgers
  std::vector<int32_t> ranks;            // the ranks whose ledgers part from the reference's, ascending
  std::vector<int32_t> reference_ranks;  // the most ranks', ascending
  uint64_t position = 0;                 // 0-based, among the entries compared
  bool past_kept = false;  // the ledgers part past the entries kept: `position` is where those end, entries unknown
  LedgerSide divergent;
  LedgerSide reference;
  std::optional<LedgerFork> fork;  // the first same work from other program lines before the parting
};

// Every parting in `job`: the processes' ledgers' by stage first, then each named communicator's; none when the
// ranks' ledgers agree.
std::vector<LedgerDivergence> CompareLedgers(const JobSummary& job);

// One sentence: "rank 1 of 2 and rank 0 part at their 47th collective-bearing graph replay on communicator 5c1e04a2:
// rank 1 made no more (46 in all), where rank 0's was a replay of the graph captured at train.py:41 (ncclAllReduce
// x4) at train.py:48 in step (that graph's 31st replay); they first went different ways at their 27th: rank 1's was
// ... at train.py:48 in step (...), where rank 0's was ... at train.py:52 in log (...)".
std::string DescribeDivergence(const LedgerDivergence& divergence);

// The graphs whose replay counts differ between the two sides: "rank 0 replayed the graph captured at train.py:41
// (ncclAllReduce x4) 44 times, rank 1 40 times".
std::vector<std::string> ReplayCountDifferences(const LedgerDivergence& divergence);

// "the 2 ranks' collective ledgers agree: each made 40 collective-bearing graph replays and 3 eager collectives, in
// the same order, and on each of its 2 NCCL communicators".
std::string DescribeAgreement(const JobSummary& job);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_LEDGER_COMPARISON_H_
