#include "checks/config/capture_order.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace graphcheck::checks {
namespace {

// Words of a list: separated by whitespace, commas and brackets; '#' starts a comment to the end of the line.
struct ListWord {
  std::string text;
  Position position;
};

std::vector<ListWord> SplitList(absl::string_view text) {
  std::vector<ListWord> words;
  int line = 1;
  int column = 0;
  bool in_word = false;
  bool in_comment = false;
  for (char c : text) {
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
      in_word = in_comment = false;
    } else if (in_comment) {
      continue;
    } else if (c == '#') {
      in_word = false;
      in_comment = true;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == ',' || c == '[' || c == ']') {
      in_word = false;
    } else {
      if (!in_word) words.push_back(ListWord{"", Position{line, column}});
      words.back().text.push_back(c);
      in_word = true;
    }
  }
  return words;
}

absl::Status NotANumber(absl::string_view source, const ListWord& word, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(source, ":", word.position.line, ":", word.position.column, ": '", word.text, "' is not ", what));
}

// Whole numbers without a decimal point; the range check keeps the conversion defined for any parsed number.
std::string FormatNumber(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e15) return absl::StrCat(static_cast<long long>(value));
  return absl::StrCat(value);
}

}  // namespace

OrderEntry::Kind OrderEntry::kind() const {
  const double magnitude = std::fabs(value);
  if (!std::isfinite(value) || magnitude < 1 || magnitude > 1e9) return Kind::kInvalid;
  const double fraction = magnitude - std::floor(magnitude);
  if (fraction == 0) return value > 0 ? Kind::kForward : Kind::kBackward;
  if (fraction == 0.5 && value < 0) return Kind::kWgrad;
  return Kind::kInvalid;
}

int OrderEntry::chunk() const { return static_cast<int>(std::floor(std::fabs(value))); }

absl::StatusOr<std::vector<OrderEntry>> ParseOrderText(absl::string_view text, absl::string_view source) {
  std::vector<OrderEntry> entries;
  for (const ListWord& word : SplitList(text)) {
    OrderEntry entry;
    if (!absl::SimpleAtod(word.text, &entry.value) || !std::isfinite(entry.value)) {
      return NotANumber(source, word, "a number");
    }
    entry.position = word.position;
    entries.push_back(entry);
  }
  if (entries.empty()) return absl::InvalidArgumentError(absl::StrCat(source, ": the order is empty"));
  return entries;
}

absl::StatusOr<std::vector<int>> ParseIntList(absl::string_view text, absl::string_view source) {
  std::vector<int> values;
  for (const ListWord& word : SplitList(text)) {
    int value = 0;
    if (!absl::SimpleAtoi(word.text, &value)) return NotANumber(source, word, "a whole number");
    values.push_back(value);
  }
  return values;
}

absl::StatusOr<ScheduleTable> ParseScheduleTable(absl::string_view text) {
  ScheduleTable table;
  for (const ListWord& word : SplitList(text)) {
    std::pair<std::string, std::string> parts = absl::StrSplit(word.text, absl::MaxSplits(':', 1));
    std::pair<int, int> cell;
    if (!absl::SimpleAtoi(parts.first, &cell.first) || !absl::SimpleAtoi(parts.second, &cell.second)) {
      return NotANumber("--schedule-table", word, "MICROBATCH:CHUNK");
    }
    table.push_back(cell);
  }
  if (table.empty()) return absl::InvalidArgumentError("--schedule-table: the table is empty");
  return table;
}

absl::StatusOr<std::vector<double>> ConvertScheduleTableToOrder(int num_warmup_microbatches, int num_model_chunks,
                                                                const ScheduleTable& table) {
  if (num_warmup_microbatches < 0) return absl::InvalidArgumentError("the warmup microbatch count is negative");
  std::vector<double> forward;
  std::vector<double> backward;
  for (const auto& [microbatch, chunk] : table) {
    if (chunk < 0 || chunk >= num_model_chunks) {
      return absl::InvalidArgumentError(absl::StrCat("schedule table chunk id ", chunk, " (microbatch ", microbatch,
                                                     ") is outside 0..", num_model_chunks - 1));
    }
    forward.push_back(chunk + 1);
    backward.push_back(chunk - num_model_chunks);
  }
  const size_t warmup = std::min<size_t>(num_warmup_microbatches, forward.size());
  std::vector<double> order(forward.begin(), forward.begin() + warmup);
  for (size_t i = warmup; i < forward.size(); ++i) {
    order.push_back(forward[i]);
    order.push_back(backward[i - warmup]);
  }
  order.insert(order.end(), backward.end() - warmup, backward.end());
  return order;
}

absl::StatusOr<LayerOrder> OverlapMoeExpertParallelCommOrder(const std::vector<double>& order,
                                                             const std::vector<int>& num_layers_per_chunk,
                                                             bool capture_wgrad_graph) {
  std::vector<int> first_layer;  // global 1-based id of each chunk's first layer
  int next = 1;
  for (int layers : num_layers_per_chunk) {
    if (layers < 0) return absl::InvalidArgumentError("a chunk's layer count is negative");
    first_layer.push_back(next);
    next += layers;
  }
  // One chunk pass as its layer entries: forwards ascending, backwards descending (each followed by its
  // weight-gradient entry when those are captured).
  using Entries = std::vector<std::pair<double, std::optional<std::pair<int, int>>>>;
  auto layer_entries = [&](double value) -> absl::StatusOr<std::vector<Entries>> {
    const OrderEntry entry{value, {}};
    if (entry.kind() != OrderEntry::Kind::kForward && entry.kind() != OrderEntry::Kind::kBackward) {
      return absl::InvalidArgumentError(absl::StrCat("order entry ", FormatNumber(value), " is not a chunk id"));
    }
    const int chunk = entry.chunk() - 1;
    if (chunk >= static_cast<int>(num_layers_per_chunk.size())) {
      return absl::InvalidArgumentError(absl::StrCat("order entry ", FormatNumber(value), " names chunk ", chunk + 1,
                                                     " but layer counts are given for ", num_layers_per_chunk.size(),
                                                     " chunks"));
    }
    std::vector<Entries> layers;
    for (int layer = 0; layer < num_layers_per_chunk[chunk]; ++layer) {
      if (value > 0) {
        layers.push_back({{first_layer[chunk] + layer, std::make_pair(chunk, layer)}});
        continue;
      }
      const int id = first_layer[chunk] + num_layers_per_chunk[chunk] - 1 - layer;
      layers.push_back({{-id, std::nullopt}});
      if (capture_wgrad_graph) layers.back().push_back({-id - 0.5, std::nullopt});
    }
    return layers;
  };
  LayerOrder result;
  auto emit = [&result](const Entries& entries) {
    for (const auto& [value, chunk_id] : entries) {
      result.order.push_back(value);
      result.chunk_ids.push_back(chunk_id);
    }
  };
  for (size_t i = 0; i < order.size(); ++i) {
    absl::StatusOr<std::vector<Entries>> current = layer_entries(order[i]);
    if (!current.ok()) return current.status();
    // A backward followed by a forward is one overlapped 1F1B step: the forward's layers run first, interleaved
    // layer by layer with the backward's, so that each layer's expert communication hides behind the other's
    // computation (the docstring's [1, 2, -2, 1, ...] -> [1, 2, 3, 1, -3, -2, ...]).
    if (order[i] < 0 && i + 1 < order.size() && order[i + 1] > 0) {
      absl::StatusOr<std::vector<Entries>> forward = layer_entries(order[++i]);
      if (!forward.ok()) return forward.status();
      for (size_t layer = 0; layer < std::max(forward->size(), current->size()); ++layer) {
        if (layer < forward->size()) emit((*forward)[layer]);
        if (layer < current->size()) emit((*current)[layer]);
      }
      continue;
    }
    for (const Entries& layer : *current) emit(layer);
  }
  return result;
}

std::vector<OrderEntry> ToEntries(const std::vector<double>& order) {
  std::vector<OrderEntry> entries;
  entries.reserve(order.size());
  for (double value : order) entries.push_back(OrderEntry{value, {}});
  return entries;
}

std::string FormatOrder(const std::vector<OrderEntry>& entries) {
  return absl::StrJoin(entries, ", ",
                       [](std::string* out, const OrderEntry& entry) { out->append(FormatNumber(entry.value)); });
}

std::string RenderTimeline(const std::vector<OrderEntry>& entries, int steps_per_row) {
  // Label every valid entry with its pass and its per-chunk microbatch index.
  std::map<int, std::vector<std::string>> lanes;  // chunk -> one cell per step
  std::map<std::pair<int, OrderEntry::Kind>, int> seen;
  std::vector<std::string> labels(entries.size());
  size_t width = 1;
  for (size_t i = 0; i < entries.size(); ++i) {
    const OrderEntry::Kind kind = entries[i].kind();
    if (kind == OrderEntry::Kind::kInvalid) continue;
    const char* pass = kind == OrderEntry::Kind::kForward ? "F" : kind == OrderEntry::Kind::kBackward ? "B" : "W";
    labels[i] = absl::StrCat(pass, seen[{entries[i].chunk(), kind}]++);
    width = std::max(width, labels[i].size());
    lanes[entries[i].chunk()];
  }
  std::string out;
  const int rows = std::max<int>(1, steps_per_row);
  for (size_t start = 0; start < entries.size(); start += rows) {
    const size_t end = std::min(entries.size(), start + rows);
    std::string header = "step    ";
    for (size_t i = start; i < end; ++i) {
      std::string number = absl::StrCat(i + 1);
      header += std::string(width + 1 > number.size() ? width + 1 - number.size() : 1, ' ') + number;
    }
    absl::StrAppend(&out, header, "\n");
    for (const auto& [chunk, unused] : lanes) {
      std::string lane = absl::StrCat("chunk ", chunk);
      lane.resize(std::max<size_t>(lane.size(), 8), ' ');
      for (size_t i = start; i < end; ++i) {
        const bool here = entries[i].kind() != OrderEntry::Kind::kInvalid && entries[i].chunk() == chunk;
        const std::string cell = here ? labels[i] : ".";
        lane += std::string(width + 1 - cell.size(), ' ') + cell;
      }
      absl::StrAppend(&out, lane, "\n");
    }
    if (end < entries.size()) out += "\n";
  }
  return out;
}

}  // namespace graphcheck::checks
