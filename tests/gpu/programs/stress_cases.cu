// Stress and fault cases for the recorder's accounting (tests/gpu/recorder_stress_gpu_test.cc). Each mode prints
// "expected <kind> <n>" lines: what a complete trace would hold, for the test to compare with what was recorded and
// what the trace counts as lost.
//   threads N    N threads launch while one thread captures in thread-local mode, then the graph is replayed
//   launches N   N tiny kernel launches on one stream (run it with --launches all)
//   fork N       N worker processes forked before CUDA is initialised, each using CUDA; then the parent does too
//   own-cupti    the program subscribes its own CUPTI client after CUDA (and graphcheck's recorder) started
#include <cuda_runtime.h>
#include <cupti.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

__global__ void Tick(int* x) { x[threadIdx.x] += 1; }

#define CHECK(call)                                                            \
  do {                                                                         \
    const cudaError_t rc_ = (call);                                            \
    if (rc_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(rc_)); \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

int Launches(long n) {
  int* x = nullptr;
  CHECK(cudaMalloc(&x, 128 * sizeof(int)));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  for (long i = 0; i < n; ++i) Tick<<<1, 32, 0, s>>>(x);
  CHECK(cudaStreamSynchronize(s));
  std::printf("expected launches %ld\nexpected kernels %ld\n", n, n);
  return 0;
}

int Threads(int n) {
  int* x = nullptr;
  CHECK(cudaMalloc(&x, 128 * sizeof(int)));
  constexpr int kPerThread = 2000;
  constexpr int kCaptured = 50;
  std::atomic<bool> go{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < n; ++t) {
    workers.emplace_back([&] {
      cudaStream_t s;
      CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < kPerThread; ++i) Tick<<<1, 32, 0, s>>>(x);
      CHECK(cudaStreamSynchronize(s));
    });
  }
  cudaStream_t capture;
  CHECK(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
  go.store(true);
  cudaGraph_t graph;
  CHECK(cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kCaptured; ++i) Tick<<<1, 32, 0, capture>>>(x);
  CHECK(cudaStreamEndCapture(capture, &graph));
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, capture));
  CHECK(cudaStreamSynchronize(capture));
  for (std::thread& w : workers) w.join();
  std::printf("expected captured_launches %d\nexpected eager_launches %d\n", kCaptured, n * kPerThread);
  return 0;
}

int Fork(int n) {
  for (int w = 0; w < n; ++w) {
    if (fork() == 0) {
      std::_Exit(Launches(1000));
    }
  }
  int failed = 0;
  for (int w = 0; w < n; ++w) {
    int status = 0;
    wait(&status);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::printf("expected processes %d\n", n + 1);
  return Launches(1000) + failed;
}

void CUPTIAPI Ignore(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

int OwnCupti() {
  CHECK(cudaFree(nullptr));  // CUDA (and graphcheck's recorder) first
  CUpti_SubscriberParams params = {};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "late-profiler";
  CUpti_SubscriberHandle handle = nullptr;
  const CUptiResult subscribed = cuptiSubscribe_v2(&handle, &Ignore, nullptr, &params);
  std::printf("own cuptiSubscribe_v2 -> %d\n", static_cast<int>(subscribed));
  const int rc = Launches(1000);
  if (subscribed == CUPTI_SUCCESS) cuptiUnsubscribe(handle);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s threads N | launches N | fork N | own-cupti\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  const long n = argc > 2 ? std::atol(argv[2]) : 0;
  if (mode == "threads") return Threads(static_cast<int>(n));
  if (mode == "launches") return Launches(n);
  if (mode == "fork") return Fork(static_cast<int>(n));
  if (mode == "own-cupti") return OwnCupti();
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
