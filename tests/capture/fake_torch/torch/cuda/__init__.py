from .graphs import CUDAGraph, graph, make_graphed_callables  # noqa: F401
