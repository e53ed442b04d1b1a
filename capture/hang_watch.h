// The recorder's hang watch (`graphcheck run --hang-timeout`): a thread entering a synchronizing CUDA call or a graph
// launch (which blocks once the GPU's queue is full), or a wait the Python probe announces (destroy_process_group, a
// barrier, a collective, a thread join), marks its slot with when and what it waits on, and clears it on return; a
// watcher thread polls the slots and, for the first wait older than the bound, calls back once (the recorder writes
// where the thread waited and ends the process). A hang inside a replayed graph's collective shows on the host only as
// a synchronize or a graph launch that never returns, so the bound is on those waits. Enter and Exit are a few relaxed
// stores (the recorder adds the call's stream and Python stack, on those calls only, and only under --hang-timeout). No
// CUDA here: tested on a CPU.
#ifndef GRAPHCHECK_CAPTURE_HANG_WATCH_H_
#define GRAPHCHECK_CAPTURE_HANG_WATCH_H_

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace graphcheck::capture {

class HangWatch {
 public:
  // What a waiting thread marked.
  struct Wait {
    uint32_t thread_id = 0;
    uint32_t call = 0;                // the call's name (a trace string id)
    const char* call_name = nullptr;  // and its text (CUPTI's, a static string)
    uint64_t stream_id = 0;
    uint32_t last_graph_id = 0;
    uint32_t python_stack = 0;
    uint64_t since_ns = 0;
  };
  // Threads beyond this many are not watched (their waits are not bounded).
  static constexpr int kMaxThreads = 1024;

  HangWatch(uint64_t timeout_ns, std::function<void(const Wait&)> on_hang);
  ~HangWatch();  // stops the watcher
  HangWatch(const HangWatch&) = delete;
  HangWatch& operator=(const HangWatch&) = delete;
  uint64_t timeout_ns() const { return timeout_ns_; }

  // The calling thread begins (`wait.since_ns` set) or ends a wait. Lock-free. Waits nest (a synchronize inside
  // destroy_process_group): the outermost one is watched until it ends.
  void Enter(const Wait& wait);
  void Exit();
  // Calls back for the first wait older than the timeout at `now_ns` and returns true; at most once per watch.
  bool Poll(uint64_t now_ns);
  // Polls every `period_ms` on a thread of its own, with `now` as the clock, until StopWatcher (or destruction).
  void StartWatcher(uint64_t (*now)(), int period_ms);
  // Stops and joins the watcher; Enter and Exit stay safe to call (callbacks may still arrive at exit).
  void StopWatcher();

 private:
  struct Slot {
    std::atomic<uint64_t> since_ns{0};  // 0: not waiting
    std::atomic<uint32_t> thread_id{0};
    std::atomic<uint32_t> call{0};
    std::atomic<const char*> call_name{nullptr};
    std::atomic<uint64_t> stream_id{0};
    std::atomic<uint32_t> last_graph_id{0};
    std::atomic<uint32_t> python_stack{0};
    int depth = 0;  // waits open on the owning thread (only it reads and writes this)
  };
  Slot* SlotOfThisThread();

  const uint64_t serial_;  // which watch a thread's claimed slot is of (hang_watch.cc)
  const uint64_t timeout_ns_;
  const std::function<void(const Wait&)> on_hang_;
  std::array<Slot, kMaxThreads> slots_;
  std::atomic<int> slots_used_{0};
  std::atomic<bool> fired_{false};
  std::mutex mutex_;
  std::condition_variable stop_signal_;
  bool stop_ = false;
  std::thread watcher_;
};

}  // namespace graphcheck::capture

#endif  // GRAPHCHECK_CAPTURE_HANG_WATCH_H_
