// Tests of CUPTI callback-name normalization and classification.
#include "trace/api_names.h"

#include <gtest/gtest.h>

namespace graphcheck::trace {
namespace {

TEST(ApiNamesTest, StripsVersionAndPerThreadSuffixes) {
  EXPECT_EQ(NormalizeApiName("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(NormalizeApiName("cudaMemcpyAsync_ptsz_v7000"), "cudaMemcpyAsync");
  EXPECT_EQ(NormalizeApiName("cuMemAlloc_v2"), "cuMemAlloc");
  EXPECT_EQ(NormalizeApiName("cuStreamBeginCapture_v2_ptsz"), "cuStreamBeginCapture");
  EXPECT_EQ(NormalizeApiName("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(NormalizeApiName("cudaMemcpy2D_v3020"), "cudaMemcpy2D");  // a digit inside the name stays
}

TEST(ApiNamesTest, ClassifiesRuntimeAndDriverCalls) {
  EXPECT_EQ(ApiKindForName("cudaLaunchKernel"), ApiKind::kKernelLaunch);
  EXPECT_EQ(ApiKindForName("cuLaunchKernelEx"), ApiKind::kKernelLaunch);
  EXPECT_EQ(ApiKindForName("cudaStreamBeginCapture"), ApiKind::kCaptureBegin);
  EXPECT_EQ(ApiKindForName("cuCtxSynchronize"), ApiKind::kDeviceSynchronize);
  EXPECT_EQ(ApiKindForName("cudaMallocAsync"), ApiKind::kMallocAsync);
  EXPECT_EQ(ApiKindForName("cudaGetDevice"), std::nullopt);  // not subscribed: cheap and irrelevant
}

TEST(ApiNamesTest, SynchronizingKinds) {
  EXPECT_TRUE(IsSynchronizing(ApiKind::kStreamSynchronize));
  EXPECT_TRUE(IsSynchronizing(ApiKind::kMemcpy));
  EXPECT_FALSE(IsSynchronizing(ApiKind::kMemcpyAsync));
  EXPECT_FALSE(IsSynchronizing(ApiKind::kKernelLaunch));
}

}  // namespace
}  // namespace graphcheck::trace
