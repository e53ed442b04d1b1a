// graphcheck-engine's command line: the flags `graphcheck check` passes become a typed plan, and a name the engine
// does not take is InvalidArgument naming its flag, before any model loads.
#include "engine/command_line.h"

#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace graphcheck {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<EngineCommand> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "graphcheck-engine");
  return ParseEngineCommandLine(static_cast<int>(args.size()), args.data());
}

TEST(EngineCommandLineTest, FlagsBecomeATypedPlan) {
  absl::StatusOr<EngineCommand> command =
      Parse({"builtin:mlp", "--optimizer", "adam", "--scope", "full-iteration", "--amp", "bf16", "--numerics", "native",
             "--warmup", "5", "--replays", "7", "--input", "x:8x16:float32", "--result", "out.json"});
  ASSERT_TRUE(command.ok()) << command.status();
  const CheckPlan& plan = command->plan;
  EXPECT_EQ(plan.model, "builtin:mlp");
  EXPECT_EQ(plan.optimizer, FusedOptimizer::Kind::kAdam);
  EXPECT_EQ(plan.scope, GraphScope::kFullIteration);
  EXPECT_EQ(plan.amp, Autocast::kBf16);
  EXPECT_FALSE(plan.deterministic);
  EXPECT_TRUE(plan.train);
  EXPECT_EQ(plan.warmup, 5);
  EXPECT_EQ(plan.steps, 7);
  ASSERT_EQ(plan.inputs.size(), 1u);
  EXPECT_EQ(plan.inputs[0].name, "x");
  EXPECT_EQ(command->result_path, "out.json");
}

TEST(EngineCommandLineTest, DefaultsAreSgdCallablesNoAutocastDeterministic) {
  absl::StatusOr<EngineCommand> command = Parse({"builtin:mlp", "--eval", "--result", "r.json"});
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_EQ(command->plan.optimizer, FusedOptimizer::Kind::kSgd);
  EXPECT_EQ(command->plan.scope, GraphScope::kCallables);
  EXPECT_EQ(command->plan.amp, Autocast::kOff);
  EXPECT_TRUE(command->plan.deterministic);
  EXPECT_FALSE(command->plan.train);
}

TEST(EngineCommandLineTest, UnknownNamesAreInvalidArgumentNamingTheFlag) {
  for (const auto& [flag, value] : std::vector<std::pair<const char*, const char*>>{
           {"--optimizer", "lamb"}, {"--scope", "moe"}, {"--amp", "fp8"}, {"--numerics", "fast"}}) {
    absl::StatusOr<EngineCommand> command = Parse({"builtin:mlp", flag, value, "--result", "r.json"});
    ASSERT_FALSE(command.ok()) << flag;
    EXPECT_EQ(command.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(command.status().message(), HasSubstr(flag));
    EXPECT_THAT(command.status().message(), HasSubstr(value));
  }
  EXPECT_THAT(Parse({"builtin:mlp", "--input", "x:8xq:float32", "--result", "r.json"}).status().code(),
              absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(Parse({"builtin:mlp"}).ok());  // --result is required
}

}  // namespace
}  // namespace graphcheck
