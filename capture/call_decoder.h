// Decodes the parameters of the CUDA runtime and driver calls the recorder subscribes to: the stream, sizes, copy
// direction, launch geometry, capture mode and the graph / stream handles a call returns. One table per API keyed by
// CUPTI callback id; calls not in it decode to "no stream, no payload".
#ifndef GRAPHCHECK_CAPTURE_CALL_DECODER_H_
#define GRAPHCHECK_CAPTURE_CALL_DECODER_H_

#include <cuda.h>
#include <cupti.h>

#include <array>
#include <cstdint>

#include "trace/events.h"

namespace graphcheck::capture {

struct DecodedCall {
  bool has_stream = false;
  CUstream stream = nullptr;
  uint64_t bytes = 0;
  trace::MemcpyDirection direction = trace::MemcpyDirection::kUnknown;
  const void* dst = nullptr;  // copies: host side is looked up from these
  const void* src = nullptr;
  std::array<uint32_t, 3> grid = {0, 0, 0};
  std::array<uint32_t, 3> block = {0, 0, 0};
  int capture_mode = -1;            // capture begin: cudaStreamCaptureMode
  CUgraph* out_graph = nullptr;     // capture end: the graph it returns
  CUgraph graph = nullptr;          // instantiate / destroy
  CUgraphExec* out_exec = nullptr;  // instantiate
  CUgraphExec exec = nullptr;       // launch / upload / exec destroy
  CUstream* out_stream = nullptr;   // stream create
  CUevent event = nullptr;          // record / wait
};

// The stream handles that mean "legacy default stream" (0 and cudaStreamLegacy); cudaStreamPerThread (0x2) is not.
inline bool IsLegacyStream(CUstream stream) { return stream == nullptr || stream == reinterpret_cast<CUstream>(0x1); }

DecodedCall DecodeRuntimeCall(CUpti_CallbackId cbid, const void* params);
DecodedCall DecodeDriverCall(CUpti_CallbackId cbid, const void* params);

}  // namespace graphcheck::capture

#endif  // GRAPHCHECK_CAPTURE_CALL_DECODER_H_
