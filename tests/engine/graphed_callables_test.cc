// MakeGraphedCallables' refusals, which come before any CUDA work and so run on any machine: each unsupported
// situation torch.cuda.make_graphed_callables rejects is a Status naming the callable and the reason.
#include "engine/graphed_callables.h"

#include <ATen/autocast_mode.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace graphcheck {
namespace {

using ::testing::HasSubstr;

Callable Linear() {
  Callable callable;
  callable.name = "linear";
  const at::Tensor weight = at::randn({4, 4}).requires_grad_();
  callable.forward = [weight](const std::vector<at::Tensor>& in) { return std::vector<at::Tensor>{in[0].mm(weight)}; };
  callable.parameters = {weight};
  return callable;
}

const std::vector<c10::IValue> kSample = {at::randn({2, 4})};

TEST(GraphedCallablesTest, RejectsNonTensorArguments) {
  absl::StatusOr<GraphedCallables> graphed = MakeGraphedCallables({Linear()}, {{at::randn({2, 4}), c10::IValue(3)}});
  ASSERT_FALSE(graphed.ok());
  EXPECT_EQ(graphed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(graphed.status().message(), HasSubstr("argument 1 of 'linear' is a Int"));
}

TEST(GraphedCallablesTest, RejectsModuleHooks) {
  Callable callable = Linear();
  callable.hooks = {"Block.log_activations (forward hook)"};
  absl::StatusOr<GraphedCallables> graphed = MakeGraphedCallables({callable}, {kSample});
  ASSERT_FALSE(graphed.ok());
  EXPECT_EQ(graphed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(graphed.status().message(), HasSubstr("log_activations"));
}

TEST(GraphedCallablesTest, RejectsBuffersThatRequireGrad) {
  Callable callable = Linear();
  callable.buffers = {at::zeros({4}), at::zeros({4}).requires_grad_()};
  absl::StatusOr<GraphedCallables> graphed = MakeGraphedCallables({callable}, {kSample});
  ASSERT_FALSE(graphed.ok());
  EXPECT_THAT(graphed.status().message(), HasSubstr("buffer (#1)"));
}

TEST(GraphedCallablesTest, RejectsAutocastWithItsCache) {
  at::autocast::set_autocast_enabled(at::kCUDA, true);
  at::autocast::set_autocast_cache_enabled(true);
  absl::StatusOr<GraphedCallables> graphed = MakeGraphedCallables({Linear()}, {kSample});
  at::autocast::set_autocast_enabled(at::kCUDA, false);
  ASSERT_FALSE(graphed.ok());
  EXPECT_EQ(graphed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(graphed.status().message(), HasSubstr("cache"));
}

TEST(GraphedCallablesTest, RejectsMismatchedSampleLists) {
  EXPECT_FALSE(MakeGraphedCallables({Linear(), Linear()}, {kSample}).ok());
  EXPECT_FALSE(MakeGraphedCallables({}, {}).ok());
  GraphOptions options;
  options.warmup_iterations = -1;
  EXPECT_FALSE(MakeGraphedCallables({Linear()}, {kSample}, options).ok());
}

}  // namespace
}  // namespace graphcheck
