#include "core/trace/events.h"

namespace graphcheck::trace {

StringId Trace::Intern(absl::string_view s) {
  for (StringId id = 0; id < strings.size(); ++id) {
    if (strings[id] == s) return id;
  }
  strings.emplace_back(s);
  return static_cast<StringId>(strings.size() - 1);
}

absl::string_view ApiKindName(ApiKind kind) {
  switch (kind) {
    case ApiKind::kOther:
      return "other";
    case ApiKind::kKernelLaunch:
      return "kernel-launch";
    case ApiKind::kCaptureBegin:
      return "capture-begin";
    case ApiKind::kCaptureEnd:
      return "capture-end";
    case ApiKind::kStreamSynchronize:
      return "stream-synchronize";
    case ApiKind::kDeviceSynchronize:
      return "device-synchronize";
    case ApiKind::kEventSynchronize:
      return "event-synchronize";
    case ApiKind::kStreamQuery:
      return "stream-query";
    case ApiKind::kEventQuery:
      return "event-query";
    case ApiKind::kMemcpy:
      return "memcpy";
    case ApiKind::kMemcpyAsync:
      return "memcpy-async";
    case ApiKind::kMemset:
      return "memset";
    case ApiKind::kMemsetAsync:
      return "memset-async";
    case ApiKind::kMalloc:
      return "malloc";
    case ApiKind::kFree:
      return "free";
    case ApiKind::kHostAlloc:
      return "host-alloc";
    case ApiKind::kHostFree:
      return "host-free";
    case ApiKind::kMallocAsync:
      return "malloc-async";
    case ApiKind::kFreeAsync:
      return "free-async";
    case ApiKind::kStreamCreate:
      return "stream-create";
    case ApiKind::kStreamDestroy:
      return "stream-destroy";
    case ApiKind::kEventRecord:
      return "event-record";
    case ApiKind::kStreamWaitEvent:
      return "stream-wait-event";
    case ApiKind::kGraphCreate:
      return "graph-create";
    case ApiKind::kGraphInstantiate:
      return "graph-instantiate";
    case ApiKind::kGraphUpload:
      return "graph-upload";
    case ApiKind::kGraphLaunch:
      return "graph-launch";
    case ApiKind::kGraphDestroy:
      return "graph-destroy";
    case ApiKind::kGraphExecDestroy:
      return "graph-exec-destroy";
    case ApiKind::kModuleLoad:
      return "module-load";
    case ApiKind::kContextCreate:
      return "context-create";
  }
  return "unknown";
}

}  // namespace graphcheck::trace
