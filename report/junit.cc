#include "report/junit.h"

#include <map>
#include <sstream>

#include <pugixml.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/utf8.h"
#include "report/limits.h"
#include "report/where.h"

namespace graphcheck {
namespace {

bool Fails(const Finding& f, FailOn fail_on) {
  switch (fail_on) {
    case FailOn::kError:
      return f.severity >= Severity::kError;
    case FailOn::kWarning:
      return f.severity >= Severity::kWarning;
    case FailOn::kNever:
      return false;
  }
  return false;
}

std::string Describe(const Finding& f) {
  std::vector<std::string> lines = {absl::StrCat(SeverityName(f.severity), ": ", f.message)};
  if (const SourceFrame* frame = FirstUserFrame(f.where)) lines.push_back(absl::StrCat("at: ", FrameText(*frame)));
  if (!f.where.file.empty()) lines.push_back(absl::StrCat("file: ", FileText(f.where)));
  if (!f.where.api.empty()) lines.push_back(absl::StrCat("call: ", f.where.api));
  for (const std::string& e : f.evidence) lines.push_back(absl::StrCat("- ", e));
  if (f.occurrences > 1) lines.push_back(absl::StrCat("seen ", f.occurrences, " times at this call site"));
  if (!f.fix.empty()) lines.push_back(absl::StrCat("fix: ", f.fix));
  // One line per field, as in the text report: a newline in the program's text cannot forge a line of the CI log.
  for (std::string& line : lines) line = LineText(line);
  return XmlSafeText(absl::StrJoin(lines, "\n"));
}

// The findings one after another, at most kMaxFindingsPerTestcase of them; a line counts the rest.
std::string DescribeAll(const std::vector<const Finding*>& findings) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < findings.size() && i < kMaxFindingsPerTestcase; ++i) parts.push_back(Describe(*findings[i]));
  if (findings.size() > kMaxFindingsPerTestcase) {
    parts.push_back(MoreFindingsLine(findings.size() - kMaxFindingsPerTestcase));
  }
  return absl::StrJoin(parts, "\n\n");
}

}  // namespace

std::string RenderJunit(const Report& report, FailOn fail_on) {
  std::map<std::string, std::vector<const Finding*>> by_check;
  for (const std::string& id : report.checks_run) by_check[id];
  for (const Finding& f : report.findings) by_check[f.check_id].push_back(&f);

  pugi::xml_document doc;
  pugi::xml_node decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  pugi::xml_node suites = doc.append_child("testsuites");
  pugi::xml_node suite = suites.append_child("testsuite");
  suite.append_attribute("name") = XmlSafeText(absl::StrCat("graphcheck ", report.mode)).c_str();
  int failures = 0;
  for (const auto& [id, findings] : by_check) {
    pugi::xml_node testcase = suite.append_child("testcase");
    testcase.append_attribute("classname") = XmlSafeText(absl::StrCat("graphcheck.", report.mode)).c_str();
    testcase.append_attribute("name") = XmlSafeText(id).c_str();
    std::vector<const Finding*> failing, passing;
    for (const Finding* f : findings) (Fails(*f, fail_on) ? failing : passing).push_back(f);
    if (!failing.empty()) {
      ++failures;
      pugi::xml_node failure = testcase.append_child("failure");
      failure.append_attribute("message") = XmlSafeText(findings.front()->title).c_str();
      failure.append_attribute("type") = XmlSafeText(id).c_str();
      failure.text() = DescribeAll(failing).c_str();
    }
    if (!passing.empty()) testcase.append_child("system-out").text() = DescribeAll(passing).c_str();
  }
  // A run that did not complete is an error of its own testcase, so that CI shows it even with no finding.
  const unsigned errors = report.incomplete ? 1 : 0;
  if (report.incomplete) {
    pugi::xml_node testcase = suite.append_child("testcase");
    testcase.append_attribute("classname") = XmlSafeText(absl::StrCat("graphcheck.", report.mode)).c_str();
    testcase.append_attribute("name") = "run-completed";
    pugi::xml_node error = testcase.append_child("error");
    error.append_attribute("message") = XmlSafeText(report.incomplete->reason).c_str();
    error.append_attribute("type") = absl::StrCat("exit ", report.incomplete->exit_code).c_str();
  }
  const unsigned tests = static_cast<unsigned>(by_check.size()) + errors;
  suite.append_attribute("tests") = tests;
  suite.append_attribute("failures") = failures;
  suite.append_attribute("errors") = errors;
  suites.append_attribute("tests") = tests;
  suites.append_attribute("failures") = failures;
  suites.append_attribute("errors") = errors;
  std::ostringstream out;
  doc.save(out, "  ", pugi::format_default, pugi::encoding_utf8);
  return out.str();
}

}  // namespace graphcheck
