// What each CUPTI switch the recorder flips costs a launch-bound step, and what it leaves behind once flipped back,
// measured in one process so that the 5-13% by which identical processes differ does not hide it.
//
// usage: cupti_switch_costs attach|early [PHASE_SECONDS]
//   attach: the step runs unrecorded first; then CUPTI is subscribed and each switch turned on and off in turn.
//   early:  like `graphcheck run`: subscription, every recorded callback and kernel activity are on before the CUDA
//           context exists (the recorder's first window); then they are turned off in turn.
// Each phase runs the step (bench/chain_step.h) in ~0.1 s blocks for PHASE_SECONDS (default 2) and prints
// "phase NAME MEDIAN_US_PER_STEP MIN_US_PER_STEP". The callbacks do nothing: this is CUPTI's own cost.
#include <cupti.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
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

// The recorder's callback ids, split as it toggles them: launches (only in windows and captures) and the rest.
struct CallbackSets {
  std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> launches, others;
};

CallbackSets RecorderCallbacks() {
  CallbackSets sets;
  for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    for (const capture::RecordedCallback& callback : capture::RecordedCallbacks(domain)) {
      auto& set = callback.kind == trace::ApiKind::kKernelLaunch ? sets.launches : sets.others;
      set.emplace_back(domain, callback.cbid);
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
  void Launches(bool on) { Enable(callbacks_.launches, on); }
  void Others(bool on) { Enable(callbacks_.others, on); }
  void Activity(bool on) {
    if (activity_ == nullptr) {
      auto activity = ActivityRecording::Create(
          {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET}, &GiveBuffer,
          &DropBuffer, 250);
      if (!activity.ok()) Die(activity.status());
      activity_ = *std::move(activity);
      if (!on) activity_->Pause();
    } else if (on) {
      activity_->Resume();
    } else {
      activity_->Pause();
    }
  }

 private:
  static void Die(const absl::Status& status) {
    std::fprintf(stderr, "cupti_switch_costs: %s\n", std::string(status.message()).c_str());
    std::exit(1);
  }
  void Enable(const std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>>& set, bool on) {
    for (const auto& [domain, cbid] : set) {
      if (absl::Status s = subscription_->Enable(domain, cbid, on); !s.ok()) Die(s);
    }
  }

  CallbackSets callbacks_;
  std::unique_ptr<CuptiSubscription> subscription_;
  std::unique_ptr<ActivityRecording> activity_;
};

void Phase(ChainStep& step, const char* name, double seconds) {
  std::vector<double> us;
  long block_steps = 50;
  double total = 0;
  while (total < seconds) {
    const double elapsed = step.TimeBlock(block_steps);
    us.push_back(elapsed / block_steps * 1e6);
    total += elapsed;
    block_steps = ChainStep::NextBlockSteps(block_steps, elapsed, 0.1);
  }
  std::sort(us.begin(), us.end());
  std::printf("phase %-28s %8.2f %8.2f\n", name, us[us.size() / 2], us.front());
  std::fflush(stdout);
}

int Main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const double seconds = argc > 2 ? std::atof(argv[2]) : 2;
  if (mode != "attach" && mode != "early") {
    std::fprintf(stderr, "usage: cupti_switch_costs attach|early [PHASE_SECONDS]\n");
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
