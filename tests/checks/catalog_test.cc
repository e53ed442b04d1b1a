// The catalog: every built-in check registers, and every check has its doc page and every page its check.
#include "cli/catalog.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "cli/check_docs.h"
#include "core/environment.h"
#include "engine/run/engine_run.h"

namespace graphcheck {
namespace {

TEST(CatalogTest, EveryCheckHasADocPageAndEveryPageACheck) {
  std::set<std::string> ids;
  for (const Check* check : BuiltinChecks().All()) {
    const CheckInfo& info = check->info();
    ids.insert(info.id);
    EXPECT_TRUE(std::filesystem::exists(std::string(GRAPHCHECK_SOURCE_DIR) + "/" + info.DocPage()))
        << "missing " << info.DocPage();
    EXPECT_EQ(CheckDocPages().count(info.id), 1u) << info.id << " page not embedded";
    EXPECT_FALSE(info.title.empty()) << info.id;
    EXPECT_FALSE(info.summary.empty()) << info.id;
  }
  for (const auto& [id, text] : CheckDocPages()) {
    EXPECT_EQ(ids.count(id), 1u) << "docs/checks/" << id << ".md documents no registered check";
    EXPECT_THAT(text, ::testing::HasSubstr("## Fix")) << id << " page has no '## Fix' section";
  }
}

std::string ReadSourceFile(const std::string& path) {
  std::ifstream in(std::string(GRAPHCHECK_SOURCE_DIR) + "/" + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The constant of core/check_ids.h that names `id`: "sync-in-capture" -> "check_id::kSyncInCapture".
std::string IdConstant(const std::string& id) {
  std::string name = "check_id::k";
  bool upper = true;
  for (char c : id) {
    if (c == '-') {
      upper = true;
      continue;
    }
    name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return name;
}

// A newcomer finds a check from its id in one step: its page names the file that declares it (with the id's
// constant) and the file that tests it.
TEST(CatalogTest, EveryPageNamesTheCheckFileAndItsTest) {
  const std::regex source_line("\\*\\*Source:\\*\\* `([^`]+)` · \\*\\*Test:\\*\\* `([^`]+)`");
  for (const auto& [id, text] : CheckDocPages()) {
    std::smatch match;
    ASSERT_TRUE(std::regex_search(text, match, source_line)) << id << " page has no **Source:** line";
    EXPECT_THAT(ReadSourceFile(match[1]), ::testing::HasSubstr(IdConstant(id))) << id << ": " << match[1];
    EXPECT_FALSE(ReadSourceFile(match[2]).empty()) << id << ": " << match[2] << " does not exist";
  }
}

// A check whose file only describes what another file finds names that file too: every check made from
// CaptureProblemCheck reports the failed captures whose cause `Classify` in analysis/capture_windows.cc gave it, and
// its page says so (a newcomer looking for warmup-insufficient's logic needed 4 steps to reach it).
TEST(CatalogTest, APageNamesTheFileThatHoldsItsLogic) {
  const std::regex source_line("\\*\\*Source:\\*\\* `([^`]+)`");
  const std::regex logic_line("\\*\\*Logic:\\*\\* `([^`]+)`");
  size_t pages_with_logic = 0;
  for (const auto& [id, text] : CheckDocPages()) {
    std::smatch source;
    ASSERT_TRUE(std::regex_search(text, source, source_line)) << id;
    std::smatch logic;
    const bool has_logic = std::regex_search(text, logic, logic_line);
    if (absl::StrContains(ReadSourceFile(source[1]), "public CaptureProblemCheck")) {
      EXPECT_TRUE(has_logic && logic[1] == "analysis/capture_windows.cc") << id << " names no **Logic:** file";
    }
    if (has_logic) {
      ++pages_with_logic;
      EXPECT_FALSE(ReadSourceFile(logic[1]).empty()) << id << ": " << logic[1] << " does not exist";
    }
  }
  EXPECT_EQ(pages_with_logic, 8u);
}

// A check whose decision the Python probe makes, wholly or in part, names the probe's module and functions on a
// **Probe:** line (`FILE` (`Function`, `Class.method`) · ...), and each of them is defined in that file: a newcomer
// follows a finding from its page to the hook that saw it.
TEST(CatalogTest, APageWhoseDecisionTheProbeMakesNamesTheProbeFunctions) {
  const std::set<std::string> decided_in_python = {
      "address-drift", "grad-aliases-graph",    "grad-detached",        "graph-reads-freed",   "host-value-frozen",
      "rng-host-draw", "state-made-in-capture", "static-input-rebound", "training-mode-frozen"};
  const std::regex probe_line("\\*\\*Probe:\\*\\* ([^\\n]+(\\n[^\\n]+)*)");  // to the paragraph's end
  const std::regex entry("`([^`]+\\.py)`\\s+\\(([^)]*)\\)");
  const std::regex function("`([A-Za-z_][A-Za-z_0-9.]*)`");
  for (const auto& [id, text] : CheckDocPages()) {
    std::smatch line;
    const bool has_probe = std::regex_search(text, line, probe_line);
    EXPECT_EQ(has_probe, decided_in_python.count(id) == 1) << id;
    if (!has_probe) continue;
    const std::string entries = line[1];
    size_t named = 0;
    for (std::sregex_iterator file(entries.begin(), entries.end(), entry), end; file != end; ++file) {
      const std::string source = ReadSourceFile((*file)[1]);
      EXPECT_FALSE(source.empty()) << id << ": " << (*file)[1] << " does not exist";
      const std::string functions = (*file)[2];
      for (std::sregex_iterator f(functions.begin(), functions.end(), function); f != end; ++f) {
        const std::string qualified = (*f)[1];
        const std::string name = qualified.substr(qualified.rfind('.') + 1);
        EXPECT_TRUE(absl::StrContains(source, "def " + name + "(") || absl::StrContains(source, "class " + name))
            << id << ": " << qualified << " is not in " << (*file)[1];
        ++named;
      }
    }
    EXPECT_GT(named, 0u) << id << " names no probe function";
  }
}

// Every built-in check, once, from the one catalogue (cli/catalog.cc).
TEST(CatalogTest, ListsEveryCheckOnce) {
  std::vector<std::string> ids;
  for (const Check* check : BuiltinChecks().All()) ids.push_back(check->info().id);
  EXPECT_THAT(
      ids,
      ::testing::ElementsAre(
          "address-drift", "alloc-in-capture", "capture-error", "compile-cudagraph-skipped", "config-cpu-offloading",
          "config-delayed-wgrad", "config-expandable-segments-nccl-register", "config-full-iteration-impl",
          "config-full-iteration-nan-check", "config-moe-preprocess-requires-router", "config-moe-recompute-router",
          "config-moe-scope-dropless", "config-moe-scope-exclusive", "config-moe-scope-without-moe",
          "config-static-shapes", "config-te-rng-tracker", "config-unknown-cuda-graph-value", "cupti-busy",
          "ddp-default-stream", "ddp-warmup-short", "dynamic-control-flow", "dynamic-shape", "empty-graph",
          "env-expandable-segments-nccl-register", "env-launch-blocking", "env-nccl-async-error-handling",
          "env-no-caching-allocator", "grad-aliases-graph", "grad-detached", "graph-contract", "graph-memory",
          "graph-reads-freed", "hang", "host-value-frozen", "launch-bound", "legacy-stream-in-capture",
          "megatron-graphs-not-created", "no-speedup", "numerics-forward", "numerics-grad", "numerics-loss",
          "numerics-nonfinite", "output-overwritten", "pageable-memcpy", "pipeline-step-failed",
          "rank-divergent-capture", "rank-divergent-collectives", "recapture-churn", "replay-mismatch", "replay-order",
          "rng-eager-mismatch", "rng-frozen-mask", "rng-host-draw", "rng-inference-state", "rng-unregistered-generator",
          "schedule-order", "state-elided", "state-made-in-capture", "static-input-rebound", "stderr-messages",
          "sync-in-capture", "sync-in-region", "trace-incomplete", "training-mode-frozen", "unjoined-stream",
          "unsafe-api-in-capture", "warmup-insufficient"));
  // A second registration of the catalogue into the same registry is refused, not silently doubled.
  CheckRegistry registry;
  ASSERT_TRUE(registry.AddAll(NewBuiltinChecks()).ok());
  EXPECT_EQ(registry.AddAll(NewBuiltinChecks()).code(), absl::StatusCode::kAlreadyExists);
}

// A check runs only where its kind of input is: none on no input, the environment checks on an environment, the
// engine's checks on an engine run (dynamic-shape only on one that varied a dimension).
TEST(CatalogTest, EachCheckRunsOnItsKindOfInput) {
  const std::set<std::string> environment_checks = {"env-expandable-segments-nccl-register", "env-launch-blocking",
                                                    "env-nccl-async-error-handling", "env-no-caching-allocator"};
  const std::set<std::string> engine_checks = {"numerics-forward",   "numerics-grad",        "numerics-loss",
                                               "numerics-nonfinite", "pipeline-step-failed", "rng-eager-mismatch",
                                               "rng-frozen-mask",    "state-elided"};
  const Environment environment;
  const EngineRun run;
  CheckInputs with_environment, with_engine;
  with_environment.Add(environment);
  with_engine.Add(run);
  for (const Check* check : BuiltinChecks().All()) {
    const std::string& id = check->info().id;
    EXPECT_FALSE(check->CanRun(CheckInputs())) << id;
    EXPECT_EQ(check->CanRun(with_environment), environment_checks.count(id) == 1) << id;
    EXPECT_EQ(check->CanRun(with_engine), engine_checks.count(id) == 1) << id;
  }
}

}  // namespace
}  // namespace graphcheck
