// Capture orders for Transformer Engine's make_graphed_callables(_order=...): parsing them, producing them the way
// Megatron Core does (convert_schedule_table_to_order, get_overlap_moe_expert_parallel_comm_order), and printing one
// as a text timeline. An entry +c is a forward of model chunk c (1-based), -c a backward, -(c + 0.5) the delayed
// weight-gradient pass of chunk c.
#ifndef GRAPHCHECK_CHECKS_CONFIG_CAPTURE_ORDER_H_
#define GRAPHCHECK_CHECKS_CONFIG_CAPTURE_ORDER_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "checks/config/config_document.h"

namespace graphcheck::checks {

struct OrderEntry {
  enum class Kind { kForward, kBackward, kWgrad, kInvalid };
  double value = 0;
  Position position;  // in the order file; 0 when the order came from the command line or a conversion

  Kind kind() const;
  int chunk() const;  // 1-based chunk id of a valid entry
};

// A capture order with what is known about the call it is meant for; the counts are optional and checked when given.
struct CaptureOrder {
  std::vector<OrderEntry> entries;
  std::string file;                   // the order file; "" for an order given inline or computed
  std::string key;                    // the option it came from: "--order", "--order-file", "--schedule-table"
  std::optional<int> chunks;          // number of model chunks the caller expects
  std::optional<int> microbatches;    // microbatches per chunk the caller expects
  std::optional<int> callables;       // len(callables) passed to make_graphed_callables
  std::optional<int> sample_args;     // len(sample_args)
  std::vector<int> layers_per_chunk;  // _num_layers_per_chunk, when the call passes it
};

// Numbers separated by commas and/or whitespace, optionally in [ ]: "1,1,2,2,-2,-1". InvalidArgument names
// SOURCE:LINE:COLUMN of the first word that is not a number.
absl::StatusOr<std::vector<OrderEntry>> ParseOrderText(absl::string_view text, absl::string_view source);
// Integer lists: "1,2" (--layers-per-chunk).
absl::StatusOr<std::vector<int>> ParseIntList(absl::string_view text, absl::string_view source);

// A tunable schedule table: (microbatch_id, model_chunk_id) per virtual microbatch, written "0:0 1:0 2:0 0:1 ...".
using ScheduleTable = std::vector<std::pair<int, int>>;
absl::StatusOr<ScheduleTable> ParseScheduleTable(absl::string_view text);

// Megatron Core's convert_schedule_table_to_order: the first `num_warmup_microbatches` forwards, then one forward and
// one backward alternating, then the remaining backwards; backwards visit the chunks in reverse
// (chunk_id - num_model_chunks). InvalidArgument for a chunk id outside [0, num_model_chunks) or negative warmup.
absl::StatusOr<std::vector<double>> ConvertScheduleTableToOrder(int num_warmup_microbatches, int num_model_chunks,
                                                                const ScheduleTable& table);

// Megatron Core's get_overlap_moe_expert_parallel_comm_order: each chunk becomes one entry per layer (global layer
// ids, ascending in forward, descending in backward); with `capture_wgrad_graph` each backward layer entry is followed
// by its weight-gradient entry -(id + 0.5). A backward directly followed by a forward (an overlapped 1F1B step) is
// emitted forward first, the two chunks' layers alternating. chunk_ids holds [chunk index, layer index] (0-based) for
// forward entries and nothing for backward ones.
struct LayerOrder {
  std::vector<double> order;
  std::vector<std::optional<std::pair<int, int>>> chunk_ids;
};
absl::StatusOr<LayerOrder> OverlapMoeExpertParallelCommOrder(const std::vector<double>& order,
                                                             const std::vector<int>& num_layers_per_chunk,
                                                             bool capture_wgrad_graph);

std::vector<OrderEntry> ToEntries(const std::vector<double>& order);
// "1, 1, 2, -2, -3.5"
std::string FormatOrder(const std::vector<OrderEntry>& entries);
// One lane per chunk, one column per step: F3 = forward of the chunk's 4th microbatch, B3 its backward, W3 its
// weight-gradient pass; wrapped every `steps_per_row` steps.
std::string RenderTimeline(const std::vector<OrderEntry>& entries, int steps_per_row = 24);

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_CONFIG_CAPTURE_ORDER_H_
