"""The shape of Transformer Engine's transformer_engine/pytorch/graph.py: its make_graphed_callables captures each
callable through torch.cuda.graph."""
import torch


def make_graphed_callables(callables, sample_args):
    for callable_ in callables if isinstance(callables, tuple) else (callables,):
        captured = torch.cuda.CUDAGraph()
        with torch.cuda.graph(captured):
            callable_(*sample_args)
    return callables
