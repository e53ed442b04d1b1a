// NVTX ranges, marks, domains and registered strings, decoded from CUPTI's NVTX callbacks into trace events.
#include <nvtx3/nvToolsExtPayload.h>  // nvtxPayloadData_t, the extended payload NCCL attaches to its ranges

#include <cstring>

#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "capture/internal/recorder_state.h"

namespace graphcheck::capture::internal {
namespace {

// The communicator an NCCL call's range names, 0 when it names none. Since NCCL 2.19 each API call's range carries
// one extended payload (payloadType NVTX_PAYLOAD_TYPE_EXT, reserved0 the count of nvtxPayloadData_t entries at
// payload.ullValue) of one of NCCL's static schemas, whose first field is the communicator's commHash for every
// collective, point-to-point and communicator call (NCCL's src/include/nvtx_payload_schemas.h). The hash comes from
// the communicator's unique id (or its parent's, for a split), so every rank of the communicator reads the same one.
uint64_t NcclCommunicator(const nvtxEventAttributes_t* attributes) {
  // NCCL numbers its schemas from the static start; a schema past this window is not one of its.
  constexpr uint64_t kNcclSchemas = 256;
  if (attributes == nullptr || attributes->payloadType != NVTX_PAYLOAD_TYPE_EXT || attributes->reserved0 < 1) return 0;
  const auto* data = reinterpret_cast<const nvtxPayloadData_t*>(attributes->payload.ullValue);
  if (data == nullptr || data->payload == nullptr || data->size < sizeof(uint64_t) ||
      data->schemaId < NVTX_PAYLOAD_SCHEMA_ID_STATIC_START ||
      data->schemaId >= NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + kNcclSchemas) {
    return 0;
  }
  uint64_t communicator = 0;
  std::memcpy(&communicator, data->payload, sizeof(communicator));
  return communicator;
}

}  // namespace

absl::Status Recorder::EnableNvtxCallbacks() {
  for (CUpti_CallbackId cbid :
       {CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushEx, CUPTI_CBID_NVTX_nvtxRangePop,
        CUPTI_CBID_NVTX_nvtxRangeStartA, CUPTI_CBID_NVTX_nvtxRangeStartEx, CUPTI_CBID_NVTX_nvtxRangeEnd,
        CUPTI_CBID_NVTX_nvtxMarkA, CUPTI_CBID_NVTX_nvtxMarkEx, CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
        CUPTI_CBID_NVTX_nvtxDomainRangePop, CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, CUPTI_CBID_NVTX_nvtxDomainRangeEnd,
        CUPTI_CBID_NVTX_nvtxDomainMarkEx, CUPTI_CBID_NVTX_nvtxDomainCreateA,
        CUPTI_CBID_NVTX_nvtxDomainRegisterStringA}) {
    if (absl::Status s = subscription_->Enable(CUPTI_CB_DOMAIN_NVTX, cbid); !s.ok()) return s;
  }
  return absl::OkStatus();
}

trace::StringId Recorder::NvtxMessage(const nvtxEventAttributes_t* attributes) {
  if (attributes == nullptr) return 0;
  switch (attributes->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return attributes->message.ascii != nullptr ? writer_->InternString(attributes->message.ascii) : 0;
    case NVTX_MESSAGE_TYPE_REGISTERED: {
      absl::MutexLock lock(&mutex_);
      auto it = nvtx_registered_.find(reinterpret_cast<uintptr_t>(attributes->message.registered));
      return it == nvtx_registered_.end() ? 0 : it->second;
    }
    default:
      return 0;
  }
}

trace::StringId Recorder::NvtxDomain(nvtxDomainHandle_t domain) {
  absl::MutexLock lock(&mutex_);
  auto it = nvtx_domains_.find(reinterpret_cast<uintptr_t>(domain));
  return it == nvtx_domains_.end() ? 0 : it->second;
}

bool Recorder::DecodeNvtxRange(CUpti_CallbackId cbid, const CUpti_NvtxData* data, trace::NvtxEvent* event) {
  const void* params = data->functionParams;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      event->kind = trace::NvtxEvent::Kind::kPush;
      event->message = writer_->InternString(static_cast<const nvtxRangePushA_params*>(params)->message);
      return true;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      event->kind = trace::NvtxEvent::Kind::kPush;
      event->message = NvtxMessage(static_cast<const nvtxRangePushEx_params*>(params)->eventAttrib);
      return true;
    case CUPTI_CBID_NVTX_nvtxRangePop:
      event->kind = trace::NvtxEvent::Kind::kPop;
      return true;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      event->kind = trace::NvtxEvent::Kind::kRangeStart;
      event->message = cbid == CUPTI_CBID_NVTX_nvtxRangeStartA
                           ? writer_->InternString(static_cast<const nvtxRangeStartA_params*>(params)->message)
                           : NvtxMessage(static_cast<const nvtxRangeStartEx_params*>(params)->eventAttrib);
      if (data->functionReturnValue != nullptr) {
        event->range_id = *static_cast<const nvtxRangeId_t*>(data->functionReturnValue);
      }
      return true;
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      event->kind = trace::NvtxEvent::Kind::kRangeEnd;
      event->range_id = static_cast<const nvtxRangeEnd_params*>(params)->id;
      return true;
    case CUPTI_CBID_NVTX_nvtxMarkA:
      event->kind = trace::NvtxEvent::Kind::kMark;
      event->message = writer_->InternString(static_cast<const nvtxMarkA_params*>(params)->message);
      return true;
    case CUPTI_CBID_NVTX_nvtxMarkEx:
      event->kind = trace::NvtxEvent::Kind::kMark;
      event->message = NvtxMessage(static_cast<const nvtxMarkEx_params*>(params)->eventAttrib);
      return true;
    default:
      return false;
  }
}

bool Recorder::DecodeNvtxDomainRange(CUpti_CallbackId cbid, const CUpti_NvtxData* data, trace::NvtxEvent* event) {
  const void* params = data->functionParams;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      const auto* p = static_cast<const nvtxDomainRangePushEx_params*>(params);
      event->kind = trace::NvtxEvent::Kind::kPush;
      event->domain = NvtxDomain(p->domain);
      event->message = NvtxMessage(p->core.eventAttrib);
      return true;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      event->kind = trace::NvtxEvent::Kind::kPop;
      event->domain = NvtxDomain(static_cast<const nvtxDomainRangePop_params*>(params)->domain);
      return true;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
      const auto* p = static_cast<const nvtxDomainRangeStartEx_params*>(params);
      event->kind = trace::NvtxEvent::Kind::kRangeStart;
      event->domain = NvtxDomain(p->domain);
      event->message = NvtxMessage(p->core.eventAttrib);
      if (data->functionReturnValue != nullptr) {
        event->range_id = *static_cast<const nvtxRangeId_t*>(data->functionReturnValue);
      }
      return true;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: {
      const auto* p = static_cast<const nvtxDomainRangeEnd_params*>(params);
      event->kind = trace::NvtxEvent::Kind::kRangeEnd;
      event->domain = NvtxDomain(p->domain);
      event->range_id = p->core.id;
      return true;
    }
    case CUPTI_CBID_NVTX_nvtxDomainMarkEx: {
      const auto* p = static_cast<const nvtxDomainMarkEx_params*>(params);
      event->kind = trace::NvtxEvent::Kind::kMark;
      event->domain = NvtxDomain(p->domain);
      event->message = NvtxMessage(p->core.eventAttrib);
      return true;
    }
    default:
      return false;
  }
}

void Recorder::RegisterNvtxName(CUpti_CallbackId cbid, const CUpti_NvtxData* data) {
  if (data->functionReturnValue == nullptr) return;
  if (cbid == CUPTI_CBID_NVTX_nvtxDomainCreateA) {
    const auto* p = static_cast<const nvtxDomainCreateA_params*>(data->functionParams);
    if (p->name == nullptr) return;
    const auto handle = *static_cast<const nvtxDomainHandle_t*>(data->functionReturnValue);
    const trace::StringId name = writer_->InternString(p->name);
    if (absl::string_view(p->name) == "NCCL") nccl_domain_.store(name, std::memory_order_relaxed);
    absl::MutexLock lock(&mutex_);
    nvtx_domains_[reinterpret_cast<uintptr_t>(handle)] = name;
  } else if (cbid == CUPTI_CBID_NVTX_nvtxDomainRegisterStringA) {
    const auto* p = static_cast<const nvtxDomainRegisterStringA_params*>(data->functionParams);
    if (p->string == nullptr) return;
    const auto handle = *static_cast<const nvtxStringHandle_t*>(data->functionReturnValue);
    const trace::StringId text = writer_->InternString(p->string);
    absl::MutexLock lock(&mutex_);
    nvtx_registered_[reinterpret_cast<uintptr_t>(handle)] = text;
  }
}

void Recorder::OnNvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* data) {
  trace::NvtxEvent event;
  event.thread_id = CurrentThreadId();
  event.time_ns = Timestamp();
  if (!DecodeNvtxRange(cbid, data, &event) && !DecodeNvtxDomainRange(cbid, data, &event)) {
    RegisterNvtxName(cbid, data);  // a domain or a string made; no event
    return;
  }
  // Steps of the program's own (default-domain) ranges, while the first sampling window waits for them. Libraries
  // put their calls in ranges of their own domains (NCCL's collectives): those are not steps.
  if (first_steps_ != nullptr && event.domain == 0 && counting_launches_.load(std::memory_order_relaxed)) {
    if (event.kind == trace::NvtxEvent::Kind::kPush)
      first_steps_->OnPush(event.thread_id, event.message, t_state.launches);
    if (event.kind == trace::NvtxEvent::Kind::kPop) first_steps_->OnPop(event.thread_id, t_state.launches);
  }
  if (event.kind == trace::NvtxEvent::Kind::kPush && event.domain != 0 &&
      event.domain == nccl_domain_.load(std::memory_order_relaxed)) {
    nccl_calls_.fetch_add(1, std::memory_order_relaxed);
    if (cbid == CUPTI_CBID_NVTX_nvtxDomainRangePushEx) {
      const auto* p = static_cast<const nvtxDomainRangePushEx_params*>(data->functionParams);
      event.communicator = NcclCommunicator(p->core.eventAttrib);
    }
  }
  writer_->WriteNvtx(event);
}

}  // namespace graphcheck::capture::internal
