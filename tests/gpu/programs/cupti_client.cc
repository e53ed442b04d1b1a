// A program that is its own CUPTI client, like one running under Nsight or with a profiler of its own: it subscribes
// to CUPTI before its first CUDA call, then does some CUDA work. Under `graphcheck run` the recorder, loaded later by
// cuInit, finds CUPTI taken: the trace must name this subscriber (cupti-busy) and the program must run to its end.
#include <cuda_runtime.h>
#include <cupti.h>

#include <cstdio>

namespace {

void CUPTIAPI Ignore(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

}  // namespace

int main() {
  CUpti_SubscriberParams params = {};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "planted-profiler";
  CUpti_SubscriberHandle handle = nullptr;
  const CUptiResult subscribed = cuptiSubscribe_v2(&handle, &Ignore, nullptr, &params);
  std::printf("own cuptiSubscribe_v2 -> %d\n", static_cast<int>(subscribed));
  float* x = nullptr;
  const cudaError_t malloc_rc = cudaMalloc(&x, 1 << 20);
  const cudaError_t memset_rc = cudaMemset(x, 0, 1 << 20);
  const cudaError_t sync_rc = cudaDeviceSynchronize();
  std::printf("cuda work -> %d %d %d\n", malloc_rc, memset_rc, sync_rc);
  if (subscribed == CUPTI_SUCCESS) cuptiUnsubscribe(handle);
  return malloc_rc == cudaSuccess && sync_rc == cudaSuccess ? 0 : 1;
}
