// The recorder's entry points on a machine with no GPU: loaded against CUDA's stub driver, InitializeInjection must
// write a trace (process, the capture-relevant environment only, and why CUPTI could not subscribe) and never crash,
// and the probe's entry points (graphcheck_probe_event, _shadow, _allocations) must write its records into it.
// GPU behaviour is tested by tests/gpu/ on a GPU machine.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "capture/probe_abi.h"
#include "trace/run_settings.h"
#include "trace/trace_reader.h"

namespace graphcheck {
namespace {

TEST(InjectionSmokeTest, WritesATraceWithoutADriver) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/inject-smoke-", getpid());
  std::filesystem::create_directories(dir);
  setenv(trace::kTraceDirVariable, dir.c_str(), 1);
  setenv("CUDA_GRAPHCHECK_SMOKE", "1", 1);  // CUDA_*: recorded
  setenv("UNRELATED_SECRET", "x", 1);       // not recorded
  void* library = dlopen(GRAPHCHECK_INJECT_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  auto initialize = reinterpret_cast<int (*)()>(dlsym(library, "InitializeInjection"));
  ASSERT_NE(initialize, nullptr);
  EXPECT_EQ(initialize(), 1);  // the program runs on even though nothing can be recorded

  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files.push_back(entry.path().string());
  ASSERT_EQ(files.size(), 1u);
  absl::StatusOr<trace::Trace> trace = trace::ReadTrace(files[0]);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->process.pid, static_cast<uint32_t>(getpid()));
  EXPECT_FALSE(trace->process.command_line.empty());
  ASSERT_NE(trace->environment.Get("CUDA_GRAPHCHECK_SMOKE"), nullptr);
  EXPECT_EQ(trace->environment.Get("UNRELATED_SECRET"), nullptr);
  EXPECT_FALSE(trace->recorder.subscribed);
  EXPECT_THAT(trace->recorder.message, ::testing::HasSubstr("cuptiSubscribe"));
  EXPECT_TRUE(trace->read_warnings.empty());

  // The Python probe's entry point writes into the same trace: explicit frames (an exception's traceback) are
  // interned as a Python stack; a bad kind, or a record shorter than the library's, is refused, not written.
  using ProbeEventFn = int (*)(const GraphcheckProbeEvent*);
  auto probe = reinterpret_cast<ProbeEventFn>(dlsym(library, "graphcheck_probe_event"));
  ASSERT_NE(probe, nullptr);
  const GraphcheckProbeEvent exception{sizeof(GraphcheckProbeEvent),
                                       3,
                                       1,
                                       77,
                                       5,
                                       0,
                                       0,
                                       "RuntimeError",
                                       "CUDA error: operation not permitted when stream is capturing",
                                       "/home/me/train.py\x1f"
                                       "42\x1f"
                                       "train_step\x1e"
                                       "/home/me/train.py\x1f"
                                       "7\x1f"
                                       "<module>"};
  EXPECT_EQ(probe(&exception), 1);
  const GraphcheckProbeEvent rebound{
      sizeof(GraphcheckProbeEvent), 7, 2, 78, 0, 0x7f0000001000, 0x7f0000002000, "parameter", "0.weight", nullptr};
  EXPECT_EQ(probe(&rebound), 1);
  GraphcheckProbeEvent bad = rebound;
  bad.kind = 99;
  EXPECT_EQ(probe(&bad), 0);
  GraphcheckProbeEvent short_record = rebound;
  short_record.size = 16;
  EXPECT_EQ(probe(&short_record), 0);
  EXPECT_EQ(probe(nullptr), 0);
  trace = trace::ReadTrace(files[0]);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->probe_events.size(), 2u);
  EXPECT_EQ(trace->probe_events[1].kind, trace::ProbeEventKind::kStateRebound);
  EXPECT_EQ(trace->probe_events[1].value, 0x7f0000001000u);
  EXPECT_EQ(trace->probe_events[1].value_now, 0x7f0000002000u);
  EXPECT_EQ(trace->String(trace->probe_events[1].text), "0.weight");
  const trace::ProbeEvent& event = trace->probe_events[0];
  EXPECT_EQ(event.kind, trace::ProbeEventKind::kCaptureException);
  EXPECT_EQ(event.origin, trace::ProbeOrigin::kUser);
  EXPECT_EQ(event.graph, 77u);
  EXPECT_EQ(trace->String(event.type), "RuntimeError");
  const trace::PythonStack* stack = trace->FindPythonStack(event.stack);
  ASSERT_NE(stack, nullptr);
  ASSERT_EQ(stack->frames.size(), 2u);
  EXPECT_EQ(trace->String(stack->frames[0].file), "/home/me/train.py");
  EXPECT_EQ(stack->frames[0].line, 42u);
  EXPECT_EQ(trace->String(stack->frames[1].function), "<module>");

  // --shadow's comparisons: figures and strings round-trip, NaN and negative values included.
  using ShadowFn = int (*)(const GraphcheckShadowRecord*);
  auto shadow = reinterpret_cast<ShadowFn>(dlsym(library, "graphcheck_probe_shadow"));
  ASSERT_NE(shadow, nullptr);
  GraphcheckShadowRecord record{};
  record.size = sizeof(record);
  record.call = 3;
  record.module = 78;
  record.module_type = "Block";
  record.name = "output 0";
  record.dtype = "bfloat16";
  record.precision = "bfloat16";
  record.draws = "cuda,cpu";
  record.numel = 4096;
  record.max_abs_error = 0.25;
  record.worst_index = 17;
  record.eager_at_worst = -1.5;
  record.graphed_at_worst = -1.25;
  record.eager_abs_max = 8.0;
  record.eager_spread = -1;
  record.eager_nonfinite = 2;
  record.subject = 1;
  record.shadow_ns = 12000;
  EXPECT_EQ(shadow(&record), 1);
  GraphcheckShadowRecord unknown_subject = record;
  unknown_subject.subject = 9;
  EXPECT_EQ(shadow(&unknown_subject), 0);
  trace = trace::ReadTrace(files[0]);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->shadow_comparisons.size(), 1u);
  const trace::ShadowComparison& compared = trace->shadow_comparisons[0];
  EXPECT_EQ(compared.module, 78u);
  EXPECT_EQ(trace->String(compared.module_type), "Block");
  EXPECT_EQ(compared.call, 3u);
  EXPECT_EQ(trace->String(compared.name), "output 0");
  EXPECT_EQ(trace->String(compared.precision), "bfloat16");
  EXPECT_EQ(compared.numel, 4096);
  EXPECT_EQ(compared.max_abs_error, 0.25);
  EXPECT_EQ(compared.worst_index, 17);
  EXPECT_EQ(compared.eager_at_worst, -1.5);
  EXPECT_EQ(compared.graphed_at_worst, -1.25);
  EXPECT_EQ(compared.eager_spread, -1);
  EXPECT_EQ(compared.eager_nonfinite, 2);
  EXPECT_FALSE(compared.random);
  EXPECT_EQ(compared.shadow_ns, 12000u);
  EXPECT_EQ(compared.subject, trace::ShadowSubject::kCapturedRegion);
  EXPECT_EQ(trace->String(compared.draws), "cuda,cpu");

  // The caching allocator's history: entries keep their order and spacing on the recorder's clock; an unknown action
  // is skipped, a batch of another record size refused.
  using AllocationsFn = int64_t (*)(const GraphcheckAllocations*);
  auto allocations = reinterpret_cast<AllocationsFn>(dlsym(library, "graphcheck_probe_allocations"));
  ASSERT_NE(allocations, nullptr);
  const GraphcheckAllocation entries[] = {{1000000, 0x7f0000000000, 4000, 0, 0},
                                          {1000250, 0x7f0000000000, 4000, 0, 1},
                                          {1000300, 0x7f0000001000, 64, 0, 7},
                                          {1000400, 0x7f0000002000, 1 << 20, 1, 0}};
  GraphcheckAllocations batch{sizeof(GraphcheckAllocations), sizeof(GraphcheckAllocation), 1000500, 4, entries};
  EXPECT_EQ(allocations(&batch), 3);
  GraphcheckAllocations other_layout = batch;
  other_layout.record_size = 16;
  EXPECT_EQ(allocations(&other_layout), 0);
  EXPECT_EQ(allocations(nullptr), 0);
  trace = trace::ReadTrace(files[0]);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->allocations.size(), 3u);
  EXPECT_EQ(trace->allocations[0].action, trace::AllocatorEvent::Action::kAlloc);
  EXPECT_EQ(trace->allocations[1].action, trace::AllocatorEvent::Action::kFree);
  EXPECT_EQ(trace->allocations[1].time_ns - trace->allocations[0].time_ns, 250000u);
  EXPECT_EQ(trace->allocations[2].time_ns - trace->allocations[0].time_ns, 400000u);
  EXPECT_EQ(trace->allocations[2].device, 1u);
  EXPECT_EQ(trace->allocations[2].bytes, uint64_t{1} << 20);
  EXPECT_EQ(trace->allocations[0].address, 0x7f0000000000u);
}

// The library lives inside someone else's program, which may carry its own Abseil or its own copy of our code: it must
// export its entry points and nothing else (capture/injection.map).
TEST(InjectionSmokeTest, ExportsOnlyItsEntryPoints) {
  FILE* nm = popen(absl::StrCat("nm -D --defined-only ", GRAPHCHECK_INJECT_LIBRARY).c_str(), "r");
  ASSERT_NE(nm, nullptr);
  std::vector<std::string> exported;
  char line[4096];
  while (fgets(line, sizeof(line), nm) != nullptr) {
    // "ADDRESS TYPE NAME": a lower-case type is a local symbol.
    std::vector<std::string> fields = absl::StrSplit(line, absl::ByAnyChar(" \n"), absl::SkipEmpty());
    if (fields.size() == 3 && std::isupper(static_cast<unsigned char>(fields[1][0]))) exported.push_back(fields[2]);
  }
  ASSERT_EQ(pclose(nm), 0) << "nm failed";
  EXPECT_THAT(exported, ::testing::UnorderedElementsAre("InitializeInjection", "graphcheck_probe_event",
                                                        "graphcheck_probe_shadow", "graphcheck_probe_allocations"));
}

}  // namespace
}  // namespace graphcheck
