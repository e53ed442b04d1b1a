#include "capture/activity_decoder.h"

#include <cxxabi.h>

#include <cstdlib>

namespace graphcheck::capture {
namespace {

trace::MemcpyDirection DirectionOf(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return trace::MemcpyDirection::kHostToDevice;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return trace::MemcpyDirection::kDeviceToHost;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return trace::MemcpyDirection::kDeviceToDevice;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return trace::MemcpyDirection::kHostToHost;
    default:
      return trace::MemcpyDirection::kUnknown;
  }
}

// The host side of a copy, from the CUPTI memory kind of its source or destination.
trace::HostMemory HostMemoryOf(uint8_t src_kind, uint8_t dst_kind) {
  for (uint8_t kind : {src_kind, dst_kind}) {
    if (kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE) return trace::HostMemory::kPageable;
    if (kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED) return trace::HostMemory::kPinned;
  }
  return trace::HostMemory::kNotApplicable;
}

// The fields memcpy and memset records share.
template <typename Record>
trace::MemoryActivity MemoryCommon(const Record& r, trace::MemoryActivity::Kind kind) {
  trace::MemoryActivity memory;
  memory.kind = kind;
  memory.correlation_id = r.correlationId;
  memory.start_ns = r.start;
  memory.end_ns = r.end;
  memory.device = r.deviceId;
  memory.stream_id = r.streamId;
  memory.graph_id = r.graphId;
  memory.bytes = r.bytes;
  return memory;
}

}  // namespace

std::string DemangleKernelName(const char* name) {
  if (name == nullptr) return "";
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string out(demangled);
  std::free(demangled);
  return out;
}

trace::StringId ActivityDecoder::KernelName(const char* mangled) {
  const std::string key = mangled != nullptr ? mangled : "";
  absl::MutexLock lock(&mutex_);
  auto [it, inserted] = kernel_names_.try_emplace(key, 0);
  if (inserted) it->second = writer_->InternString(DemangleKernelName(mangled));
  return it->second;
}

void ActivityDecoder::Decode(const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      trace::KernelRecord kernel;
      kernel.correlation_id = k->correlationId;
      kernel.start_ns = k->start;
      kernel.end_ns = k->end;
      kernel.device = k->deviceId;
      kernel.stream_id = k->streamId;
      kernel.graph_id = k->graphId;
      kernel.graph_node_id = k->graphNodeId;
      kernel.name = KernelName(k->name);
      kernel.grid = {static_cast<uint32_t>(k->gridX), static_cast<uint32_t>(k->gridY), static_cast<uint32_t>(k->gridZ)};
      kernel.block = {static_cast<uint32_t>(k->blockX), static_cast<uint32_t>(k->blockY),
                      static_cast<uint32_t>(k->blockZ)};
      writer_->WriteKernel(kernel);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      trace::MemoryActivity memory = MemoryCommon(*m, trace::MemoryActivity::Kind::kMemcpy);
      memory.direction = DirectionOf(m->copyKind);
      memory.host_memory = HostMemoryOf(m->srcKind, m->dstKind);
      writer_->WriteMemory(memory);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET:
      writer_->WriteMemory(
          MemoryCommon(*reinterpret_cast<const CUpti_ActivityMemset4*>(record), trace::MemoryActivity::Kind::kMemset));
      break;
    default:
      break;
  }
}

void ActivityDecoder::DecodeBuffer(uint8_t* buffer, size_t valid_size) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) Decode(record);
}

}  // namespace graphcheck::capture
