// Test helpers for the configuration checks: run one check over configuration text and match findings by id, file,
// line and key.
#ifndef GRAPHCHECK_TESTS_CHECKS_CONFIG_CONFIG_CHECK_TEST_UTIL_H_
#define GRAPHCHECK_TESTS_CHECKS_CONFIG_CONFIG_CHECK_TEST_UTIL_H_

#include <ostream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "checks/config/config_parser.h"
#include "core/check.h"

namespace graphcheck::checks {

// Readable findings in failure messages.
inline void PrintTo(const Finding& finding, std::ostream* os) {
  *os << finding.check_id << " at " << finding.where.file << ":" << finding.where.line << ":" << finding.where.column
      << " key " << finding.where.key << ": " << finding.message;
}

namespace testing_util {

// The file name configuration text is parsed under, as findings report it.
inline const char* FileFor(ConfigFormat format) {
  switch (format) {
    case ConfigFormat::kYaml:
      return "train.yaml";
    case ConfigFormat::kJson:
      return "train.json";
    case ConfigFormat::kArgs:
      return "launch.sh";
  }
  return "";
}

inline std::vector<Finding> RunConfigCheck(const Check& check, const std::string& text,
                                           ConfigFormat format = ConfigFormat::kYaml,
                                           const CheckOptions& options = CheckOptions()) {
  absl::StatusOr<ConfigDocument> document = ParseConfigText(text, FileFor(format), format);
  EXPECT_TRUE(document.ok()) << document.status();
  if (!document.ok()) return {};
  CheckInputs inputs;
  inputs.Add(*document);
  std::vector<Finding> findings;
  EXPECT_TRUE(check.CanRun(inputs));
  check.Run(inputs, BoundOptions(check.info(), options), &findings);
  return findings;
}

MATCHER_P4(FindingAt, id, file, line, key,
           ::testing::PrintToString(id) + " at " + ::testing::PrintToString(file) + ":" +
               ::testing::PrintToString(line) + " key " + ::testing::PrintToString(key)) {
  *result_listener << "got " << arg.check_id << " at " << arg.where.file << ":" << arg.where.line << " key "
                   << arg.where.key << ": " << arg.message;
  return arg.check_id == id && arg.where.file == file && arg.where.line == line && arg.where.key == key &&
         !arg.message.empty() && !arg.fix.empty();
}

// The values of a configuration entry as written.
inline std::vector<std::string> Texts(const ConfigEntry& entry) {
  std::vector<std::string> texts;
  for (const ConfigScalar& value : entry.values) texts.push_back(value.text);
  return texts;
}

}  // namespace testing_util
}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_TESTS_CHECKS_CONFIG_CONFIG_CHECK_TEST_UTIL_H_
