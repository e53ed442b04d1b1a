#include "analysis/torch_ops.h"

#include <gtest/gtest.h>

namespace graphcheck::analysis {
namespace {

TEST(TorchOpsTest, MapsFramesToOperators) {
  EXPECT_EQ(TorchOpFromFrame("at::native::_local_scalar_dense_cuda(at::Tensor const&)"), "aten::_local_scalar_dense");
  EXPECT_EQ(TorchOpFromFrame("at::native::nonzero_cuda(at::Tensor const&)"), "aten::nonzero");
  EXPECT_EQ(TorchOpFromFrame("at::_ops::nonzero::call(at::Tensor const&)"), "aten::nonzero");
  EXPECT_EQ(TorchOpFromFrame("at::native::nonzero_out_cuda(at::Tensor const&, at::Tensor&)"), "aten::nonzero");
  EXPECT_EQ(TorchOpFromFrame("c10::cuda::CUDACachingAllocator::malloc"), "");
  EXPECT_EQ(TorchOpFromFrame("train.py:42 step"), "");
}

TEST(TorchOpsTest, PrefersTheInnermostDispatcherFrame) {
  EXPECT_EQ(TorchOpFromFrames({"cudaMemcpyAsync", "at::native::copy_kernel_cuda", "at::native::copy_impl",
                               "at::_ops::copy_::call", "at::_ops::_to_copy::call"}),
            "aten::copy_");
  EXPECT_EQ(TorchOpFromFrames({"at::native::nonzero_cuda"}), "aten::nonzero");
  EXPECT_EQ(TorchOpFromFrames({"main"}), "");
}

TEST(TorchOpsTest, SpellsSynchronizingOperatorsAsPythonUsersWriteThem) {
  EXPECT_NE(PythonSpelling("aten::_local_scalar_dense").find("Tensor.item()"), absl::string_view::npos);
  EXPECT_NE(PythonSpelling("aten::nonzero").find("torch.nonzero"), absl::string_view::npos);
  EXPECT_EQ(PythonSpelling("aten::add"), "");
}

TEST(TorchOpsTest, RecognisesLazyLibraryInitialisation) {
  EXPECT_EQ(LazyInitResource({"cudaMalloc", "at::cuda::getCurrentCUDABlasHandle()"}), "cuBLAS handle");
  EXPECT_EQ(LazyInitResource({"cudaMalloc", "at::native::getCudnnHandle()"}), "cuDNN handle");
  EXPECT_EQ(LazyInitResource({"cudaMalloc", "c10::cuda::CUDACachingAllocator::malloc"}), "");
}

}  // namespace
}  // namespace graphcheck::analysis
