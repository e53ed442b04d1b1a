// Planted-defect and clean CUDA programs for the recorder's GPU tests, one per mode:
//   clean | sync-in-capture | pageable-h2d | unjoined-stream | other-thread-query | segfault-after-capture | eager-loop
//   | malloc-in-capture | legacy-stream-in-capture | sampled-loop | cublas-create-in-capture | module-load-in-capture
// Each prints what it did; the GPU tests assert on the trace that graphcheck run records, not on this output.
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

__global__ void Scale(float* x, int n, float a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a + 0.001f;
}

namespace {

constexpr int kN = 1 << 16;

void Report(const char* what, cudaError_t rc) { std::printf("%s -> %d (%s)\n", what, rc, cudaGetErrorName(rc)); }

void LaunchSome(float* x, cudaStream_t s, int count) {
  for (int i = 0; i < count; ++i) Scale<<<(kN + 255) / 256, 256, 0, s>>>(x, kN, 1.0001f);
}

struct CapturedGraph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

// A clean global-mode capture of `launches` launches on `s`, instantiated, replayed `replays` times and synchronized.
CapturedGraph CaptureAndReplay(float* x, cudaStream_t s, int launches, int replays) {
  CapturedGraph captured;
  Report("begin", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  LaunchSome(x, s, launches);
  Report("end", cudaStreamEndCapture(s, &captured.graph));
  Report("instantiate", cudaGraphInstantiate(&captured.exec, captured.graph, 0));
  for (int i = 0; i < replays; ++i) Report("launch", cudaGraphLaunch(captured.exec, s));
  Report("sync", cudaStreamSynchronize(s));
  return captured;
}

int CleanCapture(float* x, bool crash_after) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  const CapturedGraph captured = CaptureAndReplay(x, s, 3, 3);
  if (crash_after) {
    std::fflush(stdout);
    volatile int* null = nullptr;
    *null = 1;  // SIGSEGV after the capture: the trace must still hold everything up to here
  }
  cudaGraphExecDestroy(captured.exec);
  cudaGraphDestroy(captured.graph);
  return 0;
}

// A global-mode capture on a new stream `s`: one launch, then `planted(s)` (the defect), then the end of the capture,
// whatever it returns.
template <typename Planted>
int InCapture(float* x, Planted planted) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaGraph_t graph;
  Report("begin", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  LaunchSome(x, s, 1);
  planted(s);
  Report("end", cudaStreamEndCapture(s, &graph));
  cudaGetLastError();
  return 0;
}

// Written out rather than through InCapture: the recorder test asserts that the synchronize's backtrace names this
// function, and a lambda passed to a template shows only as InCapture<>() once symbolized.
int SyncInCapture(float* x) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaGraph_t graph;
  Report("begin", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  LaunchSome(x, s, 2);
  Report("sync in capture", cudaStreamSynchronize(s));  // 900: not permitted while capturing
  Report("end", cudaStreamEndCapture(s, &graph));       // 901: invalidated by the sync
  cudaGetLastError();
  return 0;
}

int PageableH2D(float* x) {
  std::vector<float> host(kN, 1.0f);  // pageable
  return InCapture(x, [&](cudaStream_t s) {
    Report("pageable memcpy in capture",
           cudaMemcpyAsync(x, host.data(), kN * sizeof(float), cudaMemcpyHostToDevice, s));
    LaunchSome(x, s, 1);
  });
}

int UnjoinedStream(float* x, float* y) {
  cudaStream_t side;
  cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  cudaEvent_t fork;
  cudaEventCreateWithFlags(&fork, cudaEventDisableTiming);
  return InCapture(x, [&](cudaStream_t s) {
    cudaEventRecord(fork, s);
    Report("fork side stream", cudaStreamWaitEvent(side, fork, 0));
    LaunchSome(y, side, 1);  // never joined back into s: the end gets 904
  });
}

int OtherThreadQuery(float* x) {
  cudaEvent_t unrelated;
  cudaEventCreate(&unrelated);
  cudaEventRecord(unrelated, 0);
  cudaDeviceSynchronize();
  return InCapture(x, [&](cudaStream_t s) {
    std::thread watchdog([&] { Report("query from another thread", cudaEventQuery(unrelated)); });
    watchdog.join();
    LaunchSome(x, s, 1);
  });
}

int MallocInCapture(float* x) {
  return InCapture(x, [](cudaStream_t) {
    float* scratch = nullptr;
    Report("malloc in capture", cudaMalloc(&scratch, 1 << 20));  // not permitted in global mode
  });
}

int LegacyStreamInCapture(float* x) {
  return InCapture(x, [&](cudaStream_t) {
    Scale<<<(kN + 255) / 256, 256, 0, 0>>>(x, kN, 1.0f);  // the legacy default stream: implicit sync with s (906)
    Report("launch on the legacy stream", cudaGetLastError());
  });
}

// Lazy initialisation inside a capture: a cuBLAS handle created (and its first GEMM run) while the stream captures.
int CublasCreateInCapture(float* x) {
  return InCapture(x, [&](cudaStream_t s) {
    cublasHandle_t handle = nullptr;
    std::printf("cublasCreate in capture -> %d\n", cublasCreate(&handle));
    if (handle == nullptr) return;
    cublasSetStream(handle, s);
    const float one = 1.0f, zero = 0.0f;
    std::printf("cublasSgemm in capture -> %d\n",
                cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 128, 128, 128, &one, x, 128, x, 128, &zero, x, 128));
  });
}

// Lazy initialisation inside a capture: a module loaded (JIT-compiled from PTX) while the stream captures.
int ModuleLoadInCapture(float* x) {
  static const char kPtx[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry noop()\n{\n  ret;\n}\n";
  return InCapture(x, [](cudaStream_t) {
    CUmodule module = nullptr;
    std::printf("cuModuleLoadData in capture -> %d\n", cuModuleLoadData(&module, kPtx));
  });
}

int EagerLoop(float* x) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (int iteration = 0; iteration < 20; ++iteration) LaunchSome(x, s, 40);
  Report("sync", cudaStreamSynchronize(s));
  return 0;
}

// Eager steps of 40 launches and a synchronize for about 1.25 s, with one clean capture of 5 launches at about 0.55 s.
// Under --sampling 0:100:400 the recorder's first window closes within 20 ms, and the next ones are at about 320-420,
// 720-820 and 1120-1220 ms, so the capture falls between two of them.
int SampledLoop(float* x) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  // Two captures 200 ms apart: with 100 ms windows every 400 ms at least one of them falls between windows, wherever
  // the recorder's clock started (on an H100 a single capture at 550 ms once fell inside one).
  int captures = 0;
  while (elapsed_ms() < 1250) {
    LaunchSome(x, s, 40);
    cudaStreamSynchronize(s);
    if (captures < 2 && elapsed_ms() >= 550 + 200 * captures) {
      ++captures;
      CaptureAndReplay(x, s, 5, 1);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODE\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  float *x = nullptr, *y = nullptr;
  cudaMalloc(&x, kN * sizeof(float));
  cudaMalloc(&y, kN * sizeof(float));
  cudaMemset(x, 0, kN * sizeof(float));
  cudaDeviceSynchronize();
  if (mode == "clean") return CleanCapture(x, false);
  if (mode == "segfault-after-capture") return CleanCapture(x, true);
  if (mode == "sync-in-capture") return SyncInCapture(x);
  if (mode == "pageable-h2d") return PageableH2D(x);
  if (mode == "unjoined-stream") return UnjoinedStream(x, y);
  if (mode == "other-thread-query") return OtherThreadQuery(x);
  if (mode == "eager-loop") return EagerLoop(x);
  if (mode == "sampled-loop") return SampledLoop(x);
  if (mode == "malloc-in-capture") return MallocInCapture(x);
  if (mode == "legacy-stream-in-capture") return LegacyStreamInCapture(x);
  if (mode == "cublas-create-in-capture") return CublasCreateInCapture(x);
  if (mode == "module-load-in-capture") return ModuleLoadInCapture(x);
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
