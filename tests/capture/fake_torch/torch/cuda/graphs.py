"""The shape of torch/cuda/graphs.py: a C base class, the Python CUDAGraph over it, the graph context manager and
make_graphed_callables (which captures through the context manager and replaces a module's forward)."""


class _CUDAGraph:  # torch._C._CUDAGraph
    on_default_stream = False  # set by a test program: capture_begin then refuses, as torch's does

    def capture_begin(self, pool=None, capture_error_mode="global"):
        if self.on_default_stream:
            raise RuntimeError("CUDA graphs must be captured on a non-default stream. (However, after capture, it's "
                               "ok to replay them on the default stream.)")

    def capture_end(self):
        pass

    def replay(self):
        pass

    def reset(self):
        pass

    def pool(self):
        return (0, 7)


class CUDAGraph(_CUDAGraph):
    def capture_begin(self, pool=None, capture_error_mode="global"):
        super().capture_begin(pool=pool, capture_error_mode=capture_error_mode)

    def capture_end(self):
        super().capture_end()

    def replay(self):
        super().replay()


class graph:
    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        import torch.cuda

        torch.cuda._lazy_init()  # as torch's does through torch.cuda.current_stream()
        self.cuda_graph = cuda_graph
        self.pool = () if pool is None else (pool,)
        self.capture_error_mode = capture_error_mode

    def __enter__(self):
        self.cuda_graph.capture_begin(*self.pool, capture_error_mode=self.capture_error_mode)

    def __exit__(self, *args):
        self.cuda_graph.capture_end()


def make_graphed_callables(callables, sample_args):
    """Captures each callable once; a module gets its forward replaced by the replay (as torch's does) and is returned
    itself, anything else is returned as a function that replays."""
    graphed = []
    for callable_ in callables if isinstance(callables, tuple) else (callables,):
        captured = CUDAGraph()
        with graph(captured):
            callable_(*sample_args)

        def replay(*args, captured=captured):
            captured.replay()

        if hasattr(callable_, "named_parameters"):
            callable_.forward = replay
            graphed.append(callable_)
        else:
            graphed.append(replay)
    return tuple(graphed) if isinstance(callables, tuple) else graphed[0]
