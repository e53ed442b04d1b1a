// The catalog of built-in checks: every module's checks in one registry.
#ifndef GRAPHCHECK_CLI_CATALOG_H_
#define GRAPHCHECK_CLI_CATALOG_H_

#include "core/registry.h"

namespace graphcheck {

// Built once; registration errors are programming errors that the catalog test catches.
const CheckRegistry& BuiltinChecks();

}  // namespace graphcheck

#endif  // GRAPHCHECK_CLI_CATALOG_H_
