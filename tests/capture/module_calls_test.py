"""`graphcheck run --plan`'s module-call hooks (python/probe/graphcheck_probe/module_calls.py) against real torch on a
CPU: one begin and one end event per outermost call, none for the calls nested in it; the end names the class and
the input shapes, how many module calls were nested in it, and what the hooks add to each, measured once torch is
imported with the hooks taken off and put back.

usage: module_calls_test.py PROBE_DIR [TORCH_SITE_DIR]   (torch from the environment, or from TORCH_SITE_DIR)
"""
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
    """An outermost module whose forward makes 4 nested module calls: the Sequential and its 3 layers."""

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))

    def forward(self, x, mask=None):
        return self.body(x)


recorder = Recorder()
bridge.recorder = recorder
module_calls.install(hooks, torch, limit=3)
module_calls.measure_hook_cost(torch)
net = Net()
with torch.no_grad():
    for batch in (2, 5, 7, 9):  # the 4th is past the limit
        net(torch.zeros(batch, 8), mask=torch.ones(batch, 3))
begins = [e for e in recorder.events if e["kind"] == EventKind.MODULE_CALL_BEGIN]
ends = [e for e in recorder.events if e["kind"] == EventKind.MODULE_CALL_END]
check("one begin and one end per outermost call, up to the limit", (len(begins), len(ends)) == (3, 3),
      recorder.events)
check("calls numbered in order", [e["value"] for e in ends] == [1, 2, 3], ends)
check("the end names the class and the input shapes", ends[0]["text"] == "Net\t0=2x8\tmask=2x3", ends[0])
check("the end counts the module calls nested in it", all(e["pool"] == 4 for e in ends), ends)
cost = ends[0]["value_now"]
check("the hooks' cost per nested call was measured", 0 < cost < 1_000_000, cost)
check("the hooks came back after the measurement", len(module_calls._hooks["handles"]) == 2)

finish()
