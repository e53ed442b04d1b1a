// The recorder's entry points on a machine with no GPU: loaded against CUDA's stub driver, InitializeInjection must
// write a trace (process, the capture-relevant environment only, and why CUPTI could not subscribe) and never crash,
// and graphcheck_probe_event and graphcheck_probe_shadow must write the Python probe's records into it.
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
#include "core/trace/trace_reader.h"

namespace graphcheck {
namespace {

TEST(InjectionSmokeTest, WritesATraceWithoutADriver) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/inject-smoke-", getpid());
  std::filesystem::create_directories(dir);
  setenv("GRAPHCHECK_TRACE_DIR", dir.c_str(), 1);
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
  // interned as a Python stack; a bad kind is refused, not written.
  using ProbeEventFn = int (*)(int, int, uint64_t, uint64_t, uint64_t, uint64_t, const char*, const char*, const char*);
  auto probe = reinterpret_cast<ProbeEventFn>(dlsym(library, "graphcheck_probe_event"));
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(probe(3, 1, 77, 5, 0, 0, "RuntimeError", "CUDA error: operation not permitted when stream is capturing",
                  "/home/me/train.py\x1f"
                  "42\x1f"
                  "train_step\x1e"
                  "/home/me/train.py\x1f"
                  "7\x1f"
                  "<module>"),
            1);
  EXPECT_EQ(probe(7, 2, 78, 0, 0x7f0000001000, 0x7f0000002000, "parameter", "0.weight", nullptr), 1);
  EXPECT_EQ(probe(99, 0, 0, 0, 0, 0, nullptr, nullptr, nullptr), 0);
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
  using ShadowFn = int (*)(uint64_t, const char*, uint32_t, const char*, const char*, const char*, uint64_t, double,
                           int64_t, double, double, double, double, uint64_t, uint64_t, int, uint64_t);
  auto shadow = reinterpret_cast<ShadowFn>(dlsym(library, "graphcheck_probe_shadow"));
  ASSERT_NE(shadow, nullptr);
  EXPECT_EQ(
      shadow(78, "Block", 3, "output 0", "bfloat16", "bfloat16", 4096, 0.25, 17, -1.5, -1.25, 8.0, -1, 2, 0, 0, 12000),
      1);
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
                                                        "graphcheck_probe_shadow"));
}

}  // namespace
}  // namespace graphcheck
