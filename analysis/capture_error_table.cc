#include "analysis/capture_error_table.h"

#include "absl/strings/str_cat.h"
#include "core/check_ids.h"

namespace graphcheck::analysis {

const std::vector<CaptureErrorCode>& CaptureErrorCodes() {
  static const auto* const kCodes = new std::vector<CaptureErrorCode>{
      {900, "cudaErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing",
       check_id::kSyncInCapture,
       "a call that capture forbids (a synchronization, a synchronous copy) ran on a capturing "
       "stream or thread",
       "Move the forbidden call out of the captured region (see sync-in-capture)."},
      {901, "cudaErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture",
       check_id::kCaptureError, "an earlier call invalidated the capture; every later call in it fails",
       "Find the call that failed first in the capture; when none is recorded, look for CUDA calls from other threads "
       "(NCCL watchdog, pin-memory thread, garbage-collector finalizers) and capture with "
       "capture_error_mode='thread_local'."},
      {902, "cudaErrorStreamCaptureMerge", "operation would result in a merge of separate capture sequences",
       check_id::kCaptureError, "work from two different captures was joined through an event",
       "Do not join streams of two different captures through events; capture them one after the other."},
      {903, "cudaErrorStreamCaptureUnmatched", "capture was not initiated in this stream", check_id::kCaptureError,
       "the capture was ended on a stream other than the one that began it",
       "End the capture on the stream that began it (torch.cuda.graph does this for you)."},
      {904, "cudaErrorStreamCaptureUnjoined",
       "capture sequence contains a fork that was not joined to the primary "
       "stream",
       check_id::kUnjoinedStream, "a stream forked from the capturing stream was not joined back before the end",
       "Make the capturing stream wait on every stream forked from it before the capture ends (see unjoined-stream)."},
      {905, "cudaErrorStreamCaptureIsolation", "dependency created on uncaptured work in another stream",
       check_id::kCaptureError, "a captured stream waited on an event recorded outside the capture",
       "Inside a capture, wait only on events recorded inside the same capture; wait on outside work before the "
       "capture begins."},
      {906, "cudaErrorStreamCaptureImplicit",
       "operation would make the legacy stream depend on a capturing blocking "
       "stream",
       check_id::kLegacyStreamInCapture,
       "work on the legacy default stream would have to wait for the capturing "
       "stream",
       "Capture on a non-default stream and keep all work off the legacy default stream (see "
       "legacy-stream-in-capture)."},
      {907, "cudaErrorCapturedEvent", "operation not permitted on an event last recorded in a capturing stream",
       check_id::kCaptureError, "an event recorded inside the capture was queried or synchronized",
       "Do not query or synchronize an event recorded inside the capture while capturing; use it only with "
       "cudaStreamWaitEvent."},
      {908, "cudaErrorStreamCaptureWrongThread",
       "attempt to terminate a thread-local capture sequence from another "
       "thread",
       check_id::kCaptureError, "a thread-local capture was ended from another thread",
       "End a thread-local capture on the thread that began it."},
      {909, "cudaErrorTimeout", "wait operation timed out", check_id::kCaptureError, "a wait timed out",
       "Find what the wait was blocked on; a wait inside capture is itself forbidden."},
      {910, "cudaErrorGraphExecUpdateFailure",
       "the graph update was not performed because it included changes which "
       "violated constraints specific to instantiated graph update",
       check_id::kCaptureError,
       "cudaGraphExecUpdate was given a graph whose topology or node types differ from the instantiated one",
       "Recapture and re-instantiate the graph instead of updating it, or keep the topology identical between "
       "captures."},
  };
  return *kCodes;
}

bool IsCaptureError(int32_t code) { return code >= 900 && code <= 910; }

const CaptureErrorCode* FindCaptureError(int32_t code) {
  return IsCaptureError(code) ? &CaptureErrorCodes()[code - 900] : nullptr;
}

std::string DescribeReturnCode(int32_t code) {
  if (const CaptureErrorCode* error = FindCaptureError(code)) return absl::StrCat(code, " ", error->name);
  return absl::StrCat("error ", code);
}

}  // namespace graphcheck::analysis
