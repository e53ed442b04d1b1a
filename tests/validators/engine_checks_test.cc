// Registration of the engine checks: all land in a registry under their ids, read only what the engine measured,
// and a second registration is refused (ids are unique).
#include "validators/engine/engine_checks.h"

#include <gtest/gtest.h>

#include "core/engine_run.h"

namespace graphcheck {
namespace {

TEST(EngineChecksTest, RegistersTheEngineChecks) {
  CheckRegistry registry;
  ASSERT_TRUE(RegisterEngineChecks(&registry).ok());
  for (const char* id : {"numerics-forward", "numerics-grad", "numerics-loss", "numerics-nonfinite",
                         "pipeline-step-failed", "state-elided"}) {
    const Check* check = registry.Find(id);
    ASSERT_NE(check, nullptr) << id;
    CheckInputs without_engine;
    EXPECT_FALSE(check->CanRun(without_engine)) << id;
    const EngineRun run;
    CheckInputs with_engine;
    with_engine.engine = &run;
    EXPECT_TRUE(check->CanRun(with_engine)) << id;
  }
  EXPECT_FALSE(RegisterEngineChecks(&registry).ok());
}

}  // namespace
}  // namespace graphcheck
