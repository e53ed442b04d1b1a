// The path `graphcheck lint --config` / `--order` takes through one untrusted input: parse it, then run every
// configuration and order check over what parses. Shared by the libFuzzer target and the corpus-replay unit test.
#ifndef GRAPHCHECK_FUZZ_CONFIG_INPUT_H_
#define GRAPHCHECK_FUZZ_CONFIG_INPUT_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "checks/config/capture_order.h"
#include "checks/config/config_parser.h"
#include "cli/catalog.h"
#include "core/registry.h"

namespace graphcheck {

// What a fuzz input is read as.
enum class LintInputKind { kYaml, kJson, kArgs, kOrder };

// Returns the parse status; checks never fail.
inline absl::Status LintInput(absl::string_view text, LintInputKind kind) {
  using checks::CaptureOrder;
  using checks::ConfigDocument;
  using checks::ConfigFormat;
  static const CheckSelection kAll = *CheckSelection::Parse("");
  static const CheckOptions kDefaults;
  CheckInputs inputs;
  if (kind == LintInputKind::kOrder) {
    absl::StatusOr<std::vector<checks::OrderEntry>> entries = checks::ParseOrderText(text, "fuzz");
    if (!entries.ok()) return entries.status();
    CaptureOrder order;
    order.entries = *std::move(entries);
    inputs.Add(order);
    RunChecks(BuiltinChecks(), kAll, kDefaults, inputs);
    checks::RenderTimeline(order.entries);
    return absl::OkStatus();
  }
  const ConfigFormat format = kind == LintInputKind::kYaml   ? ConfigFormat::kYaml
                              : kind == LintInputKind::kJson ? ConfigFormat::kJson
                                                             : ConfigFormat::kArgs;
  absl::StatusOr<ConfigDocument> document = checks::ParseConfigText(text, "fuzz", format);
  if (!document.ok()) return document.status();
  inputs.Add(*document);
  RunChecks(BuiltinChecks(), kAll, kDefaults, inputs);
  return absl::OkStatus();
}

}  // namespace graphcheck

#endif  // GRAPHCHECK_FUZZ_CONFIG_INPUT_H_
