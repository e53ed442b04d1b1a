// RAII over CUPTI's C handles: the callback subscription and activity recording. Errors come back as Status; the
// destructors undo exactly what was set up.
#ifndef GRAPHCHECK_CAPTURE_CUPTI_SUBSCRIPTION_H_
#define GRAPHCHECK_CAPTURE_CUPTI_SUBSCRIPTION_H_

#include <cupti.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "trace/events.h"

namespace graphcheck::capture {

absl::Status CuptiStatus(CUptiResult result, absl::string_view what);

// A callback id of the runtime or driver domain that the recorder subscribes to (trace/api_names.h decides).
struct RecordedCallback {
  CUpti_CallbackId cbid = 0;
  std::string name;  // normalized: "cudaMemcpyAsync"
  trace::ApiKind kind = trace::ApiKind::kOther;
  bool per_thread_stream = false;  // a _ptsz/_ptds variant: stream 0 means the per-thread default stream
};
std::vector<RecordedCallback> RecordedCallbacks(CUpti_CallbackDomain domain);
// One past the largest callback id of the runtime or driver domain.
int CallbackIdLimit(CUpti_CallbackDomain domain);

class CuptiSubscription {
 public:
  // FailedPrecondition when another CUPTI subscriber (Kineto, Nsight) holds CUPTI; its name, as CUPTI reports it,
  // goes to *other_subscriber.
  static absl::StatusOr<std::unique_ptr<CuptiSubscription>> Create(CUpti_CallbackFunc callback, void* userdata,
                                                                   std::string* other_subscriber);
  ~CuptiSubscription();  // Close(), its status dropped: call Close to see it
  CuptiSubscription(const CuptiSubscription&) = delete;
  CuptiSubscription& operator=(const CuptiSubscription&) = delete;

  // One callback id, not the whole domain: whole domains cost x1.40 on a launch-bound step. `enable` false turns it
  // off again.
  absl::Status Enable(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, bool enable = true);
  // Unsubscribes (once; later calls are no-ops).
  absl::Status Close();

 private:
  explicit CuptiSubscription(CUpti_SubscriberHandle handle) : handle_(handle) {}
  CUpti_SubscriberHandle handle_;  // null once closed
};

// Activity recording of the given kinds for the life of the object. Buffers are handed to CUPTI through the
// requested/completed callbacks given at construction; the destructor flushes what is pending and disables the kinds.
class ActivityRecording {
 public:
  using BufferRequested = void (*)(uint8_t** buffer, size_t* size, size_t* max_records);
  using BufferCompleted = void (*)(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t size,
                                   size_t valid_size);
  static absl::StatusOr<std::unique_ptr<ActivityRecording>> Create(const std::vector<CUpti_ActivityKind>& kinds,
                                                                   BufferRequested requested, BufferCompleted completed,
                                                                   uint32_t flush_period_ms);
  ~ActivityRecording();  // Close(), its failures dropped: call Close to see them
  ActivityRecording(const ActivityRecording&) = delete;
  ActivityRecording& operator=(const ActivityRecording&) = delete;

  // Hands every pending buffer to the completed callback; forced includes records still being written.
  static absl::Status FlushAll(bool forced);
  // Turns the kinds off or on again without giving up the buffers (sampled recording). Records of work started while
  // enabled still arrive.
  absl::Status Pause();
  absl::Status Resume();
  // Flushes what is pending and disables the kinds (once); the failures, if any.
  std::vector<absl::Status> Close();

 private:
  explicit ActivityRecording(std::vector<CUpti_ActivityKind> kinds) : kinds_(std::move(kinds)) {}
  std::vector<CUpti_ActivityKind> kinds_;
};

}  // namespace graphcheck::capture

#endif  // GRAPHCHECK_CAPTURE_CUPTI_SUBSCRIPTION_H_
