// The recorder's entry point on a machine with no GPU: loaded against CUDA's stub driver, InitializeInjection must
// write a trace (process, the capture-relevant environment only, and why CUPTI could not subscribe) and never crash.
// GPU behaviour is tested by tests/gpu/ on a GPU machine.
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
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
}

}  // namespace
}  // namespace graphcheck
