#include "analysis/capture_windows.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "analysis/capture_error_table.h"
#include "analysis/torch_ops.h"
#include "core/check_ids.h"
#include "trace/api_names.h"

namespace graphcheck::analysis {
namespace {

absl::string_view ModeName(trace::CaptureMode mode) {
  switch (mode) {
    case trace::CaptureMode::kGlobal:
      return "global";
    case trace::CaptureMode::kThreadLocal:
      return "thread-local";
    case trace::CaptureMode::kRelaxed:
      return "relaxed";
    case trace::CaptureMode::kUnknown:
      break;
  }
  return "unknown";
}

using trace::ApiCall;
using trace::ApiKind;
using trace::CaptureMode;
using trace::CaptureStatus;

// How a call relates to the capture it overlaps.
enum class Role : uint8_t {
  kNone,
  kInCapture,        // on a captured stream (or reports the capture's id / an active status)
  kCapturingThread,  // on the capturing thread, on a stream that is not captured
  kOtherThread,      // another thread, during a global-mode capture
};

bool IsQuery(ApiKind kind) { return kind == ApiKind::kStreamQuery || kind == ApiKind::kEventQuery; }
bool IsAllocation(ApiKind kind) {
  return kind == ApiKind::kMalloc || kind == ApiKind::kFree || kind == ApiKind::kHostAlloc ||
         kind == ApiKind::kHostFree;
}
bool IsStreamWork(ApiKind kind) {
  return kind == ApiKind::kKernelLaunch || kind == ApiKind::kMemcpyAsync || kind == ApiKind::kMemsetAsync ||
         kind == ApiKind::kEventRecord || kind == ApiKind::kStreamWaitEvent;
}

// The library handle or workspace whose initialisation made `call` (from its backtrace), "" when none shows.
absl::string_view LazyInitFrameResource(const trace::Trace& trace, const ApiCall& call) {
  return LazyInitResource(trace.BacktraceFrames(trace.Detail(call).backtrace));
}

// The cause a call stands for, if capture forbids it. `role` is not kNone. Calls that returned success are causes
// only where CUDA would have refused them or where they silently escape the graph (legacy-stream work, pageable
// copies), so a successful call on an unrelated stream is not blamed.
std::optional<CaptureCause> Classify(const trace::Trace& trace, const ApiCall& call, Role role, CaptureMode mode) {
  const trace::CallDetail& d = trace.Detail(call);
  const bool failed = d.return_code != 0;
  const bool on_capture = role == Role::kInCapture || role == Role::kCapturingThread;
  // Allocation and lazy initialisation inside a capture are causes only when CUDA refused them: PyTorch's caching
  // allocator switches its thread to relaxed mode around cudaMalloc while capturing, and CUDA 12+ loads modules
  // lazily during capture, so on real traces (torch 2.11, H200) clean captures are full of successful ones.
  if (call.kind == ApiKind::kModuleLoad || call.kind == ApiKind::kContextCreate) {
    return failed ? std::optional(CaptureCause::kLazyInit) : std::nullopt;
  }
  if (d.return_code == kErrorCaptureImplicit) return CaptureCause::kLegacyStream;
  if (d.return_code == kErrorCaptureUnjoined && call.kind == ApiKind::kCaptureEnd) {
    return CaptureCause::kUnjoinedStream;
  }
  if (IsAllocation(call.kind)) {
    if (!failed) return std::nullopt;
    if (!LazyInitFrameResource(trace, call).empty()) return CaptureCause::kLazyInit;
    return role == Role::kOtherThread ? CaptureCause::kUnsafeApi : CaptureCause::kAlloc;
  }
  if (trace::IsSynchronizing(call.kind) || IsQuery(call.kind)) {
    if (role == Role::kOtherThread) return failed ? std::optional(CaptureCause::kUnsafeApi) : std::nullopt;
    const bool refused =
        failed || role == Role::kInCapture || call.kind == ApiKind::kDeviceSynchronize || d.legacy_stream;
    if (!refused) return std::nullopt;
    return IsQuery(call.kind) ? CaptureCause::kUnsafeApi : CaptureCause::kSync;
  }
  if (call.kind == ApiKind::kMemcpyAsync && d.host_memory == trace::HostMemory::kPageable && role == Role::kInCapture) {
    return CaptureCause::kPageableMemcpy;
  }
  if (d.legacy_stream && on_capture && IsStreamWork(call.kind)) return CaptureCause::kLegacyStream;
  return std::nullopt;
}

class Attributor {
 public:
  explicit Attributor(const trace::Trace& trace) : trace_(trace) {}

  void Run(std::vector<CaptureWindow>* windows, std::vector<CaptureProblem>* problems) {
    windows_ = windows;
    problems_ = problems;
    for (size_t i = 0; i < trace_.api_calls.size(); ++i) Visit(i);
    for (size_t w : open_) {
      if (state_[w].first_cause) AddConsequence(*state_[w].first_cause, (*windows_)[w].begin_call, -1);
    }
    for (size_t w = 0; w < windows_->size(); ++w) (*windows_)[w].root_problem = state_[w].first_cause;
  }

 private:
  struct WindowState {
    std::optional<size_t> first_cause;           // the problem that first failed (or, without one, the first problem)
    absl::flat_hash_map<uint64_t, bool> joined;  // forked stream -> joined back since its last captured work
  };

  void Visit(size_t i) {
    const ApiCall& call = trace_.api_calls[i];
    const trace::CallDetail& d = trace_.Detail(call);
    if (call.kind == ApiKind::kCaptureBegin && d.return_code == 0) {
      Begin(i);
      return;
    }
    auto [window, role] = Locate(call);
    if (call.kind == ApiKind::kStreamWaitEvent) TrackJoin(call);
    if (window && role == Role::kInCapture && d.return_code == 0) Record(*window, call);
    if (role == Role::kNone && !IsCaptureError(d.return_code)) return;

    const CaptureMode mode = window ? (*windows_)[*window].mode : CaptureMode::kUnknown;
    std::optional<CaptureCause> cause;
    if (role != Role::kNone) cause = Classify(trace_, call, role, mode);
    if (!cause && call.kind == ApiKind::kCaptureBegin && d.legacy_stream) cause = CaptureCause::kLegacyStream;
    if (cause) {
      const size_t problem = AddProblem(*cause, i, window, role == Role::kOtherThread);
      if (window && !state_[*window].first_cause) state_[*window].first_cause = problem;
    } else if (IsCaptureError(d.return_code)) {
      std::optional<size_t> explained = window ? state_[*window].first_cause : std::nullopt;
      if (explained) {
        AddConsequence(*explained, i, d.return_code);
      } else {
        const size_t problem = AddProblem(CaptureCause::kUnexplained, i, window, role == Role::kOtherThread);
        if (window) state_[*window].first_cause = problem;
      }
    }
    if (call.kind == ApiKind::kCaptureEnd && window && (*windows_)[*window].stream_id == call.stream_id)
      End(*window, i);
  }

  void Begin(size_t i) {
    const ApiCall& call = trace_.api_calls[i];
    CaptureWindow window;
    window.begin_call = i;
    window.stream_id = call.stream_id;
    window.thread_id = call.thread_id;
    window.mode = call.capture_mode;
    const size_t w = windows_->size();
    windows_->push_back(std::move(window));
    state_.emplace_back();
    open_.push_back(w);
    by_stream_[call.stream_id] = w;
  }

  void End(size_t w, size_t i) {
    CaptureWindow& window = (*windows_)[w];
    window.end_call = i;
    for (uint64_t stream : window.forked_streams) {
      if (!state_[w].joined[stream]) window.unjoined_streams.push_back(stream);
      by_stream_.erase(stream);
    }
    by_stream_.erase(window.stream_id);
    if (window.capture_id != 0) by_capture_id_.erase(window.capture_id);
    open_.erase(std::find(open_.begin(), open_.end(), w));
    if (trace_.Detail(trace_.api_calls[i]).return_code == kErrorCaptureUnjoined) {
      for (CaptureProblem& problem : *problems_) {
        if (problem.cause == CaptureCause::kUnjoinedStream && problem.call == i)
          problem.streams = window.unjoined_streams;
      }
    }
  }

  std::pair<std::optional<size_t>, Role> Locate(const ApiCall& call) {
    if (open_.empty()) return {std::nullopt, Role::kNone};
    if (call.capture_id != 0) {
      // A call without a stream (event or device synchronize, allocation) carries the id of whatever capture was
      // active in the process: it is inside that capture only when it ran on the capturing thread.
      auto it = by_capture_id_.find(call.capture_id);
      if (it != by_capture_id_.end() && (call.stream_id != 0 || (*windows_)[it->second].thread_id == call.thread_id)) {
        return {it->second, Role::kInCapture};
      }
    }
    if (auto it = by_stream_.find(call.stream_id); call.stream_id != 0 && it != by_stream_.end()) {
      Learn(it->second, call);
      // A fork's wait runs on the side stream before it joins the capture: it is not yet inside.
      const bool inside = call.capture_status != CaptureStatus::kNone || call.kind != ApiKind::kStreamWaitEvent;
      return {it->second, inside ? Role::kInCapture : Role::kNone};
    }
    for (auto w = open_.rbegin(); w != open_.rend(); ++w) {
      if ((*windows_)[*w].thread_id == call.thread_id) {
        Learn(*w, call);
        return {*w, call.capture_status != CaptureStatus::kNone ? Role::kInCapture : Role::kCapturingThread};
      }
    }
    for (size_t w : open_) {
      if ((*windows_)[w].mode == CaptureMode::kGlobal) return {w, Role::kOtherThread};
    }
    return {std::nullopt, Role::kNone};
  }

  void Learn(size_t w, const ApiCall& call) {
    CaptureWindow& window = (*windows_)[w];
    if (window.capture_id == 0 && call.capture_id != 0 && call.capture_status != CaptureStatus::kNone) {
      window.capture_id = call.capture_id;
      by_capture_id_[call.capture_id] = w;
    }
  }

  // stream_id waits on an event recorded on other_stream_id: a fork when the waiting stream is outside every capture
  // and the event's stream inside one, a join when both are in the same capture.
  void TrackJoin(const ApiCall& call) {
    const uint64_t other_stream_id = trace_.Detail(call).other_stream_id;
    auto source = by_stream_.find(other_stream_id);
    if (other_stream_id == 0 || source == by_stream_.end()) return;
    const size_t w = source->second;
    auto waiter = by_stream_.find(call.stream_id);
    if (waiter == by_stream_.end()) {
      by_stream_[call.stream_id] = w;
      (*windows_)[w].forked_streams.push_back(call.stream_id);
      state_[w].joined[call.stream_id] = false;
    } else if (waiter->second == w) {
      if (auto it = state_[w].joined.find(other_stream_id); it != state_[w].joined.end()) it->second = true;
      if (auto it = state_[w].joined.find(call.stream_id); it != state_[w].joined.end()) it->second = false;
    }
  }

  void Record(size_t w, const ApiCall& call) {
    CaptureWindow& window = (*windows_)[w];
    if (call.kind == ApiKind::kKernelLaunch || call.kind == ApiKind::kMemcpyAsync ||
        call.kind == ApiKind::kMemsetAsync) {
      ++window.captured_operations;
    }
    if (call.kind == ApiKind::kKernelLaunch) {
      const trace::CallDetail& d = trace_.Detail(call);
      const absl::string_view name = trace_.String(d.kernel_name);
      window.kernel_sequence = absl::HashOf(window.kernel_sequence, name);
      window.kernel_shapes = absl::HashOf(window.kernel_shapes, name, d.grid, d.block);
    }
    if (IsStreamWork(call.kind) && call.kind != ApiKind::kStreamWaitEvent) {
      if (auto it = state_[w].joined.find(call.stream_id); it != state_[w].joined.end()) it->second = false;
    }
  }

  std::string LazyInitResourceOf(const ApiCall& call) const {
    const absl::string_view resource = LazyInitFrameResource(trace_, call);
    return !resource.empty()                      ? std::string(resource)
           : call.kind == ApiKind::kContextCreate ? "CUDA context"
                                                  : "CUDA module (lazy kernel loading)";
  }

  size_t AddProblem(CaptureCause cause, size_t i, std::optional<size_t> window, bool other_thread) {
    const ApiCall& call = trace_.api_calls[i];
    const trace::CallDetail& d = trace_.Detail(call);
    const trace::Backtrace* backtrace = trace_.FindBacktrace(d.backtrace);
    // One lazy initialisation (a cuDNN handle: a cudaFree, then a cudaMalloc) is one problem, whatever calls it made.
    const std::string resource = cause == CaptureCause::kLazyInit ? LazyInitResourceOf(call) : "";
    const uint64_t site = cause == CaptureCause::kLazyInit
                              ? absl::HashOf(static_cast<int>(cause), resource)
                              : absl::HashOf(static_cast<int>(cause), d.name, other_thread,
                                             cause == CaptureCause::kUnexplained ? d.return_code : 0,
                                             backtrace ? backtrace->frames : std::vector<trace::StringId>());
    auto [it, inserted] = by_site_.try_emplace(site, problems_->size());
    if (inserted) {
      CaptureProblem problem;
      problem.cause = cause;
      problem.call = i;
      problem.other_thread = other_thread;
      problem.window = window;
      problem.resource = resource;
      problems_->push_back(std::move(problem));
      last_window_.push_back(std::nullopt);
    }
    CaptureProblem& problem = (*problems_)[it->second];
    ++problem.occurrences;
    problem.failed |= d.return_code != 0;
    if (window != last_window_[it->second]) {
      ++problem.captures;
      last_window_[it->second] = window;
    }
    return it->second;
  }

  // return_code -1: the capture never ended in the trace.
  void AddConsequence(size_t problem, size_t i, int32_t return_code) {
    std::vector<Consequence>& list = (*problems_)[problem].consequences;
    const trace::StringId name = trace_.Detail(trace_.api_calls[i]).name;
    for (Consequence& c : list) {
      if (c.return_code == return_code && trace_.Detail(trace_.api_calls[c.first_call]).name == name) {
        ++c.count;
        return;
      }
    }
    list.push_back({i, return_code, 1});
  }

  const trace::Trace& trace_;
  std::vector<CaptureWindow>* windows_ = nullptr;
  std::vector<CaptureProblem>* problems_ = nullptr;
  std::vector<WindowState> state_;
  std::vector<size_t> open_;
  absl::flat_hash_map<uint64_t, size_t> by_stream_;
  absl::flat_hash_map<uint64_t, size_t> by_capture_id_;
  absl::flat_hash_map<uint64_t, size_t> by_site_;
  std::vector<std::optional<size_t>> last_window_;  // per problem
};

}  // namespace

CaptureAnalysis::CaptureAnalysis(const trace::Trace& trace) { Attributor(trace).Run(&windows_, &problems_); }

absl::string_view CauseCheckId(CaptureCause cause) {
  switch (cause) {
    case CaptureCause::kSync:
      return check_id::kSyncInCapture;
    case CaptureCause::kUnsafeApi:
      return check_id::kUnsafeApiInCapture;
    case CaptureCause::kAlloc:
      return check_id::kAllocInCapture;
    case CaptureCause::kLegacyStream:
      return check_id::kLegacyStreamInCapture;
    case CaptureCause::kPageableMemcpy:
      return check_id::kPageableMemcpy;
    case CaptureCause::kUnjoinedStream:
      return check_id::kUnjoinedStream;
    case CaptureCause::kLazyInit:
      return check_id::kWarmupInsufficient;
    case CaptureCause::kUnexplained:
      return check_id::kCaptureError;
  }
  return check_id::kCaptureError;
}

OpenSpan OpenSpanOf(const trace::Trace& trace, const CaptureWindow& window) {
  return {trace.api_calls[window.begin_call].start_ns,
          window.end_call ? trace.api_calls[*window.end_call].start_ns : UINT64_MAX};
}

std::string DescribeCapture(const trace::Trace& trace, const CaptureWindow& window) {
  return absl::StrCat("the capture on stream ", window.stream_id, " (thread ", window.thread_id, ", ",
                      ModeName(window.mode), " mode)");
}

}  // namespace graphcheck::analysis
