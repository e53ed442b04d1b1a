"""Under `graphcheck run --hang-timeout` (GRAPHCHECK_HANG_TIMEOUT_MS): the waits outside CUDA that can stall a job.
The recorder bounds every synchronizing CUDA call; a job also stalls in NCCL's communicator teardown
(destroy_process_group: seen on two H100s, both ranks waiting because a captured graph still held NCCL work), in
process-group barriers and rendezvous, in collectives a rank never joins, and in a Python thread joining another.
Each such call sends WAIT_BEGIN (its name) and WAIT_END around itself, and the recorder bounds the time between them
like a synchronizing call's: past the bound it writes where the thread waited and ends the process (exit status 124).
Before destroy_process_group, the captured graphs still alive are named (GRAPH_ALIVE), since a graph that holds
collectives keeps the communicator from being destroyed.
"""
import weakref

from . import events

# Every graph captured in this process (capture_end adds it), for GRAPH_ALIVE.
live_graphs = weakref.WeakSet()

# torch.distributed.distributed_c10d's functions that wait on other ranks (a collective waits unless async_op=True).
_DISTRIBUTED_WAITS = ("init_process_group", "barrier", "monitored_barrier", "all_reduce", "all_gather",
                      "all_gather_into_tensor", "all_gather_object", "reduce_scatter_tensor", "broadcast",
                      "broadcast_object_list", "reduce", "all_to_all_single", "send", "recv")


def _bounded(name, function, announce_graphs=False):
    def wait(*args, **kwargs):
        if announce_graphs:
            for graph in list(live_graphs):
                events.graph_alive(graph=id(graph))
        events.wait(begin=True, what=name)
        try:
            return function(*args, **kwargs)
        finally:
            events.wait(begin=False, what=name)

    wait.__wrapped__ = function
    wait.__name__ = getattr(function, "__name__", name)
    wait.__qualname__ = getattr(function, "__qualname__", name)
    wait.__doc__ = getattr(function, "__doc__", None)
    return wait


def patch_distributed(module):
    """torch.distributed.distributed_c10d: destroy_process_group (announcing the graphs alive), barriers, rendezvous
    and blocking collectives; patched before torch.distributed binds their names."""
    module.destroy_process_group = _bounded("torch.distributed.destroy_process_group",
                                            module.destroy_process_group, announce_graphs=True)
    for name in _DISTRIBUTED_WAITS:
        function = getattr(module, name, None)
        if callable(function):
            setattr(module, name, _bounded("torch.distributed." + name, function))


def patch_threading(module):
    """threading.Thread.join: a Python thread blocked on another."""
    module.Thread.join = _bounded("threading.Thread.join", module.Thread.join)
