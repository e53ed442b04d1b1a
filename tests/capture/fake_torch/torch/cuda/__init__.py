from . import memory  # noqa: F401
from .graphs import CUDAGraph, graph, make_graphed_callables  # noqa: F401


def _lazy_init():
    """torch calls this (by name) when the program first uses CUDA; the fake's graph context does."""
