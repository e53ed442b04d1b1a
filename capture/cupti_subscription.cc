#include "capture/cupti_subscription.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "trace/api_names.h"

namespace graphcheck::capture {

absl::Status CuptiStatus(CUptiResult result, absl::string_view what) {
  if (result == CUPTI_SUCCESS) return absl::OkStatus();
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  return absl::UnavailableError(
      absl::StrCat(what, ": ", text != nullptr ? text : "unknown CUPTI error", " (", static_cast<int>(result), ")"));
}

int CallbackIdLimit(CUpti_CallbackDomain domain) {
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? static_cast<int>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                                               : static_cast<int>(CUPTI_DRIVER_TRACE_CBID_SIZE);
}

std::vector<RecordedCallback> RecordedCallbacks(CUpti_CallbackDomain domain) {
  std::vector<RecordedCallback> callbacks;
  for (int cbid = 1; cbid < CallbackIdLimit(domain); ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    std::string normalized = trace::NormalizeApiName(name);
    const std::optional<trace::ApiKind> kind = trace::ApiKindForName(normalized);
    if (!kind) continue;
    callbacks.push_back({static_cast<CUpti_CallbackId>(cbid), std::move(normalized), *kind,
                         absl::StrContains(name, "_ptsz") || absl::StrContains(name, "_ptds")});
  }
  return callbacks;
}

absl::StatusOr<std::unique_ptr<CuptiSubscription>> CuptiSubscription::Create(CUpti_CallbackFunc callback,
                                                                             void* userdata,
                                                                             std::string* other_subscriber) {
  char old_name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 2] = {0};
  CUpti_SubscriberParams params = {};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "graphcheck";
  params.oldSubscriberName = old_name;
  params.oldSubscriberSize = sizeof(old_name);
  CUpti_SubscriberHandle handle = nullptr;
  const CUptiResult result = cuptiSubscribe_v2(&handle, callback, userdata, &params);
  if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    *other_subscriber = old_name[0] != '\0' ? old_name : "an unnamed CUPTI client";
    return absl::FailedPreconditionError(absl::StrCat("CUPTI is held by another subscriber: ", *other_subscriber));
  }
  if (absl::Status status = CuptiStatus(result, "cuptiSubscribe_v2"); !status.ok()) return status;
  return std::unique_ptr<CuptiSubscription>(new CuptiSubscription(handle));
}

CuptiSubscription::~CuptiSubscription() { Close().IgnoreError(); }

absl::Status CuptiSubscription::Close() {
  if (handle_ == nullptr) return absl::OkStatus();
  const CUptiResult result = cuptiUnsubscribe(handle_);
  handle_ = nullptr;
  return CuptiStatus(result, "cuptiUnsubscribe");
}

absl::Status CuptiSubscription::Enable(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, bool enable) {
  return CuptiStatus(cuptiEnableCallback(enable ? 1 : 0, handle_, domain, cbid), "cuptiEnableCallback");
}

absl::StatusOr<std::unique_ptr<ActivityRecording>> ActivityRecording::Create(
    const std::vector<CUpti_ActivityKind>& kinds, BufferRequested requested, BufferCompleted completed,
    uint32_t flush_period_ms) {
  if (absl::Status s =
          CuptiStatus(cuptiActivityRegisterCallbacks(requested, completed), "cuptiActivityRegisterCallbacks");
      !s.ok()) {
    return s;
  }
  std::unique_ptr<ActivityRecording> recording(new ActivityRecording({}));
  for (CUpti_ActivityKind kind : kinds) {
    if (absl::Status s = CuptiStatus(cuptiActivityEnable(kind), absl::StrCat("cuptiActivityEnable(", kind, ")"));
        !s.ok()) {
      return s;  // the destructor disables the kinds enabled so far
    }
    recording->kinds_.push_back(kind);
  }
  // Periodic flushes bound what an os._exit or SIGKILL can lose to about one period of GPU activity.
  if (flush_period_ms > 0) {
    if (absl::Status s = CuptiStatus(cuptiActivityFlushPeriod(flush_period_ms), "cuptiActivityFlushPeriod"); !s.ok()) {
      return s;
    }
  }
  return recording;
}

ActivityRecording::~ActivityRecording() { Close(); }

std::vector<absl::Status> ActivityRecording::Close() {
  std::vector<absl::Status> failures;
  if (kinds_.empty()) return failures;
  if (absl::Status s = FlushAll(/*forced=*/true); !s.ok()) failures.push_back(std::move(s));
  if (absl::Status s = Pause(); !s.ok()) failures.push_back(std::move(s));
  kinds_.clear();
  return failures;
}

absl::Status ActivityRecording::Pause() {
  absl::Status first;
  for (CUpti_ActivityKind kind : kinds_) first.Update(CuptiStatus(cuptiActivityDisable(kind), "cuptiActivityDisable"));
  return first;
}

absl::Status ActivityRecording::Resume() {
  absl::Status first;
  for (CUpti_ActivityKind kind : kinds_) first.Update(CuptiStatus(cuptiActivityEnable(kind), "cuptiActivityEnable"));
  return first;
}

absl::Status ActivityRecording::FlushAll(bool forced) {
  return CuptiStatus(cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0), "cuptiActivityFlushAll");
}

}  // namespace graphcheck::capture
