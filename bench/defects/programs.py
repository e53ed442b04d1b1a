"""Planted-defect and clean PyTorch programs for the detection matrix (bench/defects/matrix.py).

usage: programs.py MODE   (python3 programs.py --list prints the modes)
Each mode plants one defect (or none, for the clean ones) in an otherwise ordinary program. Capture failures are
caught and printed to stderr, as an uncaught exception would be, so the program runs to its end."""
import ctypes
import sys
import threading
import time

import torch
import torch.cuda.nvtx as nvtx

CUDART = None


def cudart():
    """The CUDA runtime torch loaded, for the few defects PyTorch itself never commits."""
    global CUDART
    if CUDART is None:
        for name in ("libcudart.so.13", "libcudart.so"):
            try:
                CUDART = ctypes.CDLL(name)
                break
            except OSError:
                continue
    return CUDART


def stream_handle(stream):
    return ctypes.c_void_p(stream.cuda_stream)


def small_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256)).cuda()


def warmed(model, x):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            model(x)
    torch.cuda.current_stream().wait_stream(side)


def capture(body, graph=None):
    graph = graph or torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            body()
        return graph
    except Exception as error:  # noqa: BLE001 - the planted defect's error is the point
        print(f"capture failed: {type(error).__name__}: {str(error).splitlines()[0]}", file=sys.stderr, flush=True)
        return None


def chain_step(x, linear):
    y = linear(x)
    for _ in range(20):
        y = torch.relu(y * 1.0001 + 0.001)
    return y


# --- capture defects -------------------------------------------------------------------------------------------

def capture_case(body_of):
    model = small_model()
    x = torch.randn(64, 256, device="cuda")
    warmed(model, x)
    capture(body_of(model, x))


def item_in_capture():
    capture_case(lambda m, x: (lambda: m(x).sum().item()))


def cpu_in_capture():
    capture_case(lambda m, x: (lambda: m(x).cpu()))


def pageable_copy():
    host = torch.randn(64, 256)
    capture_case(lambda m, x: (lambda: x.copy_(host, non_blocking=True)))


def pageable_to_cuda():
    capture_case(lambda m, x: (lambda: m(x) + torch.ones(64, 256).cuda()))


def unjoined_one():
    side = torch.cuda.Stream()

    def body_of(m, x):
        def body():
            y = m(x)
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                y.mul_(2)
        return body
    capture_case(body_of)


def unjoined_two():
    a, b = torch.cuda.Stream(), torch.cuda.Stream()

    def body_of(m, x):
        def body():
            y = m(x)
            for s in (a, b):
                s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(a):
                y.mul_(2)
            with torch.cuda.stream(b):
                y.add_(1)
            torch.cuda.current_stream().wait_stream(a)  # b is never joined
        return body
    capture_case(body_of)


def other_thread(action):
    event = torch.cuda.Event()
    event.record()
    torch.cuda.synchronize()

    def body_of(m, x):
        def body():
            m(x)
            t = threading.Thread(target=lambda: action(event))
            t.start()
            t.join()
            m(x)
        return body
    capture_case(body_of)


def watchdog_query():
    other_thread(lambda e: e.query())


def watchdog_synchronize():
    other_thread(lambda e: e.synchronize())


def raw_malloc_in_capture():
    def body_of(m, x):
        def body():
            m(x)
            ptr = ctypes.c_void_p()
            rc = cudart().cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(1 << 20))
            print(f"cudaMalloc in capture -> {rc}", file=sys.stderr)
        return body
    capture_case(body_of)


def raw_free_in_capture():
    ptr = ctypes.c_void_p()
    cudart().cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(1 << 20))

    def body_of(m, x):
        def body():
            m(x)
            print(f"cudaFree in capture -> {cudart().cudaFree(ptr)}", file=sys.stderr)
        return body
    capture_case(body_of)


def legacy_stream_work():
    def body_of(m, x):
        def body():
            y = m(x)
            with torch.cuda.stream(torch.cuda.default_stream()):  # the legacy default stream
                y.mul_(2)
        return body
    capture_case(body_of)


def legacy_stream_memset():
    def body_of(m, x):
        def body():
            y = m(x)
            rc = cudart().cudaMemsetAsync(ctypes.c_void_p(y.data_ptr()), 0, ctypes.c_size_t(4), ctypes.c_void_p(0))
            print(f"cudaMemsetAsync on stream 0 in capture -> {rc}", file=sys.stderr)
        return body
    capture_case(body_of)


def empty_other_stream():
    other = torch.cuda.Stream()  # made before capture: not the capturing stream

    def body_of(m, x):
        with torch.cuda.stream(other):  # warm the allocator for `other`, so capture allocates nothing there
            m(x)
        torch.cuda.synchronize()

        def body():
            with torch.cuda.stream(other):
                m(x)
        return body
    capture_case(body_of)


def empty_nothing():
    capture_case(lambda m, x: (lambda: None))


def recapture_loop():
    model = small_model()
    x = torch.randn(64, 256, device="cuda")
    warmed(model, x)
    for _ in range(12):
        g = capture(lambda: model(x))
        g.replay()
    torch.cuda.synchronize()


def recapture_per_shape():
    model = small_model()
    for batch in range(8, 8 * 13, 8):
        x = torch.randn(batch, 256, device="cuda")
        warmed(model, x)
        g = capture(lambda: model(x))
        g.replay()
    torch.cuda.synchronize()


def end_on_other_stream():
    """903: the capture is ended on a stream that joined it, not the one that began it."""
    rt = cudart()
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    event = torch.cuda.Event()
    graph = ctypes.c_void_p()
    print("begin", rt.cudaStreamBeginCapture(stream_handle(s1), 0), file=sys.stderr)
    event.record(s1)
    s2.wait_event(event)
    print("end on s2", rt.cudaStreamEndCapture(stream_handle(s2), ctypes.byref(graph)), file=sys.stderr)
    print("end on s1", rt.cudaStreamEndCapture(stream_handle(s1), ctypes.byref(graph)), file=sys.stderr)


def end_on_other_thread():
    """908: a thread-local capture ended from another thread."""
    rt = cudart()
    s = torch.cuda.Stream()
    graph = ctypes.c_void_p()
    print("begin", rt.cudaStreamBeginCapture(stream_handle(s), 1), file=sys.stderr)
    t = threading.Thread(target=lambda: print("end", rt.cudaStreamEndCapture(stream_handle(s), ctypes.byref(graph)),
                                              file=sys.stderr))
    t.start()
    t.join()
    print("end on the capturing thread", rt.cudaStreamEndCapture(stream_handle(s), ctypes.byref(graph)),
          file=sys.stderr)


def profiler_holds_cupti():
    """torch.profiler with CUDA activities around the program's work: under graphcheck run the recorder subscribed to
    CUPTI at cuInit, so Kineto's subscription fails (it prints CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
        x = torch.randn(256, 256, device="cuda")
        for _ in range(10):
            x = torch.relu(x @ x * 1e-3)
        torch.cuda.synchronize()


def clean_capture():
    model = small_model()
    x = torch.randn(64, 256, device="cuda")
    warmed(model, x)
    g = capture(lambda: model(x))
    for _ in range(20):
        nvtx.range_push("step")
        g.replay()
        nvtx.range_pop()
    torch.cuda.synchronize()


def clean_pinned_copy():
    model = small_model()
    x = torch.randn(64, 256, device="cuda")
    host = torch.randn(64, 256).pin_memory()
    warmed(model, x)
    g = capture(lambda: (x.copy_(host, non_blocking=True), model(x)))
    for _ in range(5):
        g.replay()
    torch.cuda.synchronize()


def clean_joined_streams():
    side = torch.cuda.Stream()

    def body_of(m, x):
        def body():
            y = m(x)
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                y.mul_(2)
            torch.cuda.current_stream().wait_stream(side)
        return body
    capture_case(body_of)


def first_use_in_capture(body, on_new_thread):
    """Runs body() for the first time in the process inside a capture (no warmup), on a new thread if asked, so that
    the library behind it creates its handle and workspace while the stream is capturing."""
    torch.zeros(1, device="cuda").add_(1)  # the context exists; the library does not
    torch.cuda.synchronize()
    if on_new_thread:
        t = threading.Thread(target=lambda: capture(body))
        t.start()
        t.join()
    else:
        capture(body)
    torch.cuda.synchronize()


def cublas_first_in_capture():
    a = torch.randn(256, 256, device="cuda")
    first_use_in_capture(lambda: a @ a, on_new_thread=True)


def cudnn_first_in_capture():
    conv = torch.nn.Conv2d(16, 16, 3, padding=1).cuda()
    x = torch.randn(8, 16, 32, 32, device="cuda")
    with torch.no_grad():
        first_use_in_capture(lambda: conv(x), on_new_thread=False)


def cusolver_first_in_capture():
    a = torch.randn(64, 64, device="cuda")
    spd = a @ a.T + 64 * torch.eye(64, device="cuda")
    torch.cuda.synchronize()
    first_use_in_capture(lambda: torch.linalg.cholesky_ex(spd), on_new_thread=True)


# --- eager-region and performance ------------------------------------------------------------------------------

def eager_loop(step, steps=40):
    """Runs `steps` steps, each an NVTX range "step"; returns the wall time per step in microseconds."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(steps):
        nvtx.range_push("step")
        step(i)
        nvtx.range_pop()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / steps * 1e6


def sync_item_in_step():
    model, x = small_model(), torch.randn(64, 256, device="cuda")
    eager_loop(lambda i: model(x).sum().item())


def sync_nonzero_in_step():
    model, x = small_model(), torch.randn(64, 256, device="cuda")
    eager_loop(lambda i: torch.nonzero(model(x) > 0))


def clean_eager_step():
    model, x = small_model(), torch.randn(64, 256, device="cuda")
    eager_loop(lambda i: model(x))


def dynamic_batch():
    model = small_model()
    xs = [torch.randn(32 + 32 * (i % 3), 256, device="cuda") for i in range(3)]
    eager_loop(lambda i: model(xs[i % 3]))


def dynamic_sequence():
    layer = torch.nn.TransformerEncoderLayer(128, 4, 256, batch_first=True).cuda().eval()
    xs = [torch.randn(8, 16 * (1 + i % 4), 128, device="cuda") for i in range(4)]
    with torch.no_grad():
        eager_loop(lambda i: layer(xs[i % 4]))


def branch_every_fifth():
    model, x = small_model(), torch.randn(64, 256, device="cuda")
    eager_loop(lambda i: model(x) if i % 5 else torch.relu(model(x)) * 2)


def branch_on_data():
    model, x = small_model(), torch.randn(64, 256, device="cuda")
    flips = [torch.full((1,), 1.0 if i % 3 else -1.0, device="cuda") for i in range(3)]
    eager_loop(lambda i: model(x) if flips[i % 3].item() > 0 else model(x).neg().relu())


def launch_bound_chain():
    linear, x = torch.nn.Linear(1024, 1024).cuda(), torch.randn(64, 1024, device="cuda")
    with torch.no_grad():
        eager_loop(lambda i: chain_step(x, linear), steps=60)


def launch_bound_mlp_train():
    model, x = small_model(), torch.randn(64, 256, device="cuda")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step(i):
        opt.zero_grad(set_to_none=True)
        model(x).square().mean().backward()
        opt.step()
    eager_loop(step, steps=60)


def gpu_bound_matmul():
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    eager_loop(lambda i: a @ a, steps=30)


def graphed_after_eager(step, eager_steps=30, graphed_steps=30):
    """Eager steps, then the same step captured and replayed: no-speedup compares the two."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    eager_us = eager_loop(lambda i: step(), steps=eager_steps)
    g = capture(step)
    graphed_us = eager_loop(lambda i: g.replay(), steps=graphed_steps)
    print(f"eager_us {eager_us:.2f} graphed_us {graphed_us:.2f}", flush=True)


def no_speedup_matmul():
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(a)
    graphed_after_eager(lambda: torch.matmul(a, a, out=out))


def no_speedup_conv():
    conv = torch.nn.Conv2d(256, 256, 3, padding=1).cuda().to(torch.bfloat16)
    x = torch.randn(64, 256, 56, 56, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        graphed_after_eager(lambda: conv(x))


def speedup_chain():
    linear, x = torch.nn.Linear(1024, 1024).cuda(), torch.randn(64, 1024, device="cuda")
    with torch.no_grad():
        graphed_after_eager(lambda: chain_step(x, linear), eager_steps=200, graphed_steps=200)


def speedup_mlp():
    model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.GELU(),
                                                      torch.nn.LayerNorm(512)) for _ in range(6)]).cuda()
    x = torch.randn(32, 512, device="cuda")
    with torch.no_grad():
        graphed_after_eager(lambda: model(x), eager_steps=200, graphed_steps=200)


def speedup_transformer():
    layers = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(256, 4, 512, batch_first=True), 2,
                                         enable_nested_tensor=False).cuda().eval()
    x = torch.randn(4, 64, 256, device="cuda")
    with torch.no_grad():
        graphed_after_eager(lambda: layers(x), eager_steps=200, graphed_steps=200)


MODES = {name: fn for name, fn in globals().items() if callable(fn) and fn.__module__ == "__main__"
         and not name.startswith("_") and name not in ("cudart", "stream_handle", "small_model", "warmed", "capture",
                                                        "chain_step", "capture_case", "other_thread", "eager_loop",
                                                        "first_use_in_capture",
                                                        "graphed_after_eager")}

if __name__ == "__main__":
    if sys.argv[1] == "--list":
        print("\n".join(sorted(MODES)))
    else:
        MODES[sys.argv[1]]()
        print("done", flush=True)
