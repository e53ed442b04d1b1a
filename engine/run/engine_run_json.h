// The engine's result file: `graphcheck check` runs the engine as a child process, which writes its EngineRun in
// this form, and reads it back. Not a user-facing format: the report (report/json.h) is.
#ifndef GRAPHCHECK_ENGINE_RUN_ENGINE_RUN_JSON_H_
#define GRAPHCHECK_ENGINE_RUN_ENGINE_RUN_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/run/engine_run.h"

namespace graphcheck {

// Bump the major number on an incompatible change; readers reject other majors.
inline constexpr char kEngineRunSchema[] = "graphcheck.engine-run/2";
std::string EngineRunToJson(const EngineRun& run);
// InvalidArgument naming what is wrong (not JSON; another schema; a missing or mistyped field).
absl::StatusOr<EngineRun> EngineRunFromJson(absl::string_view text);

}  // namespace graphcheck

#endif  // GRAPHCHECK_ENGINE_RUN_ENGINE_RUN_JSON_H_
