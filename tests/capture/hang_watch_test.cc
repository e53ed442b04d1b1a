// The recorder's hang watch on a CPU: a wait older than the bound fires once, with what the thread marked; waits that
// ended or are younger do not; the watcher thread fires on its own.
#include "capture/hang_watch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace graphcheck::capture {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

HangWatch::Wait WaitAt(uint64_t since_ns, uint32_t thread_id) {
  HangWatch::Wait wait;
  wait.thread_id = thread_id;
  wait.call = 3;
  wait.call_name = "cudaStreamSynchronize";
  wait.stream_id = 7;
  wait.last_graph_id = 12;
  wait.python_stack = 2;
  wait.since_ns = since_ns;
  return wait;
}

TEST(HangWatchTest, AWaitOlderThanTheBoundFiresOnceWithWhatWasMarked) {
  std::vector<HangWatch::Wait> fired;
  HangWatch watch(30 * kSecond, [&](const HangWatch::Wait& w) { fired.push_back(w); });
  watch.Enter(WaitAt(100 * kSecond, 41));
  EXPECT_FALSE(watch.Poll(129 * kSecond));  // 29 s: within the bound
  EXPECT_TRUE(watch.Poll(131 * kSecond));
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].thread_id, 41u);
  EXPECT_EQ(fired[0].since_ns, 100 * kSecond);
  EXPECT_EQ(fired[0].stream_id, 7u);
  EXPECT_EQ(fired[0].last_graph_id, 12u);
  EXPECT_STREQ(fired[0].call_name, "cudaStreamSynchronize");
  EXPECT_FALSE(watch.Poll(200 * kSecond));  // once per watch
  EXPECT_EQ(fired.size(), 1u);
}

TEST(HangWatchTest, AnEndedWaitDoesNotFire) {
  int fired = 0;
  HangWatch watch(kSecond, [&](const HangWatch::Wait&) { ++fired; });
  watch.Enter(WaitAt(10 * kSecond, 1));
  watch.Exit();
  EXPECT_FALSE(watch.Poll(100 * kSecond));
  watch.Exit();  // an exit without a wait is harmless
  EXPECT_EQ(fired, 0);
}

// A synchronize inside destroy_process_group: the outer wait, announced first, is the one watched, until it ends.
TEST(HangWatchTest, NestedWaitsKeepTheOutermost) {
  std::vector<HangWatch::Wait> fired;
  HangWatch watch(30 * kSecond, [&](const HangWatch::Wait& w) { fired.push_back(w); });
  HangWatch::Wait outer = WaitAt(100 * kSecond, 41);
  outer.call = 9;
  watch.Enter(outer);
  watch.Enter(WaitAt(110 * kSecond, 41));
  watch.Exit();  // the synchronize returned; the teardown goes on waiting
  EXPECT_TRUE(watch.Poll(131 * kSecond));
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].call, 9u);
  EXPECT_EQ(fired[0].since_ns, 100 * kSecond);
  HangWatch ended(30 * kSecond, [&](const HangWatch::Wait& w) { fired.push_back(w); });
  ended.Enter(outer);
  ended.Enter(WaitAt(110 * kSecond, 41));
  ended.Exit();
  ended.Exit();
  EXPECT_FALSE(ended.Poll(200 * kSecond));
}

TEST(HangWatchTest, EachThreadHasItsOwnSlot) {
  std::vector<uint32_t> fired;
  HangWatch watch(kSecond, [&](const HangWatch::Wait& w) { fired.push_back(w.thread_id); });
  watch.Enter(WaitAt(10 * kSecond, 1));  // this thread's wait ends; the other thread's goes on
  std::thread other([&] { watch.Enter(WaitAt(10 * kSecond, 2)); });
  other.join();
  watch.Exit();
  EXPECT_TRUE(watch.Poll(20 * kSecond));
  EXPECT_EQ(fired, std::vector<uint32_t>{2});
}

TEST(HangWatchTest, ThreadsBeyondTheSlotsAreNotWatched) {
  int fired = 0;
  HangWatch watch(kSecond, [&](const HangWatch::Wait&) { ++fired; });
  std::vector<std::thread> threads;
  for (int i = 0; i < HangWatch::kMaxThreads; ++i) {
    threads.emplace_back([&] {
      watch.Enter(WaitAt(100 * kSecond, 1));
      watch.Exit();
    });
    threads.back().join();
  }
  watch.Enter(WaitAt(10 * kSecond, 2));  // one thread too many: no slot, no bound, no crash
  watch.Enter(WaitAt(10 * kSecond, 2));
  watch.Exit();
  EXPECT_FALSE(watch.Poll(50 * kSecond));
  EXPECT_EQ(fired, 0);
}

std::atomic<uint64_t> g_now{0};
uint64_t FakeNow() { return g_now.load(); }

TEST(HangWatchTest, TheWatcherThreadFiresOnItsOwn) {
  std::atomic<int> fired{0};
  HangWatch watch(kSecond, [&](const HangWatch::Wait&) { ++fired; });
  g_now = 5 * kSecond;
  watch.Enter(WaitAt(3 * kSecond, 1));
  watch.StartWatcher(&FakeNow, 1);
  for (int i = 0; i < 2000 && fired.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(fired.load(), 1);
  watch.StopWatcher();
  watch.Exit();  // still safe after the watcher stopped
}

}  // namespace
}  // namespace graphcheck::capture
