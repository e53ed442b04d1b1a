// The settings `graphcheck run` hands the program it records, one typed record with one spelling: the environment
// variables below, which cli/ writes (RunSettingsEnvironment), the recorder reads when the driver loads it
// (RunSettingsFromEnvironment) and the Python probe reads too (python/probe/graphcheck_probe/settings.py, which
// tests/capture/probe_abi_test.py holds to these names).
#ifndef GRAPHCHECK_TRACE_RUN_SETTINGS_H_
#define GRAPHCHECK_TRACE_RUN_SETTINGS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

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
  // GPU activity records (kernel, memcpy and memset times); off keeps API calls and capture state (--no-activity).
  bool record_activity = true;
  LaunchRecording launches = LaunchRecording::kSampled;  // kernel launches outside captures (--launches)
  SamplingSchedule sampling;                             // --sampling
  std::string step_range;                                // the NVTX range of one step (--region)
  uint64_t hang_timeout_ms = 0;                          // --hang-timeout; 0: no bound
  uint32_t shadow_calls = 0;                             // --shadow N, read by the Python probe; 0: off
  // --plan: the outermost module calls the Python probe records with their input shapes (the first N); 0: off.
  uint32_t module_calls = 0;
};

// The variables that carry `settings` (defaults included, so a recorded program never inherits another run's).
std::map<std::string, std::string> RunSettingsEnvironment(const RunSettings& settings);

// What the environment carries. `graphcheck run` validated the values; a value set by hand that does not parse keeps
// the default, so the recorder never stops the program over a setting.
RunSettings RunSettingsFromEnvironment(const std::function<const char*(const char*)>& get_variable);

}  // namespace graphcheck::trace

#endif  // GRAPHCHECK_TRACE_RUN_SETTINGS_H_
