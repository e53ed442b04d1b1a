// The check documentation pages (docs/checks/<id>.md), embedded at build time.
#ifndef GRAPHCHECK_CLI_CHECK_DOCS_H_
#define GRAPHCHECK_CLI_CHECK_DOCS_H_

#include <map>
#include <string>

namespace graphcheck {

// id -> Markdown text of docs/checks/<id>.md.
const std::map<std::string, std::string>& CheckDocPages();

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_CHECK_DOCS_H_
