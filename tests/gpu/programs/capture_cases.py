"""Planted-defect and clean PyTorch programs for the recorder's GPU tests, one per mode (argv[1]):
clean | item-in-capture | pageable-h2d | unjoined-stream | other-thread-query | segfault-after-capture | os-exit |
fork.
Each catches the capture error and exits 0, so the tests judge the trace, not the exit status."""
import os
import sys
import threading

import torch
import torch.cuda.nvtx as nvtx


def model_and_input():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256)).cuda()
    return model, torch.randn(64, 256, device="cuda")


def warmup(model, x):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            model(x)
    torch.cuda.current_stream().wait_stream(s)


def capture(body):
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            body()
        return g
    except Exception as error:  # the capture error is the point of the planted defects
        # To stderr, where an uncaught exception would go: graphcheck run maps known messages to checks.
        print(f"capture failed: {type(error).__name__}: {str(error).splitlines()[0]}", file=sys.stderr, flush=True)
        return None


def defect_body(mode, model, x):
    """The captured body for each planted defect."""
    if mode == "item-in-capture":
        return lambda: model(x).sum().item()
    if mode == "pageable-h2d":
        host = torch.randn(64, 256)  # pageable
        return lambda: x.copy_(host, non_blocking=True)
    if mode == "unjoined-stream":
        side = torch.cuda.Stream()

        def body():
            y = model(x)
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                y.mul_(2)  # never joined back
        return body
    if mode == "other-thread-query":
        event = torch.cuda.Event()
        event.record()
        torch.cuda.synchronize()

        def body():
            model(x)
            t = threading.Thread(target=event.query)
            t.start()
            t.join()
            model(x)
        return body
    sys.exit(f"unknown mode {mode}")


def main(mode):
    model, x = model_and_input()
    warmup(model, x)
    clean = mode in ("clean", "segfault-after-capture", "os-exit", "fork")
    nvtx.range_push("capture_region")
    g = capture((lambda: model(x)) if clean else defect_body(mode, model, x))
    nvtx.range_pop()
    if clean:
        for _ in range(3):
            g.replay()
        torch.cuda.synchronize()
    if mode == "segfault-after-capture":
        import ctypes
        print("crashing", flush=True)
        ctypes.string_at(0)  # SIGSEGV after the capture
    if mode == "os-exit":
        os._exit(0)
    if mode == "fork":
        child = os.fork()  # as a DataLoader worker does: the child uses no CUDA and exits
        if child == 0:
            os._exit(0)
        os.waitpid(child, 0)
        g.replay()
        torch.cuda.synchronize()
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
