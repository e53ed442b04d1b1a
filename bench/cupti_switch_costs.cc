// What each CUPTI switch the recorder flips costs a launch-bound step, and what it leaves behind once flipped back.
//
// usage: cupti_switch_costs MODE [SECONDS]
// Phase modes run each phase in ~0.1 s blocks for SECONDS (default 2) and print "phase NAME MEDIAN_US MIN_US" (us
// per step), in one process, so that the 5-13% by which identical processes differ does not hide a switch's cost
// (time drift within a process still does, by a few percent):
//   attach: the step runs unrecorded first; then CUPTI is subscribed and each switch turned on and off in turn,
//           then the launches learnt through CUPTI's activity API alone (runtime and driver API records, with and
//           without kernel records, no callback on launches) against the launch callbacks once more (issue 47's
//           "cheapest way to see launches"), and again the launch callbacks for the spread of one phase's figure.
//   early:  like `graphcheck run`: subscription, every recorded callback and kernel activity are on before the CUDA
//           context exists (the recorder's first window); then they are turned off in turn.
// Steady modes set their switches before the context exists, then run the step for SECONDS (default 10) like
// overhead_chain and print the same "us_per_step X", for bench/recorder_overhead.py to compare with unrecorded
// processes (its "cupti:MODE" variants):
//   idle:    subscribed, nothing enabled.
//   runtime, driver, others: the recorder's callbacks other than launches, of the runtime domain, the driver domain,
//            or both (others: the steady state of --capture-only).
//   closed-window: everything on, as in the recorder's first window, for 317 steps (20000 launches), then launches
//            and activity off: the steady state of the default, without the window's own cost.
//   launch-window: the same window without kernel activity (only launch callbacks are turned on and off).
//   finalized-window: the closed window, then CUPTI detached (activity flushed, unsubscribed, cuptiFinalize) and
//            attached again with the callbacks other than launches: whether a detach undoes what the window left.
//   recording: everything on for the whole run, as in a window that never closes: CUPTI's own cost while launches are
//            recorded, the floor under `graphcheck run --launches all`.
//   api-recording, api-driver-recording: the same launches learnt without a launch callback, through runtime API
//            records (and driver API records) beside the kernel records, for the whole run.
// The callbacks do nothing: this is CUPTI's own cost.
#include <cupti.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/chain_step.h"
#include "capture/cupti_subscription.h"

namespace graphcheck::bench {
namespace {

using capture::ActivityRecording;
using capture::CuptiSubscription;

void CUPTIAPI IgnoreCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

void CUPTIAPI GiveBuffer(uint8_t** buffer, size_t* size, size_t* max_records) {
  constexpr size_t kBytes = 4 << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBytes));
  *size = kBytes;
  *max_records = 0;
}

void CUPTIAPI DropBuffer(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) { std::free(buffer); }

using CallbackIds = std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>>;

// The recorder's callback ids, split as it toggles them: launches (only in windows and captures) and the rest, by
// domain.
struct CallbackSets {
  CallbackIds launches, runtime_others, driver_others;
};

CallbackSets RecorderCallbacks() {
  CallbackSets sets;
  for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    CallbackIds& others = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? sets.runtime_others : sets.driver_others;
    for (const capture::RecordedCallback& callback : capture::RecordedCallbacks(domain)) {
      (callback.kind == trace::ApiKind::kKernelLaunch ? sets.launches : others).emplace_back(domain, callback.cbid);
    }
  }
  return sets;
}

class Switches {
 public:
  Switches() : callbacks_(RecorderCallbacks()) {}

  void Subscribe() {
    std::string other;
    auto subscription = CuptiSubscription::Create(&IgnoreCallback, nullptr, &other);
    if (!subscription.ok()) Die(subscription.status());
    subscription_ = *std::move(subscription);
  }
  void Unsubscribe() { subscription_.reset(); }
  // Detaches CUPTI from the process: what it set up for the callbacks and activity enabled so far is torn down.
  void Finalize() {
    activity_.reset();  // flushes and disables the activity kinds
    Unsubscribe();
    if (absl::Status s = capture::CuptiStatus(cuptiFinalize(), "cuptiFinalize"); !s.ok()) Die(s);
  }
  void Launches(bool on) { Enable(callbacks_.launches, on); }
  void RuntimeOthers(bool on) { Enable(callbacks_.runtime_others, on); }
  void DriverOthers(bool on) { Enable(callbacks_.driver_others, on); }
  void Others(bool on) {
    RuntimeOthers(on);
    DriverOthers(on);
  }
  // The recorder's kernel, copy and set records.
  void Activity(bool on) {
    Toggle({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET}, on,
           &activity_);
  }
  // A record of every runtime API call (kind, thread, times, correlation id), and of every driver API call with
  // `driver`: what the launch callbacks learn, but the stack, delivered in buffers.
  void ApiActivity(bool on, bool driver) {
    if (driver) {
      Toggle({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER}, on, &api_activity_);
    } else {
      Toggle({CUPTI_ACTIVITY_KIND_RUNTIME}, on, &runtime_activity_);
    }
  }

 private:
  static void Die(const absl::Status& status) {
    std::fprintf(stderr, "cupti_switch_costs: %s\n", std::string(status.message()).c_str());
    std::exit(1);
  }
  static void Toggle(const std::vector<CUpti_ActivityKind>& kinds, bool on,
                     std::unique_ptr<ActivityRecording>* recording) {
    if (*recording == nullptr) {
      if (!on) return;
      auto created = ActivityRecording::Create(kinds, &GiveBuffer, &DropBuffer, 250);
      if (!created.ok()) Die(created.status());
      *recording = *std::move(created);
    } else if (absl::Status s = on ? (*recording)->Resume() : (*recording)->Pause(); !s.ok()) {
      Die(s);
    }
  }
  void Enable(const CallbackIds& set, bool on) {
    for (const auto& [domain, cbid] : set) {
      if (absl::Status s = subscription_->Enable(domain, cbid, on); !s.ok()) Die(s);
    }
  }

  CallbackSets callbacks_;
  std::unique_ptr<CuptiSubscription> subscription_;
  std::unique_ptr<ActivityRecording> activity_;
  std::unique_ptr<ActivityRecording> runtime_activity_;
  std::unique_ptr<ActivityRecording> api_activity_;
};

void Phase(ChainStep& step, const char* name, double seconds) {
  std::vector<double> us;
  long block_steps = 50;
  double total = 0;
  while (total < seconds) {
    const double elapsed = step.TimeBlock(block_steps);
    us.push_back(ChainStep::MicrosPerStep(elapsed, block_steps));
    total += elapsed;
    block_steps = ChainStep::NextBlockSteps(block_steps, elapsed, 0.1);
  }
  std::sort(us.begin(), us.end());
  std::printf("phase %-28s %8.2f %8.2f\n", name, us[us.size() / 2], us.front());
  std::fflush(stdout);
}

// The steady modes (see the file comment); false for an unknown mode.
bool RunSteady(const std::string& mode, double seconds) {
  const bool finalized = mode == "finalized-window";
  const bool activity_window = mode == "closed-window" || finalized;
  const bool window = activity_window || mode == "launch-window";
  const bool api_records = mode == "api-recording" || mode == "api-driver-recording";
  const bool recording = mode == "recording" || api_records;
  const bool runtime = mode == "runtime" || mode == "others" || window || recording;
  const bool driver = mode == "driver" || mode == "others" || window || recording;
  if (!runtime && !driver && mode != "idle") return false;
  Switches switches;
  switches.Subscribe();
  if (runtime) switches.RuntimeOthers(true);
  if (driver) switches.DriverOthers(true);
  if ((window || recording) && !api_records) switches.Launches(true);
  if (api_records) switches.ApiActivity(true, /*driver=*/mode == "api-driver-recording");
  if (activity_window || recording) switches.Activity(true);
  ChainStep step;
  if (window) {
    constexpr long kFirstWindowSteps = 20000 / 63;  // the default's first window: 20000 launches of 63 per step
    step.TimeBlock(kFirstWindowSteps);
    switches.Launches(false);
    if (activity_window) switches.Activity(false);
  }
  if (finalized) {
    switches.Finalize();
    switches.Subscribe();
    switches.Others(true);
  }
  step.RunTimed(seconds, /*print_blocks=*/false);
  return true;
}

int Main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const bool phases = mode == "attach" || mode == "early";
  const double seconds = argc > 2 ? std::atof(argv[2]) : phases ? 2 : 10;
  if (!phases) {
    if (RunSteady(mode, seconds)) return 0;
    std::fprintf(stderr,
                 "usage: cupti_switch_costs "
                 "attach|early|idle|runtime|driver|others|closed-window|launch-window|finalized-window|recording|"
                 "api-recording|api-driver-recording "
                 "[SECONDS]\n");
    return 2;
  }
  Switches switches;
  if (mode == "early") {  // before the context exists, as the injected recorder does
    switches.Subscribe();
    switches.Others(true);
    switches.Launches(true);
    switches.Activity(true);
  }
  ChainStep step;
  step.TimeBlock(20);
  auto phase = [&](const char* name) { Phase(step, name, seconds); };
  if (mode == "attach") {
    phase("unrecorded");
    switches.Subscribe();
    phase("subscribed");
    switches.Others(true);
    phase("+others (capture-only)");
    switches.Launches(true);
    phase("+launches");
    switches.Launches(false);
    phase("-launches");
    switches.Activity(true);
    phase("+activity");
    switches.Activity(false);
    phase("-activity");
    switches.Launches(true);
    switches.Activity(true);
    phase("+launches +activity");
    // The same launches without a launch callback: runtime (and driver) API records beside the kernel records.
    switches.Launches(false);
    switches.ApiActivity(true, /*driver=*/false);
    phase("runtime api +activity");
    switches.Activity(false);
    phase("runtime api alone");
    switches.ApiActivity(false, false);
    switches.ApiActivity(true, /*driver=*/true);
    switches.Activity(true);
    phase("runtime+driver api +activity");
    switches.ApiActivity(false, true);
    switches.Launches(true);
    phase("+launches +activity again");
  } else {
    phase("window (all on)");
  }
  switches.Launches(false);
  switches.Activity(false);
  phase("-launches -activity (default)");
  switches.Others(false);
  phase("-others");
  switches.Unsubscribe();
  phase("unsubscribed");
  switches.Subscribe();
  switches.Others(true);
  phase("+others again");
  return 0;
}

}  // namespace
}  // namespace graphcheck::bench

int main(int argc, char** argv) { return graphcheck::bench::Main(argc, argv); }
