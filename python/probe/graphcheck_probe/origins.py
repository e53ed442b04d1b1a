"""Who began a capture, told from the Python stack at capture_begin, and what a capture's pool and allocations were."""
import sys

from . import frames
from .bridge import Origin

_MAX_ORIGIN_WALK = 128  # frames looked at to tell who began a capture


def capture_origin(frame):
    """(origin, value, text) of the capture whose capture_begin is running above `frame`: who began it; `value`, for
    cudagraph trees the compiled function's id (+1) and for a Megatron layer graph its layer number (0 when unknown);
    `text`, which of Megatron's graphs it is (None otherwise)."""
    walked = 0
    while frame is not None and walked < _MAX_ORIGIN_WALK:
        code = frame.f_code
        path = code.co_filename.replace("\\", "/")
        if path.endswith("/torch/_inductor/cudagraph_trees.py"):
            if code.co_name == "_record":
                return Origin.CUDAGRAPH_TREES, _compiled_function_id(frame), None
            if code.co_name == "__init__":
                return Origin.CUDAGRAPH_TREES_INIT, 0, None
            return Origin.CUDAGRAPH_TREES, 0, None
        if "/torch/_inductor/" in path:
            return Origin.CUDAGRAPH_TREES, 0, None
        if path.endswith("/torch/cuda/graphs.py") and code.co_name == "make_graphed_callables":
            return Origin.GRAPHED_CALLABLES, 0, None
        if path.endswith("/transformer_engine/pytorch/graph.py"):
            return Origin.TRANSFORMER_ENGINE, 0, None
        if "/megatron/core/" in path and "cuda_graph" in path:
            return _megatron_origin(frame, path)
        frame = frame.f_back
        walked += 1
    return Origin.USER, 0, None


# Megatron Core 0.19 captures in three places: _CudaGraphRunner.create_fwd_graph / create_bwd_graph
# (transformer/cuda_graphs.py, the per-layer graphs of CudaGraphManager), FullCudaGraphWrapper.__call__
# (full_cuda_graph.py) and OptimizerCudaGraphWrapper.__call__ (optimizer/optimizer_cuda_graph.py).
_PER_LAYER_GRAPHS = {"create_fwd_graph": "forward", "create_bwd_graph": "backward"}


def _megatron_origin(frame, path):
    """(origin, value, text) of a capture begun in Megatron Core's graph code: for a CudaGraphManager layer graph its
    layer number (Megatron's layer_number, from 1; 0 when the module has none) and "forward" / "backward"; for the
    full-iteration wrappers, which graph ("training", "validation" or "optimizer")."""
    name = frame.f_code.co_name
    try:
        if path.endswith("/transformer/cuda_graphs.py") and name in _PER_LAYER_GRAPHS:
            runner = frames.local_values(frame).get("self")
            return Origin.MEGATRON, megatron_layer_number(runner), _PER_LAYER_GRAPHS[name]
        if path.endswith("/full_cuda_graph.py"):
            stage = frames.local_values(frame).get("training_str")
            return Origin.MEGATRON_FULL_ITERATION, 0, stage if isinstance(stage, str) else None
    except Exception:  # a Megatron of another shape: who began it is still known
        pass
    if path.endswith("/full_cuda_graph.py"):
        return Origin.MEGATRON_FULL_ITERATION, 0, None
    if path.endswith("/optimizer/optimizer_cuda_graph.py"):
        return Origin.MEGATRON_FULL_ITERATION, 0, "optimizer"
    return Origin.MEGATRON, 0, None


def megatron_layer_number(runner):
    """The layer number (from 1) of a Megatron Core graph runner's module; 0 when it has none."""
    layer = getattr(getattr(runner, "base_module", None), "layer_number", 0)
    return layer if isinstance(layer, int) and layer > 0 else 0


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


_MEGATRON_NO_RUNNER = "no matching cudagraph runners"
_MISMATCH_RUNNERS = 4  # runners asked
_MISMATCH_LINES = 8  # lines kept of each runner's answer


def megatron_mismatches(error):
    """Megatron Core refuses a call that none of a layer's graphs matches ("`cudagraph_created` is set to True but no
    matching cudagraph runners were found ... Use `get_mismatch_errors` to debug mismatches") without saying how the
    call differs. Its runners can say: the frame that raised holds the manager (`self`, with its `cudagraph_runners`)
    and the call's `args` and `kwargs`. Returns what each runner answers, as lines to append to the exception's text
    ("\\nrunner 1 of 2:\\n  - Tensor mismatch at args[0]: Received shape ... but expected ..."); "" for another error
    or when the runners cannot be asked."""
    try:
        if _MEGATRON_NO_RUNNER not in str(error):
            return ""
        asked = None
        tb = error.__traceback__
        while tb is not None:
            variables = frames.local_values(tb.tb_frame)
            runners = getattr(variables.get("self"), "cudagraph_runners", None)
            if isinstance(runners, list) and "args" in variables and "kwargs" in variables:
                asked = runners, variables["args"], variables["kwargs"]
            tb = tb.tb_next
        if asked is None:
            return ""
        runners, args, kwargs = asked
        lines = []
        for number, runner in enumerate(runners[:_MISMATCH_RUNNERS], 1):
            lines.append("runner %d of %d:" % (number, len(runners)))
            lines.extend(str(line) for line in runner.get_mismatch_errors(args, kwargs)[:_MISMATCH_LINES])
        return "\n" + "\n".join(lines) if lines else ""
    except Exception:  # a Megatron of another shape: the exception as it is
        return ""
