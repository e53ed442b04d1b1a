// Deterministic replay of the fuzz target's path (parse, then every configuration / order check) over the lint
// fixtures and fixed-seed mutations of them, so the normal test run catches what the fuzzer would.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/match.h"
#include "fuzz/config_input.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphcheck::checks {
namespace {

struct Fixture {
  std::string name;
  std::string text;
  LintInputKind kind;
};

std::vector<Fixture> LoadFixtures() {
  std::vector<Fixture> fixtures;
  for (const auto& file :
       std::filesystem::directory_iterator(std::string(GRAPHCHECK_SOURCE_DIR) + "/tests/fixtures/lint")) {
    const std::string extension = file.path().extension().string();
    const LintInputKind kind = extension == ".yaml"   ? LintInputKind::kYaml
                               : extension == ".json" ? LintInputKind::kJson
                               : extension == ".txt"  ? LintInputKind::kOrder
                                                      : LintInputKind::kArgs;
    std::ifstream in(file.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    fixtures.push_back(Fixture{file.path().filename().string(), text.str(), kind});
  }
  std::sort(fixtures.begin(), fixtures.end(), [](const Fixture& a, const Fixture& b) { return a.name < b.name; });
  return fixtures;
}

// Bad input may only ever be a one-line InvalidArgument naming the input.
void ExpectParsesOrRejects(absl::string_view text, LintInputKind kind, const std::string& context) {
  const absl::Status status = LintInput(text, kind);
  if (status.ok()) return;
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << context << ": " << status;
  EXPECT_TRUE(absl::StartsWith(status.message(), "fuzz")) << context << ": " << status;
  EXPECT_FALSE(absl::StrContains(status.message(), '\n')) << context << ": " << status;
}

TEST(ConfigParserCorpusTest, FixturesParseOrAreRejectedWithAPosition) {
  const std::vector<Fixture> fixtures = LoadFixtures();
  ASSERT_GE(fixtures.size(), 8u);
  for (const Fixture& fixture : fixtures) {
    const absl::Status status = LintInput(fixture.text, fixture.kind);
    if (absl::StartsWith(fixture.name, "malformed")) {
      EXPECT_THAT(std::string(status.message()), ::testing::MatchesRegex("fuzz:[0-9]+:[0-9]+: .+")) << fixture.name;
    } else {
      EXPECT_TRUE(status.ok()) << fixture.name << ": " << status;
    }
  }
}

TEST(ConfigParserCorpusTest, TruncationsAndMutationsNeverCrash) {
  static constexpr char kInteresting[] = "[]{}:,\"'-#&*!|>\n\t\\0 .5e";
  for (const Fixture& fixture : LoadFixtures()) {
    for (size_t length = 0; length <= fixture.text.size(); ++length) {
      ExpectParsesOrRejects(absl::string_view(fixture.text).substr(0, length), fixture.kind,
                            fixture.name + " truncated to " + std::to_string(length));
    }
    std::mt19937 random(static_cast<uint32_t>(fixture.text.size()));
    for (int round = 0; round < 300; ++round) {
      std::string text = fixture.text;
      for (int edit = 0; edit < 1 + round % 4 && !text.empty(); ++edit) {
        const size_t at = random() % text.size();
        const char c =
            random() % 2 == 0 ? kInteresting[random() % (sizeof(kInteresting) - 1)] : static_cast<char>(random() % 256);
        switch (random() % 3) {
          case 0:
            text[at] = c;
            break;
          case 1:
            text.insert(text.begin() + at, c);
            break;
          default:
            text.erase(at, 1);
        }
      }
      ExpectParsesOrRejects(text, fixture.kind, fixture.name + " mutation " + std::to_string(round));
    }
  }
}

TEST(ConfigParserCorpusTest, DeepNestingIsRejected) {
  const std::string deep_json = std::string(5000, '[');
  EXPECT_FALSE(LintInput("{\"a\": " + deep_json, LintInputKind::kJson).ok());
  std::string deep_yaml;
  for (int i = 0; i < 200; ++i) deep_yaml += std::string(i * 2, ' ') + "k:\n";
  ExpectParsesOrRejects(deep_yaml, LintInputKind::kYaml, "deep yaml");
}

}  // namespace
}  // namespace graphcheck::checks
