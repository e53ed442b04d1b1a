"""The Python probe's replay-audit watches, timed on the host without a GPU (stand-in tensors, graphs and optimizers;
the recorder absent, so an event costs what building it costs, not the ctypes call): what a graphed call's shape check,
a watched replay, a scheduler's step and the stack kept at each graphed call (frames.encode_stack) add. These are the
host-side costs the audit adds to a program; the ctypes call of an event that fires is bench/probe_cost.py's event_us
(GPU machine).

usage: python3 bench/probe_watch_cost.py    (prints one JSON line)
"""
import json
import os
import sys
import timeit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "probe"))
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
    print(json.dumps({"shape_check_us": round(call_us, 3), "encode_stack_20_frames_us": round(stack_us, 3), "replay_unwatched_us": round(plain_us, 3),
                      "replay_watched_us": round(watched_us, 3), "host_look_us": round(look_us, 3),
                      "scheduler_step_hook_us": round(scheduler_us, 3), "hyperparameters": len(
                          watch.host.hyperparameters)}))


main()
