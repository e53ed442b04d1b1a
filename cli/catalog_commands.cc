#include "cli/catalog_commands.h"

#include <cstdio>
#include <memory>
#include <regex>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "cli/catalog.h"
#include "cli/check_docs.h"
#include "core/exit_code.h"
#include "core/metrics.h"

namespace graphcheck {
namespace {

int ListChecks(const std::string& format) {
  const std::vector<const Check*> checks = BuiltinChecks().All();
  if (format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const Check* check : checks) {
      const CheckInfo& info = check->info();
      nlohmann::json options = nlohmann::json::array();
      for (const CheckOption& o : info.options) {
        options.push_back({{"name", o.name}, {"default", o.default_value}, {"description", o.description}});
      }
      out.push_back({{"id", info.id},
                     {"title", info.title},
                     {"severity", std::string(SeverityName(info.default_severity))},
                     {"area", std::string(CheckAreaName(info.area))},
                     {"summary", info.summary},
                     {"doc", info.DocPage()},
                     {"options", options}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return kExitClean;
  }
  for (const Check* check : checks) {
    const CheckInfo& info = check->info();
    std::printf("%-42s %-8s %-14s %s\n", info.id.c_str(), std::string(SeverityName(info.default_severity)).c_str(),
                std::string(CheckAreaName(info.area)).c_str(), info.title.c_str());
  }
  return kExitClean;
}

// The metric catalogue (core/metrics.h), for scripts that read reports (the Python benchmarks): each metric's name,
// unit, which way it improves, whether it is also reported per maker of graphs (NAME.ORIGIN) and what it measures.
int ListMetrics(const std::string& format) {
  if (format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const metric::Spec* spec : metric::All()) {
      out.push_back({{"name", spec->name},
                     {"unit", spec->unit},
                     {"better", spec->better == metric::Better::kHigher ? "higher" : "lower"},
                     {"by_origin", spec->by_origin},
                     {"description", spec->description}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return kExitClean;
  }
  for (const metric::Spec* spec : metric::All()) {
    std::printf("%-48s %-6s %-6s %s\n", spec->name, spec->unit,
                spec->better == metric::Better::kHigher ? "higher" : "lower", spec->description);
  }
  return kExitClean;
}

// The plain text of a check's Markdown page, for a terminal: headings underlined, code blocks indented, and no
// emphasis, backticks or link syntax left (a link keeps its address in parentheses).
std::string PlainText(const std::string& markdown) {
  static const std::regex kLink(R"(\[([^\]]*)\]\(([^)]*)\))");
  static const std::regex kEmphasis(R"(\*\*([^*]+)\*\*)");
  std::string out;
  bool in_code = false;
  for (absl::string_view line : absl::StrSplit(markdown, '\n')) {
    if (absl::StartsWith(line, "```")) {
      in_code = !in_code;
      continue;
    }
    if (in_code) {
      absl::StrAppend(&out, "    ", line, "\n");
      continue;
    }
    std::string text = std::regex_replace(std::string(line), kLink, "$1 ($2)");
    text = std::regex_replace(text, kEmphasis, "$1");
    text = absl::StrReplaceAll(text, {{"`", ""}});
    const size_t hashes = text.find_first_not_of('#');
    if (hashes != std::string::npos && hashes > 0 && text[hashes] == ' ') {
      const std::string heading = text.substr(hashes + 1);
      absl::StrAppend(&out, heading, "\n", std::string(heading.size(), hashes == 1 ? '=' : '-'), "\n");
      continue;
    }
    absl::StrAppend(&out, text, "\n");
  }
  return out;
}

int Explain(const std::string& id, const std::string& format) {
  const Check* check = BuiltinChecks().Find(id);
  if (check == nullptr) {
    return FailWith(absl::NotFoundError(absl::StrCat("unknown check id '", id, "' (see graphcheck list-checks)")));
  }
  const CheckInfo& info = check->info();
  std::printf("%s: %s\nseverity: %s, area: %s\n", info.id.c_str(), info.title.c_str(),
              std::string(SeverityName(info.default_severity)).c_str(), std::string(CheckAreaName(info.area)).c_str());
  for (const CheckOption& o : info.options) {
    std::printf("option %s (default '%s'): %s\n", o.name.c_str(), o.default_value.c_str(), o.description.c_str());
  }
  auto page = CheckDocPages().find(id);
  const std::string text = page == CheckDocPages().end() ? info.summary + "\n"
                           : format == "markdown"        ? page->second
                                                         : PlainText(page->second);
  std::printf("\n%s", text.c_str());
  return kExitClean;
}

}  // namespace

void AddListChecksCommand(CLI::App* app, CommandContext* context) {
  auto format = std::make_shared<std::string>("text");
  CLI::App* command = app->add_subcommand("list-checks", "List every check with its id, severity and area");
  command->add_option("--format", *format, "text or json")->check(CLI::IsMember({"text", "json"}));
  command->callback([format, context] { context->exit_code = ListChecks(*format); });
}

void AddListMetricsCommand(CLI::App* app, CommandContext* context) {
  auto format = std::make_shared<std::string>("text");
  CLI::App* command =
      app->add_subcommand("list-metrics", "List every metric a report can carry: name, unit, which way it improves");
  command->add_option("--format", *format, "text or json")->check(CLI::IsMember({"text", "json"}));
  command->callback([format, context] { context->exit_code = ListMetrics(*format); });
}

void AddExplainCommand(CLI::App* app, CommandContext* context) {
  auto id = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("text");
  CLI::App* command = app->add_subcommand("explain", "Explain a check: what it means, why, and how to fix it");
  command->add_option("ID", *id, "Check id")->required();
  command->add_option("--format", *format, "text (default: plain text) or markdown (the page docs/checks/ID.md)")
      ->check(CLI::IsMember({"text", "markdown"}));
  command->callback([id, format, context] { context->exit_code = Explain(*id, *format); });
}

}  // namespace graphcheck
