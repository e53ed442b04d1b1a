"""The shape of torch/cuda/memory.py's allocator history: what _record_memory_history was asked for, and a snapshot
whose history is one block allocated, its free requested and completed, all stamped with the wall clock."""
import time

recorded = {}


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=0):
    recorded.update(enabled=enabled, context=context, stacks=stacks, max_entries=max_entries)


def _snapshot():
    if recorded.get("enabled") != "all":
        return {"segments": [], "device_traces": [[]]}
    now_us = time.time_ns() // 1000
    return {"segments": [], "device_traces": [[
        {"action": "segment_alloc", "addr": 4096, "size": 2097152, "stream": 0, "time_us": now_us - 300},
        {"action": "alloc", "addr": 4096, "size": 4000, "stream": 0, "time_us": now_us - 200},
        {"action": "free_requested", "addr": 4096, "size": 4000, "stream": 0, "time_us": now_us - 100},
        {"action": "free_completed", "addr": 4096, "size": 4000, "stream": 0, "time_us": now_us - 100},
    ]]}
