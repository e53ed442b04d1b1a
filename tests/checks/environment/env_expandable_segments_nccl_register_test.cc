#include "checks/checks.h"
#include "checks/environment/allocator_conf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/checks/environment/env_checks_common.h"

namespace graphcheck::checks {
namespace {

using ::testing::HasSubstr;
using testing_env::Env;
using testing_env::RunOn;

const std::unique_ptr<Check> kCheckOwner = NewEnvExpandableSegmentsNcclRegisterCheck();
const Check& kCheck = *kCheckOwner;

TEST(EnvExpandableSegmentsNcclRegisterTest, FlagsExpandableSegmentsInAnyPosition) {
  for (const char* conf : {"expandable_segments:True", "garbage_collection_threshold:0.6,expandable_segments:True",
                           " max_split_size_mb:128 , expandable_segments : True ,roundup_power2_divisions:4"}) {
    auto findings = RunOn(kCheck, Env({{"PYTORCH_CUDA_ALLOC_CONF", conf}}));
    ASSERT_EQ(findings.size(), 1u) << conf;
    EXPECT_EQ(findings[0].check_id, "env-expandable-segments-nccl-register");
    EXPECT_EQ(findings[0].severity, Severity::kError);
    EXPECT_THAT(findings[0].fix, HasSubstr("NCCL_GRAPH_REGISTER=0"));
    EXPECT_THAT(findings[0].message, HasSubstr("Transformer Engine"));
  }
}

TEST(EnvExpandableSegmentsNcclRegisterTest, ReadsTheNewVariableNameToo) {
  auto findings =
      RunOn(kCheck, Env({{"PYTORCH_ALLOC_CONF", "expandable_segments:True"}, {"NCCL_GRAPH_REGISTER", "1"}}));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].where.key, "PYTORCH_ALLOC_CONF");
  EXPECT_THAT(findings[0].evidence, ::testing::Contains("NCCL_GRAPH_REGISTER=1"));
}

TEST(EnvExpandableSegmentsNcclRegisterTest, CleanWhenRegistrationIsOffOrSegmentsAreNot) {
  EXPECT_TRUE(
      RunOn(kCheck, Env({{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}, {"NCCL_GRAPH_REGISTER", "0"}}))
          .empty());
  EXPECT_TRUE(RunOn(kCheck, Env({{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:False"}})).empty());
  EXPECT_TRUE(RunOn(kCheck, Env({{"PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128"}})).empty());
  EXPECT_TRUE(RunOn(kCheck, Env({})).empty());
}

TEST(EnvExpandableSegmentsNcclRegisterTest, NotesTheComputeCapability) {
  Environment env = Env({{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}});
  env.set_gpu(GpuInfo{"NVIDIA B200", 10, 0, ""});
  auto findings = RunOn(kCheck, env);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].evidence.back(), HasSubstr("compute capability 10.0"));
  EXPECT_THAT(findings[0].evidence.back(), HasSubstr("Megatron Core's local path accepts it"));
}

TEST(AllocatorConfValueTest, LastOccurrenceWins) {
  EXPECT_EQ(AllocatorConfValue("a:1,expandable_segments:True,expandable_segments:False", "expandable_segments"),
            "False");
  EXPECT_EQ(AllocatorConfValue("a:1", "expandable_segments"), std::nullopt);
}

}  // namespace
}  // namespace graphcheck::checks
