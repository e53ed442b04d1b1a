// What the Python probe's events change in the analysis: who began each capture, the exceptions that left captures
// or ended the program (mapped to their checks, at the program's line), and the framework machinery that is not the
// program's to fix (torch.compile's cudagraph trees, torch.cuda.graph's own synchronization).
#include "analysis/python_probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "analysis/trace_analysis.h"
#include "checks/analyze.h"
#include "checks/checks.h"
#include "cli/catalog.h"
#include "tests/checks/trace/probe_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using trace::ProbeEventKind;
using trace::ProbeOrigin;

TEST(PythonProbeTest, EveryCaptureWindowGetsTheOriginOfTheProbesBegin) {
  TraceBuilder b;
  b.Probe(900, 1, ProbeEventKind::kCaptureBegin, 1, ProbeOrigin::kCudagraphTreesInit);
  b.Begin(1000, 1, kStream);
  b.End(1500, 1, kStream, 1, 0, 0);
  b.Begin(2000, 1, kStream);  // no probe event before it on this thread since the last window: unknown
  b.End(2500, 1, kStream, 2, 0, 0);
  b.Probe(2900, 2, ProbeEventKind::kCaptureBegin, 2, ProbeOrigin::kGraphedCallables);
  b.Begin(3000, 2, 8);
  b.End(3500, 2, 8, 3, 0, 0);
  const trace::Trace trace = b.Build();
  const analysis::TraceAnalysis analysis(trace);
  const analysis::ProbeIndex& probe = analysis.probe();
  ASSERT_THAT(analysis.captures().windows(), SizeIs(3));
  EXPECT_EQ(probe.Origin(0), ProbeOrigin::kCudagraphTreesInit);
  EXPECT_EQ(probe.Origin(1), ProbeOrigin::kUnknown);
  EXPECT_EQ(probe.Origin(2), ProbeOrigin::kGraphedCallables);
  EXPECT_FALSE(probe.cudagraph_trees());
}

// A capture_begin that raised before CUDA's capture began (the probe saw its exception) is not the origin of the
// next capture the thread makes without the probe's knowledge (a C++ extension's own).
TEST(PythonProbeTest, ACaptureThatFailedInPythonIsNotTheOriginOfALaterWindow) {
  TraceBuilder b;
  b.Probe(900, 1, ProbeEventKind::kCaptureBegin, kGraph, ProbeOrigin::kGraphedCallables);
  b.Exception(950, 1, ProbeEventKind::kCaptureException, kGraph, "RuntimeError", "refused", 0);
  b.Begin(1000, 1, kStream);
  b.End(1500, 1, kStream, kCaptureId, 0, 1);
  const trace::Trace trace = b.Build();
  const analysis::TraceAnalysis analysis(trace);
  EXPECT_EQ(analysis.probe().Origin(0), ProbeOrigin::kUnknown);
}

// Megatron Core refusing a call no layer graph matches, which ends the program: the probe asked the runners how the
// call differs (origins.megatron_mismatches), and the finding the stderr line makes, placed where the program stopped,
// quotes their answers with the shapes.
TEST(PythonProbeTest, TheDetailsOfTheExceptionAProgramStoppedOnAreEvidence) {
  const std::string refusal =
      "`cudagraph_created` is set to True but no matching cudagraph runners were found. This module has 2 existing "
      "runners. Use `get_mismatch_errors` to debug mismatches.";
  TraceBuilder b;
  b.Exception(2000, 1, ProbeEventKind::kUncaughtException, 0, "AssertionError",
              refusal +
                  "\nrunner 1 of 2:\n  - Tensor mismatch at args[0]: Received shape torch.Size([48, 4, 128]) "
                  "but expected torch.Size([64, 4, 128])\n\nrunner 2 of 2:\n  - Value mismatch at "
                  "kwargs['inference_context']: None vs <object>",
              b.PythonStack({{"/home/me/train.py", 88, "step"}}));
  const trace::Trace trace = b.Build();
  const std::vector<std::string> stderr_lines = {"[rank0]: AssertionError: " + refusal};
  const std::vector<Finding> findings =
      checks::AnalyzeTraces({&trace}, &stderr_lines, BuiltinChecks(),
                            *CheckSelection::Parse("dynamic-shape,stderr-messages"), CheckOptions())
          .findings;
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].check_id, "dynamic-shape");
  ASSERT_NE(FirstUserFrame(findings[0].where), nullptr);
  EXPECT_EQ(FirstUserFrame(findings[0].where)->line, 88);
  EXPECT_THAT(findings[0].evidence, Contains("runner 1 of 2:"));
  EXPECT_THAT(findings[0].evidence,
              Contains("- Tensor mismatch at args[0]: Received shape torch.Size([48, 4, 128]) but "
                       "expected torch.Size([64, 4, 128])"));
  EXPECT_THAT(findings[0].evidence, Contains("- Value mismatch at kwargs['inference_context']: None vs <object>"));
  // Details are trimmed, empty lines skipped, and at most 12 kept (the last "...").
  EXPECT_THAT(analysis::ExceptionDetails("first\n  second \n\nthird"), testing::ElementsAre("second", "third"));
  std::string many = "head";
  for (int i = 0; i < 40; ++i) many += "\nline";
  EXPECT_THAT(analysis::ExceptionDetails(many), SizeIs(12));
  EXPECT_EQ(analysis::ExceptionDetails(many).back(), "...");
}

TEST(PythonProbeTest, CudagraphTreesPoolCaptureIsNotAnEmptyGraph) {
  TraceBuilder b;
  b.Probe(900, 1, ProbeEventKind::kCaptureBegin, 1, ProbeOrigin::kCudagraphTreesInit);
  b.Begin(1000, 1, kStream, CaptureMode::kThreadLocal);
  b.End(1500, 1, kStream, 1, 0, 0);
  EXPECT_THAT(RunCheck(checks::NewEmptyGraphCheck(), b.Build()), IsEmpty());
}

// torch.compile(mode="reduce-overhead") with a batch size that changes: cudagraph trees record the compiled function
// once per shape, replaying in between. One recapture-churn finding names it as torch.compile's re-recording, at the
// program's call site; dynamic-shape stays silent (the framework decides what to graph).
TEST(PythonProbeTest, CudagraphTreesReRecordingIsChurnOfTheCompiledFunction) {
  TraceBuilder b;
  const trace::PythonStackId call_site = b.PythonStack({{"/home/me/loop.py", 17, "main"}});
  uint64_t t = 1000;
  for (int shape = 0; shape < 4; ++shape) {
    trace::ProbeEvent& begin = b.Probe(t, 1, ProbeEventKind::kCaptureBegin, 100 + shape, ProbeOrigin::kCudagraphTrees);
    begin.value = shape + 1;  // cudagraph trees give each shape of a dynamic function its own function id
    begin.stack = call_site;
    b.Begin(t + 100, 1, kStream, CaptureMode::kThreadLocal);
    TraceBuilder::In(b.Launch(t + 200, 1, kStream, "triton_poi_fused", {8u * (shape + 1), 1, 1}), shape + 1,
                     CaptureMode::kThreadLocal);
    b.End(t + 300, 1, kStream, shape + 1, 0, 1).graph_id = shape + 1;
    for (int r = 0; r < 10; ++r) b.Replay(t + 1000 + r * 100, 1, kStream, shape + 1, 10, 50);
    t += 10000;
  }
  // An eager kernel as long as the 40 replays together: half the GPU time ran as compiled graphs.
  trace::KernelRecord eager;
  eager.correlation_id = b.Launch(t, 1, kStream, "eager_loss").correlation_id;
  eager.start_ns = t + 10;
  eager.end_ns = eager.start_ns + 40 * 50;
  eager.stream_id = kStream;
  b.trace().AddKernel(eager);
  const trace::Trace trace = b.Build();
  const std::vector<Finding> churn = RunCheck(checks::NewRecaptureChurnCheck(), trace);
  ASSERT_THAT(churn, SizeIs(1));
  EXPECT_THAT(churn[0].message, HasSubstr("torch.compile's CUDA graphs (cudagraph trees) recorded the function "
                                          "called here 4 times"));
  ASSERT_FALSE(churn[0].where.python.empty());
  EXPECT_EQ(churn[0].where.python[0].line, 17);
  EXPECT_THAT(churn[0].fix, HasSubstr("pad or bucket"));
  EXPECT_THAT(RunCheck(checks::NewDynamicShapeCheck(), trace), IsEmpty());
  EXPECT_THAT(RunCheck(checks::NewDynamicControlFlowCheck(), trace), IsEmpty());
  const analysis::TraceAnalysis analysis(trace);
  std::map<std::string, double> metrics;
  for (const Metric& m : analysis::ProbeMetrics(trace, analysis.probe(), analysis.captures().windows())) {
    metrics[m.name] = m.value;
  }
  EXPECT_EQ(metrics["compile.recordings"], 4);
  EXPECT_EQ(metrics["compile.recording_call_sites"], 1);
  EXPECT_EQ(metrics["compile.replays"], 40);  // the cudaGraphLaunch calls of the recorded graphs
  EXPECT_EQ(metrics["compile.cudagraph_skips"], 0);
  EXPECT_DOUBLE_EQ(metrics["compile.replay_gpu_share"], 0.5);
}

TEST(PythonProbeTest, TraceWithoutProbeEventsIsUnchanged) {
  const trace::Trace trace = FailedCapture([](TraceBuilder&) {}, 0);
  const analysis::TraceAnalysis analysis(trace);
  EXPECT_EQ(analysis.probe().Origin(0), ProbeOrigin::kUnknown);
  EXPECT_THAT(analysis.probe().exceptions(), IsEmpty());
  EXPECT_THAT(RunCheck(checks::NewCompileCudagraphSkippedCheck(), trace), IsEmpty());
}

// The synchronization torch.cuda.graph makes before capturing is the framework's, not the program's.
TEST(PythonProbeTest, GraphMachinerySynchronizationIsNotTheProgramsSync) {
  TraceBuilder b;
  ApiCall& machinery = b.Call(1000, 1, "cudaDeviceSynchronize", ApiKind::kDeviceSynchronize);
  machinery.python_stack =
      b.PythonStack({{"/opt/venv/lib/python3.12/site-packages/torch/cuda/__init__.py", 1, "s"},
                     {"/opt/venv/lib/python3.12/site-packages/torch/cuda/graphs.py", 250, "__enter__"},
                     {"/home/me/train.py", 30, "main"}});
  ApiCall& user = b.Call(2000, 1, "cudaStreamSynchronize", ApiKind::kStreamSynchronize, 7);
  user.python_stack = b.PythonStack({{"/home/me/train.py", 20, "step"},
                                     {"/opt/venv/lib/python3.12/site-packages/torch/_dynamo/eval_frame.py", 1, "_fn"}});
  // DistributedDataParallel's forward synchronizing its timing events during its first ten iterations (H100, torch
  // 2.11: the seeds' recipe warms up through them).
  ApiCall& ddp = b.Call(3000, 1, "cudaEventSynchronize", ApiKind::kEventSynchronize);
  ddp.python_stack =
      b.PythonStack({{"/opt/venv/lib/python3.12/site-packages/torch/nn/parallel/distributed.py", 1566, "_pre_forward"},
                     {"/opt/venv/lib/python3.12/site-packages/torch/nn/parallel/distributed.py", 1690, "forward"},
                     {"/home/me/train.py", 44, "main"}});
  const trace::Trace trace = b.Build();
  EXPECT_TRUE(analysis::CalledByGraphMachinery(trace, trace.api_calls[0]));
  EXPECT_FALSE(analysis::CalledByGraphMachinery(trace, trace.api_calls[1]));
  EXPECT_TRUE(analysis::CalledByGraphMachinery(trace, trace.api_calls[2]));
}

// --shadow's metrics count calls and replays (a call's tensors share its time and draws), not tensors; the cost is the
// median compared call's; calls a trace before 1.8 marked random are counted apart and cost nothing.
TEST(PythonProbeTest, ShadowMetricsCountCallsAndTheirCost) {
  trace::Trace trace;
  EXPECT_THAT(analysis::ShadowMetrics(trace), IsEmpty());
  auto compare = [&](uint64_t owner, uint32_t call, bool random, uint64_t ns,
                     trace::ShadowSubject subject = trace::ShadowSubject::kModuleForward, const char* draws = "") {
    trace::ShadowComparison& c = trace.shadow_comparisons.emplace_back();
    c.module = owner;
    c.call = call;
    c.random = random;
    c.shadow_ns = ns;
    c.subject = subject;
    c.draws = trace.Intern(draws);
  };
  compare(1, 1, false, 3000);  // two outputs of one call
  compare(1, 1, false, 3000);
  compare(1, 2, false, 1000, trace::ShadowSubject::kModuleForward, "cuda");  // dropout, put back and compared
  compare(2, 1, true, 9000);                                                 // an old trace's dropout call
  compare(3, 1, false, 2000, trace::ShadowSubject::kCapturedRegion);         // a replay of a whole step
  std::map<std::string, double> metrics;
  for (const Metric& m : analysis::ShadowMetrics(trace)) metrics[m.name] = m.value;
  EXPECT_EQ(metrics["shadow.calls_compared"], 2);
  EXPECT_EQ(metrics["shadow.replays_compared"], 1);
  EXPECT_EQ(metrics["shadow.calls_drawing"], 1);
  EXPECT_EQ(metrics["shadow.calls_random"], 1);
  EXPECT_EQ(metrics["shadow.tensors_compared"], 4);
  EXPECT_DOUBLE_EQ(metrics["shadow.cost_us"], 2.0);  // the median of 3000, 1000 and 2000 ns
}

// A finding whose frames pass through a library names it and, where the library has a setting for it, that setting:
// Megatron's NaN check of the loss (its rerun state machine) read on the host inside a full-iteration capture.
TEST(PythonProbeTest, LibraryAdviceNamesTheLibrarysOwnSetting) {
  const std::string megatron = "/venv/lib/python3.12/site-packages/megatron/core/";
  Finding nan_check;
  nan_check.fix = "Move the synchronization out of the captured region.";
  nan_check.where.python = {SourceFrame{megatron + "rerun_state_machine.py", 512, "validate_result", false},
                            SourceFrame{"/home/me/train.py", 149, "loss_func", true}};
  analysis::AddLibraryAdvice(&nan_check);
  EXPECT_THAT(nan_check.fix, HasSubstr("It happens inside megatron"));
  EXPECT_THAT(nan_check.fix, HasSubstr("--no-check-for-nan-in-loss-and-grad"));
  EXPECT_THAT(nan_check.evidence, Contains("inside megatron (rerun_state_machine.py:512), called from "
                                           "/home/me/train.py:149 in loss_func"));
  Finding layer = nan_check;
  layer.fix = "Move the synchronization out of the captured region.";
  layer.where.python[0].file = megatron + "transformer/transformer_layer.py";
  analysis::AddLibraryAdvice(&layer);
  EXPECT_THAT(layer.fix, HasSubstr("It happens inside megatron"));
  EXPECT_THAT(layer.fix, ::testing::Not(HasSubstr("NaN check")));
}

}  // namespace
}  // namespace graphcheck::testing_trace
