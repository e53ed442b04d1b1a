// The catalog: every built-in check registers, and every check has its doc page and every page its check.
#include "cli/catalog.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "cli/check_docs.h"

namespace graphcheck {
namespace {

TEST(CatalogTest, EveryCheckHasADocPageAndEveryPageACheck) {
  std::set<std::string> ids;
  for (const Check* check : BuiltinChecks().All()) {
    const CheckInfo& info = check->info();
    ids.insert(info.id);
    EXPECT_TRUE(std::filesystem::exists(std::string(GRAPHCHECK_SOURCE_DIR) + "/" + info.DocPage()))
        << "missing " << info.DocPage();
    EXPECT_EQ(CheckDocPages().count(info.id), 1u) << info.id << " page not embedded";
    EXPECT_FALSE(info.title.empty()) << info.id;
    EXPECT_FALSE(info.summary.empty()) << info.id;
  }
  for (const auto& [id, text] : CheckDocPages()) {
    EXPECT_EQ(ids.count(id), 1u) << "docs/checks/" << id << ".md documents no registered check";
    EXPECT_THAT(text, ::testing::HasSubstr("## Fix")) << id << " page has no '## Fix' section";
  }
}

}  // namespace
}  // namespace graphcheck
