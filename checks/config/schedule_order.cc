// schedule-order: a capture order for Transformer Engine's make_graphed_callables(_order=...) that TE would reject or
// that captures a backward before its forward: per-chunk forward / backward counts, ids in range, ordering, and the
// counts of callables and sample arguments the order implies.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checks/checks.h"
#include "checks/config/capture_order.h"
#include "core/check.h"
#include "core/check_ids.h"
#include "core/plural.h"

namespace graphcheck::checks {
namespace {

class ScheduleOrderCheck : public CheckOf<CaptureOrder> {
 public:
  ScheduleOrderCheck();

 protected:
  void Read(const CaptureOrder& order, const BoundOptions& options, std::vector<Finding>* findings) const override;
};

}  // namespace
namespace {

// Builds the findings of one order: where each points and the shared wording.
class OrderFindings {
 public:
  OrderFindings(const CaptureOrder& order, Finding prototype, std::vector<Finding>* findings)
      : order_(order), prototype_(std::move(prototype)), findings_(findings) {}

  // About the order as a whole.
  void Add(std::string message, std::string fix) { Push(Position{}, std::move(message), std::move(fix)); }
  // About entry `index` (0-based).
  void AddAt(size_t index, std::string message, std::string fix) {
    const OrderEntry& entry = order_.entries[index];
    Push(entry.position, absl::StrCat("Entry ", index + 1, " (", FormatOrder({entry}), "): ", message), std::move(fix));
  }

 private:
  void Push(Position position, std::string message, std::string fix) {
    Finding finding = prototype_;
    finding.where.file = order_.file;
    finding.where.line = position.line;
    finding.where.column = position.column;
    finding.where.key = order_.key;
    finding.message = std::move(message);
    finding.fix = std::move(fix);
    findings_->push_back(std::move(finding));
  }

  const CaptureOrder& order_;
  Finding prototype_;
  std::vector<Finding>* findings_;
};

struct ChunkCounts {
  int forward = 0;
  int backward = 0;
  int wgrad = 0;
};

// The order's passes by chunk (only chunks that appear), and its forward and backward entries: what len(_order)
// counts.
struct PassTally {
  std::map<int, ChunkCounts> counts;
  int passes = 0;
};

// Transformer Engine derives the chunk count from the largest forward entry; a --chunks that disagrees is reported.
int CheckChunkCount(const CaptureOrder& order, OrderFindings& out) {
  int max_chunk = 0;
  for (const OrderEntry& entry : order.entries) {
    if (entry.kind() == OrderEntry::Kind::kForward) max_chunk = std::max(max_chunk, entry.chunk());
  }
  if (order.chunks && *order.chunks != max_chunk) {
    out.Add(absl::StrCat("The order's largest forward chunk id is ", max_chunk, ", but ",
                         Plural(*order.chunks, "chunk is", "chunks are"),
                         " expected; Transformer Engine takes the number of chunks from max(_order)."),
            absl::StrCat("Give every chunk 1..", *order.chunks, " its forwards, or correct --chunks."));
  }
  return order.chunks.value_or(max_chunk);
}

// Ids, and the order of each chunk's passes: the k-th backward needs k forwards before it, the k-th weight-gradient
// pass k backwards. Only the first misplaced pass of each chunk is reported; the rest usually follow from it.
PassTally TallyPasses(const CaptureOrder& order, int chunks, OrderFindings& out) {
  PassTally tally;
  std::map<int, bool> misordered;
  for (size_t i = 0; i < order.entries.size(); ++i) {
    const OrderEntry& entry = order.entries[i];
    const OrderEntry::Kind kind = entry.kind();
    if (kind == OrderEntry::Kind::kInvalid) {
      out.AddAt(i,
                "not a chunk id: entries are +c (forward of chunk c), -c (its backward) or -(c + 0.5) (its "
                "weight-gradient pass), with c from 1.",
                "Use 1-based chunk ids; 0 is not a chunk.");
      continue;
    }
    if (entry.chunk() > chunks) {
      out.AddAt(i,
                absl::StrCat("chunk ", entry.chunk(), " is out of range: the order has ",
                             Plural(chunks, "chunk", "chunks"), "."),
                absl::StrCat("Use chunk ids 1..", chunks, "."));
      continue;
    }
    ChunkCounts& c = tally.counts[entry.chunk()];
    if (kind == OrderEntry::Kind::kForward) {
      ++c.forward;
      ++tally.passes;
    } else if (kind == OrderEntry::Kind::kBackward) {
      ++tally.passes;
      if (++c.backward > c.forward && !misordered[entry.chunk()]) {
        misordered[entry.chunk()] = true;
        out.AddAt(
            i,
            absl::StrCat("backward ", c.backward, " of chunk ", entry.chunk(), " comes before its forward (",
                         Plural(c.forward, "forward", "forwards"),
                         " of the chunk so far). Its graph would be captured from gradients that do not exist yet."),
            "Move the backward after the matching forward (microbatches run forward first, backward later).");
      }
    } else if (++c.wgrad > c.backward && !misordered[entry.chunk()]) {
      misordered[entry.chunk()] = true;
      out.AddAt(i,
                absl::StrCat("weight-gradient pass ", c.wgrad, " of chunk ", entry.chunk(),
                             " comes before the backward it completes."),
                "Put each -(c + 0.5) entry after the -c backward it belongs to.");
    }
  }
  return tally;
}

// Counts: Transformer Engine asserts num_model_chunks * num_microbatches * 2 == len(_order), and every chunk needs one
// forward and one backward per microbatch. Returns the microbatches (given, or implied by the order).
int CheckPassCounts(const CaptureOrder& order, int chunks, const PassTally& tally, OrderFindings& out) {
  const int microbatches = order.microbatches.value_or(tally.passes / chunks / 2);
  if (!order.microbatches && chunks * microbatches * 2 != tally.passes) {
    out.Add(absl::StrCat("The order has ", tally.passes, " forward and backward entries, which is not 2 x ", chunks,
                         " chunks x a whole number of microbatches; Transformer Engine asserts "
                         "num_model_chunks * num_microbatches * 2 == len(_order)."),
            "Give every chunk one forward and one backward per microbatch.");
  }
  // Only chunks that appear are visited: an id in the millions must not cost millions of steps or findings.
  if (static_cast<int>(tally.counts.size()) < chunks) {
    int missing = 1;
    while (tally.counts.count(missing) != 0) ++missing;
    out.Add(absl::StrCat(chunks - tally.counts.size(), " of the ", chunks, " chunks have no entries (chunk ", missing,
                         " is one); every chunk needs ", Plural(microbatches, "forward", "forwards"), " and ",
                         Plural(microbatches, "backward", "backwards"), "."),
            "Give every chunk its forward and backward entries, or correct the chunk ids.");
  }
  for (const auto& [chunk, c] : tally.counts) {
    if (c.forward != microbatches || c.backward != microbatches) {
      out.Add(
          absl::StrCat("Chunk ", chunk, " has ", Plural(c.forward, "forward", "forwards"), " and ",
                       Plural(c.backward, "backward", "backwards"), "; ",
                       Plural(microbatches, "microbatch needs", "microbatches need"), " ", microbatches, " of each."),
          absl::StrCat("Give chunk ", chunk, " exactly ", microbatches, " forward (", chunk, ") and ", microbatches,
                       " backward (-", chunk, ") entries."));
    }
    if (c.wgrad != 0 && c.wgrad != microbatches) {
      out.Add(absl::StrCat("Chunk ", chunk, " has ", Plural(c.wgrad, "weight-gradient pass", "weight-gradient passes"),
                           " for ", Plural(microbatches, "microbatch", "microbatches"), "."),
              absl::StrCat("Give chunk ", chunk, " one -", chunk, ".5 entry per backward, or none."));
    }
  }
  return microbatches;
}

// Callables and sample arguments, as make_graphed_callables checks them against the layers the order describes.
void CheckCallablesAndSamples(const CaptureOrder& order, int chunks, int microbatches, int passes, OrderFindings& out) {
  std::optional<int64_t> total_layers;
  if (!order.layers_per_chunk.empty()) {
    if (static_cast<int>(order.layers_per_chunk.size()) != chunks) {
      out.Add(absl::StrCat("_num_layers_per_chunk has ", Plural(order.layers_per_chunk.size(), "entry", "entries"),
                           " for ", Plural(chunks, "chunk", "chunks"), "."),
              absl::StrCat("Give one layer count per chunk (", chunks, ")."));
    }
    total_layers = std::accumulate(order.layers_per_chunk.begin(), order.layers_per_chunk.end(), int64_t{0});
  } else if (order.sample_args && passes > 0 && microbatches > 0) {
    const int64_t twice = int64_t{*order.sample_args} * 2;
    if (twice < passes || twice % passes != 0) {
      out.Add(absl::StrCat(Plural(*order.sample_args, "sample argument does", "sample arguments do"),
                           " not fit an order of ", Plural(passes, "pass", "passes"),
                           ": Transformer Engine asserts len(sample_args) * 2 >= len(_order) and "
                           "len(sample_args) * 2 % len(_order) == 0."),
              "Pass one sample argument tuple per layer per microbatch of every chunk.");
    }
    total_layers = *order.sample_args / chunks / microbatches * chunks;
  } else if (order.callables) {
    total_layers = *order.callables;
  }
  if (!total_layers) return;
  if (order.callables && *order.callables != *total_layers) {
    out.Add(absl::StrCat(Plural(*order.callables, "callable is", "callables are"),
                         " given, but the order and layer counts describe ", Plural(*total_layers, "layer", "layers"),
                         "; Transformer Engine asserts len(callables) == the total number of layers."),
            "Pass one callable per layer of every chunk, in chunk order.");
  }
  if (order.sample_args && *order.sample_args != *total_layers * microbatches) {
    out.Add(
        absl::StrCat(Plural(*order.sample_args, "sample argument is", "sample arguments are"), " given; ",
                     Plural(*total_layers, "layer", "layers"), " x ",
                     Plural(microbatches, "microbatch", "microbatches"), " need ", *total_layers * microbatches, "."),
        "Pass one sample argument tuple per layer per microbatch.");
  }
}

}  // namespace

ScheduleOrderCheck::ScheduleOrderCheck()
    : CheckOf(CheckInfo{
          check_id::kScheduleOrder,
          "invalid capture order for make_graphed_callables",
          Severity::kError,
          CheckArea::kConfiguration,
          "Transformer Engine's make_graphed_callables(_order=...) captures forward and backward graphs of each model "
          "chunk in the given order. Every chunk needs one forward and one backward per microbatch, each backward "
          "after "
          "its forward, and the callables and sample arguments must match the counts the order implies.",
          {}}) {}

void ScheduleOrderCheck::Read(const CaptureOrder& order, const BoundOptions& options,
                              std::vector<Finding>* findings) const {
  OrderFindings out(order, NewFinding(), findings);
  const int chunks = CheckChunkCount(order, out);
  const PassTally tally = TallyPasses(order, chunks, out);
  if (chunks <= 0) return;
  const int microbatches = CheckPassCounts(order, chunks, tally, out);
  CheckCallablesAndSamples(order, chunks, microbatches, tally.passes, out);
}

std::unique_ptr<Check> NewScheduleOrderCheck() { return std::make_unique<ScheduleOrderCheck>(); }

}  // namespace graphcheck::checks
