// The catalogue of built-in checks: every check's factory in one list (catalog.cc), and the registry built from it.
#ifndef GRAPHCHECK_CLI_CATALOG_H_
#define GRAPHCHECK_CLI_CATALOG_H_

#include <memory>
#include <vector>

#include "core/registry.h"

namespace graphcheck {

// A new instance of every built-in check, in catalogue order.
std::vector<std::unique_ptr<Check>> NewBuiltinChecks();

// Built once; registration errors are programming errors that the catalog test catches.
const CheckRegistry& BuiltinChecks();

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_CATALOG_H_
