// The activity seam: fake CUPTI records in, trace events out (through a real trace file), with no GPU.
#include "capture/activity_decoder.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "trace/trace_reader.h"

namespace graphcheck::capture {
namespace {

trace::Trace DecodeAndReadBack(const std::vector<const CUpti_Activity*>& records) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/decoder-", getpid(), ".gctrace");
  {
    auto writer = trace::TraceWriter::Create(path, trace::ProcessInfo{});
    EXPECT_TRUE(writer.ok()) << writer.status();
    ActivityDecoder decoder(writer->get());
    for (const CUpti_Activity* record : records) decoder.Decode(record);
  }
  absl::StatusOr<trace::Trace> trace = trace::ReadTrace(path);
  EXPECT_TRUE(trace.ok()) << trace.status();
  return trace.ok() ? *std::move(trace) : trace::Trace{};
}

TEST(ActivityDecoderTest, KernelRecordsKeepTimesGraphIdsAndDemangledNames) {
  CUpti_ActivityKernel10 kernel = {};
  kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  kernel.correlationId = 42;
  kernel.start = 1000;
  kernel.end = 2500;
  kernel.deviceId = 1;
  kernel.streamId = 13;
  kernel.graphId = 2;
  kernel.graphNodeId = 7;
  kernel.gridX = 256;
  kernel.gridY = kernel.gridZ = 1;
  kernel.blockX = 128;
  kernel.blockY = kernel.blockZ = 1;
  kernel.name = "_Z5ScalePfif";
  const trace::Trace trace = DecodeAndReadBack({reinterpret_cast<const CUpti_Activity*>(&kernel)});
  ASSERT_EQ(trace.kernels.size(), 1u);
  const trace::KernelRecord k = trace.Record(trace.kernels[0]);
  EXPECT_EQ(k.correlation_id, 42u);
  EXPECT_EQ(k.end_ns - k.start_ns, 1500u);
  EXPECT_EQ(k.stream_id, 13u);
  EXPECT_EQ(k.graph_id, 2u);
  EXPECT_EQ(k.graph_node_id, 7u);
  EXPECT_EQ(k.grid[0], 256u);
  EXPECT_EQ(k.block[0], 128u);
  EXPECT_EQ(trace.String(k.name), "Scale(float*, int, float)");
}

TEST(ActivityDecoderTest, CopiesKnowTheirDirectionAndPageableHostMemory) {
  CUpti_ActivityMemcpy6 copy = {};
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  copy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  copy.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  copy.bytes = 4096;
  copy.correlationId = 5;
  CUpti_ActivityMemset4 set = {};
  set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  set.bytes = 64;
  set.correlationId = 6;
  CUpti_Activity other = {};
  other.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;  // not used by the recorder: skipped
  const trace::Trace trace = DecodeAndReadBack(
      {reinterpret_cast<const CUpti_Activity*>(&copy), reinterpret_cast<const CUpti_Activity*>(&set), &other});
  ASSERT_EQ(trace.memory.size(), 2u);
  EXPECT_EQ(trace.memory[0].kind, trace::MemoryActivity::Kind::kMemcpy);
  EXPECT_EQ(trace.memory[0].direction, trace::MemcpyDirection::kHostToDevice);
  EXPECT_EQ(trace.memory[0].host_memory, trace::HostMemory::kPageable);
  EXPECT_EQ(trace.memory[0].bytes, 4096u);
  EXPECT_EQ(trace.memory[1].kind, trace::MemoryActivity::Kind::kMemset);
  EXPECT_EQ(trace.memory[1].bytes, 64u);
  EXPECT_TRUE(trace.kernels.empty());
}

TEST(DemangleKernelNameTest, LeavesPlainNamesAlone) {
  EXPECT_EQ(DemangleKernelName("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(DemangleKernelName(nullptr), "");
}

}  // namespace
}  // namespace graphcheck::capture
