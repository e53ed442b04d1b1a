#include "cli/catalog.h"

#include <cstdio>
#include <cstdlib>

#include "analyzers/analyzer_checks.h"
#include "validators/config/config_checks.h"
#include "validators/engine/engine_checks.h"
#include "validators/environment_checks.h"

namespace graphcheck {

const CheckRegistry& BuiltinChecks() {
  static const CheckRegistry* const kRegistry = [] {
    auto* registry = new CheckRegistry();
    for (auto* register_module :
         {&RegisterAnalyzerChecks, &RegisterConfigurationChecks, &RegisterEnvironmentChecks, &RegisterEngineChecks}) {
      if (absl::Status status = register_module(registry); !status.ok()) {
        std::fprintf(stderr, "graphcheck: internal error: %s\n", status.ToString().c_str());
        std::abort();  // a duplicate or malformed check id is a build defect, caught by catalog_test
      }
    }
    return registry;
  }();
  return *kRegistry;
}

}  // namespace graphcheck
