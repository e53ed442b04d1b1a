// GPU tests of the Python probe (label gpu): PyTorch programs (tests/gpu/programs/probe_cases.py, and two models from
// libraries the GPU machine has: timm's ResNet-18 and Hugging Face's GPT-2) run under `graphcheck run`, and the
// report must name each planted defect with its check at the program's line (marked "# defect: MODE" in the
// program), blame nothing on torch.compile's or make_graphed_callables' own machinery, and stay free of warnings on
// the clean models. Without a GPU (or torch with CUDA) every test skips.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/capture_plan.h"
#include "report/json.h"
#include "tests/gpu/gpu_test_env.h"
#include "tests/gpu/graphcheck_run.h"
#include "trace/trace_reader.h"

namespace graphcheck {
namespace {

using gpu_test::BuildDir;
using gpu_test::DefectLine;
using gpu_test::MarkedLine;
using gpu_test::SourceDir;

std::string ProgramPath() { return SourceDir() + "/tests/gpu/programs/probe_cases.py"; }
std::string ReplayAuditPath() { return SourceDir() + "/tests/gpu/programs/replay_audit_cases.py"; }
std::string ContractPath() { return SourceDir() + "/tests/gpu/programs/contract_cases.py"; }

struct ProbeRun : gpu_test::GraphcheckRun {
  size_t ProbeEvents() const {
    size_t n = 0;
    for (const trace::Trace& t : traces) n += t.probe_events.size();
    return n;
  }
};

// `launcher`: "python3", or "torchrun --standalone --nproc_per_node N" for a job.
ProbeRun RunMode(const std::string& mode, const std::string& flags = "", const std::string& program = ProgramPath(),
                 const std::string& launcher = "python3") {
  const std::string dir =
      absl::StrCat(::testing::TempDir(), "/probe-", mode, flags.empty() ? "" : "-flags", "-", getpid());
  // A job that stalls where no bound reaches (seen on two H200s: a DDP defect job under torchrun never ended) is ended
  // after 150 s, so that its report still says what was found and the other runs go on.
  const std::string bound = absl::StartsWith(launcher, "torchrun") ? "timeout -k 10 150 " : "";
  ProbeRun run;
  static_cast<gpu_test::GraphcheckRun&>(run) =
      gpu_test::RunUnderGraphcheck(dir, flags, absl::StrCat(bound, launcher, " ", program, " ", mode));
  return run;
}

// The finding's first frame of the program's own: `program` at the marked line.
void ExpectAtDefectLine(const Finding& finding, const std::string& mode, const std::string& program = ProgramPath()) {
  auto user = std::find_if(finding.where.python.begin(), finding.where.python.end(),
                           [](const SourceFrame& f) { return f.user; });
  ASSERT_NE(user, finding.where.python.end()) << finding.message;
  EXPECT_TRUE(absl::EndsWith(user->file, std::filesystem::path(program).filename().string())) << user->file;
  EXPECT_EQ(user->line, DefectLine(mode, program)) << finding.message;
  // For the record of what the report said (bench/results): the finding and its first user frame.
  std::printf("FINDING %s: %s [%s] at %s:%d in %s: %s\n", mode.c_str(),
              std::string(SeverityName(finding.severity)).c_str(), finding.check_id.c_str(), user->file.c_str(),
              user->line, user->function.c_str(), finding.message.substr(0, 300).c_str());
}

// Runs MODE of `program` and expects CHECK's finding, of `severity`, at the line the program marks for MODE, and no
// other finding at warning level.
ProbeRun ExpectFlagged(const std::string& mode, const std::string& check, Severity severity,
                       const std::string& flags = "", const std::string& program = ProgramPath()) {
  ProbeRun run = RunMode(mode, flags, program);
  const Finding* finding = run.Find(check);
  EXPECT_NE(finding, nullptr) << mode << "\n" << run.text;
  gpu_test::ExpectNothingElseAtWarning(run, {check});
  if (finding != nullptr) {
    EXPECT_EQ(finding->severity, severity) << mode;
    ExpectAtDefectLine(*finding, mode, program);
  }
  return run;
}

class PythonProbeGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_test::HasGpu()) GTEST_SKIP() << gpu_test::kNoGpu;
    if (std::system("python3 -c 'import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1")) {
      GTEST_SKIP() << "python3 has no torch with CUDA";
    }
  }
};

// PyTorch refuses these before CUDA sees anything, and the program catches the exception and prints nothing: only the
// probe can tell. Each is its own check, at the line that raised, and the empty capture it leaves is not empty-graph.
TEST_F(PythonProbeGpuTest, CaughtExceptionsInCaptureAreTheirChecksAtTheProgramsLine) {
  for (const auto& [mode, check] :
       std::vector<std::pair<std::string, std::string>>{{"tensor-cuda", "pageable-memcpy"},
                                                        {"private-generator", "rng-unregistered-generator"},
                                                        {"default-stream", "legacy-stream-in-capture"}}) {
    SCOPED_TRACE(mode);
    const ProbeRun run = ExpectFlagged(mode, check, Severity::kError);
    EXPECT_EQ(run.Find("empty-graph"), nullptr) << run.text;
    EXPECT_EQ(run.Find("capture-error"), nullptr) << run.text;
  }
}

// A capture that fails six frames deep in transformers (BERT's eager attention builds its mask inside the capture):
// the finding is at the program's line, with the library's line and what to do about it.
TEST_F(PythonProbeGpuTest, ACaptureFailureInsideALibraryIsAtTheProgramsLine) {
  const ProbeRun run = ExpectFlagged("hf-bert-eager-mask", "pageable-memcpy", Severity::kError);
  if (const Finding* f = run.Find("pageable-memcpy")) {
    EXPECT_THAT(f->evidence, ::testing::Contains(::testing::HasSubstr("raised in transformers ("))) << run.text;
    EXPECT_THAT(f->fix, ::testing::HasSubstr("attn_implementation"));
    std::printf("LIBRARY hf-bert-eager-mask: %s | %s | fix: %s\n", f->message.c_str(),
                absl::StrJoin(f->evidence, " | ").c_str(), f->fix.c_str());
  }
  std::printf("FINDINGS hf-bert-eager-mask:\n%s", run.text.c_str());
}

// Tensors a graph reads, moved after capture: nothing raises, the probe's watch of the graphed module or the manual
// capture sees it at the call or replay that reads stale memory.
TEST_F(PythonProbeGpuTest, StateMovedAfterCaptureIsItsCheckAtTheProgramsLine) {
  for (const auto& [mode, check] :
       std::vector<std::pair<std::string, std::string>>{{"param-rebound", "address-drift"},
                                                        {"static-input-rebound", "static-input-rebound"},
                                                        {"outputs-kept", "output-overwritten"}}) {
    SCOPED_TRACE(mode);
    ExpectFlagged(mode, check, Severity::kError);
  }
}

// Three graphs captured one after another: each into its own pool is graph-memory (the program prints what PyTorch
// reserved, for the note); sharing one pool is clean.
TEST_F(PythonProbeGpuTest, SeparatePoolsAreGraphMemory) {
  const ProbeRun separate = ExpectFlagged("private-pools", "graph-memory", Severity::kWarning);
  const Finding* finding = separate.Find("graph-memory");
  ASSERT_NE(finding, nullptr);
  const ProbeRun shared = RunMode("shared-pool");
  EXPECT_EQ(shared.Find("graph-memory"), nullptr) << shared.text;
  EXPECT_EQ(shared.Find("replay-order"), nullptr) << shared.text;
  std::printf("GRAPH-MEMORY private-pools: %s\n%s\nGRAPH-MEMORY shared-pool:\n%s\n", finding->message.c_str(),
              separate.output.c_str(), shared.output.c_str());
}

// The same three graphs sharing a pool, replayed 1, 3, 2: replay-order at the replay that went back.
TEST_F(PythonProbeGpuTest, GoingBackInASharedPoolIsReplayOrder) {
  ExpectFlagged("replay-order", "replay-order", Severity::kWarning);
}

// Without the probe the same program's caught exception is invisible: the probe is what sees it.
TEST_F(PythonProbeGpuTest, WithoutTheProbeNoEventIsRecorded) {
  const ProbeRun run = RunMode("tensor-cuda", "--no-python-probe");
  ASSERT_FALSE(run.traces.empty());
  EXPECT_EQ(run.ProbeEvents(), 0u);
  EXPECT_EQ(run.Find("pageable-memcpy"), nullptr) << run.text;
}

// torch.compile(mode="reduce-overhead") on a clean loop whose batch size changes every 10 steps: the re-recordings
// are one recapture-churn finding at the loop's line, and nothing of torch.compile's own machinery (its pool-creating
// empty capture, its synchronizations while recording, its recording steps) is blamed on the program.
TEST_F(PythonProbeGpuTest, CompileReRecordingIsChurnAndTheFrameworkIsNotBlamed) {
  const ProbeRun run = RunMode("compile-churn");
  const Finding* churn = run.Find("recapture-churn");
  ASSERT_NE(churn, nullptr) << run.text;
  EXPECT_THAT(churn->message, ::testing::HasSubstr("torch.compile"));
  ExpectAtDefectLine(*churn, "compile-churn");
  for (const char* blamed : {"empty-graph", "sync-in-region", "dynamic-shape", "dynamic-control-flow",
                             "warmup-insufficient", "capture-error"}) {
    EXPECT_EQ(run.Find(blamed), nullptr) << blamed << "\n" << run.text;
  }
  gpu_test::ExpectNothingElseAtWarning(run, {"recapture-churn"});
  // In the recorded window (the first 8 steps) part of the GPU work ran as replays of the recorded graphs. Inductor's
  // compile workers are processes of their own, so the program's metrics carry its pid ("pid501.compile...").
  auto share = std::find_if(run.report.metrics.begin(), run.report.metrics.end(),
                            [](const Metric& m) { return absl::EndsWith(m.name, "compile.replay_gpu_share"); });
  ASSERT_NE(share, run.report.metrics.end()) << run.text;
  EXPECT_GT(share->value, 0);
  EXPECT_LE(share->value, 1);
  std::printf("FINDINGS compile-churn (compile.replay_gpu_share %.3f):\n%s", share->value, run.text.c_str());
  for (const Metric& metric : run.report.metrics) {
    if (absl::StrContains(metric.name, "compile.")) std::printf("METRIC %s %g\n", metric.name.c_str(), metric.value);
  }
}

// A static-cache decode loop keeps its logits across runs of its compiled graph and reads them: inductor raises
// "overwritten by a subsequent run", and graphcheck reports output-overwritten at the line that read them.
TEST_F(PythonProbeGpuTest, ReadingAnOverwrittenCompiledOutputIsAnError) {
  const ProbeRun run = RunMode("compile-overwritten");
  const Finding* finding = run.Find("output-overwritten");
  ASSERT_NE(finding, nullptr) << run.text;
  EXPECT_EQ(finding->severity, Severity::kError);
  ExpectAtDefectLine(*finding, "compile-overwritten");
  gpu_test::ExpectNothingElseAtWarning(run, {"output-overwritten"});
}

// A second thread's event.query() during a global-mode capture: one root cause, one finding (the traceback lines
// printing CUDA's 900 text and the thread's uncaught exception are its evidence).
TEST_F(PythonProbeGpuTest, AnotherThreadsQueryIsOneFinding) {
  const ProbeRun run = RunMode("other-thread-query", "", SourceDir() + "/tests/gpu/programs/capture_cases.py");
  EXPECT_THAT(run.Ids(Severity::kWarning), ::testing::ElementsAre("unsafe-api-in-capture")) << run.text;
  std::printf("FINDINGS other-thread-query:\n%s", run.text.c_str());
}

// Clean training through make_graphed_callables, with bf16 autocast and dropout, on models written elsewhere, and a
// clean manual capture: no warning (PyTorch's AccumulateGrad stream warning is at most a note, since no capture did
// legacy-stream work).
TEST_F(PythonProbeGpuTest, CleanLibraryModelsHaveNoWarning) {
  for (const char* mode : {"timm-resnet", "hf-gpt2", "manual-clean"}) {
    SCOPED_TRACE(mode);
    const ProbeRun run = RunMode(mode);
    ASSERT_FALSE(run.report.steps.empty());
    EXPECT_THAT(run.report.steps[0].message, ::testing::HasSubstr("exited with status 0")) << run.text;
    EXPECT_THAT(run.Ids(Severity::kWarning), ::testing::IsEmpty()) << run.text;
    EXPECT_GT(run.ProbeEvents(), 0u);
    std::printf("CLEAN %s: %zu probe events; findings:\n%s", mode, run.ProbeEvents(), run.text.c_str());
  }
}

// `run --plan` on a served model written elsewhere (a Hugging Face BERT called with keyword tensors): each outermost
// call is sent once and none of the calls nested in it (the probe's hooks are off while one runs, so the call's time
// is its unrecorded cost), and `graphcheck plan` finds the region at the program's call, buckets input_ids' batch
// dimension with the mask following it, and measures every size.
TEST_F(PythonProbeGpuTest, PlanSendsOnlyOutermostCallsAndBucketsTheServedSizes) {
  const ProbeRun run = RunMode("serve-bert-plan", "--plan");
  ASSERT_EQ(run.traces.size(), 1u) << run.output;
  size_t begins = 0, ends = 0;
  for (const trace::ProbeEvent& e : run.traces[0].probe_events) {
    if (e.kind == trace::ProbeEventKind::kModuleCallBegin) ++begins;
    if (e.kind != trace::ProbeEventKind::kModuleCallEnd) continue;
    ++ends;
    EXPECT_EQ(e.pool, 0u) << "a nested call was hooked";
  }
  EXPECT_EQ(begins, 240u);
  EXPECT_EQ(ends, 240u);

  absl::StatusOr<CapturePlan> plan = analysis::PlanCaptures({&run.traces[0]}, analysis::PlanModel{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->regions.size(), 1u);
  const RegionPlan& region = plan->regions[0];
  EXPECT_TRUE(absl::StartsWith(region.region, "BertModel at ")) << region.region;
  EXPECT_THAT(region.region, ::testing::HasSubstr(absl::StrCat("probe_cases.py:",
                                                               MarkedLine("# call: serve-bert-plan", ProgramPath()))));
  EXPECT_EQ(region.calls, 240u);
  EXPECT_EQ(region.dimension, "input_ids dim 0");
  EXPECT_THAT(region.padded_to_max, ::testing::IsEmpty());
  ASSERT_EQ(region.sizes.size(), 8u);
  for (const PlanSize& size : region.sizes) {
    SCOPED_TRACE(size.size);
    EXPECT_TRUE(size.measured);
    EXPECT_GT(size.nodes, 0);
    EXPECT_GT(size.gpu_busy_us, 0);
    EXPECT_GE(size.eager_us, size.gpu_busy_us);
  }
  EXPECT_FALSE(region.sets.empty());
  std::printf("PLAN serve-bert-plan: %s\n", region.verdict.c_str());
}

// Generator state made under torch.inference_mode(): torch 2.11 captures and replays dropout with it and draws fresh
// masks, so rng-inference-state (and everything else) stays silent.
TEST_F(PythonProbeGpuTest, GeneratorStateFromInferenceModeIsFineOnThisTorch) {
  const ProbeRun run = RunMode("inference-generator");
  ASSERT_FALSE(run.report.steps.empty());
  EXPECT_THAT(run.report.steps[0].message, ::testing::HasSubstr("exited with status 0")) << run.output;
  EXPECT_THAT(run.output, ::testing::HasSubstr("masks differ between replays: True"));
  EXPECT_EQ(run.Find("rng-inference-state"), nullptr) << run.text;
  EXPECT_THAT(run.Ids(Severity::kWarning), ::testing::IsEmpty()) << run.text;
  std::printf("FINDINGS inference-generator:\n%s", run.text.c_str());
}

// --shadow: a Python attribute the forward multiplies by, changed every step after capture, is numerics-forward at
// the graphed call; the first call (the value captured) agrees.
TEST_F(PythonProbeGpuTest, ShadowFlagsAFrozenPythonScaleAtTheCall) {
  const ProbeRun run = ExpectFlagged("frozen-scale", "numerics-forward", Severity::kError, "--shadow 4");
  EXPECT_EQ(run.Metric("shadow.calls_compared"), 4) << run.text;
  if (const Finding* f = run.Find("numerics-forward")) {
    EXPECT_THAT(f->message, ::testing::HasSubstr("on 3 of 4 compared calls")) << f->message;
  }
  std::printf("METRIC frozen-scale shadow.cost_us %.1f\n", run.Metric("shadow.cost_us"));
}

// --shadow: a forward that rebinds a buffer each call. After make_graphed_callables' three warmup calls the capture
// reads the warmup's last tensor (3), so every replay divides by 3 + 1 and writes 4 into the tensor the module now
// holds; an eager call divides by 4 + 1: every call differs. The shadow's eager runs put the module's buffer back. The
// probe saw the capture replace the buffer: state-made-in-capture at the rebinding line is the one finding, and the
// shadow's measurement of it is not a second.
TEST_F(PythonProbeGpuTest, ShadowFlagsABufferReboundInForward) {
  const ProbeRun run = ExpectFlagged("buffer-rebound", "state-made-in-capture", Severity::kError, "--shadow 4");
  EXPECT_EQ(run.Metric("shadow.calls_compared"), 4) << run.text;
}

// --shadow on models written elsewhere: compared and silent in float32 (timm's ResNet-18 with batch norm in training)
// and bf16 (GPT-2 with and without dropout: the CUDA generator is put back before each eager run, so dropout draws
// the masks the replay drew and is compared too).
TEST_F(PythonProbeGpuTest, ShadowIsSilentOnCleanModels) {
  for (const char* mode : {"timm-resnet-fp32", "hf-gpt2-nodrop", "hf-gpt2"}) {
    SCOPED_TRACE(mode);
    const ProbeRun run = RunMode(mode, "--shadow 3");
    ASSERT_FALSE(run.report.steps.empty());
    EXPECT_THAT(run.report.steps[0].message, ::testing::HasSubstr("exited with status 0")) << run.output;
    EXPECT_THAT(run.Ids(Severity::kWarning), ::testing::IsEmpty()) << run.text;
    EXPECT_EQ(run.Metric("shadow.calls_compared"), 3) << run.text;
    // GPT-2's dropout draws in each compared forward and in its backward (compared since format 1.11): 3 + 3.
    EXPECT_EQ(run.Metric("shadow.calls_drawing"), std::string(mode) == "hf-gpt2" ? 6 : -1) << run.text;
    std::printf("SHADOW %s: compared %.0f drawing %.0f tensors %.0f cost %.1f us per call; findings:\n%s", mode,
                run.Metric("shadow.calls_compared"), run.Metric("shadow.calls_drawing"),
                run.Metric("shadow.tensors_compared"), run.Metric("shadow.cost_us"), run.text.c_str());
  }
}

// The replay audit (issue 29): graphs that capture fine and then train wrong, each named at the program's line, with
// and without --shadow where the check needs it.
TEST_F(PythonProbeGpuTest, ReplayAuditNamesEachDefectAtTheProgramsLine) {
  struct Case {
    const char* mode;
    const char* check;
    const char* flags;
  };
  for (const Case& c :
       {Case{"frozen-lr", "host-value-frozen", ""}, Case{"grads-none", "grad-detached", ""},
        Case{"last-batch", "dynamic-shape", ""}, Case{"batch-of-one", "dynamic-shape", ""},
        // The probe sees the draw in the capture: named at the drawing line, and the shadow's measurement of the
        // same draw (rng-frozen-mask) is not a second finding.
        Case{"host-rand", "rng-host-draw", "--shadow 4"}, Case{"region-scale", "host-value-frozen", "--shadow 4"}}) {
    SCOPED_TRACE(c.mode);
    const ProbeRun run = ExpectFlagged(c.mode, c.check, Severity::kError, c.flags, ReplayAuditPath());
    if (const Finding* f = run.Find(c.check)) {
      std::printf("AUDIT %s %s: %s | %s\n", c.mode, c.flags, f->message.c_str(),
                  absl::StrJoin(f->evidence, " | ").c_str());
    }
    std::printf("AUDIT %s findings:\n%s", c.mode, run.text.c_str());
  }
}

// Their clean twins: a tensor learning rate, zero_grad(set_to_none=False), drop_last=True, noise from the CUDA
// generator (compared under --shadow, equal), the whole step without a Python global, as one call or two statements
// (compared, equal); and with a process group initialized, which --shadow says in a note it did not compare.
TEST_F(PythonProbeGpuTest, ReplayAuditTwinsAreSilent) {
  for (const auto& [mode, flags] : std::vector<std::pair<std::string, std::string>>{{"tensor-lr", ""},
                                                                                    {"grads-zeroed", ""},
                                                                                    {"drop-last", ""},
                                                                                    {"cuda-rand", "--shadow 4"},
                                                                                    {"region-clean", "--shadow 4"},
                                                                                    {"region-two", "--shadow 4"},
                                                                                    {"region-pg", "--shadow 4"}}) {
    SCOPED_TRACE(mode);
    const ProbeRun run = RunMode(mode, flags, ReplayAuditPath());
    ASSERT_FALSE(run.report.steps.empty());
    EXPECT_THAT(run.report.steps[0].message, ::testing::HasSubstr("exited with status 0")) << run.output;
    EXPECT_THAT(run.Ids(Severity::kWarning), ::testing::IsEmpty()) << run.text;
    if (mode == "cuda-rand") {
      EXPECT_EQ(run.Metric("shadow.calls_compared"), 4) << run.text;
    }
    if (mode == "region-clean" || mode == "region-two") {
      EXPECT_EQ(run.Metric("shadow.replays_compared"), 4) << run.text;
    }
    if (mode == "region-pg") {
      const Finding* note = run.Find("replay-mismatch");
      ASSERT_NE(note, nullptr) << run.text;
      EXPECT_EQ(note->severity, Severity::kNote);
      EXPECT_THAT(note->message, ::testing::HasSubstr("a process group is initialized"));
    }
    std::printf("TWIN %s %s: shadow.cost_us %.1f; findings:\n%s", mode.c_str(), flags.c_str(),
                run.Metric("shadow.cost_us"), run.text.c_str());
  }
}

// Clean programs of 14 loop shapes (tests/gpu/programs/blind_loops.py, written by a helper who never read the probe:
// a per-epoch function with evaluation between epochs, a GAN's two optimizers, gradient accumulation two ways, a while
// loop, a trainer class with callbacks, generators, AMP, eager twins then graphed runs, a whole-step graph, ...): each
// ends well (its graphed modes match eager) and has its steps cut at its own loop. The modes that graph draw no finding
// at warning level. The seven that only train eagerly read a loss or copy a batch from pageable memory in every step:
// their one warning is sync-in-region's forecast of that sync, "in N of N steps" (on an H200 before the loop marks were
// checked here, it was each program's only warning). Under the CPU emulation the probe marks exactly the passes the
// author's EXPECTED_LOOPS lists (emulated_programs_test).
TEST_F(PythonProbeGpuTest, BlindLoopShapesAreSilentAndCutAtTheirOwnLoops) {
  const std::string program = SourceDir() + "/tests/gpu/programs/blind_loops.py";
  for (const char* mode :
       {"epoch-fn-eval", "gan-two-opts", "accum-modulo-tail", "accum-inner-micro", "while-early-exit", "trainer-class",
        "generator-islice-zip", "amp-scaler-sched", "twin-shared-train", "twin-separate-loops", "whole-step-graph",
        "partial-graphed-callables", "closure-listcomp-continue", "nested-helpers-try"}) {
    SCOPED_TRACE(mode);
    const ProbeRun run = RunMode(mode, "", program);
    ASSERT_FALSE(run.report.steps.empty());
    EXPECT_THAT(run.report.steps[0].message, ::testing::HasSubstr("exited with status 0")) << run.output;
    ASSERT_TRUE(run.report.coverage.has_value()) << run.text;
    EXPECT_THAT(run.report.coverage->scope, ::testing::HasSubstr("the program's loop (")) << run.text;
    const bool graphs = run.report.coverage->scope.find("no graphed step") == std::string::npos;
    for (const Finding& finding : run.report.findings) {
      if (finding.severity < Severity::kWarning) continue;
      EXPECT_FALSE(graphs) << "a warning in a program that graphs\n" << run.text;
      EXPECT_EQ(finding.check_id, "sync-in-region") << run.text;
      EXPECT_TRUE(std::regex_search(finding.message, std::regex("in ([0-9]+) of \\1 steps of the region"))) << run.text;
    }
    std::printf("LOOPS %s: %s\n%s", mode, run.report.coverage->scope.c_str(), run.text.c_str());
  }
}

// The capture contract (issue 44): graphs that capture fine and then compute wrong because the program broke a term
// of the contract in a way no pattern names, each at the program's line, with what it cost against eager.
TEST_F(PythonProbeGpuTest, ContractBreachesAreNamedAtTheProgramsLine) {
  for (const auto& [mode, check] :
       std::vector<std::pair<std::string, std::string>>{{"eval-baked", "training-mode-frozen"},
                                                        {"attr-baked", "host-value-frozen"},
                                                        {"ema-swap", "address-drift"},
                                                        {"buffer-regrown", "graph-reads-freed"},
                                                        {"host-random", "rng-host-draw"},
                                                        {"grad-alias", "grad-aliases-graph"},
                                                        {"grad-alias-accum", "grad-aliases-graph"},
                                                        {"grad-alias-ckpt", "grad-aliases-graph"},
                                                        {"state-replaced", "state-made-in-capture"},
                                                        {"optim-state-in-capture", "state-made-in-capture"}}) {
    SCOPED_TRACE(mode);
    const ProbeRun run = ExpectFlagged(mode, check, Severity::kError, "", ContractPath());
    const Finding* contract = run.Find("graph-contract");
    ASSERT_NE(contract, nullptr) << run.text;  // the manifest of every graph, as a note
    EXPECT_EQ(contract->severity, Severity::kNote);
    // A manual capture's static input and output, by name: `static_out = model(static_x)` in its body, or
    // `static_loss = step()` (a whole step reads its input inside step()).
    const std::string manifest = absl::StrJoin(contract->evidence, " | ");
    if (mode == "eval-baked" || mode == "ema-swap" || mode == "buffer-regrown") {
      EXPECT_THAT(manifest, ::testing::HasSubstr("1 static input")) << run.text;
    }
    if (!absl::StartsWith(mode, "grad-")) {
      EXPECT_THAT(manifest, ::testing::HasSubstr("1 static output")) << run.text;
    }
    if (const Finding* f = run.Find(check)) {
      std::printf("CONTRACT %s: %s | %s\n", mode.c_str(), f->message.c_str(),
                  absl::StrJoin(f->evidence, " | ").c_str());
    }
    std::printf("CONTRACT %s manifest: %s\nCONTRACT %s output:\n%s\n", mode.c_str(),
                absl::StrJoin(contract->evidence, " | ").c_str(), mode.c_str(), run.output.c_str());
  }
}

// Their clean twins: silent, and those compared with eager equal to it.
TEST_F(PythonProbeGpuTest, ContractTwinsAreSilentAndComputeLikeEager) {
  for (const char* mode :
       {"eval-captured", "attr-buffer", "ema-copy", "buffer-inplace", "cuda-random", "grad-precreated",
        "grad-accum-precreated", "grad-ckpt-precreated", "grad-set-to-none", "state-in-place", "optim-state-warmed"}) {
    SCOPED_TRACE(mode);
    const ProbeRun run = RunMode(mode, "", ContractPath());
    ASSERT_FALSE(run.report.steps.empty());
    EXPECT_THAT(run.report.steps[0].message, ::testing::HasSubstr("exited with status 0")) << run.output;
    EXPECT_THAT(run.Ids(Severity::kWarning), ::testing::IsEmpty()) << run.text;
    const size_t at = run.output.find("vs eager: max difference ");
    if (at != std::string::npos) {
      EXPECT_LT(std::stod(run.output.substr(at + 25)), 1e-3) << run.output;
    }
    std::printf("CONTRACT-TWIN %s: %s\n", mode, run.output.c_str());
  }
}

// The shadow compares what training keeps (issue 44, item 3): each graphed backward's parameter gradients against
// its eager backward's, and each .grad after accumulation against .grad before plus the gradient received.
TEST_F(PythonProbeGpuTest, ShadowComparesTheGradientsTrainingKeeps) {
  // The gradients and accumulations --shadow compared in a run: (compared, differing) per subject.
  auto tally = [](const ProbeRun& run, trace::ShadowSubject subject) {
    std::pair<int, int> counts{0, 0};
    for (const trace::Trace& t : run.traces) {
      for (const trace::ShadowComparison& c : t.shadow_comparisons) {
        if (c.subject != subject || c.random) continue;
        ++counts.first;
        counts.second += c.max_abs_error > 0;
      }
    }
    return counts;
  };
  // A gradient-reversal coefficient the backward reads on the host, annealed: only the gradients show it.
  const ProbeRun reversal =
      ExpectFlagged("grad-scale-global", "numerics-grad", Severity::kError, "--shadow 4", ContractPath());
  if (const Finding* f = reversal.Find("numerics-grad")) {
    std::printf("SHADOW-GRAD grad-scale-global: %s | %s\n", f->message.c_str(),
                absl::StrJoin(f->evidence, " | ").c_str());
  }
  EXPECT_EQ(reversal.Find("numerics-forward"), nullptr) << reversal.text;
  // Its twin, and the clean make_graphed_callables recipe: compared, silent.
  for (const char* mode : {"grad-scale-fixed", "grad-precreated", "grad-accum-precreated"}) {
    SCOPED_TRACE(mode);
    const ProbeRun run = RunMode(mode, "--shadow 4", ContractPath());
    EXPECT_THAT(run.Ids(Severity::kWarning), ::testing::IsEmpty()) << run.text;
    const auto gradients = tally(run, trace::ShadowSubject::kModuleBackward);
    const auto accumulations = tally(run, trace::ShadowSubject::kGradAccumulation);
    EXPECT_GT(gradients.first, 0) << run.text;
    EXPECT_GT(accumulations.first, 0) << run.text;
    EXPECT_EQ(accumulations.second, 0) << run.text;
    std::printf("SHADOW-GRAD %s: %d gradients compared, %d accumulations compared (%d differ)\n", mode, gradients.first,
                accumulations.first, accumulations.second);
  }
  // PyTorch #181723: the shadow measures the doubled .grad; grad-aliases-graph names the cause, once.
  const ProbeRun aliased =
      ExpectFlagged("grad-alias", "grad-aliases-graph", Severity::kError, "--shadow 4", ContractPath());
  EXPECT_EQ(aliased.Find("numerics-grad"), nullptr) << aliased.text;
  const auto accumulations = tally(aliased, trace::ShadowSubject::kGradAccumulation);
  EXPECT_GT(accumulations.second, 0) << aliased.text;
  std::printf("SHADOW-GRAD grad-alias: %d accumulations compared, %d differ\n", accumulations.first,
              accumulations.second);
}

// --hang-timeout: a replayed graph that spins for a minute, then a synchronize. The recorder ends the process after
// 3 s (exit status 124) and the report says where it waited and on which graph. (An NCCL collective in the graph
// needs two ranks: with one, NCCL launches no kernel for an all-reduce.)
TEST_F(PythonProbeGpuTest, AWaitPastTheHangTimeoutIsAFindingAtTheWaitingLine) {
  const auto start = std::chrono::steady_clock::now();
  const ProbeRun run = ExpectFlagged("hang", "hang", Severity::kError, "--hang-timeout 3");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 45) << "the spin lasts 60 s: the process was not ended by the bound";
  ASSERT_FALSE(run.report.steps.empty());
  EXPECT_THAT(run.report.steps[0].message, ::testing::HasSubstr("124")) << run.output;
  if (const Finding* f = run.Find("hang")) {
    EXPECT_THAT(absl::StrJoin(f->evidence, "\n"), ::testing::HasSubstr("the last graph this thread launched: graph"));
    std::printf("HANG in %.1f s: %s | %s\n", seconds, f->message.c_str(), absl::StrJoin(f->evidence, " | ").c_str());
  }
  EXPECT_EQ(run.Find("trace-incomplete"), nullptr) << run.text;
}

// DistributedDataParallel with NCCL, one rank (two ranks cannot share one GPU under NCCL): the seeds' recipe, on a
// small MLP and on timm's ResNet-18, captures and replays with no warning, and the trace holds what a job's analysis
// needs: NCCL's calls (its NVTX domain) and the names of PyTorch's threads, the watchdog's among them.
TEST_F(PythonProbeGpuTest, DdpFollowingTheRecipeIsCleanAndGraphed) {
  for (const char* mode : {"ddp-recipe", "ddp-timm-resnet"}) {
    SCOPED_TRACE(mode);
    const ProbeRun run = RunMode(mode);
    ASSERT_FALSE(run.report.steps.empty());
    EXPECT_THAT(run.report.steps[0].message, ::testing::HasSubstr("exited with status 0")) << run.output;
    EXPECT_THAT(run.Ids(Severity::kWarning), ::testing::IsEmpty()) << run.text;
    size_t nccl_ranges = 0;
    bool watchdog_named = false;
    for (const trace::Trace& t : run.traces) {
      for (const trace::NvtxEvent& e : t.nvtx) nccl_ranges += e.domain != 0 && t.String(e.domain) == "NCCL";
      for (const trace::ThreadName& thread : t.thread_names)
        watchdog_named |= t.String(thread.name) == "pt_nccl_watchdg";
    }
    EXPECT_GT(nccl_ranges, 0u);
    EXPECT_TRUE(watchdog_named);
    std::printf("DDP %s: speedup %.2f (eager %.1f us, graphed %.1f us), %zu NCCL NVTX events; findings:\n%s", mode,
                run.Metric("graphed.speedup"), run.Metric("launch.iteration_us"), run.Metric("graphed.iteration_us"),
                nccl_ranges, run.text.c_str());
  }
}

TEST_F(PythonProbeGpuTest, DdpConstructedOnTheDefaultStreamIsFlaggedAtTheConstruction) {
  const ProbeRun run = ExpectFlagged("ddp-default-stream", "ddp-default-stream", Severity::kError);
  std::printf("FINDINGS ddp-default-stream:\n%s", run.text.c_str());
}

TEST_F(PythonProbeGpuTest, DdpCapturedAfterTwoWarmupIterationsIsFlaggedAtTheCapturedForward) {
  const ProbeRun run = ExpectFlagged("ddp-warmup-short", "ddp-warmup-short", Severity::kError);
  if (const Finding* f = run.Find("ddp-warmup-short")) {
    EXPECT_THAT(f->message, ::testing::HasSubstr("after 2 eager iterations"));
  }
  std::printf("FINDINGS ddp-warmup-short:\n%s", run.text.c_str());
}

// The same programs as a job of one rank per GPU (nvidia-h200-x2 and larger): the clean recipe, the planted defects
// named with every rank, and a rank that issues one collective more inside its capture named alone. Skipped on one GPU:
// NCCL refuses two ranks on one device.
TEST_F(PythonProbeGpuTest, DdpUnderTorchrunNamesTheRanks) {
  const int gpus = gpu_test::GpuCount();
  if (gpus < 2) GTEST_SKIP() << "needs 2 GPUs (nvidia-h200-x2): NCCL refuses two ranks on one GPU";
  const std::string torchrun = absl::StrCat("torchrun --standalone --nproc_per_node ", gpus);
  std::vector<int32_t> every_rank(gpus);
  for (int rank = 0; rank < gpus; ++rank) every_rank[rank] = rank;

  // A rank whose capture fails exits; the other may wait in a collective for NCCL's 10-minute watchdog: the bound
  // ends such a job and names the wait.
  const std::string bounded = "--hang-timeout 30";
  const ProbeRun clean = RunMode("ddp-recipe", bounded, ProgramPath(), torchrun);
  ASSERT_FALSE(clean.report.steps.empty());
  EXPECT_THAT(clean.report.steps[0].message, ::testing::HasSubstr("exited with status 0")) << clean.output;
  EXPECT_THAT(clean.Ids(Severity::kWarning), ::testing::IsEmpty()) << clean.text;
  EXPECT_GT(clean.Metric("graphed.speedup"), 1) << clean.text;
  std::printf("DDP x%d ddp-recipe: speedup %.2f (eager %.1f us, graphed %.1f us); findings:\n%s", gpus,
              clean.Metric("graphed.speedup"), clean.Metric("launch.iteration_us"),
              clean.Metric("graphed.iteration_us"), clean.text.c_str());

  for (const char* mode : {"ddp-default-stream", "ddp-warmup-short"}) {
    const ProbeRun run = RunMode(mode, bounded, ProgramPath(), torchrun);
    const Finding* finding = run.Find(mode);
    ASSERT_NE(finding, nullptr) << mode << "\n" << run.text;
    EXPECT_EQ(finding->where.ranks, every_rank) << mode;
    gpu_test::ExpectNothingElseAtWarning(run, {mode});
    std::printf("DDP x%d %s:\n%s", gpus, mode, run.text.c_str());
  }

  // The ranks replay graphs whose all-reduces do not pair up: the GPU's queue fills and graph.replay() blocks in
  // cudaGraphLaunch (two H100s; before graph launches were bounded, only the outer timeout ended the job).
  const ProbeRun divergent = RunMode("ddp-divergent", "--hang-timeout 30", ProgramPath(), torchrun);
  const Finding* finding = divergent.Find("rank-divergent-capture");
  ASSERT_NE(finding, nullptr) << divergent.text;
  EXPECT_EQ(finding->where.ranks, std::vector<int32_t>{1});
  EXPECT_EQ(divergent.Metric("program.exit_code"), 1) << "ended by --hang-timeout, not the outer bound (124)";
  EXPECT_NE(divergent.Find("hang"), nullptr) << divergent.text;
  std::printf("DDP x%d ddp-divergent:\n%s", gpus, divergent.text.c_str());
}

// The ranks' collective ledgers (rank-divergent-collectives), on a job of one rank per GPU: rank 0 replaying its step
// once more every 10 steps is named at its extra replay's line with the counts, and the hang it leads to cites it; an
// eager all-reduce before the replay on rank 1 and after it on rank 0 is named at rank 1's line; captures holding a
// broadcast before the backward on one rank and after it on the other are rank-divergent-capture; the loss logged in
// the ranks' other orders on a process group of its own parts too (two communicators joined by the stream); the same
// job logging its loss after the replay on every rank is silent and trains like eager. Skipped on one GPU.
TEST_F(PythonProbeGpuTest, CollectiveLedgersNameWhereTheRanksPart) {
  const int gpus = gpu_test::GpuCount();
  if (gpus < 2) GTEST_SKIP() << "needs 2 GPUs (nvidia-h100-x2): NCCL refuses two ranks on one GPU";
  const std::string torchrun = absl::StrCat("torchrun --standalone --nproc_per_node ", gpus);
  const std::string bounded = "--hang-timeout 30";
  for (const char* mode : {"ddp-extra-replay", "ddp-log-order"}) {
    SCOPED_TRACE(mode);
    const ProbeRun run = RunMode(mode, bounded, ProgramPath(), torchrun);
    const Finding* finding = run.Find("rank-divergent-collectives");
    ASSERT_NE(finding, nullptr) << run.text << run.output;
    EXPECT_EQ(finding->severity, Severity::kError);
    ExpectAtDefectLine(*finding, mode);
    if (std::string(mode) == "ddp-extra-replay") {
      EXPECT_THAT(finding->evidence, ::testing::Contains(::testing::HasSubstr("30 times, rank 0 33"))) << run.text;
    }
    if (const Finding* hang = run.Find("hang")) {
      EXPECT_THAT(hang->message, ::testing::HasSubstr("collective ledgers part")) << run.text;
    }
    std::printf("LEDGER x%d %s:\n%s", gpus, mode, run.text.c_str());
  }
  // The same orders with the loss logged on a process group of its own: two communicators part as one.
  const ProbeRun side_group = RunMode("ddp-log-side-group", bounded, ProgramPath(), torchrun);
  const Finding* parting = side_group.Find("rank-divergent-collectives");
  ASSERT_NE(parting, nullptr) << side_group.text << side_group.output;
  EXPECT_EQ(parting->severity, Severity::kError);
  std::printf("LEDGER x%d ddp-log-side-group:\n%s", gpus, side_group.text.c_str());

  const ProbeRun reordered = RunMode("ddp-capture-order", bounded, ProgramPath(), torchrun);
  const Finding* capture = reordered.Find("rank-divergent-capture");
  ASSERT_NE(capture, nullptr) << reordered.text;
  EXPECT_THAT(capture->message, ::testing::HasSubstr("ncclBroadcast")) << reordered.text;
  std::printf("LEDGER x%d ddp-capture-order:\n%s", gpus, reordered.text.c_str());

  // The clean twin: the loss logged after the replay on every rank. Silent, and training as its eager twin does.
  const ProbeRun twin = RunMode("ddp-log-loss", bounded, ProgramPath(), torchrun);
  ASSERT_FALSE(twin.report.steps.empty());
  EXPECT_THAT(twin.report.steps[0].message, ::testing::HasSubstr("exited with status 0")) << twin.output;
  EXPECT_THAT(twin.Ids(Severity::kWarning), ::testing::IsEmpty()) << twin.text;
  const size_t at = twin.output.find("vs eager: max difference ");
  ASSERT_NE(at, std::string::npos) << twin.output;
  EXPECT_LT(std::stod(twin.output.substr(at + 25)), 1e-5) << twin.output;
  std::printf("LEDGER x%d ddp-log-loss:\n%s%s", gpus, twin.text.c_str(), twin.output.substr(at, 60).c_str());
}

// Waits outside CUDA that stall a job of one rank per GPU, ended by --hang-timeout and named at the line each rank
// waits at: the teardown of a communicator whose graph is still alive (every rank), and a barrier rank 1 skipped
// (rank 0). Skipped on one GPU.
TEST_F(PythonProbeGpuTest, JobHangsOutsideCudaAreEndedAndNamed) {
  const int gpus = gpu_test::GpuCount();
  if (gpus < 2) GTEST_SKIP() << "needs 2 GPUs (nvidia-h100-x2): NCCL refuses two ranks on one GPU";
  const std::string torchrun = absl::StrCat("torchrun --standalone --nproc_per_node ", gpus);
  for (const char* mode : {"ddp-graph-alive", "ddp-skip-barrier"}) {
    SCOPED_TRACE(mode);
    const auto start = std::chrono::steady_clock::now();
    const ProbeRun run = RunMode(mode, "--hang-timeout 15", ProgramPath(), torchrun);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Rank 1, past the barrier it skipped, may wait in its own teardown too: the barrier's finding is the one asked.
    const std::string waited_in =
        std::string(mode) == "ddp-graph-alive" ? "destroy_process_group" : "torch.distributed.barrier";
    auto it = std::find_if(run.report.findings.begin(), run.report.findings.end(), [&](const Finding& f) {
      return f.check_id == "hang" && absl::StrContains(f.message, waited_in);
    });
    ASSERT_NE(it, run.report.findings.end()) << run.text << run.output;
    const Finding* hang = &*it;
    ExpectAtDefectLine(*hang, mode);
    EXPECT_LT(seconds, 120) << "the ranks were not ended by the bound";
    if (std::string(mode) == "ddp-graph-alive") {
      EXPECT_EQ(hang->where.ranks.size(), static_cast<size_t>(gpus)) << run.text;
      EXPECT_THAT(hang->evidence, ::testing::Contains(::testing::HasSubstr("still alive: graph"))) << run.text;
      EXPECT_THAT(hang->fix, ::testing::HasSubstr("before torch.distributed.destroy_process_group()"));
    } else {
      EXPECT_THAT(hang->where.ranks, ::testing::Contains(0)) << run.text;
    }
    std::printf("HANG x%d %s in %.1f s: %s | %s\n%s", gpus, mode, seconds, hang->message.c_str(),
                absl::StrJoin(hang->evidence, " | ").c_str(), run.text.c_str());
  }
}

}  // namespace
}  // namespace graphcheck
