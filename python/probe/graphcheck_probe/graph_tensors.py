"""The tensors a graph reads, named: where each was at capture and how to find it again (a module's parameter or
buffer, optimizer state, or a tensor the captured code reached through a path: host_reads.py), with a weak reference
to its memory, so that a replay can tell a tensor rebound from one freed, and the line that dropped it is noted; and
the segments of the graphs' memory pools, to tell whether a tensor lives in one."""
import bisect
import weakref

from . import events

pools = {}  # pool key -> sorted [(start, end)] of its segments (contract.py takes them at each capture's end)


def address(tensor):
    try:
        return int(tensor.data_ptr())
    except Exception:
        return 0


def inside(ranges, address):
    """Whether `address` lies in one of the sorted (start, end) `ranges`."""
    index = bisect.bisect_right(ranges, (address, float("inf"))) - 1
    return index >= 0 and ranges[index][0] <= address < ranges[index][1]


def pool_segments(torch, graph):
    """The (address, bytes) of the segments of `graph`'s memory pool."""
    try:
        segments = torch.cuda.memory.memory_snapshot(mempool_id=graph.pool(), include_traces=False)
        return [(int(s["address"]), int(s["total_size"])) for s in segments]
    except Exception:
        return []


def pool_blocks(torch, pool):
    """The (start, end) of the blocks allocated in memory pool `pool` (a CUDAGraph.pool() handle); None when not
    known."""
    try:
        segments = torch.cuda.memory.memory_snapshot(mempool_id=pool, include_traces=False)
        return {(int(b["address"]), int(b["address"]) + int(b["size"])) for s in segments for b in s["blocks"]
                if b["state"] == "active_allocated"}
    except Exception:
        return None


def in_pool(address):
    """Whether `address` lies in the memory pool of a graph captured so far (the program's, make_graphed_callables',
    Transformer Engine's or Megatron's; torch.compile's pools are its own)."""
    return any(inside(ranges, address) for ranges in pools.values())


def nbytes(tensor):
    try:
        return int(tensor.numel()) * int(tensor.element_size())
    except Exception:
        return 0


# address -> ids of the live graphs that read a static input there (a manual capture's name, or a path the captured
# code followed): a name or path that now holds another graph's static input (one per bucket, the variable moving on)
# is no rebinding.
_static_inputs = {}


def add_static_input(address, graph_id):
    _static_inputs.setdefault(address, set()).add(graph_id)


def forget_static_inputs(graph_id, addresses):
    for captured in addresses:
        owners = _static_inputs.get(captured)
        if owners is not None:
            owners.discard(graph_id)
            if not owners:
                del _static_inputs[captured]


def graphs_input(address, graph_id):
    """Whether graph `graph_id` already reads a static input at `address` (a manual capture's name for it)."""
    return graph_id in _static_inputs.get(address, ())


def another_graphs_input(address, graph_id):
    """Whether a live graph other than `graph_id` reads a static input at `address`."""
    return bool(_static_inputs.get(address, set()) - {graph_id})


def pinned(tensor):
    """Whether a tensor is in pinned host memory (a copy node's source a graph reads at a fixed address)."""
    try:
        return tensor.device.type == "cpu" and bool(tensor.is_pinned())
    except Exception:
        return False


def expired(storage):
    """Whether the memory a storage_ref() refers to may be reused by the allocator (False when unknown)."""
    try:
        return storage is not None and storage.expired()
    except Exception:
        return False


def storage_ref(tensor):
    """A weak reference to a tensor's memory: expired once the allocator may reuse it. None when unknown."""
    try:
        from torch.multiprocessing.reductions import StorageWeakRef

        return StorageWeakRef(tensor.untyped_storage())
    except Exception:
        return None


class NamedTensor:
    """A named tensor a graph reads: where it was at capture, and how to find it now: `owner`.`attribute`, or for
    optimizer state (`parameter` given) `owner`.state[parameter][attribute]. A parameter's requires_grad is kept
    too: its graph computes gradients only for what required them at capture."""

    __slots__ = ("owner", "attribute", "parameter", "role", "name", "address", "storage", "finalizer",
                 "requires_grad")

    def __init__(self, owner, attribute, role, name, tensor, parameter=None):
        self.owner = weakref.ref(owner)
        self.attribute = attribute
        self.parameter = weakref.ref(parameter) if parameter is not None else None
        self.role = role
        self.name = name
        self.address = address(tensor)
        self.storage = storage_ref(tensor)
        self.finalizer = None
        self.requires_grad = bool(getattr(tensor, "requires_grad", False)) if role == "parameter" else None

    def now(self):
        owner = self.owner()
        if owner is None:
            return None
        if self.parameter is None:
            return getattr(owner, self.attribute, None)
        parameter = self.parameter()
        state = owner.state.get(parameter) if parameter is not None else None
        return state.get(self.attribute) if isinstance(state, dict) else None

    def freed(self):
        return expired(self.storage)


class PathTensor:
    """A tensor the captured code reached through a global, a closure cell, an attribute or an entry (a pinned
    staging buffer in a dict, a device batch on an object): its memory at capture, and the path to follow again."""

    __slots__ = ("read", "address", "storage", "finalizer")

    def __init__(self, read):
        tensor = read.captured()
        self.read, self.address, self.storage, self.finalizer = read, address(tensor), storage_ref(tensor), None

    def watch_release(self, graph_id):
        tensor = self.read.captured()
        if tensor is None:
            return
        try:
            self.finalizer = weakref.finalize(tensor, released, graph_id, "static-input", self.read.label,
                                              self.address)
            self.finalizer.atexit = False
        except Exception:
            pass


def released(graph_id, role, name, address):
    """The program dropped its last Python reference to a tensor a graph reads: the line is the stack now."""
    events.tensor_released(graph=graph_id, role=role, name=name, address=address)
