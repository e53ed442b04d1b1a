"""The shape of torch/_inductor/cudagraph_trees.py: the tree manager's pool-creating empty capture, a node's
recording of a compiled function, and the invalidation of outputs the program still holds."""
import types
import weakref

import torch
from torch._inductor.cudagraph_utils import log_cudagraph_skip_and_bump_counter  # noqa: F401 (bound at import)


class _Output:
    pass


class CUDAGraphNode:
    def __init__(self, function_id):
        self.wrapped_function = types.SimpleNamespace(id=types.SimpleNamespace(id=function_id))
        self.graph = torch.cuda.CUDAGraph()
        self.outputs = []

    def _record(self, model, inputs):
        with torch.cuda.graph(self.graph, capture_error_mode="thread_local"):
            return model(inputs)

    def path_live_weakrefs(self):
        return [weakref.ref(o) for o in self.outputs]


class CUDAGraphTreeManager:
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph, capture_error_mode="thread_local"):
            pass
        self.current_node = None

    def dealloc_current_path_weakrefs(self):
        pass
