"""The shape of Megatron Core's megatron/core/transformer/cuda_graphs.py: create_cudagraphs captures each recorded
runner's graph."""
import torch


def create_cudagraphs(runners):
    for runner in runners:
        captured = torch.cuda.CUDAGraph()
        with torch.cuda.graph(captured):
            runner()


class _CudaGraphRunner:
    """A runner that answers get_mismatch_errors as Megatron Core 0.19's does, for a call of one tensor shape."""

    def __init__(self, shape):
        self.shape = shape

    def get_mismatch_errors(self, args, kwargs):
        if args[0] == self.shape:
            return []
        return ["  - Tensor mismatch at args[0]: Received shape %s but expected %s" % (args[0], self.shape)]


class CudaGraphManager:
    """get_runner refuses a call that no runner matches with Megatron Core 0.19's assertion, which names no mismatch."""

    def __init__(self, shapes):
        self.cudagraph_runners = [_CudaGraphRunner(shape) for shape in shapes]

    def get_runner(self, args, kwargs):
        runner = next((r for r in self.cudagraph_runners if not r.get_mismatch_errors(args, kwargs)), None)
        if runner is None:
            assert False, (
                f"`cudagraph_created` is set to True but no matching cudagraph "
                f"runners were found. This module has {len(self.cudagraph_runners)} "
                f"existing runners. Use `get_mismatch_errors` to debug mismatches."
            )
        return runner
