// A process's collective ledgers: the ordered sequence of its collective-bearing work, kept so that the ranks of a
// job can be compared once their traces are dropped. Two kinds of entry:
// - a replay of a graph whose capture holds NCCL work (NCCL's NVTX calls while it was open, or NCCL kernels in it);
// - an eager collective: an NCCL call (its NVTX range) outside any capture. Point-to-point calls (ncclSend/ncclRecv)
//   are left out: pipeline stages pair them differently by design.
// The process's ledger holds every entry, whatever its communicator: collectives on two communicators are ordered
// wherever streams join them (a torch.distributed call makes the current stream wait for its collective, and the
// next replay on that stream waits behind it: seen on two H200s, an eager all-reduce before the replay on one rank
// and after it on the other hung on two communicators as on one). NCCL (2.19+) also names each call's communicator
// in its range's payload (its commHash, trace format 1.13): each named communicator has a ledger of its own, with
// the replays of the graphs holding calls on it (those calls only) and its eager calls, which every rank of the
// communicator must make alike.
// Each entry carries its site when the trace knows it: the program's line of the graph launch (the recorder takes the
// Python stack at launches of collective-bearing graphs) or of the torch.distributed call (the probe's wait events,
// under --hang-timeout), else the name of the thread that made the call ("thread pt_autograd_0": DDP's reducer).
//
// Bounded: consecutive equal entries are one run, and at most kMaxLedgerEntries runs are kept per ledger; past them
// only totals and fingerprints of the whole sequence grow.
#ifndef GRAPHCHECK_ANALYSIS_COLLECTIVE_LEDGER_H_
#define GRAPHCHECK_ANALYSIS_COLLECTIVE_LEDGER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/collectives.h"
#include "core/finding.h"

namespace graphcheck::analysis {

class TraceAnalysis;

inline constexpr size_t kMaxLedgerEntries = 4096;

// A graph whose capture holds NCCL work, as the ledger's replays name it.
struct LedgerGraph {
  // The NCCL calls made while it was captured (on the ledger's communicator, for a communicator's), in order.
  std::vector<CollectiveRun> collectives;
  uint32_t nccl_kernels = 0;  // NCCL kernels captured into it (the process's ledger only)
  std::string captured_at;    // "train.py:41", "" when unknown
  uint32_t capture = 0;       // which of the process's captures (ProcessSummary::captures), from 1
  uint64_t replays = 0;       // how many times it was launched
  bool operator==(const LedgerGraph& other) const {
    return collectives == other.collectives && nccl_kernels == other.nccl_kernels;
  }
};

// One run of equal consecutive entries.
struct LedgerEntry {
  enum class Kind : uint8_t { kReplay, kEager };
  Kind kind = Kind::kReplay;
  uint32_t what = 0;   // kReplay: index into CollectiveLedger::graphs; kEager: into CollectiveLedger::names
  uint32_t site = 0;   // index into CollectiveLedger::sites; 0 = unknown
  uint64_t count = 1;  // how many times in a row
};

struct CollectiveLedger {
  uint64_t communicator = 0;  // NCCL's commHash, the same on every rank of the communicator; 0: the process's
  std::vector<LedgerGraph> graphs;
  std::vector<std::string> names;         // eager collectives' NCCL functions ("ncclAllReduce")
  std::vector<std::string> sites = {""};  // "train.py:52 in step", "thread pt_autograd_0"; sites[0] = unknown
  std::vector<SourceFrame> site_frames = {SourceFrame()};  // per site, the program's frame ("" file: none)
  std::vector<LedgerEntry> entries;                        // runs in order, at most kMaxLedgerEntries
  bool truncated = false;                                  // entries past the kept runs were counted, not kept
  uint64_t replays = 0;                                    // every collective-bearing replay, kept or not
  uint64_t eager = 0;                                      // every eager collective, kept or not
  // Fingerprints of the whole sequence, sites left out: every entry, the replays only, the eager collectives only.
  uint64_t all_fingerprint = 0;
  uint64_t replay_fingerprint = 0;
  uint64_t eager_fingerprint = 0;

  uint64_t total() const { return replays + eager; }
  // Appends one entry (a run of one), extending the last run when it is equal.
  void Append(LedgerEntry::Kind kind, uint32_t what, uint32_t site);
  // The fingerprint of an entry, sites left out: what another rank's ledger must match.
  uint64_t KeyOf(LedgerEntry::Kind kind, uint32_t what) const;
  // "the graph captured at train.py:41 in setup (ncclAllReduce x4)".
  std::string GraphText(uint32_t graph_index) const;
  // "a replay of the graph captured at train.py:41 (ncclAllReduce x4)", "an eager ncclAllReduce".
  std::string Describe(const LedgerEntry& entry) const;
  // " at train.py:52", " on thread pt_autograd_0", "" when unknown.
  std::string SiteText(uint32_t site) const;
};

// Whether an NCCL function is a collective the ledger counts (not a point-to-point call, a group bracket or a
// communicator's set-up).
bool IsLedgerCollective(absl::string_view nccl_function);

// A process's ledgers.
struct CollectiveLedgers {
  CollectiveLedger process;                     // every entry
  std::vector<CollectiveLedger> communicators;  // one per communicator its calls named, by communicator
};

// The ledgers of the process `analysis` holds, from its NCCL calls `nccl` (NvtxIndex::RangesInDomain("NCCL")).
// `capture_numbers`: for each capture window, its number among the process's captures (ProcessSummary::captures, from
// 1), 0 for one left out of them.
CollectiveLedgers BuildCollectiveLedgers(const TraceAnalysis& analysis, const std::vector<DomainRange>& nccl,
                                         const std::vector<uint32_t>& capture_numbers);

}  // namespace graphcheck::analysis

#endif  // GRAPHCHECK_ANALYSIS_COLLECTIVE_LEDGER_H_
