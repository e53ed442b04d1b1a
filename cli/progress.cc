#include "cli/progress.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "absl/strings/str_format.h"
#include "core/utf8.h"

namespace graphcheck {
namespace {

class ProgressLine {
 public:
  static ProgressLine& Get() {
    static ProgressLine* line = new ProgressLine();  // never destroyed: the ticker may outlive static destructors
    return *line;
  }

  void Show(const std::string& stage) {
    if (!enabled_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    stage_ = LineText(stage);  // a command line may hold anything
    if (!ticker_.joinable()) {
      stop_ = false;
      ticker_ = std::thread([this] { Tick(); });
    }
  }

  void End() {
    if (!enabled_) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!ticker_.joinable()) return;
      stop_ = true;
    }
    wake_.notify_all();
    ticker_.join();
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }

 private:
  ProgressLine() : enabled_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()) {}

  void Tick() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      std::fputs(absl::StrFormat("\r\033[Kgraphcheck: %s  %.1f s", stage_, seconds).c_str(), stderr);
      std::fflush(stderr);
      wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_; });
    }
  }

  const bool enabled_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread ticker_;
  std::string stage_;
  bool stop_ = false;
};

}  // namespace

void ShowProgress(const std::string& stage) { ProgressLine::Get().Show(stage); }

void EndProgress() { ProgressLine::Get().End(); }

}  // namespace graphcheck
