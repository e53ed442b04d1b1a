// The configuration document: lookups with dialect defaults, format by file extension.
#include "checks/config/config_parser.h"

#include "checks/config/config_keys.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphcheck::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;

TEST(ConfigDocumentTest, LookupFallsBackToTheDialectsDefault) {
  absl::StatusOr<ConfigDocument> bridge = ParseConfigText("model: {}\n", "a.yaml", ConfigFormat::kYaml);
  ASSERT_TRUE(bridge.ok());
  const Setting loss = Lookup(*bridge, config_keys::kCheckForNanInLoss);
  EXPECT_FALSE(loss.is_set());
  EXPECT_EQ(loss.AsBool(), true);
  EXPECT_EQ(loss.key, "rerun_state_machine.check_for_nan_in_loss");
  EXPECT_FALSE(Lookup(ParseArgumentList({}), config_keys::kRngTeRngTracker).applicable);
}

TEST(ConfigDocumentTest, FormatFollowsTheExtension) {
  EXPECT_EQ(ConfigFormatForPath("a/b.YAML"), ConfigFormat::kYaml);
  EXPECT_EQ(ConfigFormatForPath("b.yml"), ConfigFormat::kYaml);
  EXPECT_EQ(ConfigFormatForPath("b.json"), ConfigFormat::kJson);
  EXPECT_EQ(ConfigFormatForPath("run.sh"), ConfigFormat::kArgs);
}

}  // namespace
}  // namespace graphcheck::checks
