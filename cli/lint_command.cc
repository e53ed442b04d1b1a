#include "cli/lint_command.h"
#include "core/file_io.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>

#include "absl/strings/str_cat.h"
#include "checks/config/capture_order.h"
#include "checks/config/config_keys.h"
#include "checks/config/config_parser.h"
#include "cli/catalog.h"
#include "core/environment.h"
#include "core/plural.h"

namespace graphcheck {
namespace {

using checks::CaptureOrder;
using checks::ConfigDocument;
using checks::ConvertScheduleTableToOrder;
using checks::FormatOrder;
using checks::LayerOrder;
using checks::OrderEntry;
using checks::OverlapMoeExpertParallelCommOrder;
using checks::ParseArgumentList;
using checks::ParseIntList;
using checks::ParseOrderText;
using checks::ParseScheduleTable;
using checks::RenderTimeline;
using checks::ScheduleTable;
using checks::ToEntries;

struct LintOptions {
  bool env = false;
  std::vector<std::string> configs;     // --config FILE (repeatable)
  std::vector<std::string> mcore_args;  // Megatron Core arguments after `--`
  // Capture order: given, from a file, or converted from a schedule table; optionally expanded layer-wise.
  std::string order;
  std::string order_file;
  std::string schedule_table;
  int warmup_microbatches = 0;
  std::optional<int> chunks;
  std::optional<int> microbatches;
  std::optional<int> callables;
  std::optional<int> sample_args;
  std::string layers_per_chunk;
  bool moe_overlap = false;
  bool capture_wgrad = false;
  OutputOptions output;
};

// The capture order the options describe, or nullopt when they describe none.
absl::StatusOr<std::optional<CaptureOrder>> BuildOrder(const LintOptions& options) {
  const int sources = !options.order.empty() + !options.order_file.empty() + !options.schedule_table.empty();
  if (sources == 0) {
    if (options.moe_overlap) return absl::InvalidArgumentError("--moe-overlap needs an order to expand");
    return std::optional<CaptureOrder>();
  }
  if (sources > 1) {
    return absl::InvalidArgumentError("give one of --order, --order-file and --schedule-table");
  }
  CaptureOrder order;
  order.chunks = options.chunks;
  order.microbatches = options.microbatches;
  order.callables = options.callables;
  order.sample_args = options.sample_args;
  if (!options.layers_per_chunk.empty()) {
    absl::StatusOr<std::vector<int>> layers = ParseIntList(options.layers_per_chunk, "--layers-per-chunk");
    if (!layers.ok()) return layers.status();
    order.layers_per_chunk = *std::move(layers);
  }
  if (!options.order.empty()) {
    absl::StatusOr<std::vector<OrderEntry>> entries = ParseOrderText(options.order, "--order");
    if (!entries.ok()) return entries.status();
    order.entries = *std::move(entries);
    order.key = "--order";
  } else if (!options.order_file.empty()) {
    absl::StatusOr<std::string> text = ReadInputFile(options.order_file, kOrderInput);
    if (!text.ok()) return text.status();
    absl::StatusOr<std::vector<OrderEntry>> entries = ParseOrderText(*text, options.order_file);
    if (!entries.ok()) return entries.status();
    order.entries = *std::move(entries);
    order.file = options.order_file;
    order.key = "_order";
  } else {
    absl::StatusOr<ScheduleTable> table = ParseScheduleTable(options.schedule_table);
    if (!table.ok()) return table.status();
    int chunks = 0;
    for (const auto& cell : *table) chunks = std::max(chunks, cell.second + 1);
    absl::StatusOr<std::vector<double>> converted =
        ConvertScheduleTableToOrder(options.warmup_microbatches, options.chunks.value_or(chunks), *table);
    if (!converted.ok()) return converted.status();
    order.entries = ToEntries(*converted);
    order.key = "--schedule-table";
  }
  if (options.moe_overlap) {
    if (order.layers_per_chunk.empty()) return absl::InvalidArgumentError("--moe-overlap needs --layers-per-chunk");
    std::vector<double> values;
    for (const OrderEntry& entry : order.entries) values.push_back(entry.value);
    absl::StatusOr<LayerOrder> expanded =
        OverlapMoeExpertParallelCommOrder(values, order.layers_per_chunk, options.capture_wgrad);
    if (!expanded.ok()) return expanded.status();
    // Every layer is a chunk of its own in the expanded order (Megatron passes _num_layers_per_chunk of ones).
    order.entries = ToEntries(expanded->order);
    order.chunks.reset();
    const int layers = std::accumulate(order.layers_per_chunk.begin(), order.layers_per_chunk.end(), 0);
    order.layers_per_chunk.assign(layers, 1);
    order.file.clear();
    order.key = "--moe-overlap";
  }
  return std::optional<CaptureOrder>(std::move(order));
}

// The order and its timeline go with a text report on stdout, and to stderr otherwise so JSON / JUnit stay valid.
void PrintOrder(const CaptureOrder& order, const LintOptions& options) {
  const bool with_report =
      options.output.format == "text" && (options.output.output.empty() || options.output.output == "-");
  std::FILE* stream = with_report ? stdout : stderr;
  const std::string text = absl::StrCat("capture order (", Plural(order.entries.size(), "entry", "entries"),
                                        "): ", FormatOrder(order.entries), "\n", RenderTimeline(order.entries), "\n");
  std::fputs(text.c_str(), stream);
  std::fflush(stream);
}

int Lint(const LintOptions& options, const CommandContext& context) {
  absl::StatusOr<CommandSettings> settings = ResolveSettings(options.output);
  if (!settings.ok()) return FailWith(settings.status());

  // Read every input before running anything, so bad input exits 2 with no report.
  std::vector<ConfigDocument> documents;
  for (const std::string& path : options.configs) {
    absl::StatusOr<ConfigDocument> document = checks::ParseConfigFile(path);
    if (!document.ok()) return FailWith(document.status());
    documents.push_back(*std::move(document));
  }
  if (!options.mcore_args.empty()) documents.push_back(ParseArgumentList(options.mcore_args));
  for (const ConfigDocument& document : documents) {
    if (!IsMegatronConfiguration(document)) {
      return FailWith(absl::InvalidArgumentError(
          absl::StrCat(document.file(),
                       ": not a configuration graphcheck knows: nothing in it is a Megatron Bridge, Megatron Core or "
                       "Transformer Engine configuration (no ConfigContainer section such as model: or train:, no "
                       "Megatron argument); a graphcheck configuration goes to --config-file")));
    }
  }
  absl::StatusOr<std::optional<CaptureOrder>> order = BuildOrder(options);
  if (!order.ok()) return FailWith(order.status());
  if (!options.env && documents.empty() && !order->has_value()) {
    return FailWith(absl::InvalidArgumentError(
        "nothing to lint: give --env, --config FILE, --order / --order-file / --schedule-table, or Megatron "
        "arguments after --"));
  }

  Report report = NewReport("lint", context);
  report.subject = !options.configs.empty() ? options.configs.front() : options.order_file;
  if (options.env) {
    const Environment environment = Environment::FromCurrentProcess();
    CheckInputs inputs;
    inputs.Add(environment);
    RunChecksInto(inputs, settings->checks, "lint-env", &report);
  }
  for (const ConfigDocument& document : documents) {
    CheckInputs inputs;
    inputs.Add(document);
    RunChecksInto(inputs, settings->checks, "lint-config", &report);
    if (!HasCudaGraphSetting(document) && !report.steps.empty()) {  // a clean lint of it says little: say so
      report.steps.back().message = absl::StrCat(document.file(),
                                                 ": no CUDA-graph setting found (cuda_graph_impl, cuda_graph_scope, "
                                                 "enable_cuda_graph, external_cuda_graph, cuda_graph_warmup_steps): "
                                                 "only the checks of its other settings and its environment applied");
    }
  }
  if (order->has_value()) {
    PrintOrder(**order, options);
    CheckInputs inputs;
    inputs.Add(**order);
    RunChecksInto(inputs, settings->checks, "lint-order", &report);
  }
  return EmitReport(report, settings->output);
}

}  // namespace

void AddLintCommand(CLI::App* app, CommandContext* context) {
  constexpr double kNoBound = std::numeric_limits<double>::infinity();
  auto options = std::make_shared<LintOptions>();
  CLI::App* command = app->add_subcommand(
      "lint",
      "Static checks that need no GPU: environment, Megatron / Transformer Engine CUDA-graph configurations, "
      "capture orders");
  command->add_flag("--env", options->env, "Check the current environment variables");
  command->add_option("--config", options->configs,
                      "Training configuration: Megatron Bridge YAML / JSON, or a file of Megatron Core arguments "
                      "(repeatable)");
  command->add_option("--order", options->order,
                      "Capture order for make_graphed_callables(_order=...), e.g. \"1,1,2,2,-2,-1,...\"");
  command->add_option("--order-file", options->order_file, "Read the capture order from FILE");
  command->add_option("--schedule-table", options->schedule_table,
                      "Schedule table as MICROBATCH:CHUNK per virtual microbatch (\"0:0 1:0 2:0 0:1 ...\"), "
                      "converted to an order as Megatron Core does");
  command
      ->add_option("--warmup-microbatches", options->warmup_microbatches,
                   "Warmup microbatches for --schedule-table (default 0)")
      ->check(NumberIn(0, kNoBound));
  command->add_option("--chunks", options->chunks, "Number of model chunks the order is for")
      ->check(NumberIn(1, kNoBound));
  command->add_option("--microbatches", options->microbatches, "Microbatches per chunk the order is for")
      ->check(NumberIn(1, kNoBound));
  command->add_option("--callables", options->callables, "Number of callables passed to make_graphed_callables")
      ->check(NumberIn(1, kNoBound));
  command->add_option("--sample-args", options->sample_args, "Number of sample argument tuples passed")
      ->check(NumberIn(1, kNoBound));
  command->add_option("--layers-per-chunk", options->layers_per_chunk,
                      "Layers in each chunk, e.g. \"1,2\" (_num_layers_per_chunk)");
  command->add_flag("--moe-overlap", options->moe_overlap,
                    "Expand the order layer-wise as for overlap_moe_expert_parallel_comm (needs --layers-per-chunk)");
  command->add_flag("--capture-wgrad", options->capture_wgrad,
                    "With --moe-overlap: add each layer's weight-gradient pass after its backward");
  command->add_option("mcore-args", options->mcore_args,
                      "Megatron Core arguments to check, after -- (e.g. -- --cuda-graph-impl local ...)");
  AddOutputOptions(command, &options->output);
  command->callback([options, context] { context->exit_code = Lint(*options, *context); });
}

}  // namespace graphcheck
