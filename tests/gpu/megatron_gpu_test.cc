// GPU tests of Megatron-Core's own CUDA graphs under `graphcheck run` (label gpu, issue 35): the modes of
// tests/gpu/programs/megatron_cases.py, a small GPT trained with CudaGraphManager's per-layer graphs or
// FullCudaGraphWrapper's full-iteration graph. The clean modes must give no warning and name who began each capture;
// each defect mode (a row of the seeds' error table that Megatron-Core produces without Transformer Engine) must give
// its check at the line the program marks "# defect: MODE". Megatron-Core comes from the wheel that
// scripts/fetch-megatron-wheels.sh fetches; without it, or without a GPU, every test skips. The pipeline-parallel
// test runs under torchrun on two GPUs and skips on one.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/json.h"
#include "tests/gpu/gpu_test_env.h"
#include "tests/gpu/graphcheck_run.h"
#include "trace/trace_reader.h"

namespace graphcheck {
namespace {

std::string ProgramPath() { return gpu_test::SourceDir() + "/tests/gpu/programs/megatron_cases.py"; }

using MegatronRun = gpu_test::GraphcheckRun;

// The probe's capture-begin events, as "origin value text" (e.g. "megatron 2 backward").
std::vector<std::string> CaptureBegins(const MegatronRun& run) {
  std::vector<std::string> begins;
  for (const trace::Trace& t : run.traces) {
    for (const trace::ProbeEvent& e : t.probe_events) {
      if (e.kind != trace::ProbeEventKind::kCaptureBegin) continue;
      begins.push_back(absl::StrCat(trace::ProbeOriginName(e.origin), " ", e.value, " ", t.String(e.text)));
    }
  }
  return begins;
}

// `launcher`: "python3", or a torchrun command for the pipeline-parallel modes (bounded: a stalled job must not eat
// the device call).
MegatronRun RunMode(const std::string& mode, const std::string& launcher = "python3", const std::string& flags = "") {
  return gpu_test::RunUnderGraphcheck(absl::StrCat(::testing::TempDir(), "/megatron-", mode, "-", getpid()), flags,
                                      absl::StrCat(launcher, " ", ProgramPath(), " ", mode));
}

// Runs MODE and expects CHECK's finding, of `severity`, whose first frame of the program's own is the marked line, and
// no other finding at warning level.
MegatronRun ExpectFlagged(const std::string& mode, const std::string& check, Severity severity) {
  MegatronRun run = RunMode(mode);
  const Finding* finding = run.Find(check);
  EXPECT_NE(finding, nullptr) << mode << "\n" << run.text << run.output;
  gpu_test::ExpectNothingElseAtWarning(run, {check});
  if (finding == nullptr) return run;
  EXPECT_EQ(finding->severity, severity) << mode;
  auto user = std::find_if(finding->where.python.begin(), finding->where.python.end(),
                           [](const SourceFrame& f) { return f.user; });
  EXPECT_NE(user, finding->where.python.end()) << finding->message;
  if (user != finding->where.python.end()) {
    EXPECT_TRUE(absl::EndsWith(user->file, "megatron_cases.py")) << user->file;
    EXPECT_EQ(user->line, gpu_test::DefectLine(mode, ProgramPath())) << finding->message;
    // For the note: what graphcheck printed for each seed row.
    std::printf("FINDING %s: %s [%s] at %s:%d: %s | fix: %s\n", mode.c_str(),
                std::string(SeverityName(finding->severity)).c_str(), check.c_str(), user->file.c_str(), user->line,
                finding->message.substr(0, 300).c_str(), finding->fix.substr(0, 300).c_str());
  }
  return run;
}

void ExpectCleanRun(const MegatronRun& run) {
  ASSERT_FALSE(run.report.steps.empty()) << run.output;
  EXPECT_THAT(run.report.steps[0].message, ::testing::HasSubstr("exited with status 0")) << run.output;
  EXPECT_THAT(run.Ids(Severity::kWarning), ::testing::IsEmpty()) << run.text;
}

class MegatronGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_test::HasGpu()) GTEST_SKIP() << gpu_test::kNoGpu;
    // graphcheck tells a library's frames from the program's by path: Megatron installed outside site-packages (a
    // bare `pip install --target DIR`) would have its own lines taken for the program's.
    if (std::system("python3 -c 'import sys, megatron.core as m; sys.exit(0 if \"-packages/\" in m.__file__ else 3)' "
                    ">/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "python3 cannot import megatron.core from a site-packages folder: run "
                      "scripts/fetch-megatron-wheels.sh, carry .whl and install it as that script says";
    }
  }
};

// Per-layer graphs, created by the program after the first iteration or by Megatron's schedule: no warning, and each
// capture named as CudaGraphManager's, with its layer and direction (2 layers: a forward and a backward graph each).
TEST_F(MegatronGpuTest, PerLayerGraphsAreCleanAndNamedByLayer) {
  for (const char* mode : {"local-clean", "local-schedule-clean"}) {
    SCOPED_TRACE(mode);
    const MegatronRun run = RunMode(mode);
    ExpectCleanRun(run);
    EXPECT_THAT(CaptureBegins(run), ::testing::UnorderedElementsAre("megatron 1 forward", "megatron 2 forward",
                                                                    "megatron 2 backward", "megatron 1 backward"))
        << run.output;
    std::printf("CLEAN %s: captures %s; findings:\n%s", mode, absl::StrJoin(CaptureBegins(run), ", ").c_str(),
                run.text.c_str());
  }
}

// One graph for the whole forward and backward, begun by FullCudaGraphWrapper: no warning.
TEST_F(MegatronGpuTest, FullIterationGraphIsCleanAndNamed) {
  const MegatronRun run = RunMode("full-iteration-clean");
  ExpectCleanRun(run);
  EXPECT_THAT(CaptureBegins(run), ::testing::ElementsAre("megatron-full-iteration 0 training")) << run.output;
  std::printf("CLEAN full-iteration-clean: findings:\n%s", run.text.c_str());
}

// The seeds' RNG row: Megatron refuses a tracker that is not graph-safe when the model is built ("RNG tracker does
// not support cudagraphs!"), and the finding says to seed with use_cudagraphable_rng=True or use TE's tracker.
TEST_F(MegatronGpuTest, TheDefaultRngTrackerIsRefusedAtModelConstruction) {
  const MegatronRun run = ExpectFlagged("rng-tracker", "config-te-rng-tracker", Severity::kError);
  if (const Finding* f = run.Find("config-te-rng-tracker")) {
    EXPECT_THAT(f->fix, ::testing::HasSubstr("use_cudagraphable_rng")) << f->fix;
  }
}

// Per-layer graphs recorded but never created (no create_cudagraphs() after the first iteration): the layers ran
// eagerly every iteration. No check says so yet; the integrator names it (see the report of issue 35's groundwork).
TEST_F(MegatronGpuTest, GraphsRecordedButNeverCreatedAreReported) {
  const MegatronRun run = ExpectFlagged("no-create-cudagraphs", "megatron-graphs-not-created", Severity::kWarning);
  EXPECT_THAT(CaptureBegins(run), ::testing::IsEmpty()) << run.output;
}

// A graphed layer called with another sequence length than it captured: Megatron 0.19.2 (pipeline parallel 1) finds no
// runner for the arguments and raises; the finding is dynamic-shape at the call.
// Megatron's own message says only "Use `get_mismatch_errors`": the probe asks the layer's runners, and the finding
// quotes how the call differs (issue 45).
TEST_F(MegatronGpuTest, ALayerCalledWithOtherShapesIsDynamicShape) {
  const MegatronRun run = ExpectFlagged("arg-mismatch", "dynamic-shape", Severity::kError);
  if (const Finding* f = run.Find("dynamic-shape")) {
    const std::string evidence = absl::StrJoin(f->evidence, "\n");
    EXPECT_THAT(evidence, ::testing::HasSubstr("runner 1 of")) << evidence;
    EXPECT_THAT(evidence, ::testing::HasSubstr("Received shape")) << evidence;
    std::printf("EVIDENCE arg-mismatch:\n%s\n", evidence.c_str());
  }
}

// A forward hook that reads a number on the host runs inside the layer's capture: sync-in-capture at the hook's line.
TEST_F(MegatronGpuTest, AHostSyncInAGraphedLayerIsSyncInCapture) {
  ExpectFlagged("sync-in-layer", "sync-in-capture", Severity::kError);
}

// The seeds' "FullCudaGraphWrapper capture fail" row: the NaN check of the loss reads it on the host inside the
// full-iteration capture; the fix names --no-check-for-nan-in-loss-and-grad.
TEST_F(MegatronGpuTest, TheNanCheckInAFullIterationCaptureIsSyncInCapture) {
  const MegatronRun run = ExpectFlagged("nan-check-full-iteration", "sync-in-capture", Severity::kError);
  if (const Finding* f = run.Find("sync-in-capture")) {
    EXPECT_THAT(f->fix, ::testing::HasSubstr("--no-check-for-nan-in-loss-and-grad")) << f->fix;
  }
}

// The seeds' "OOM with multiple graphs" row: training and validation graphs in private pools
// (cuda_graph_use_single_mempool=False) are graph-memory, at the training graph's capture (the largest pool's).
TEST_F(MegatronGpuTest, FullIterationGraphsWithoutASharedPoolAreGraphMemory) {
  const MegatronRun run = ExpectFlagged("no-shared-pool", "graph-memory", Severity::kWarning);
  EXPECT_THAT(CaptureBegins(run),
              ::testing::ElementsAre("megatron-full-iteration 0 training", "megatron-full-iteration 0 validation"))
      << run.output;
}

// A validation pass (model.eval() and torch.no_grad()) through Megatron's schedule with per-layer graphs: Megatron
// 0.19.2 replays the forward graphs captured in training mode, dropout included (Megatron-LM PR #6992). The probe
// sees the layers' dropout in eval mode at the replay: training-mode-frozen, named at the model.eval() that changed
// the modes the graphs were captured in (on an H200 in session 26; before, at the validation call's replay).
TEST_F(MegatronGpuTest, AValidationPassThroughTrainingGraphsIsTrainingModeFrozen) {
  const MegatronRun run = RunMode("validation-replay");
  const Finding* f = run.Find("training-mode-frozen");
  ASSERT_NE(f, nullptr) << run.text << run.output;
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_THAT(f->message, ::testing::HasSubstr("Megatron's layer")) << f->message;
  const int line = gpu_test::DefectLine("validation-replay", ProgramPath());
  EXPECT_TRUE(std::any_of(f->where.python.begin(), f->where.python.end(),
                          [&](const SourceFrame& frame) { return frame.user && frame.line == line; }))
      << "no frame at the model.eval() before validation, line " << line << ": " << f->message;
  const SourceFrame* user = FirstUserFrame(f->where);
  std::printf("FINDING validation-replay: error [training-mode-frozen] at %s:%d (model.eval() at line %d): %s | %s\n",
              user != nullptr ? user->file.c_str() : "?", user != nullptr ? user->line : 0, line, f->message.c_str(),
              absl::StrJoin(f->evidence, " | ").c_str());
  std::printf("FINDINGS validation-replay:\n%s", run.text.c_str());
}

// Pipeline parallel 2 with 2 virtual stages, on two GPUs (issue 35's replay order): each layer has a forward and a
// backward graph per microbatch, all in Megatron's one pool, captured in the order the interleaved schedule ran them.
// Replayed under the same schedule: no warning. Regrouped after the graphs were created (4 microbatches per virtual
// stage instead of 2): the chunks' layers replay in another order than they were captured in, and replay-order
// names it on both ranks. Skipped on one GPU.
TEST_F(MegatronGpuTest, PipelineScheduleReplayOrderIsChecked) {
  if (gpu_test::GpuCount() < 2) GTEST_SKIP() << "needs 2 GPUs (nvidia-h100-x2): pipeline parallel size 2";
  const std::string torchrun = "timeout -k 10 200 torchrun --standalone --nproc_per_node 2";
  const MegatronRun clean = RunMode("pipeline-clean", torchrun);
  ExpectCleanRun(clean);
  // The ranks are pipeline stages holding other layers: their captures differ by design.
  EXPECT_THAT(clean.Ids(Severity::kNote), ::testing::Not(::testing::Contains("replay-order"))) << clean.text;
  EXPECT_THAT(clean.Ids(Severity::kNote), ::testing::Not(::testing::Contains("rank-divergent-capture"))) << clean.text;
  // 2 layers per rank x 4 microbatches x forward and backward, on each of the 2 ranks.
  EXPECT_EQ(CaptureBegins(clean).size(), 32u) << absl::StrJoin(CaptureBegins(clean), ", ");
  std::printf("CLEAN pipeline-clean: %zu captures (%s ...); findings:\n%s", CaptureBegins(clean).size(),
              CaptureBegins(clean).empty() ? "" : CaptureBegins(clean)[0].c_str(), clean.text.c_str());

  const MegatronRun regrouped = RunMode("pipeline-regrouped", torchrun);
  ASSERT_FALSE(regrouped.report.steps.empty()) << regrouped.output;
  EXPECT_THAT(regrouped.report.steps[0].message, ::testing::HasSubstr("exited with status 0")) << regrouped.output;
  const Finding* finding = regrouped.Find("replay-order");
  ASSERT_NE(finding, nullptr) << regrouped.text << regrouped.output;
  // The sends and receives between the layers consumed nothing: the forwards' activations wait for their backward.
  EXPECT_EQ(finding->severity, Severity::kWarning) << finding->message;
  EXPECT_EQ(finding->where.ranks, (std::vector<int32_t>{0, 1})) << regrouped.text;
  EXPECT_THAT(finding->message, ::testing::ContainsRegex("Megatron's layer [0-9]+ (forward|backward) graph"));
  EXPECT_THAT(finding->fix, ::testing::HasSubstr("microbatch_group_size_per_vp_stage"));
  EXPECT_THAT(regrouped.Ids(Severity::kNote), ::testing::Not(::testing::Contains("rank-divergent-capture")))
      << "the ranks are pipeline stages: " << regrouped.text;
  std::printf("FINDING pipeline-regrouped: %s [replay-order] %s | %s | fix: %s\n",
              std::string(SeverityName(finding->severity)).c_str(), finding->message.c_str(),
              absl::StrJoin(finding->evidence, " | ").substr(0, 600).c_str(), finding->fix.substr(0, 300).c_str());
  for (const SourceFrame& frame : finding->where.python) {
    std::printf("FINDING pipeline-regrouped frame %s:%d %s%s\n", frame.file.c_str(), frame.line, frame.function.c_str(),
                frame.user ? " (user)" : "");
  }
}

// Rank 0's losses, from the "losses: ..." line tensor-parallel modes print; empty when none was printed.
std::vector<double> PrintedLosses(const MegatronRun& run) {
  std::vector<double> losses;
  const size_t at = run.output.find("losses: ");
  if (at == std::string::npos) return losses;
  std::istringstream line(run.output.substr(at + 8, run.output.find('\n', at) - at - 8));
  for (double loss; line >> loss;) losses.push_back(loss);
  return losses;
}

// Tensor parallel 2 on two GPUs (issue 45): the tensor-parallel all-reduces run inside Megatron's per-layer graphs and
// the embedding's and the loss's eagerly. The clean job gives no warning, its coverage names Megatron's graphs, the
// ranks' collective ledgers agree, and it trains as its eager twin does from the same seeds. With expandable segments
// and NCCL's graph registration left on, the environment rule names it (Megatron's local path does not assert in
// 0.19.2). Without resetting the graphs before the teardown, the job waits for ever (seen on two H200s): `hang` names
// the live graphs at the program's destroy_process_group(). Skipped on one GPU.
TEST_F(MegatronGpuTest, TensorParallelLayersAreCleanAndTrainLikeEager) {
  if (gpu_test::GpuCount() < 2) GTEST_SKIP() << "needs 2 GPUs (nvidia-h100-x2): tensor parallel size 2";
  const std::string torchrun = "timeout -k 10 150 torchrun --standalone --nproc_per_node 2";
  const std::string bounded = "--hang-timeout 30";
  const MegatronRun graphed = RunMode("tensor-parallel-clean", torchrun, bounded);
  ExpectCleanRun(graphed);
  for (const char* id : {"rank-divergent-collectives", "rank-divergent-capture", "hang"}) {
    EXPECT_THAT(graphed.Ids(Severity::kNote), ::testing::Not(::testing::Contains(id))) << graphed.text;
  }
  // 2 layers x forward and backward, on each of the 2 ranks.
  EXPECT_EQ(CaptureBegins(graphed).size(), 8u) << absl::StrJoin(CaptureBegins(graphed), ", ");
  ASSERT_TRUE(graphed.report.coverage.has_value()) << graphed.text;
  const std::vector<CoverageShare>& shares = graphed.report.coverage->total.graphed;
  EXPECT_TRUE(std::any_of(shares.begin(), shares.end(), [](const CoverageShare& s) {
    return s.origin == "megatron" && s.kernels > 0;
  })) << graphed.text;

  const MegatronRun eager = RunMode("tensor-parallel-eager", torchrun, bounded);
  ExpectCleanRun(eager);
  const std::vector<double> graphed_losses = PrintedLosses(graphed);
  const std::vector<double> eager_losses = PrintedLosses(eager);
  ASSERT_EQ(graphed_losses.size(), 8u) << graphed.output;
  ASSERT_EQ(eager_losses.size(), graphed_losses.size()) << eager.output;
  // The first iteration runs eagerly in both (it records the graphs): the twins start from the same weights and data.
  EXPECT_NEAR(graphed_losses[0], eager_losses[0], 1e-6 * eager_losses[0]) << "not twins: " << eager.output;
  // The loss falls far enough for a wrong graph (stale weights, another batch) to show.
  EXPECT_LT(eager_losses.back(), eager_losses.front() - 0.1) << absl::StrJoin(eager_losses, " ");
  double worst = 0;
  for (size_t i = 0; i < graphed_losses.size(); ++i) {
    worst = std::max(worst, std::abs(graphed_losses[i] - eager_losses[i]) / std::abs(eager_losses[i]));
  }
  EXPECT_LT(worst, 1e-4) << "graphed " << absl::StrJoin(graphed_losses, " ") << " eager "
                         << absl::StrJoin(eager_losses, " ");
  std::printf(
      "CLEAN tensor-parallel-clean: %zu captures, largest relative loss difference from eager %.2e "
      "(graphed %s; eager %s); findings:\n%s",
      CaptureBegins(graphed).size(), worst, absl::StrJoin(graphed_losses, " ").c_str(),
      absl::StrJoin(eager_losses, " ").c_str(), graphed.text.c_str());

  const MegatronRun expandable =
      RunMode("tensor-parallel-clean", "env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True " + torchrun, bounded);
  const Finding* rule = expandable.Find("env-expandable-segments-nccl-register");
  ASSERT_NE(rule, nullptr) << expandable.text << expandable.output;
  EXPECT_EQ(rule->severity, Severity::kError);
  std::printf("FINDING tensor-parallel expandable_segments: %s; the program: %s; losses %s; findings:\n%s",
              rule->message.c_str(),
              expandable.report.steps.empty() ? "no step" : expandable.report.steps[0].message.c_str(),
              absl::StrJoin(PrintedLosses(expandable), " ").c_str(), expandable.text.c_str());

  const MegatronRun alive = RunMode("tensor-parallel-graphs-alive", torchrun, bounded);
  const Finding* hang = alive.Find("hang");
  ASSERT_NE(hang, nullptr) << alive.text << alive.output;
  EXPECT_THAT(hang->evidence, ::testing::Contains(::testing::HasSubstr("still alive: graph"))) << alive.text;
  EXPECT_EQ(hang->where.ranks, (std::vector<int32_t>{0, 1})) << alive.text;
  const SourceFrame* user = FirstUserFrame(hang->where);
  ASSERT_NE(user, nullptr) << alive.text;
  EXPECT_EQ(user->line, gpu_test::DefectLine("tensor-parallel-graphs-alive", ProgramPath())) << alive.text;
  std::printf("FINDING tensor-parallel-graphs-alive: %s | %s | fix: %s\nfindings:\n%s", hang->message.c_str(),
              absl::StrJoin(hang->evidence, " | ").c_str(), hang->fix.c_str(), alive.text.c_str());
}

}  // namespace
}  // namespace graphcheck
