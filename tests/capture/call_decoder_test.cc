// DecodeRuntimeCall on hand-made CUPTI parameter structs, one call of each of its kinds (launches and memory, streams
// and events, captures and graphs) and one it does not decode: what the recorder keeps of each call's arguments.
#include "capture/call_decoder.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

namespace graphcheck::capture {
namespace {

TEST(CallDecoderTest, LaunchesAndCopiesKeepStreamGeometryAndBytes) {
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(0x1234);
  cudaLaunchKernel_v7000_params launch{};
  launch.gridDim = dim3(4, 2, 1);
  launch.blockDim = dim3(128, 1, 1);
  launch.stream = stream;
  const DecodedCall kernel = DecodeRuntimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &launch);
  EXPECT_TRUE(kernel.has_stream);
  EXPECT_EQ(kernel.stream, reinterpret_cast<CUstream>(stream));
  EXPECT_EQ(kernel.grid, (std::array<uint32_t, 3>{4, 2, 1}));
  EXPECT_EQ(kernel.block, (std::array<uint32_t, 3>{128, 1, 1}));

  cudaMemsetAsync_v3020_params set{};
  set.count = 4096;
  set.stream = stream;
  const DecodedCall memset = DecodeRuntimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, &set);
  EXPECT_EQ(memset.bytes, 4096u);
  EXPECT_TRUE(memset.has_stream);
}

TEST(CallDecoderTest, StreamAndEventCallsKeepTheirStreamAndEvent) {
  cudaEventRecord_v3020_params record{};
  record.event = reinterpret_cast<cudaEvent_t>(0x77);
  record.stream = reinterpret_cast<cudaStream_t>(0x99);
  const DecodedCall call = DecodeRuntimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, &record);
  EXPECT_EQ(call.event, reinterpret_cast<CUevent>(0x77));
  EXPECT_EQ(call.stream, reinterpret_cast<CUstream>(0x99));
}

TEST(CallDecoderTest, CaptureAndGraphCallsKeepModeGraphAndExec) {
  cudaStreamBeginCapture_v10000_params begin{};
  begin.stream = reinterpret_cast<cudaStream_t>(0x5);
  begin.mode = cudaStreamCaptureModeThreadLocal;
  EXPECT_EQ(DecodeRuntimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000, &begin).capture_mode,
            static_cast<int>(cudaStreamCaptureModeThreadLocal));
  cudaGraphLaunch_v10000_params launch{};
  launch.graphExec = reinterpret_cast<cudaGraphExec_t>(0x42);
  launch.stream = reinterpret_cast<cudaStream_t>(0x5);
  const DecodedCall replay = DecodeRuntimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, &launch);
  EXPECT_EQ(replay.exec, reinterpret_cast<CUgraphExec>(0x42));
  EXPECT_TRUE(replay.has_stream);
}

TEST(CallDecoderTest, OtherCallsDecodeToNothing) {
  const DecodedCall call = DecodeRuntimeCall(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, nullptr);
  EXPECT_FALSE(call.has_stream);
  EXPECT_EQ(call.bytes, 0u);
}

}  // namespace
}  // namespace graphcheck::capture
