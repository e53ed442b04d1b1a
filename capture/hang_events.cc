// The recorder's side of the hang watch (`graphcheck run --hang-timeout`, hang_watch.h): marking a synchronizing
// call's wait, and what happens when one outlasts the bound (a Hang record, the hung end, exit status 124).
#include <unistd.h>

#include <cstdio>

#include "capture/internal/recorder_state.h"

namespace graphcheck::capture::internal {
namespace {

constexpr int kHangExitCode = 124;  // a process the hang watch ended exits with this, like timeout(1)

}  // namespace

void Recorder::BeginWait(const CallbackEntry& entry, const CUpti_CallbackData* data, bool runtime,
                         PendingCall* pending) {
  HangWatch::Wait wait;
  wait.thread_id = CurrentThreadId();
  wait.call = entry.name;
  wait.call_name = data->functionName;
  wait.since_ns = pending->start_ns;
  wait.last_graph_id = t_state.last_graph_launched;
  const DecodedCall call = runtime ? DecodeRuntimeCall(pending->cbid, data->functionParams)
                                   : DecodeDriverCall(pending->cbid, data->functionParams);
  if (call.has_stream) wait.stream_id = StreamId(data->context, call.stream, entry.per_thread_stream);
  wait.python_stack = CapturePythonStack();
  hang_watch_->Enter(wait);
  // The exit record reuses both rather than taking them again.
  pending->stream_id = wait.stream_id;
  pending->python_stack = wait.python_stack;
  pending->waiting = true;
}

void Recorder::OnHang(const HangWatch::Wait& wait) {
  trace::Hang hang;
  hang.thread_id = wait.thread_id;
  hang.time_ns = Timestamp();
  hang.since_ns = wait.since_ns;
  hang.timeout_ns = hang_watch_->timeout_ns();
  hang.call = wait.call;
  hang.stream_id = wait.stream_id;
  hang.last_graph_id = wait.last_graph_id;
  hang.stack = wait.python_stack;
  writer_->WriteHang(hang);
  std::fprintf(stderr,
               "graphcheck: thread %u waited %.1f s in %s, past --hang-timeout: ending the process (exit status %d); "
               "its trace says where it waited\n",
               wait.thread_id, static_cast<double>(hang.time_ns - hang.since_ns) / 1e9,
               wait.call_name != nullptr ? wait.call_name : "a synchronizing CUDA call", kHangExitCode);
  writer_->MarkEnd(trace::TraceEnd::kHung);
  // Not exit(): the waiting thread holds CUDA's locks, and exit handlers (the recorder's own Stop, CUPTI's flush)
  // would wait on the GPU that does not finish. What is appended is in the mapped file already.
  _exit(kHangExitCode);
}

}  // namespace graphcheck::capture::internal
