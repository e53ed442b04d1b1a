// The table of CUDA stream-capture error codes (900-910): names, and the check each one points to.
#include "analysis/capture_error_table.h"

#include <gtest/gtest.h>

namespace graphcheck {
namespace {

TEST(CaptureErrorsTest, KnowsEveryCaptureErrorCode) {
  for (int32_t code = 900; code <= 910; ++code) {
    const analysis::CaptureErrorCode* error = analysis::FindCaptureError(code);
    ASSERT_NE(error, nullptr) << code;
    EXPECT_EQ(error->code, code);
    EXPECT_FALSE(error->fix.empty()) << code;
  }
  EXPECT_EQ(analysis::FindCaptureError(899), nullptr);
  EXPECT_EQ(analysis::DescribeReturnCode(904), "904 cudaErrorStreamCaptureUnjoined");
  EXPECT_EQ(analysis::DescribeReturnCode(906), "906 cudaErrorStreamCaptureImplicit");
  EXPECT_EQ(analysis::DescribeReturnCode(2), "error 2");
}

}  // namespace
}  // namespace graphcheck
