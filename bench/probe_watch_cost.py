"""The Python probe's replay-audit watches, timed on the host without a GPU (stand-in tensors, graphs and optimizers;
the recorder absent, so an event costs what building it costs, not the ctypes call): what a graphed call's shape check,
a watched replay, a scheduler's step and the stack kept at each graphed call (frames.encode_stack) add. These are the
host-side costs the audit adds to a program; the ctypes call of an event that fires is bench/probe_cost.py's event_us
(GPU machine).

usage: python3 bench/probe_watch_cost.py [TORCH_SITE_DIR]    (prints one JSON line; with torch, pool_order's look too)
"""
import json
import os
import sys
import timeit
import weakref

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "probe"))
if len(sys.argv) > 1:
    sys.path.insert(0, sys.argv[1])
from graphcheck_probe import frames, graphed_calls, watches  # noqa: E402

N = 100000


class Tensor:
    def __init__(self, shape):
        self.shape = shape
        self.dtype = "float32"


class Graph:
    def replay(self):
        pass


class Optimizer:
    def __init__(self):
        self.param_groups = [{"params": [], "lr": 0.01, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0}]


def deep_stack(depth, measure):
    """`measure()` called `depth` frames down: the stack a graphed call's held-output watch encodes at every call."""
    return measure() if depth == 0 else deep_stack(depth - 1, measure)


def main():
    shapes = graphed_calls.InputShapes([Tensor((32, 64))])
    shapes.captured = [((32, 64), "float32")]
    batch = [Tensor((32, 64))]
    call_us = timeit.timeit(lambda: shapes.changes(batch), number=N) / N * 1e6

    graph = Graph()
    plain_us = timeit.timeit(graph.replay, number=N) / N * 1e6
    optimizer = Optimizer()
    state = watches.CaptureState(graph, watches.Origin.USER)
    state.stepped = [optimizer]
    watch = watches.graph_watch(graph)
    watch.host = watches.HostStateWatch(state, {})
    watches.watch_replays(graph, None)
    watched_us = timeit.timeit(graph.replay, number=watches.LAST_LOOK) / watches.LAST_LOOK * 1e6
    look_us = timeit.timeit(lambda: watch.host.look(), number=N) / N * 1e6
    watches._host_watches.add(watch.host)
    scheduler_us = timeit.timeit(lambda: watches.host_values_changed(optimizer), number=N) / N * 1e6
    stack_us = deep_stack(20, lambda: timeit.timeit(lambda: frames.encode_stack(sys._getframe(0)), number=N // 10)
                          / (N // 10) * 1e6)
    figures = {"shape_check_us": round(call_us, 3), "encode_stack_20_frames_us": round(stack_us, 3),
               "replay_unwatched_us": round(plain_us, 3), "replay_watched_us": round(watched_us, 3),
               "host_look_us": round(look_us, 3), "scheduler_step_hook_us": round(scheduler_us, 3),
               "hyperparameters": len(watch.host.hyperparameters)}
    figures.update(pool_order_cost())
    print(json.dumps(figures))


def pool_order_cost():
    """pool_order's look at a replay of the first of two graphs sharing a pool, from a loop whose frame holds 20
    variables (10 tensors, 5 lists of 8 tensors, 5 numbers), the later graph's output held by a handle only (nothing
    sent): one look, and its share of each of LAST_LOOK replays (looks on the first 8, then the powers of two). Needs
    torch (the wheel's, --torch-site DIR); {} without it."""
    try:
        import torch
    except ImportError:
        return {}
    from graphcheck_probe import pool_order

    first, second = Graph(), Graph()
    output = torch.zeros(64)
    earlier = pool_order.captured(first, 1)
    later = pool_order.captured(second, 1)
    pool_order.name_outputs(later, [weakref.ref(output)])

    def loop_frame():
        tensors = [torch.zeros(8) for _ in range(10)]
        lists = [[torch.zeros(8) for _ in range(8)] for _ in range(5)]
        t0, t1, t2, t3, t4, t5, t6, t7, t8, t9 = tensors
        l0, l1, l2, l3, l4 = lists
        n0, n1, n2, n3, n4, handle = 1, 2.0, 3, 4.0, 5, output
        for _ in range(1):
            return timeit.timeit(lambda: pool_order.replaying(earlier, sys._getframe(0)), number=N // 100) / (
                N // 100) * 1e6

    later.handles = {(id(loop_frame.__code__), "handle")}
    look_us = loop_frame()
    looks = sum(1 for n in range(1, watches.LAST_LOOK + 1) if watches.due(n))
    return {"pool_order_look_us": round(look_us, 3),
            "pool_order_per_replay_us": round(look_us * looks / watches.LAST_LOOK, 3)}


main()
