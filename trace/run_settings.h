// The settings `graphcheck run` hands the program it records: one typed record, which cli/ fills once from its
// options, with one spelling in the environment (the variables below, the one table of their names). cli/ writes
// them (RunSettingsEnvironment); the recorder reads them back when the driver loads it (RunSettingsFromEnvironment),
// and the Python probe reads its three (python/probe/graphcheck_probe/settings.py, which
// tests/capture/probe_abi_test.py holds to these names). A length of time is an absl::Duration from the command line
// to the recorder; only the environment spells it in a unit, the one its variable's name ends in.
#ifndef GRAPHCHECK_TRACE_RUN_SETTINGS_H_
#define GRAPHCHECK_TRACE_RUN_SETTINGS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "trace/events.h"
#include "trace/launch_sampling.h"

namespace graphcheck::trace {

inline constexpr char kTraceDirVariable[] = "GRAPHCHECK_TRACE_DIR";
inline constexpr char kActivityVariable[] = "GRAPHCHECK_ACTIVITY";
inline constexpr char kLaunchesVariable[] = "GRAPHCHECK_LAUNCHES";
inline constexpr char kSamplingVariable[] = "GRAPHCHECK_SAMPLING";
inline constexpr char kStepRangeVariable[] = "GRAPHCHECK_STEP_RANGE";
inline constexpr char kHangTimeoutVariable[] = "GRAPHCHECK_HANG_TIMEOUT_MS";
inline constexpr char kShadowVariable[] = "GRAPHCHECK_SHADOW";
inline constexpr char kModuleCallsVariable[] = "GRAPHCHECK_MODULE_CALLS";

struct RunSettings {
  std::string trace_dir;  // where the trace files go; empty: the working directory
  // GPU activity records (kernel, memcpy and memset times); off keeps API calls and capture state (--no-activity). A
  // capture-only recording records none whatever this says.
  bool record_activity = true;
  LaunchRecording launches = LaunchRecording::kSampled;  // kernel launches outside captures (--launches)
  SamplingSchedule sampling;                             // --sampling
  std::string step_range;                                // the NVTX range of one step (--region)
  // --hang-timeout; zero: no bound. Whole milliseconds: the environment carries no finer.
  absl::Duration hang_timeout = absl::ZeroDuration();
  uint32_t shadow_calls = 0;  // --shadow N, read by the Python probe; 0: off
  // --plan: the outermost module calls the Python probe records with their input shapes (the first N); 0: off.
  uint32_t module_calls = 0;
};

// The variables that carry `settings` (defaults included, so a recorded program never inherits another run's).
std::map<std::string, std::string> RunSettingsEnvironment(const RunSettings& settings);

// What the environment carries; a variable that is not set keeps its default. InvalidArgument naming the variable and
// its value when one does not read as RunSettingsEnvironment writes it (set by hand): the recorder then does not start
// rather than record what was not asked for.
absl::StatusOr<RunSettings> RunSettingsFromEnvironment(const std::function<const char*(const char*)>& get_variable);

}  // namespace graphcheck::trace

#endif  // GRAPHCHECK_TRACE_RUN_SETTINGS_H_
