#include "analysis/ledger_comparison.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/plural.h"

namespace graphcheck::analysis {
namespace {

using Kind = LedgerDivergence::Kind;
using Compared = LedgerDivergence::Compared;

// "1st", "2nd", "3rd", "11th", "22nd".
std::string Ordinal(uint64_t n) {
  const uint64_t tens = n % 100;
  const char* suffix = "th";
  if (tens < 11 || tens > 13) {
    switch (n % 10) {
      case 1:
        suffix = "st";
        break;
      case 2:
        suffix = "nd";
        break;
      case 3:
        suffix = "rd";
        break;
      default:
        break;
    }
  }
  return absl::StrCat(n, suffix);
}

bool Compares(Compared compared, LedgerEntry::Kind entry) {
  switch (compared) {
    case Compared::kReplays:
      return entry == LedgerEntry::Kind::kReplay;
    case Compared::kEager:
      return entry == LedgerEntry::Kind::kEager;
    case Compared::kAll:
      return true;
  }
  return true;
}

// Walks one ledger's kept runs of the entries a kind compares, one unit at a time in bulk.
class Cursor {
 public:
  Cursor(const CollectiveLedger& ledger, Compared compared) : ledger_(ledger), compared_(compared) { SkipOthers(); }

  bool done() const { return run_ >= ledger_.entries.size(); }
  const LedgerEntry& entry() const { return ledger_.entries[run_]; }
  uint64_t key() const { return ledger_.KeyOf(entry().kind, entry().what); }
  uint64_t left() const { return entry().count - used_; }
  // The program line the entry was made at ("" for a thread's name or none).
  const std::string& line() const {
    static const std::string kNone;
    return ledger_.site_frames[entry().site].file.empty() ? kNone : ledger_.sites[entry().site];
  }
  LedgerSide Side(const ProcessSummary* process) const { return {process, &ledger_, entry(), occurrence()}; }
  // The next unit's occurrence among this rank's entries of the same work, from 1.
  uint64_t occurrence() const {
    auto it = seen_.find(key());
    return (it == seen_.end() ? 0 : it->second) + 1;
  }
  void Advance(uint64_t units) {
    seen_[key()] += units;
    used_ += units;
    if (used_ == entry().count) {
      ++run_;
      used_ = 0;
      SkipOthers();
    }
  }

 private:
  void SkipOthers() {
    while (run_ < ledger_.entries.size() && !Compares(compared_, ledger_.entries[run_].kind)) ++run_;
  }
  const CollectiveLedger& ledger_;
  const Compared compared_;
  size_t run_ = 0;
  uint64_t used_ = 0;
  absl::flat_hash_map<uint64_t, uint64_t> seen_;
};

// Walks side `a`'s ledger against `b`'s to where they part; false when their kept entries agree to the end of both.
bool Walk(const LedgerSide& a, const LedgerSide& b, LedgerDivergence* divergence) {
  const CollectiveLedger& a_ledger = *a.ledger;
  const CollectiveLedger& b_ledger = *b.ledger;
  Cursor x(a_ledger, divergence->compared);
  Cursor y(b_ledger, divergence->compared);
  uint64_t position = 0;
  while (true) {
    const bool x_ended = x.done();
    const bool y_ended = y.done();
    // A ledger whose kept runs ran out while it went on: the rest is not known (the fingerprints say it differs).
    if ((x_ended && a_ledger.truncated) || (y_ended && b_ledger.truncated)) {
      divergence->past_kept = true;
      break;
    }
    if (x_ended && y_ended) break;
    // Sites are not compared: NCCL pairs calls by order alone, and a thread's name carries its device
    // ("pt_autograd_0" on rank 0, "pt_autograd_1" on rank 1: seen on two H200s).
    if (x_ended || y_ended || x.key() != y.key()) {
      divergence->position = position;
      if (!x_ended) divergence->divergent = x.Side(a.process);
      if (!y_ended) divergence->reference = y.Side(b.process);
      return true;
    }
    if (!divergence->fork && !x.line().empty() && !y.line().empty() && x.line() != y.line()) {
      divergence->fork = LedgerFork{position, x.Side(a.process), y.Side(b.process)};
    }
    const uint64_t units = std::min(x.left(), y.left());
    x.Advance(units);
    y.Advance(units);
    position += units;
  }
  divergence->position = position;
  return divergence->past_kept;
}

// What a walk counts, for the messages.
const char* UnitOf(Compared compared) {
  switch (compared) {
    case Compared::kReplays:
      return "collective-bearing graph replay";
    case Compared::kEager:
      return "eager collective";
    case Compared::kAll:
      return "collective-bearing replay or eager collective";
  }
  return "";
}

// " on communicator 5c1e04a2", "" for communicator 0.
std::string OnCommunicator(const LedgerDivergence& divergence) {
  return divergence.communicator == 0 ? "" : absl::StrCat(" on ", CommunicatorText(divergence.communicator));
}

std::string DescribeSide(const LedgerSide& side, const LedgerDivergence& divergence, bool reference) {
  const std::vector<int32_t>& ranks = reference ? divergence.reference_ranks : divergence.ranks;
  const CollectiveLedger& ledger = *side.ledger;
  if (!side.entry) {
    const uint64_t made = divergence.compared == Compared::kReplays ? ledger.replays
                          : divergence.compared == Compared::kEager ? ledger.eager
                                                                    : ledger.total();
    const std::string& stopped = side.process->stopped;
    return absl::StrCat(RanksText(ranks), " made no more (", made, " in all)",
                        stopped.empty() ? "" : absl::StrCat(": its process ", stopped));
  }
  const LedgerEntry& entry = *side.entry;
  const std::string what = entry.kind == LedgerEntry::Kind::kReplay
                               ? absl::StrCat(" (that graph's ", Ordinal(side.occurrence), " replay)")
                               : absl::StrCat(" (its ", Ordinal(side.occurrence), " ", ledger.names[entry.what], ")");
  return absl::StrCat(RanksText(ranks), "'s was ", ledger.Describe(entry), ledger.SiteText(entry.site), what);
}

// The groups of one stage's ranks, by what their ledgers hold.
using LedgerSignature = std::tuple<uint64_t, uint64_t, uint64_t>;

LedgerSignature SignatureOf(const CollectiveLedger& ledger) {
  return {ledger.replay_fingerprint, ledger.eager_fingerprint, ledger.all_fingerprint};
}

std::vector<int32_t> Ranks(const std::vector<std::pair<const ProcessSummary*, const CollectiveLedger*>>& members) {
  std::vector<int32_t> ranks;
  for (const auto& member : members) ranks.push_back(member.first->rank);
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

}  // namespace

std::vector<LedgerDivergence> CompareLedgers(const JobSummary& job) {
  // What is compared together: the processes' ledgers within one stage (the ranks that must do the same work), then
  // each named communicator's ledgers across the ranks that used it, whatever their stage. The map orders the
  // processes' scopes (communicator 0) first.
  using Scope = std::pair<uint64_t, JobStage>;
  using Member = std::pair<const ProcessSummary*, const CollectiveLedger*>;
  std::map<Scope, std::map<LedgerSignature, std::vector<Member>>> scopes;
  for (const ProcessSummary& process : job.processes) {
    // A ledger whose trace lost records may miss entries: not compared.
    if (process.rank < 0 || process.world_size <= 1 || process.ledger_lossy) continue;
    const CollectiveLedger& whole = process.ledgers.process;
    scopes[{0, StageOf(process)}][SignatureOf(whole)].push_back({&process, &whole});
    for (const CollectiveLedger& ledger : process.ledgers.communicators) {
      scopes[{ledger.communicator, {process.world_size, {}}}][SignatureOf(ledger)].push_back({&process, &ledger});
    }
  }
  std::vector<LedgerDivergence> divergences;
  for (const auto& [scope, groups] : scopes) {
    if (groups.size() < 2) continue;
    // The reference: the ledger of the most ranks (ties: the group holding the lowest rank).
    auto rank_order = [](const auto& group) {
      return std::make_tuple(group.second.size(), -Ranks(group.second).front());
    };
    const auto reference = std::max_element(
        groups.begin(), groups.end(), [&](const auto& a, const auto& b) { return rank_order(a) < rank_order(b); });
    const auto [expected_process, expected] = reference->second.front();
    for (const auto& [signature, members] : groups) {
      if (&members == &reference->second) continue;
      const auto [actual_process, actual] = members.front();
      LedgerDivergence divergence;
      divergence.kind = actual->replay_fingerprint != expected->replay_fingerprint ? Kind::kReplays
                        : actual->eager_fingerprint == expected->eager_fingerprint ? Kind::kInterleaving
                                                                                   : Kind::kEager;
      const bool eager_agree = actual->eager_fingerprint == expected->eager_fingerprint;
      const bool no_eager = eager_agree && actual->eager == 0;
      divergence.compared = no_eager                          ? Compared::kReplays
                            : eager_agree                     ? Compared::kAll
                            : divergence.kind == Kind::kEager ? Compared::kEager
                                                              : Compared::kReplays;
      divergence.world_size = scope.second.first;
      divergence.communicator = scope.first;
      divergence.ranks = Ranks(members);
      divergence.reference_ranks = Ranks(reference->second);
      divergence.divergent = {actual_process, actual, std::nullopt, 0};
      divergence.reference = {expected_process, expected, std::nullopt, 0};
      if (Walk(divergence.divergent, divergence.reference, &divergence)) divergences.push_back(std::move(divergence));
    }
  }
  return divergences;
}

std::string DescribeDivergence(const LedgerDivergence& divergence) {
  const std::string ranks = RanksText(divergence.ranks);
  const std::string reference_ranks = RanksText(divergence.reference_ranks);
  if (divergence.past_kept) {
    return absl::StrCat(ranks, " of ", divergence.world_size, " and ", reference_ranks, " agree on their first ",
                        divergence.position, " ", UnitOf(divergence.compared), "s", OnCommunicator(divergence),
                        " (all the ledger keeps) and part later");
  }
  const std::string parting = absl::StrCat(DescribeSide(divergence.divergent, divergence, false), ", where ",
                                           DescribeSide(divergence.reference, divergence, true));
  if (!divergence.fork) {
    return absl::StrCat(ranks, " of ", divergence.world_size, " and ", reference_ranks, " part at their ",
                        Ordinal(divergence.position + 1), " ", UnitOf(divergence.compared), OnCommunicator(divergence),
                        ": ", parting);
  }
  // The fork's sides are the same work (their entries agree up to the parting), made at other lines.
  const LedgerFork& fork = *divergence.fork;
  const CollectiveLedger& ledger = *fork.divergent.ledger;
  const LedgerEntry& entry = *fork.divergent.entry;
  const std::string work =
      entry.kind == LedgerEntry::Kind::kReplay
          ? absl::StrCat(Ordinal(fork.divergent.occurrence), " replay of ", ledger.GraphText(entry.what))
          : absl::StrCat(Ordinal(fork.divergent.occurrence), " eager ", ledger.names[entry.what]);
  return absl::StrCat(ranks, " of ", divergence.world_size, " and ", reference_ranks, " went different ways at their ",
                      Ordinal(fork.position + 1), " ", UnitOf(divergence.compared), OnCommunicator(divergence),
                      ", the ", work, ": ", ranks, " made it", ledger.SiteText(entry.site), ", ", reference_ranks,
                      fork.reference.ledger->SiteText(fork.reference.entry->site), ". Their ledgers part at the ",
                      Ordinal(divergence.position + 1), ": ", parting);
}

std::vector<std::string> ReplayCountDifferences(const LedgerDivergence& divergence) {
  const int32_t my_rank = divergence.divergent.process->rank;
  const int32_t their_rank = divergence.reference.process->rank;
  const CollectiveLedger& my_ledger = *divergence.divergent.ledger;
  const CollectiveLedger& their_ledger = *divergence.reference.ledger;
  std::vector<std::string> lines;
  auto add = [&](const CollectiveLedger& ledger, uint32_t graph, uint64_t my_count, uint64_t their_count) {
    lines.push_back(absl::StrCat("rank ", my_rank, " replayed ", ledger.GraphText(graph), " ",
                                 Plural(my_count, "time", "times"), ", rank ", their_rank, " ", their_count));
  };
  // Graphs pair up by what they hold, in capture order.
  std::vector<bool> paired(their_ledger.graphs.size(), false);
  for (uint32_t g = 0; g < my_ledger.graphs.size(); ++g) {
    const LedgerGraph& graph = my_ledger.graphs[g];
    uint64_t other = 0;
    for (size_t h = 0; h < their_ledger.graphs.size(); ++h) {
      if (!paired[h] && their_ledger.graphs[h] == graph) {
        paired[h] = true;
        other = their_ledger.graphs[h].replays;
        break;
      }
    }
    if (other != graph.replays) add(my_ledger, g, graph.replays, other);
  }
  for (uint32_t h = 0; h < their_ledger.graphs.size(); ++h) {
    if (!paired[h] && their_ledger.graphs[h].replays > 0) add(their_ledger, h, 0, their_ledger.graphs[h].replays);
  }
  return lines;
}

std::string DescribeAgreement(const JobSummary& job) {
  const ProcessSummary* first = nullptr;
  size_t ranks = 0;
  for (const ProcessSummary& process : job.processes) {
    if (process.rank < 0) continue;
    ++ranks;
    if (first == nullptr) first = &process;
  }
  if (first == nullptr) return "";
  const size_t communicators = first->ledgers.communicators.size();
  return absl::StrCat(
      "the ", ranks, " ranks' collective ledgers agree: each made ",
      Plural(first->ledgers.process.replays, "collective-bearing graph replay", "collective-bearing graph replays"),
      " and ", Plural(first->ledgers.process.eager, "eager collective", "eager collectives"), ", in the same order",
      communicators > 1 ? absl::StrCat(", and on each of its ", communicators, " NCCL communicators") : "");
}

}  // namespace graphcheck::analysis
