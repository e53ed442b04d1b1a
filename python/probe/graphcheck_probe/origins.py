"""Who began a capture, told from the Python stack at capture_begin, and what a capture's pool and allocations were."""
import sys

from .bridge import Origin

_MAX_ORIGIN_WALK = 128  # frames looked at to tell who began a capture


def capture_origin(frame):
    """Who began the capture whose capture_begin is running above `frame`, and for cudagraph trees the compiled
    function's id (+1; 0 when unknown)."""
    walked = 0
    while frame is not None and walked < _MAX_ORIGIN_WALK:
        code = frame.f_code
        path = code.co_filename.replace("\\", "/")
        if path.endswith("/torch/_inductor/cudagraph_trees.py"):
            if code.co_name == "_record":
                return Origin.CUDAGRAPH_TREES, _compiled_function_id(frame)
            if code.co_name == "__init__":
                return Origin.CUDAGRAPH_TREES_INIT, 0
            return Origin.CUDAGRAPH_TREES, 0
        if "/torch/_inductor/" in path:
            return Origin.CUDAGRAPH_TREES, 0
        if path.endswith("/torch/cuda/graphs.py") and code.co_name == "make_graphed_callables":
            return Origin.GRAPHED_CALLABLES, 0
        if path.endswith("/transformer_engine/pytorch/graph.py"):
            return Origin.TRANSFORMER_ENGINE, 0
        if "/megatron/core/" in path and "cuda_graph" in path:
            return Origin.MEGATRON, 0
        frame = frame.f_back
        walked += 1
    return Origin.USER, 0


def _compiled_function_id(frame):
    try:
        return int(frame.f_locals["self"].wrapped_function.id.id) + 1
    except Exception:
        return 0


def pool_key(graph):
    try:
        first, second = graph.pool()
        return (int(first) << 32) ^ int(second)
    except Exception:
        return 0


def allocated_bytes():
    """What PyTorch's caching allocator has allocated on the current device (a host-side counter: no CUDA call, so
    safe inside a capture); 0 when unknown. At capture begin and end it tells what a graph left allocated in its pool
    (its outputs, a cuBLAS workspace), which graph-memory needs to say what sharing a pool would hold."""
    try:
        return int(sys.modules["torch.cuda.memory"].memory_allocated())
    except Exception:
        return 0
