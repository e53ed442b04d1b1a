"""`graphcheck run --plan`'s module-call hooks (python/probe/graphcheck_probe/module_calls.py) against real torch on a
CPU: one begin and one end event per outermost call, none for the calls nested in it; the end names the class and
the input shapes; the nested calls run with no global hook (PyTorch's fast path), a module that calls itself ends
its outermost call once, a call that raises still ends, and past the limit no hook is left.

usage: module_calls_test.py PROBE_DIR [TORCH_SITE_DIR]   (torch from the environment, or from TORCH_SITE_DIR)
"""
import functools
import sys

from probe_checks import check, finish, use_probe_and_torch

use_probe_and_torch(sys.argv)
import torch  # noqa: E402
import torch.nn.modules.module as hooks  # noqa: E402

from graphcheck_probe import bridge, module_calls  # noqa: E402
from graphcheck_probe.bridge import EventKind  # noqa: E402

class Recorder:
    """bridge.recorder's stand-in: the events as keyword dicts."""

    def __init__(self):
        self.events = []

    def emit(self, kind, **fields):
        self.events.append(dict(fields, kind=kind))


class Net(torch.nn.Module):
    """An outermost module whose forward makes 4 nested module calls: the Sequential and its 3 layers. It notes
    whether global forward hooks were registered while it ran (nested calls take the fast path only without them)."""

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
        self.global_hooks_seen = []

    def forward(self, x, mask=None):
        self.global_hooks_seen.append(len(hooks._global_forward_pre_hooks) + len(hooks._global_forward_hooks))
        return self.body(x)


def returns_tuple(forward):
    """A decorator as Hugging Face puts on its models' forward (can_return_tuple): (self, *args, **kwargs)."""

    @functools.wraps(forward)
    def wrapper(self, *args, **kwargs):
        return forward(self, *args, **kwargs)

    return wrapper


class Decorated(torch.nn.Module):
    @returns_tuple
    def forward(self, input_ids, attention_mask=None):
        return input_ids


class Recursive(torch.nn.Module):
    """A module that calls itself `depth` times deep, then fails when asked."""

    def forward(self, x, depth=2, fail=False):
        if depth > 0:
            return self(x, depth=depth - 1, fail=fail)
        if fail:
            raise ValueError("planted")
        return x


def events(kind):
    return [e for e in recorder.events if e["kind"] == kind]


recorder = Recorder()
bridge.recorder = recorder
hooks_before = len(hooks._global_forward_pre_hooks)
module_calls.install(hooks, torch, limit=6)
net = Net()
with torch.no_grad():
    for batch in (2, 5, 7):
        net(torch.zeros(batch, 8), mask=torch.ones(batch, 3))
ends = events(EventKind.MODULE_CALL_END)
check("one begin and one end per outermost call", (len(events(EventKind.MODULE_CALL_BEGIN)), len(ends)) == (3, 3),
      recorder.events)
check("calls numbered in order", [e["value"] for e in ends] == [1, 2, 3], ends)
check("the end names the class and the input shapes, positional ones by forward's parameter names",
      ends[0]["text"] == "Net\tx=2x8\tmask=2x3", ends[0])
check("the end asks for no stack (the begin's is the call's)", all(e["frames"] == "" for e in ends), ends)
check("no global hook while an outermost call runs", net.global_hooks_seen == [0, 0, 0], net.global_hooks_seen)

Decorated()(torch.zeros(4, 32))
check("a decorated forward's inputs by the parameter names of the function it wraps",
      events(EventKind.MODULE_CALL_END)[3]["text"] == "Decorated\tinput_ids=4x32", events(EventKind.MODULE_CALL_END))

recursive = Recursive()
recursive(torch.zeros(3))
try:
    recursive(torch.zeros(4), fail=True)
except ValueError:
    pass
ends = events(EventKind.MODULE_CALL_END)
check("a module that calls itself, and a call that raises, end once each",
      [e["text"] for e in ends[4:]] == ["Recursive\tx=3", "Recursive\tx=4"], ends)
check("its own hooks are gone after each call", not recursive._forward_hooks and not recursive._forward_pre_hooks)
check("past the limit, no global hook is left", len(hooks._global_forward_pre_hooks) == hooks_before,
      len(hooks._global_forward_pre_hooks))
net(torch.zeros(1, 8))
check("and no call is sent", len(events(EventKind.MODULE_CALL_END)) == 6, recorder.events)

finish()
