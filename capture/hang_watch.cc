#include "capture/hang_watch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <utility>

namespace graphcheck::capture {
namespace {

// The slot this thread claimed, per watch (a process has one; tests make several). A watch is known by its serial,
// not its address: a watch made where a destroyed one was must not inherit that one's claims.
struct ClaimedSlot {
  uint64_t watch = 0;
  void* slot = nullptr;
};
thread_local ClaimedSlot t_claimed;
std::atomic<uint64_t> g_last_serial{0};

}  // namespace

HangWatch::HangWatch(uint64_t timeout_ns, std::function<void(const Wait&)> on_hang)
    : serial_(++g_last_serial), timeout_ns_(timeout_ns), on_hang_(std::move(on_hang)) {}

HangWatch::~HangWatch() { StopWatcher(); }

void HangWatch::StopWatcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_signal_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

HangWatch::Slot* HangWatch::SlotOfThisThread() {
  if (t_claimed.watch == serial_) return static_cast<Slot*>(t_claimed.slot);  // null: this thread is not watched
  int index = slots_used_.load(std::memory_order_relaxed);
  do {
    if (index >= kMaxThreads) {
      t_claimed = {serial_, nullptr};
      return nullptr;
    }
  } while (!slots_used_.compare_exchange_weak(index, index + 1, std::memory_order_relaxed));
  t_claimed = {serial_, &slots_[index]};
  return &slots_[index];
}

void HangWatch::Enter(const Wait& wait) {
  Slot* slot = SlotOfThisThread();
  if (slot == nullptr || slot->depth++ > 0) return;
  slot->thread_id.store(wait.thread_id, std::memory_order_relaxed);
  slot->call.store(wait.call, std::memory_order_relaxed);
  slot->call_name.store(wait.call_name, std::memory_order_relaxed);
  slot->stream_id.store(wait.stream_id, std::memory_order_relaxed);
  slot->last_graph_id.store(wait.last_graph_id, std::memory_order_relaxed);
  slot->python_stack.store(wait.python_stack, std::memory_order_relaxed);
  slot->since_ns.store(wait.since_ns == 0 ? 1 : wait.since_ns, std::memory_order_release);
}

void HangWatch::Exit() {
  if (t_claimed.watch != serial_ || t_claimed.slot == nullptr) return;
  Slot* slot = static_cast<Slot*>(t_claimed.slot);
  if (slot->depth == 0 || --slot->depth > 0) return;
  slot->since_ns.store(0, std::memory_order_release);
}

bool HangWatch::Poll(uint64_t now_ns) {
  if (fired_.load(std::memory_order_relaxed)) return false;
  const int used = slots_used_.load(std::memory_order_relaxed);
  for (int i = 0; i < used; ++i) {
    Slot& slot = slots_[i];
    const uint64_t since = slot.since_ns.load(std::memory_order_acquire);
    if (since == 0 || now_ns < since || now_ns - since < timeout_ns_) continue;
    if (fired_.exchange(true)) return false;
    Wait wait;
    wait.since_ns = since;
    wait.thread_id = slot.thread_id.load(std::memory_order_relaxed);
    wait.call = slot.call.load(std::memory_order_relaxed);
    wait.call_name = slot.call_name.load(std::memory_order_relaxed);
    wait.stream_id = slot.stream_id.load(std::memory_order_relaxed);
    wait.last_graph_id = slot.last_graph_id.load(std::memory_order_relaxed);
    wait.python_stack = slot.python_stack.load(std::memory_order_relaxed);
    on_hang_(wait);
    return true;
  }
  return false;
}

void HangWatch::StartWatcher(uint64_t (*now)(), int period_ms) {
  watcher_ = std::thread([this, now, period_ms] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_signal_.wait_for(lock, std::chrono::milliseconds(period_ms), [this] { return stop_; })) {
      lock.unlock();
      Poll(now());
      lock.lock();
    }
  });
}

}  // namespace graphcheck::capture
