// The LibTorch edge: exceptions become a one-line Status, TorchScript interpreter errors keep their reason.
#include "engine/torch_edge.h"

#include <stdexcept>

#include <c10/util/Exception.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace graphcheck {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(TorchEdgeTest, ExceptionsBecomeOneLineStatuses) {
  EXPECT_TRUE(CallTorch("nothing", [] {}).ok());
  const absl::Status c10_error = CallTorch("step", [] { TORCH_CHECK(false, "shapes do not match"); });
  EXPECT_EQ(c10_error.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(c10_error.message(), HasSubstr("step: shapes do not match"));
  EXPECT_THAT(c10_error.message(), Not(HasSubstr("\n")));
  EXPECT_EQ(CallTorch("load", [] { throw std::runtime_error("disk\nmore"); }).message(), "load: disk");
}

TEST(TorchEdgeTest, TorchScriptErrorsKeepTheirReason) {
  const absl::Status status = CallTorch("step", [] {
    throw std::runtime_error(
        "The following operation failed in the TorchScript interpreter.\nTraceback of TorchScript (most recent call "
        "last):\n  File \"code/__torch__.py\", line 10\nRuntimeError: mat1 and mat2 shapes cannot be multiplied\n");
  });
  EXPECT_EQ(status.message(), "step: RuntimeError: mat1 and mat2 shapes cannot be multiplied");
}

}  // namespace
}  // namespace graphcheck
