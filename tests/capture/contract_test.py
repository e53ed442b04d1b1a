"""The Python probe's capture contract (python/probe/graphcheck_probe/contract.py) against real torch on a CPU: what a
capture ran and baked in, and the events its replays' looks send. CUDA is not needed: the capture is the contract's
own begin and end around eager code (what runs inside a real capture is the same Python), tensors on the CPU stand for
the device's (contract.on_device is replaced), and the recorder is a list.

Each planted defect must send its event at the program's line (here, this file's), and each clean twin must send
none: a module captured in training mode replayed after eval(); a parameter given new .data (kept, and freed); a
buffer regrown with torch.cat; a Python number the forward reads changed; host random draws (Python's random, torch's
CPU generator) inside the capture; a buffer replaced and optimizer state created inside the capture; a .grad in a
graph pool before a graphed backward.

usage: contract_test.py PROBE_DIR [TORCH_SITE_DIR]   (torch from the environment, or from TORCH_SITE_DIR)
"""
import random
import sys

from probe_checks import Graph, Recorder, check, finish, line_of, use_probe_and_torch

use_probe_and_torch(sys.argv)
import torch  # noqa: E402

from graphcheck_probe import bridge, contract, graph_tensors, graphed_calls, patches, watches  # noqa: E402
from graphcheck_probe.bridge import EventKind, Origin  # noqa: E402

class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.drop = torch.nn.Dropout(0.5)
        self.idle = torch.nn.Dropout(0.0)
        self.temperature = 1.0
        self.register_buffer("buf", torch.zeros(4))

    def forward(self, x):
        return self.idle(self.drop(self.lin(x))) / self.temperature + self.buf


def capture(model, body=None, stepped=()):
    """Runs `model` (and `body`) between the contract's capture begin and end; returns (graph, its Contract).
    `stepped`: the optimizers that stepped inside it."""
    graph = Graph()
    x = torch.randn(2, 4)
    contract.capture_started(graph, Origin.USER)
    with torch.random.fork_rng():  # dropout on the CPU draws from its generator; on a GPU it would not
        model(x)
    if body is not None:
        body()
    taken = contract.stop_capture()
    terms = contract.capture_ended(graph, taken, sys._getframe(0), 0, list(stepped))
    watches.graph_watch(graph).contract = terms  # as patches' capture_end does
    return graph, terms


def fresh():
    bridge.recorder = Recorder(__file__)
    torch.manual_seed(0)
    return bridge.recorder, Scaled().train()


contract.on_device = lambda tensor: True
patches.apply(patches._patch_module, sys.modules["torch.nn.modules.module"])  # train(), __setattr__

# The tensors a capture names, and a clean replay: nothing sent but the named tensors.
recorder, model = fresh()
graph, terms = capture(model)
sent = recorder.of(EventKind.GRAPH_TENSORS)
check("one graph-tensors event at capture end", len(sent) == 1, recorder.events)
names = sent[0]["text"].splitlines() if sent else []
check("parameters and the buffer are named", any(n.startswith("parameter\tmodel.lin.weight\t") for n in names) and
      any(n.startswith("buffer\tmodel.buf\t") for n in names), names)
check("a training flag and three numbers are baked in (temperature, both dropouts' p)",
      sent and sent[0]["value"] == 4, sent)
check("dropout of p=0 is not mode-sensitive", [m[1] for m in terms.modes] == ["model.drop"], terms.modes)
terms.look()
check("a clean replay sends nothing", len(recorder.events) == 1, recorder.events)

# Training mode: captured in training, replayed in eval.
model.eval()  # the mode changed
check("eval() arms the graph's next look", terms.armed)
check("and puts a replay watch on the graph", "replay" in graph.__dict__, graph.__dict__)
graph.replay()
check("whose look disarms it", not terms.armed)
modes = recorder.of(EventKind.TRAINING_MODE_CHANGED)
check("a replay in eval of a training capture is sent at the eval() that changed the mode", len(modes) == 1 and
      modes[0]["text"] == "model.drop" and modes[0]["value"] == 1 and
      modes[0]["line"] == line_of(__file__, "# the mode changed"), modes)
terms.look(modes_only=True)
check("once", len(recorder.of(EventKind.TRAINING_MODE_CHANGED)) == 1)
model.train()
recorder, model = fresh()
graph, terms = capture(model.eval())
model.eval()
terms.look()
check("clean twin: eval capture replayed in eval sends nothing", not recorder.of(EventKind.TRAINING_MODE_CHANGED))
recorder, model = fresh()
with torch.no_grad():
    graph, terms = capture(model.eval())
model.train()  # the program trains eagerly between evaluations through the eval graph
graph.replay()
check("clean twin: an eval inference graph replayed between training steps sends nothing",
      not recorder.of(EventKind.TRAINING_MODE_CHANGED), recorder.events)
recorder, model = fresh()
graph, terms = capture(model.eval())
model.train()
graph.replay()
check("a training graph captured in eval mode and replayed in training is sent",
      [e["value"] for e in recorder.of(EventKind.TRAINING_MODE_CHANGED)] == [0], recorder.events)

# Rebinding: new .data on a parameter, the old memory kept (an EMA backup), then freed.
recorder, model = fresh()
graph, terms = capture(model)
backup = model.lin.weight.data
model.lin.weight.data = torch.randn(4, 4)  # swap in EMA weights
terms.look()
rebound = recorder.of(EventKind.STATE_REBOUND)
check("a parameter given new .data is sent as rebound, not freed", len(rebound) == 1 and
      rebound[0]["text"] == "model.lin.weight" and rebound[0]["pool"] == 0, rebound)
recorder, model = fresh()
graph, terms = capture(model)
model.lin.weight.data = torch.randn(4, 4)
terms.look()
rebound = recorder.of(EventKind.STATE_REBOUND)
check("with the old memory dropped it is sent as freed", len(rebound) == 1 and rebound[0]["pool"] == 1, rebound)
recorder, model = fresh()
graph, terms = capture(model)
model.lin.weight.data.copy_(torch.randn(4, 4))
terms.look()
check("clean twin: copied in place sends nothing", not recorder.of(EventKind.STATE_REBOUND), recorder.events)

# A buffer regrown with torch.cat: released at that line, then seen freed.
recorder, model = fresh()
graph, terms = capture(model)
model.buf = torch.cat([model.buf, torch.zeros(4)])[:4]  # regrow the buffer
released = [e for e in recorder.of(EventKind.TENSOR_RELEASED) if e["graph"] == id(graph)]  # not earlier models'
check("the line that dropped the buffer is sent", len(released) == 1 and released[0]["text"] == "model.buf" and
      released[0]["line"] == line_of(__file__, "# regrow the buffer"), released)
terms.look()
rebound = recorder.of(EventKind.STATE_REBOUND)
check("and the replay sees it freed", len(rebound) == 1 and rebound[0]["pool"] == 1, rebound)
recorder, model = fresh()
graph, terms = capture(model)
model.buf.add_(1)
terms.look()
check("clean twin: a buffer updated in place sends nothing",
      not recorder.of(EventKind.STATE_REBOUND) and
      not [e for e in recorder.of(EventKind.TENSOR_RELEASED) if e["graph"] == id(graph)], recorder.events)

# A number the forward reads.
recorder, model = fresh()
graph, terms = capture(model)
model.temperature = 0.5  # anneal the temperature
terms.look()
changed = recorder.of(EventKind.HOST_VALUE_CHANGED)
check("a changed attribute is sent at the line that set it", len(changed) == 1 and
      changed[0]["text"] == "model.temperature" and changed[0]["type_name"] == "module-attribute" and
      changed[0]["pool"] == 1 and changed[0]["line"] == line_of(__file__, "# anneal the temperature"), changed)
recorder, model = fresh()
graph, terms = capture(model)
model.temperature = 1.0
model.extra = 3.0
terms.look()
check("clean twin: the same value set again, or a number the forward does not read, sends nothing",
      not recorder.of(EventKind.HOST_VALUE_CHANGED), recorder.events)
recorder, model = fresh()
graph, terms = capture(model)
model.temperature = 0.25  # a context manager's: set, then put back before the next replay
model.temperature = 1.0
terms.look()
check("clean twin: a value put back before the next replay sends nothing",
      not recorder.of(EventKind.HOST_VALUE_CHANGED), recorder.events)

# Host random draws inside the capture.
recorder, model = fresh()
graph, terms = capture(model, lambda: random.random() < 0.5)  # stochastic depth on the host
draws = recorder.of(EventKind.HOST_RANDOM_DRAW)
check("Python's random is sent at its line", len(draws) == 1 and draws[0]["type_name"] == "python-random" and
      draws[0]["line"] == line_of(__file__, "# stochastic depth on the host"), draws)
recorder, model = fresh()
graph, terms = capture(model, lambda: torch.rand(()))  # noise scale on the CPU generator
draws = recorder.of(EventKind.HOST_RANDOM_DRAW)
check("torch's CPU generator is sent at the torch call", len(draws) == 1 and draws[0]["type_name"] == "torch-cpu"
      and draws[0]["line"] == line_of(__file__, "# noise scale on the CPU generator"), draws)
recorder, model = fresh()
graph, terms = capture(model, lambda: torch.rand((), generator=torch.Generator().manual_seed(1)))
check("clean twin: a private generator's draw moves no global state",
      not [d for d in recorder.of(EventKind.HOST_RANDOM_DRAW) if d["type_name"] == "torch-cpu"], recorder.events)
check("the profile function is gone after the capture", sys.getprofile() is None, sys.getprofile())
recorder, model = fresh()


def other_thread_draws():
    import threading

    worker = threading.Thread(target=lambda: [random.random() for _ in range(10)])
    worker.start()
    worker.join()


graph, terms = capture(model, other_thread_draws)
check("clean twin: another thread's draws during the capture are not the capture's",
      not recorder.of(EventKind.HOST_RANDOM_DRAW), recorder.events)

# State made inside the capture, in the graph's pool (here: the tensors the stand-in pool covers).
pool_of = []  # the tensors whose memory the next capture's "pool" holds
contract.pool_segments = lambda torch, graph: [(t.data_ptr(), max(t.numel() * t.element_size(), 1)) for t in pool_of()]
recorder, model = fresh()
pool_of = lambda: [model.buf]
graph, terms = capture(model, lambda: setattr(model, "buf", model.buf * 0.9 + 1))  # replace the buffer inside
made = recorder.of(EventKind.STATE_MADE_IN_CAPTURE)
check("a buffer replaced inside the capture is sent at its line, with the address it had before",
      len(made) == 1 and made[0]["type_name"] == "buffer" and made[0]["text"] == "model.buf" and
      made[0]["value"] != made[0]["value_now"] and made[0]["pool"] == 16 and
      made[0]["line"] == line_of(__file__, "# replace the buffer inside"), made)
recorder, model = fresh()
pool_of = lambda: [model.buf]
graph, terms = capture(model, lambda: model.buf.mul_(0.9).add_(1))
check("clean twin: a buffer updated in place inside the capture sends nothing",
      not recorder.of(EventKind.STATE_MADE_IN_CAPTURE), recorder.events)
recorder, model = fresh()
pool_of = lambda: [model.buf]
graph, terms = capture(model, lambda: setattr(model, "buf", torch.mul(model.buf, 0.9, out=model.buf)))
check("clean twin: a buffer set to itself, written in place (spectral_norm's power iteration), sends nothing",
      not recorder.of(EventKind.STATE_MADE_IN_CAPTURE), recorder.events)
recorder, model = fresh()
outside = torch.zeros(4)
pool_of = lambda: []
graph, terms = capture(model, lambda: setattr(model, "buf", outside))
check("clean twin: a buffer replaced with a tensor outside the graph's pool sends nothing",
      not recorder.of(EventKind.STATE_MADE_IN_CAPTURE), recorder.events)
from torch.optim.optimizer import register_optimizer_step_pre_hook  # noqa: E402

hook = register_optimizer_step_pre_hook(contract.optimizer_stepping)


def sgd_step(optimizer):
    model.lin.weight.grad = torch.ones(4, 4)
    model.lin.bias.grad = torch.ones(4)
    optimizer.step()  # the optimizer's step


recorder, model = fresh()
optimizer = torch.optim.SGD(model.lin.parameters(), lr=0.1, momentum=0.9)
pool_of = lambda: [s["momentum_buffer"] for s in optimizer.state.values()]
graph, terms = capture(model, lambda: sgd_step(optimizer), [optimizer])  # its first step, inside the capture
made = recorder.of(EventKind.STATE_MADE_IN_CAPTURE)
check("optimizer state made by a first step inside the capture is sent at the step",
      len(made) == 1 and made[0]["type_name"] == "optimizer-state" and made[0]["pool"] == 2 and
      "SGD momentum_buffer of model.lin.weight" in made[0]["text"] and
      made[0]["line"] == line_of(__file__, "# the optimizer's step"), made)
recorder, model = fresh()
optimizer = torch.optim.SGD(model.lin.parameters(), lr=0.1, momentum=0.9)
sgd_step(optimizer)  # warm-up
pool_of = lambda: [s["momentum_buffer"] for s in optimizer.state.values()]
graph, terms = capture(model, lambda: sgd_step(optimizer), [optimizer])
check("clean twin: optimizer state made in the warm-up sends nothing",
      not recorder.of(EventKind.STATE_MADE_IN_CAPTURE), recorder.events)
hook.remove()
pool_of = lambda: []

# A .grad in a graph's pool before a graphed backward.
recorder, model = fresh()
x = torch.randn(2, 4)
for step in range(2):
    out = model(x)
    reported = []
    graphed_calls.watch_backward(out, lambda: model.named_parameters(), id(model), reported)
    out.sum().backward()  # the graphed backward
    if step == 0:
        check("clean twin: a .grad outside every pool sends nothing", not recorder.of(EventKind.GRAD_ALIASED))
        address = model.lin.weight.grad.data_ptr()
        graph_tensors.pools[1] = [(address, address + 64)]
aliased = recorder.of(EventKind.GRAD_ALIASED)
check("a .grad inside a pool is sent at the backward's line", len(aliased) == 1 and
      aliased[0]["text"] == "lin.weight" and aliased[0]["line"] == line_of(__file__, "# the graphed backward"), aliased)
graph_tensors.pools.clear()

finish()
