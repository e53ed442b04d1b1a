"""The capture contract as observed (python/probe/graphcheck_probe/host_reads.py, host_draws.py, and the contract's
flags and memory) against real torch on a CPU: whatever path the program took to a value, flag or tensor a graph
depends on, a change after capture is sent, at the line that made it where one can be found. Each planted defect has
a clean twin that must send nothing. As in contract_test.py, the capture is the contract's own begin and end around
eager code, CPU tensors stand for the device's, and the recorder is a list.

usage: contract_observed_test.py PROBE_DIR [TORCH_SITE_DIR]
"""
import collections
import contextvars
import copy
import enum
import functools
import itertools
import os
import statistics
import sys
import time
import types
import weakref

from probe_checks import Graph, Recorder, check, finish, line_of, use_probe_and_torch

use_probe_and_torch(sys.argv)
import numpy  # noqa: E402
import torch  # noqa: E402

from graphcheck_probe import bridge, contract, graph_tensors, graphed_calls, patches, watches  # noqa: E402
from graphcheck_probe.bridge import EventKind, Origin  # noqa: E402

contract.on_device = lambda tensor: True
watches.is_graph_readable = lambda value: isinstance(value, torch.Tensor)  # pinned memory needs CUDA
patches.apply(patches._patch_module, sys.modules["torch.nn.modules.module"])
patches.apply(patches._patch_optimizer, sys.modules["torch.optim.optimizer"])
HERE = __file__


def fresh():
    bridge.recorder = Recorder(HERE)
    torch.manual_seed(0)
    return bridge.recorder, torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4)).train()


def capture(body, stepped=()):
    """Runs `body` between the contract's capture begin and end, with the graph's replays watched."""
    graph = Graph()
    contract.capture_started(graph, Origin.USER)
    body()
    taken = contract.stop_capture()
    watches.graph_watch(graph).contract = contract.capture_ended(graph, taken, sys._getframe(0), 0, list(stepped))
    watches.watch_replays(graph, None)
    return graph


def changed(recorder, role):
    return [e for e in recorder.of(EventKind.HOST_VALUE_CHANGED) if e["type_name"] == role]


def check_sent_at(made, role, label, marker, what):
    """The events of `role` after a capture and its replays: with the change `made`, one for `label`, at the line
    marked `marker` (what the program changed: `what`); without it, none."""
    recorder = bridge.recorder
    sent = changed(recorder, role)
    if not made:
        check("clean twin: %s that stays sends nothing" % what, not sent, recorder.events)
    else:
        check("%s, changed, is sent at the line that changed it" % what, len(sent) == 1 and
              sent[0]["text"].startswith(label + "\n") and sent[0]["line"] == line_of(HERE, marker), sent)


x = torch.randn(8, 4)

# A module-level float the captured step reads, ramped between replays.
TEMPERATURE = 1.0
STEPS_SEEN = 0


def tempered(model):
    global STEPS_SEEN
    STEPS_SEEN += 1  # a counter the captured code keeps itself
    return model(x) / TEMPERATURE


def ramp(graph, values):
    global TEMPERATURE
    for value in values:
        TEMPERATURE = value  # ramp the global
        graph.replay()


recorder, model = fresh()
graph = capture(lambda: tempered(model))
ramp(graph, [1.0, 1.0])
check("clean twin: a global read inside the capture and left alone, or counted by the captured code, sends nothing",
      not recorder.of(EventKind.HOST_VALUE_CHANGED), recorder.events)
ramp(graph, [0.5])
sent = changed(recorder, "global")
check("a global the captured code read, changed, is sent at the line that stored it", len(sent) == 1 and
      sent[0]["text"].startswith("TEMPERATURE\ntempered() at ") and sent[0]["pool"] == 1 and
      sent[0]["line"] == line_of(HERE, "# ramp the global") and
      bridge.double_bits(1.0) == sent[0]["value"] and bridge.double_bits(0.5) == sent[0]["value_now"], sent)
TEMPERATURE = 1.0


# The store in a callback the replaying loop's caller defined (`anneal`, passed to a training loop): found there.
def train_with(graph, between):
    for step in range(2):
        between(step)
        graph.replay()


def schedule(graph):
    def anneal(step):
        global TEMPERATURE
        TEMPERATURE = 1.0 / (step + 1)  # anneal in a callback

    train_with(graph, anneal)


recorder, model = fresh()
graph = capture(lambda: tempered(model))
schedule(graph)
sent = changed(recorder, "global")
check("a global stored in a callback defined by a caller of the replaying function is sent at that line",
      len(sent) == 1 and sent[0]["line"] == line_of(HERE, "# anneal in a callback"), sent)
TEMPERATURE = 1.0


# A `with torch.cuda.graph` body at module level reads its numbers as globals: a loop variable (the serving loop's bucket
# size) moves on by design and is left alone; another global is watched.
recorder, model = fresh()
GAIN = 2.0
body_graphs = []
for size in (4, 2):
    graph = Graph()
    contract.capture_started(graph, Origin.USER)
    contract.trace_body(sys._getframe(0))  # as patches' torch.cuda.graph.__enter__ does
    start = sys._getframe(0).f_lasti
    out = model(x[:size]) * GAIN * size
    contract.observe_body(sys._getframe(0), start, sys._getframe(0).f_lasti)
    taken = contract.stop_capture()
    watches.graph_watch(graph).contract = contract.capture_ended(graph, taken, sys._getframe(0), 0, [])
    watches.watch_replays(graph, None)
    body_graphs.append(graph)
body_graphs[0].replay()
check("clean twin: the loop variable a capture's body read, moved on, sends nothing",
      not recorder.of(EventKind.HOST_VALUE_CHANGED), recorder.events)
# A module-level serving loop: each bucket's body read the global `static`, which then moves to the next bucket's.
bucket_inputs = {size: torch.zeros(size, 4) for size in (4, 2)}
bucket_graphs = {}
for size in (4, 2):
    static = bucket_inputs[size]
    graph = Graph()
    contract.capture_started(graph, Origin.USER)
    contract.trace_body(sys._getframe(0))
    bucket_start = sys._getframe(0).f_lasti
    out = model(static) * GAIN
    contract.observe_body(sys._getframe(0), bucket_start, sys._getframe(0).f_lasti)
    taken = contract.stop_capture()
    watches.graph_watch(graph).contract = contract.capture_ended(graph, taken, sys._getframe(0), 0, [])
    watches.watch_replays(graph, None)
    bucket_graphs[size] = graph
for size in (4, 2):
    static = bucket_inputs[size]
    bucket_graphs[size].replay()
bucket_graphs[4].replay()  # `static` holds bucket 2's input now
check("clean twin: a module-level body's global moved between buckets' static inputs sends nothing",
      not recorder.of(EventKind.STATE_REBOUND), recorder.events)
for gain in (2.0, 3.0):
    GAIN = gain  # change the gain the body read
    body_graphs[0].replay()
sent = changed(recorder, "global")
check("a global the capture's body read is sent at the line in the replay's loop that stored it", len(sent) == 1 and
      sent[0]["text"].startswith("GAIN\n<module>() at ") and sent[0]["line"] == line_of(HERE, "# change the gain"), sent)


# A global in a branch the captured code did not take is no read: the graph never saw it.
def maybe_scaled(model, scaled):
    return model(x) * (TEMPERATURE if scaled else 1.0)


for scaled in (False, True):
    recorder, model = fresh()
    TEMPERATURE = 1.0
    graph = capture(lambda: maybe_scaled(model, scaled))
    ramp(graph, [0.25])
    sent = changed(recorder, "global")
    if scaled:
        check("a global in the branch the captured code took is sent", len(sent) == 1, recorder.events)
    else:
        check("clean twin: a global in a branch the captured code did not take sends nothing", not sent, sent)
TEMPERATURE = 1.0

# A closure variable, set by a sibling closure after the function that made both returned (blind set 1,
# closure-scale): sent at the sibling's store, found through the closures that share the cell.
def make_step(model):
    scale = 1.0

    def step():
        return model(x) * scale

    def set_scale(value):
        nonlocal scale
        scale = value  # the sibling's store

    return step, set_scale


recorder, model = fresh()
step, set_scale = make_step(model)
graph = capture(step)
set_scale(2.0)
graph.replay()  # replay after the closure changed
sent = changed(recorder, "closure")
check("a closure variable the captured code read, changed by a sibling closure, is sent at its store",
      len(sent) == 1 and sent[0]["text"].startswith("scale\n") and sent[0]["pool"] == 1 and
      sent[0]["line"] == line_of(HERE, "# the sibling's store"), sent)

# An attribute of a plain object and a dict entry, reached through globals.
CONFIG = types.SimpleNamespace(mix=0.25, name="run")
SCALES = {"loss": 2.0}


def mixed(model):
    return model(x) * CONFIG.mix * SCALES["loss"]


def retune(graph):
    CONFIG.mix = 0.5  # retune the config
    graph.replay()
    SCALES["loss"] = 4.0  # rescale the loss
    graph.replay()


recorder, model = fresh()
graph = capture(lambda: mixed(model))
graph.replay()
CONFIG.name = "renamed"
graph.replay()
check("clean twin: an attribute the captured code does not read, changed, sends nothing",
      not recorder.of(EventKind.HOST_VALUE_CHANGED), recorder.events)
retune(graph)
attribute, entry = changed(recorder, "attribute"), changed(recorder, "entry")
check("an object's attribute is sent at the line that set it", len(attribute) == 1 and
      attribute[0]["text"].startswith("CONFIG.mix\n") and attribute[0]["line"] == line_of(HERE, "# retune the config"),
      attribute)
check("a dict entry is sent at the line that set it", len(entry) == 1 and
      entry[0]["text"].startswith("SCALES['loss']\n") and entry[0]["line"] == line_of(HERE, "# rescale the loss"),
      entry)
CONFIG.mix, SCALES["loss"] = 0.25, 2.0


# A method's own number on a plain object (`self.loss_scale`), read through a longer path.
class Trainer:
    def __init__(self, model):
        self.model = model
        self.settings = types.SimpleNamespace(loss_scale=8.0)

    def step(self):
        return self.model(x) * self.settings.loss_scale


recorder, model = fresh()
trainer = Trainer(model)
graph = capture(trainer.step)
trainer.settings.loss_scale = 16.0
graph.replay()
sent = changed(recorder, "attribute")
check("a number reached through self.settings is sent", [e["text"].split("\n")[0] for e in sent] ==
      ["self.settings.loss_scale"], sent)


# Stores no frame of the replay shows, seen as they happen (attribute_stores.py) or found in the functions of a frame
# that defined the step: one of two branches of a method, a callback that rebinds an attribute to a new tuple the
# captured code unpacks, a sibling closure that slice-assigns a list of weights.
class Distiller:
    def __init__(self):
        self.epoch, self.stats, self.on_device = 0, (0.0, 1.0), False

    def set_epoch(self, epoch):
        if self.on_device:
            self.epoch = epoch
        else:
            self.epoch = epoch  # the branch that runs

    def loss(self, out):
        mean, std = self.stats
        return (out - mean) / std / (4.0 - self.epoch)


def drive(graph, before, values):
    for value in values:
        before(value)
        graph.replay()


def distill(model, between):
    distiller = Distiller()
    graph = capture(lambda: distiller.loss(model(x)))

    def refresh_stats(value):
        distiller.stats = (value, 1.0)  # new statistics

    drive(graph, distiller.set_epoch if between == "epoch" else refresh_stats, [0, 0.0] if between == "same" else [1])


def weighted(model, values):
    weights = [1.0, 0.0]

    def step():
        return sum(w * model(x).sum() for w in weights)

    def shift(a):
        weights[:] = [1.0 - a, a]  # slice-assign the weights

    drive(capture(step), shift, values)


recorder, model = fresh()
distill(model, "same")
weighted(model, [0.0])
check("clean twin: attributes and a list stored again with the values the graph read send nothing",
      not recorder.of(EventKind.HOST_VALUE_CHANGED), recorder.events)
for between, role, line in (("epoch", "attribute", "# the branch that runs"), ("stats", "entry", "# new statistics")):
    recorder, model = fresh()
    distill(model, between)
    sent = changed(recorder, role)
    check("an attribute stored where no frame of the replay shows (%s) is sent at that line" % between,
          len(sent) == 1 and sent[0]["pool"] == 1 and sent[0]["line"] == line_of(HERE, line), sent)
recorder, model = fresh()
weighted(model, [0.5])
sent = changed(recorder, "entry")
check("a list slice-assigned by a sibling closure is sent at that line", len(sent) == 1 and sent[0]["pool"] == 1 and
      sent[0]["line"] == line_of(HERE, "# slice-assign the weights"), sent)


# A functools.partial whose bound keyword the schedule changes (blind set 3, partial-keywords): the graph ran the
# loss with the keyword it had; sent at the store into .keywords. The same value stored again sends nothing.
def partial_loss(model, beta):
    criterion = functools.partial(torch.nn.functional.smooth_l1_loss, beta=2.0)

    def step():
        out = model(x)
        return criterion(out, torch.zeros_like(out))

    def tighten(value):
        criterion.keywords["beta"] = value  # tighten the loss

    drive(capture(step), tighten, [beta])


recorder, model = fresh()
partial_loss(model, 2.0)
check("clean twin: a partial's keyword stored again with its value sends nothing",
      not recorder.of(EventKind.HOST_VALUE_CHANGED), recorder.events)
recorder, model = fresh()
partial_loss(model, 0.25)
sent = changed(recorder, "closure")
check("a partial's keyword changed is sent at its store", len(sent) == 1 and
      sent[0]["text"].startswith("criterion.keywords['beta']") and
      sent[0]["line"] == line_of(HERE, "# tighten the loss"), sent)


# A number the step reads as text from the environment (blind set 3, environ-noise): the curriculum writes
# os.environ; sent at that store. The same text stored again sends nothing.
def environ_noise(model, text):
    os.environ["GRAPHCHECK_TEST_NOISE"] = "0.1"

    def step():
        return model(x * float(os.environ["GRAPHCHECK_TEST_NOISE"])).sum()

    def raise_noise(value):
        os.environ["GRAPHCHECK_TEST_NOISE"] = value  # raise the noise

    drive(capture(step), raise_noise, [text])


recorder, model = fresh()
environ_noise(model, "0.1")
check("clean twin: an environment variable stored again with its text sends nothing",
      not recorder.of(EventKind.HOST_VALUE_CHANGED), recorder.events)
recorder, model = fresh()
environ_noise(model, "0.3")
sent = changed(recorder, "attribute") + changed(recorder, "entry") + changed(recorder, "global")
check("a number read as text from os.environ, changed, is sent at its store", len(sent) == 1 and
      sent[0]["text"].startswith("os.environ['GRAPHCHECK_TEST_NOISE']") and
      sent[0]["line"] == line_of(HERE, "# raise the noise"), sent + recorder.events)


# A list attribute's entries stored by a variable index in a callback (`holder.scales[k] = value`), and a dict entry
# set before the capture in the frame that trains and again in the callback it passes: the first store ran before the
# capture, so the callback's is the change.
CLIP = {"max_norm": 1.0}


class Scales:
    def __init__(self):
        self.scales = [1.0, 1.0]


def scaled_training(model, change):
    CLIP["max_norm"] = 1.0  # set before the capture
    holder = Scales()
    step = lambda: model(x) * sum(holder.scales) * CLIP["max_norm"]  # noqa: E731 (kept: its cells are followed)
    graph = capture(step)

    def ramp(value):
        if change == "scales":
            for k in range(len(holder.scales)):
                holder.scales[k] = value  # ramp every scale
        else:
            CLIP["max_norm"] = value  # relax the clipping

    drive(graph, ramp, [2.0])


for change, line in (("scales", "# ramp every scale"), ("clip", "# relax the clipping")):
    recorder, model = fresh()
    scaled_training(model, change)
    sent = changed(recorder, "entry")
    check("an entry changed in a callback (%s) is sent at that line, not at a store before the capture" % change,
          len(sent) == 1 and sent[0]["pool"] == 1 and sent[0]["line"] == line_of(HERE, line), sent)


# An optimizer's hyperparameter and state, and a module's parameter, changed in a callback the training loop calls:
# no frame of the replay shows the store, which is found in the callback the frame that trains defines.
def optimizer_callbacks(change):
    recorder, model = fresh()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)

    def step():
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()

    step()  # the momentum buffers exist before the capture
    graph = Graph()
    watches.capture_started(graph, Origin.USER)
    contract.capture_started(graph, Origin.USER)
    step()
    taken = contract.stop_capture()
    watches.graph_watch(graph).host = watches.capture_ended(graph, sys._getframe(0))
    watches.graph_watch(graph).contract = contract.capture_ended(graph, taken, sys._getframe(0), 0, [optimizer])
    watches.watch_replays(graph, None)

    def restart(value):
        if change == "decay":
            for group in optimizer.param_groups:
                group["weight_decay"] = value  # schedule the decay
        elif change == "state":
            for p in model.parameters():
                optimizer.state[p]["momentum_buffer"] = torch.zeros_like(p)  # restart the momentum
        else:
            model[0].weight = torch.nn.Parameter(torch.zeros(4, 4))  # replace the weight

    drive(graph, restart, [0.5])
    return recorder


for change, kind, line in ((("decay", EventKind.HOST_VALUE_CHANGED, "# schedule the decay"),
                            ("state", EventKind.STATE_REBOUND, "# restart the momentum"),
                            ("weight", EventKind.STATE_REBOUND, "# replace the weight"))):
    sent = optimizer_callbacks(change).of(kind)
    check("a change made in a callback (%s) is sent at the callback's line" % change,
          len(sent) >= 1 and all(e["line"] == line_of(HERE, line) for e in sent), sent)


def host_watched(step):
    """A capture of `step`, run once before it, whose host values watches.HostStateWatch follows at replays."""
    step()
    graph = Graph()
    watches.capture_started(graph, Origin.USER)
    step()
    watches.graph_watch(graph).host = watches.capture_ended(graph, sys._getframe(1))
    watches.watch_replays(graph, None)
    return graph


# A param group added after a whole-step capture (blind set 3, param-group-added): the graph never steps the new
# parameters; sent at the add_param_group line. The same group added before the capture sends nothing.
def group_added(after_capture):
    recorder, model = fresh()
    adapter = torch.nn.Linear(4, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if not after_capture:
        optimizer.add_param_group({"params": list(adapter.parameters()), "lr": 0.1})

    def step():
        optimizer.zero_grad()
        (model(x) + adapter(x)).sum().backward()
        optimizer.step()

    graph = host_watched(step)
    graph.replay()
    if after_capture:
        optimizer.add_param_group({"params": list(adapter.parameters()), "lr": 0.1})  # the adapter joins
    graph.replay()
    return [e for e in recorder.of(EventKind.HOST_VALUE_CHANGED) if e["type_name"] == "optimizer-param-groups"]


sent = group_added(after_capture=True)
check("a param group added after the capture is sent at its line", len(sent) == 1 and sent[0]["text"] ==
      "SGD param_groups" and sent[0]["line"] == line_of(HERE, "# the adapter joins"), sent)
check("a param group added before the capture sends nothing", not group_added(after_capture=False),
      group_added(after_capture=False))


# A capturable optimizer's tensor lr (blind set 4, tensor-lr-rebound): replaced by another tensor between replays,
# the graph still reads the old one; filled in place, the graph reads the new value.
def tensor_lr(replaced):
    recorder, model = fresh()
    optimizer = torch.optim.SGD(model.parameters(), lr=torch.tensor(0.1), foreach=False)
    is_cuda_tensor, watches.is_cuda_tensor = watches.is_cuda_tensor, lambda value: isinstance(value, torch.Tensor)

    def step():
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()

    graph = host_watched(step)
    graph.replay()
    for group in optimizer.param_groups:
        if replaced:
            group["lr"] = group["lr"] * 0.5  # replace the lr tensor
        else:
            group["lr"].mul_(0.5)
    graph.replay()
    watches.is_cuda_tensor = is_cuda_tensor
    return [e for e in recorder.of(EventKind.STATE_REBOUND) if e["text"] == "SGD param_groups[0].lr"]


sent = tensor_lr(replaced=True)
check("a tensor lr replaced after the capture is sent as a rebound, at the line that replaced it", len(sent) == 1 and
      sent[0]["line"] == line_of(HERE, "# replace the lr tensor"), sent)
check("clean twin: a tensor lr updated in place sends nothing", not tensor_lr(replaced=False))


# Gradients averaged over micro-batches by rebinding .grad after a forward+backward graph that accumulates into them
# (blind set 2, grad-average-rebind): the graph goes on writing the old tensors; sent at the rebinding line, not at
# the zero_grad() that follows it. Its twin divides in place.
def averaged_grads(in_place):
    recorder, model = fresh()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(x).sum().backward()  # the .grad tensors exist before the capture
    graph = Graph()
    watches.capture_started(graph, Origin.USER)
    model(x).sum().backward()
    watches.graph_watch(graph).host = watches.capture_ended(graph, sys._getframe(0))
    watches.watch_replays(graph, None)
    for _ in range(2):
        graph.replay()
        for p in model.parameters():
            if in_place:
                p.grad.div_(2)
            else:
                p.grad = p.grad / 2  # average the gradient
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
    return changed(recorder, "grad")


for in_place in (False, True):
    sent = averaged_grads(in_place)
    if in_place:
        check("clean twin: gradients divided in place send nothing", not sent, sent)
    else:
        check("a .grad rebound after a graph that writes it is sent at the rebinding line", len(sent) >= 1 and
              all(e["line"] == line_of(HERE, "# average the gradient") and e["pool"] == 1 for e in sent), sent)


# A store below the replay in the frame that replays has not run yet: a change made where no store names the global
# (through globals()) is sent at the replay, not at the line that puts the value back afterwards.
OFFSET = 0.0


def put_back_after(model):
    global OFFSET
    graph = capture(lambda: model(x) + OFFSET)
    globals()["OFFSET"] = 0.5
    graph.replay()  # replay after an unnamed change
    OFFSET = 0.0  # put the value back


recorder, model = fresh()
put_back_after(model)
sent = changed(recorder, "global")
check("a store below the replay is not taken for the change", len(sent) == 1 and
      sent[0]["line"] == line_of(HERE, "# replay after an unnamed change"), sent)


# A class attribute set by a classmethod between replays, and set before the capture by the function that trains,
# nested in another: that earlier store was judged where its frame ran, and is not found again among the functions
# the outer frame defines; the classmethod is the one place that sets it.
class Decay:
    decay_rate = 0.1

    @classmethod
    def set_rate(cls, value):
        cls.decay_rate = value  # the classmethod that sets it

    def factor(self):
        return 1.0 - self.decay_rate


def decayed_training(model):
    def run():
        Decay.decay_rate = 0.1  # set before the capture
        holder = Decay()
        step = lambda: model(x) * holder.factor()  # noqa: E731 (kept: its cells are followed)
        graph = capture(step)
        Decay.set_rate(0.2)
        graph.replay()

    run()


recorder, model = fresh()
decayed_training(model)
sent = changed(recorder, "attribute")
check("a store judged in its own frame is not found again in the caller's functions", len(sent) == 1 and
      sent[0]["line"] == line_of(HERE, "# the classmethod that sets it"), sent)


# A list of numbers the captured code read by a variable index or iterated (per-layer scales in a loop): any of its
# numbers is baked in.
class Indexed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])
        self.layer_scales = [1.0, 1.0, 1.0]

    def forward(self, z):
        for i, block in enumerate(self.blocks):
            z = block(z) * self.layer_scales[i]
        return z


class Iterated(Indexed):
    def forward(self, z):
        for scale, block in zip(self.layer_scales, self.blocks):
            z = block(z) * scale
        return z


def rescale(model, graph):
    model.layer_scales[2] = 0.5  # rescale one layer
    graph.replay()


for kind in (Indexed, Iterated):
    recorder, _ = fresh()
    scaled = kind()
    graph = capture(lambda: scaled(x))
    graph.replay()
    check("clean twin: a list the captured code read (%s), left alone, sends nothing" % kind.__name__,
          not recorder.of(EventKind.HOST_VALUE_CHANGED), recorder.events)
    rescale(scaled, graph)
    sent = changed(recorder, "entry")
    check("a list entry the captured code read (%s) is sent by its index, at the line that set it" % kind.__name__,
          len(sent) == 1 and sent[0]["text"].startswith("self.layer_scales[2]\n") and
          sent[0]["line"] == line_of(HERE, "# rescale one layer"), sent)

# A class attribute read through an instance (`self.decay`: one decay shared by every EMA, set by a classmethod's
# warm-up schedule), and a numpy 0-d array a global names, changed in place (`LR.fill(...)`): both baked in.
class Ema:
    decay = 0.5

    def __init__(self, model):
        self.model = model

    @classmethod
    def set_decay(cls, value):
        cls.decay = value  # warm up the class's decay

    def update(self):
        return self.model(x) * (1.0 - self.decay)


LR = numpy.array(0.1)


def sgd_like(model):
    return model(x) * float(LR)


recorder, model = fresh()
ema = Ema(model)
ema_graph = capture(ema.update)
lr_graph = capture(lambda: sgd_like(model))
ema_graph.replay()
lr_graph.replay()
check("clean twin: a class attribute and a numpy array the captured code read, left alone, send nothing",
      not recorder.of(EventKind.HOST_VALUE_CHANGED), recorder.events)
Ema.set_decay(0.9)
ema_graph.replay()
sent = changed(recorder, "attribute")
check("a class attribute read through self is sent at the line that set it", len(sent) == 1 and
      sent[0]["text"].startswith("self.decay\n") and sent[0]["line"] == line_of(HERE, "# warm up the class's decay"),
      sent)
LR.fill(0.05)
lr_graph.replay()
sent = changed(recorder, "global")
check("a numpy array's number changed in place is sent", len(sent) == 1 and sent[0]["text"].startswith("LR\n") and
      bridge.double_bits(0.1) == sent[0]["value"] and bridge.double_bits(0.05) == sent[0]["value_now"], sent)
Ema.set_decay(0.5)


# A function kept in an attribute, with a number as its default (`self.act = lambda z, slope=0.3: ...`), replaced by
# one with another default between replays: the graph runs the one it captured. Recreated with the same default: the
# same graph.
class Leaky(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.act = lambda z, slope=0.3: torch.nn.functional.leaky_relu(z, slope)

    def forward(self, z):
        return self.act(self.fc(z))


def anneal_slope(model, graph, slope):
    model.act = lambda z, slope=slope: torch.nn.functional.leaky_relu(z, slope)  # anneal the activation
    graph.replay()


recorder, _ = fresh()
leaky = Leaky()
graph = capture(lambda: leaky(x))
anneal_slope(leaky, graph, 0.3)
check("clean twin: a function attribute recreated with the same default sends nothing",
      not recorder.of(EventKind.HOST_VALUE_CHANGED), recorder.events)
anneal_slope(leaky, graph, 0.1)
sent = changed(recorder, "attribute")
check("a function attribute replaced with another default is sent by the parameter's name, at the line",
      len(sent) == 1 and sent[0]["text"].startswith("self.act (default slope)\n") and
      sent[0]["line"] == line_of(HERE, "# anneal the activation") and bridge.double_bits(0.3) == sent[0]["value"] and
      bridge.double_bits(0.1) == sent[0]["value_now"], sent)


# Host draws the profile function cannot see as calls: numpy's generators (Cython methods) and the clock.
rng = numpy.random.default_rng(0)


def numpy_generator(model):
    return model(x) * float(rng.uniform())  # draw from numpy's generator


def numpy_legacy(model):
    return model(x) * float(numpy.random.uniform())  # draw from numpy's global state


def clock(model):
    return model(x) * (time.time() % 1.0)  # read the clock


for name, body, source, marker in (("a numpy Generator", numpy_generator, "numpy", "# draw from numpy's generator"),
                                   ("numpy's legacy functions", numpy_legacy, "numpy",
                                    "# draw from numpy's global state"),
                                   ("time.time()", clock, "clock", "# read the clock")):
    recorder, model = fresh()
    capture(lambda: body(model))
    draws = recorder.of(EventKind.HOST_RANDOM_DRAW)
    check("%s inside the capture is sent at its line" % name, len(draws) == 1 and draws[0]["type_name"] == source and
          draws[0]["line"] == line_of(HERE, marker), draws)
recorder, model = fresh()
drawn = float(rng.uniform())
capture(lambda: model(x) * drawn)
check("clean twin: a numpy draw before the capture sends nothing", not recorder.of(EventKind.HOST_RANDOM_DRAW),
      recorder.events)

# The next item of an iterator the program keeps (blind set 3, cycle-task-order): the graph replays the item taken
# at capture. An iterator made for the call, or the item taken before the capture, is no draw.
heads = [torch.nn.Linear(4, 4) for _ in range(3)]
order = itertools.cycle(range(3))


class Tasks:
    def __init__(self):
        self.order = itertools.cycle(range(3))


tasks = Tasks()


def round_robin():
    return heads[next(order)](x)  # next of a kept iterator


def round_robin_attribute():
    return heads[next(tasks.order)](x)  # next of an attribute's iterator


for name, body, marker in (("next() of a kept iterator", round_robin, "# next of a kept iterator"),
                           ("next() of an attribute's iterator", round_robin_attribute, "# next of an attribute's")):
    recorder, model = fresh()
    capture(body)
    draws = recorder.of(EventKind.HOST_RANDOM_DRAW)
    check("%s inside the capture is sent at its line" % name, len(draws) == 1 and draws[0]["type_name"] == "iterator"
          and draws[0]["text"].startswith("next(") and draws[0]["line"] == line_of(HERE, marker), draws)
for name, body in (("an iterator made for the call", lambda: heads[next(iter(range(3)))](x)),
                   ("the first parameter", lambda: x * next(heads[0].parameters()).sum())):
    recorder, model = fresh()
    capture(body)
    check("clean twin: next() of %s sends nothing" % name, not recorder.of(EventKind.HOST_RANDOM_DRAW), recorder.events)


class DeviceBuffer:
    """A static buffer's stand-in: device memory."""

    is_cuda = True


def forward_step(data_iterator, scale=1.0):
    batch = next(data_iterator)  # next of an iterator the caller made
    return (heads[batch["head"]](x) if "head" in batch else model(x)) * scale  # its variables still bound


# Megatron's full-iteration graphs hand the step a fresh iter() of the static buffers at every step: the graph reads
# the buffers, the same at every replay. An iterator of host values handed in the same way is a draw.
recorder, model = fresh()
capture(lambda: forward_step(iter([{"tokens": DeviceBuffer(), "labels": DeviceBuffer(), "mask": None}])))
check("clean twin: next() of an iterator over device buffers sends nothing", not recorder.of(EventKind.HOST_RANDOM_DRAW),
      recorder.events)
recorder, model = fresh()
capture(lambda: forward_step(iter([{"head": 2}, {"head": 0}])))
draws = recorder.of(EventKind.HOST_RANDOM_DRAW)
check("next() of an iterator over host values handed to the step is sent at its line", len(draws) == 1 and
      draws[0]["text"] == "next(data_iterator)" and draws[0]["line"] == line_of(HERE, "# next of an iterator the"),
      draws)
task = next(order)
recorder, model = fresh()
capture(lambda: heads[task](x))
check("clean twin: the item taken before the capture sends nothing", not recorder.of(EventKind.HOST_RANDOM_DRAW),
      recorder.events)

# A branch on torch's grad mode inside the capture, replayed with grad mode off.
class SoftOrHard(torch.nn.Module):
    def forward(self, z):
        if torch.is_grad_enabled():  # branch on grad mode
            return torch.softmax(z, -1)
        return z


for switch in (True, False):
    recorder, _ = fresh()
    quantizer = SoftOrHard()
    graph = capture(lambda: quantizer(x))
    if switch:
        with torch.no_grad():
            graph.replay()  # replay with grad mode off
    else:
        graph.replay()
    sent = changed(recorder, "grad-mode")
    if switch:
        check("a replay in the other grad mode than a captured branch on it is sent at the replay", len(sent) == 1 and
              sent[0]["text"].startswith("torch.is_grad_enabled()\nforward() at ") and
              sent[0]["line"] == line_of(HERE, "# replay with grad mode off"), sent)
    else:
        check("clean twin: a replay in the captured grad mode sends nothing", not sent, sent)


# Autocast turned off, or to another dtype, after replays in the capture's autocast region (CUDA's autocast cannot be
# entered on a CPU: the probe's reading of it is stood in for; 0 off, 2 float16, 3 bfloat16).
autocast, read_autocast = [3], contract.autocast_state
contract.autocast_state = lambda torch: autocast[0]
for name, states in (("clean twin: captured in autocast and replayed outside it from the start sends nothing",
                      (3, 0, 0)),
                     ("a replay with autocast turned off after replays in it is sent", (3, 3, 0)),
                     ("a replay in float16 autocast after replays in the captured bfloat16 is sent", (3, 3, 2)),
                     ("clean twin: replays in the captured dtype send nothing", (3, 3, 3))):
    autocast[0] = states[0]
    recorder, model = fresh()
    graph = capture(lambda: model(x))
    for state in states[1:]:
        autocast[0] = state
        graph.replay()
    sent = changed(recorder, "autocast")
    expected = 0 if states[1] != states[0] or states[2] == states[0] else 1
    check(name, len(sent) == expected and all(
        e["value"] == bridge.double_bits(3.0) and e["value_now"] == bridge.double_bits(float(states[2]))
        for e in sent), sent)


# Where autocast was turned off (blind set 1, autocast-disabled; set 2, autocast-decorator; set 3, a helper that
# returns torch.autocast): at the `with` around the replay, or at the program's call of a function decorated with
# torch.autocast.
@torch.autocast("cpu", enabled=False)
def replay_decorated(graph):
    autocast[0] = 0
    graph.replay()


def precision(enabled):
    return torch.autocast("cpu", enabled=enabled)


for how, marker in (("a with statement", "turn autocast off"), ("a decorated function", "call the decorated"),
                    ("a with statement of a helper's autocast", "the helper's autocast")):
    autocast[0] = 3
    recorder, model = fresh()
    graph = capture(lambda: model(x))
    graph.replay()
    if how == "a with statement":
        with torch.autocast("cpu", enabled=False):  # turn autocast off
            autocast[0] = 0
            graph.replay()
    elif how == "a decorated function":
        replay_decorated(graph)  # call the decorated
    else:
        with precision(False):  # the helper's autocast
            autocast[0] = 2
            graph.replay()
    sent = changed(recorder, "autocast")
    check("autocast turned off by %s is sent at its line" % how, len(sent) == 1 and sent[0]["pool"] == 1 and
          sent[0]["line"] == line_of(HERE, "# " + marker), sent)
contract.autocast_state = read_autocast

# A layer unfrozen after capture: the graph computes no gradient for it.
recorder, model = fresh()
model[0].requires_grad_(False)
graph = capture(lambda: model(x).sum().backward())
graph.replay()
model[1].eval()
model[1].train()
graph.replay()
check("clean twin: flags left as captured send nothing", not changed(recorder, "requires-grad"), recorder.events)
model[0].requires_grad_(True)  # unfreeze the layer
graph.replay()
sent = changed(recorder, "requires-grad")
check("a parameter that requires grad now is sent at the call that changed it", len(sent) == 2 and
      sent[0]["text"] == "model.0.weight" and sent[0]["line"] == line_of(HERE, "# unfreeze the layer"), sent)

# An optimizer checkpoint loaded after capture: new state tensors, the graph steps the old ones.
for in_place in (False, True):
    recorder, model = fresh()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(x).sum().backward()
    optimizer.step()  # warm-up: the momentum exists before the capture
    saved = copy.deepcopy(optimizer.state_dict())
    graph = capture(lambda: (model(x), optimizer.step()), [optimizer])
    graph.replay()
    if in_place:
        for index, parameter in enumerate(model.parameters()):
            optimizer.state[parameter]["momentum_buffer"].copy_(saved["state"][index]["momentum_buffer"])
    else:
        optimizer.load_state_dict(saved)  # load the checkpoint
    graph.replay()
    rebound = [e for e in recorder.of(EventKind.STATE_REBOUND) if e["type_name"] == "optimizer-state"]
    released = [e for e in recorder.of(EventKind.TENSOR_RELEASED) if e["type_name"] == "optimizer-state"]
    if in_place:
        check("clean twin: optimizer state restored in place sends nothing", not rebound and not released,
              recorder.events)
    else:
        check("optimizer state replaced by load_state_dict is sent as freed at the next replay",
              len(rebound) == 4 and all(e["pool"] == 1 for e in rebound) and "SGD momentum_buffer of model.0" in
              rebound[0]["text"], rebound)
        check("and released at the load_state_dict line", released and
              released[0]["line"] == line_of(HERE, "# load the checkpoint"), released)

# Batch norm frozen inside a module graphed by make_graphed_callables, the module itself still training.
for freeze in (True, False):
    recorder, model = fresh()
    model.forward = model.forward  # make_graphed_callables gives the instance its own forward
    graphed_calls.watch_graphed_module(model, None, graphed_calls.InputShapes(None), None)
    model(x)
    if freeze:
        for layer in model.modules():
            if isinstance(layer, torch.nn.BatchNorm1d):
                layer.eval()  # freeze the batch norm
    else:
        model.eval()
        model.train()
    model(x)  # the graphed call after the freeze
    modes = recorder.of(EventKind.TRAINING_MODE_CHANGED)
    if freeze:
        check("a submodule in eval inside a graphed module in training is sent at the eval() that froze it",
              len(modes) == 1 and modes[0]["text"] == "1" and modes[0]["value"] == 1 and
              modes[0]["origin"] == Origin.GRAPHED_CALLABLES and
              modes[0]["line"] == line_of(HERE, "# freeze the batch norm"), modes)
    else:
        check("clean twin: modes put back before the call send nothing", not modes, modes)

# A plain function graphed with its weights as inputs: their .grad in the graphs' pool before a backward.
recorder, _ = fresh()
weight = torch.randn(4, 4, requires_grad=True)


def linear(inputs, w):
    return inputs @ w


graphed = graphed_calls.watch_graphed_function(linear, graphed_calls.InputShapes(None), ("inputs", "w"))
for step in range(2):
    graphed(x, weight).sum().backward()  # the graphed function's backward
    if step == 0:
        check("clean twin: a leaf's .grad outside every pool sends nothing", not recorder.of(EventKind.GRAD_ALIASED))
        graph_tensors.pools[1] = [(weight.grad.data_ptr(), weight.grad.data_ptr() + 64)]
aliased = recorder.of(EventKind.GRAD_ALIASED)
check("a weight passed as an input whose .grad is in a pool is sent by its parameter name", len(aliased) == 1 and
      aliased[0]["text"] == "w" and aliased[0]["line"] == line_of(HERE, "# the graphed function's backward"), aliased)
graph_tensors.pools.clear()


# A manual capture of torch.autograd.grad over a micro-batch: the program accumulates by making the graph's gradient
# output the .grad (blind set 1, grad-assign-alias), and each replay overwrites it. Its twins: the output copied
# (`g.clone()`), and a whole-step capture whose backward makes .grad in the graph's pool (replays overwrite it as they
# should).
def grads_outside(model, keep):
    params = list(model.parameters())
    static = {}

    def micro_grads():
        static["grads"] = torch.autograd.grad(model(x).square().mean(), params)

    graph = capture(micro_grads)
    graph_tensors.pools[1] = sorted((g.data_ptr(), g.data_ptr() + 4 * g.numel()) for g in static["grads"])
    for _ in range(3):
        graph.replay()
        for p, g in zip(params, static["grads"]):
            if p.grad is None:
                p.grad = keep(g)  # the .grad set outside the capture
            else:
                p.grad.add_(g)
    graph_tensors.pools.clear()


recorder, model = fresh()
grads_outside(model, lambda g: g)
aliased = recorder.of(EventKind.GRAD_ALIASED)
check("a graph's gradient output made the .grad is sent once, at the line that set it",
      len(aliased) == 1 and aliased[0]["origin"] == Origin.USER and aliased[0]["value"] == 4 and
      aliased[0]["line"] == line_of(HERE, "# the .grad set outside the capture"), aliased)
recorder, model = fresh()
grads_outside(model, lambda g: g.clone())
check("clean twin: the gradient output copied into .grad sends nothing", not recorder.of(EventKind.GRAD_ALIASED))
recorder, model = fresh()


def whole_step():
    model(x).square().mean().backward()


graph = capture(whole_step)
graph_tensors.pools[1] = sorted((p.grad.data_ptr(), p.grad.data_ptr() + 4 * p.grad.numel()) for p in model.parameters())
for _ in range(3):
    graph.replay()
graph_tensors.pools.clear()
check("clean twin: .grad the captured backward made in the pool sends nothing", not recorder.of(EventKind.GRAD_ALIASED))
# An inference graph captured first, then a whole-step graph whose backward makes .grad in the pool they share: the
# first graph's replays see .grad there, made by a capture, and send nothing.
recorder, model = fresh()
evaluate = capture(lambda: model(x))
graph = capture(whole_step)
graph_tensors.pools[1] = sorted((p.grad.data_ptr(), p.grad.data_ptr() + 4 * p.grad.numel()) for p in model.parameters())
for _ in range(3):
    graph.replay()
    evaluate.replay()
graph_tensors.pools.clear()
check("clean twin: .grad another capture made in a shared pool sends nothing", not recorder.of(EventKind.GRAD_ALIASED))


# A graphed callable called twice per step, its first output kept and read after the second call (blind set 2,
# graphed-two-views): named by the variable at the line of the call that returned it. Its twins: the first output
# copied, and the usual loop whose `out` is alive at each call only until it is rebound.
def two_views(graphed, keep):
    for step in range(3):
        weak = keep(graphed(x, weight))  # the output read after the next call
        strong = graphed(x.flip(-1), weight)
        (weak * strong).sum()


def one_call_per_step(graphed):
    for step in range(3):
        out = graphed(x, weight)
        out.sum()


def previous_logits(graphed):
    """A decoder comparing each step's logits with the last step's (blind held outputs, decoder-prev-logits)."""
    prev = None
    for step in range(3):
        logits = graphed(x, weight)
        if prev is not None:
            (logits - prev).sum()
        prev = logits  # kept under another name


for case, run_case in (("kept", lambda g: two_views(g, lambda t: t)), ("cloned", lambda g: two_views(g, torch.clone)),
                       ("loop", one_call_per_step), ("aliased", previous_logits)):
    recorder, _ = fresh()
    run_case(graphed_calls.watch_graphed_function(linear, graphed_calls.InputShapes(None), ("inputs", "w")))
    held = recorder.of(EventKind.OUTPUTS_HELD)
    if case == "kept":
        check("a graphed callable's output read after its next call is sent by its variable, at the call that made it",
              len(held) == 1 and held[0]["text"] == "weak" and held[0]["origin"] == Origin.GRAPHED_CALLABLES and
              held[0]["line"] == line_of(HERE, "# the output read after the next call"), held)
    elif case == "aliased":
        check("an output kept under another name is sent at the line that kept it",
              len(held) == 1 and held[0]["text"] == "prev" and
              held[0]["line"] == line_of(HERE, "# kept under another name"), held)
    else:
        check("clean twin (%s): an output copied, or rebound before it is read, sends nothing" % case, not held, held)


def end_manual_capture(graph, watch):
    """Ends a manual capture begun in the caller's frame (watches.CaptureWatch(graph, sys._getframe(0))), with the
    graph's replays watched."""
    watch.end(sys._getframe(1))
    watches.graph_watch(graph).capture = watch
    watches.watch_replays(graph, None)


# Static inputs of manual captures: judged by what the graph reads, not by the name that held it.
def capture_buckets(sizes):
    """One manual capture per batch size, each reading its own static input; returns {size: (graph, input)}."""
    buckets = {}
    for size in sizes:
        static = torch.zeros(size, 4)
        graph = Graph()
        watch = watches.CaptureWatch(graph, sys._getframe(0))
        out = static * 2
        end_manual_capture(graph, watch)
        buckets[size] = (graph, static, out)
    return buckets


def serve(buckets, rebind):
    for size in (4, 2, 4):
        graph, static, _ = buckets[size]
        if rebind:
            static = torch.ones(size, 4)  # rebind the static input
        graph.replay()


recorder, _ = fresh()
buckets = capture_buckets((4, 2))
serve(buckets, rebind=False)
check("clean twin: a serving loop whose variable moves from one bucket's static input to another's sends nothing",
      not recorder.of(EventKind.STATE_REBOUND), recorder.events)


def rebind_in_capture_frame():
    static = torch.zeros(4, 4)
    graph = Graph()
    watch = watches.CaptureWatch(graph, sys._getframe(0))
    out = static * 2
    end_manual_capture(graph, watch)
    for _ in range(2):
        static = torch.ones(4, 4)  # a new batch bound to the static input's name
        graph.replay()
    return out


recorder, _ = fresh()
rebind_in_capture_frame()
released = [e for e in recorder.of(EventKind.TENSOR_RELEASED) if e["type_name"] == "static-input"]
rebound = [e for e in recorder.of(EventKind.STATE_REBOUND) if e["type_name"] == "static-input"]
check("a static input dropped by rebinding its name is released at that line", len(released) == 1 and
      released[0]["line"] == line_of(HERE, "# a new batch bound to the static input's name"), released)
check("and the replay sees its memory freed", len(rebound) == 1 and rebound[0]["pool"] == 1, rebound)


# A manual capture's output appended to a list across replays, in a callback the loop calls (blind set 2,
# loss-history-alias): the growing count of references is sent at the append. Its twin appends copies.
def loss_history(copy):
    static = torch.zeros(4)
    graph = Graph()
    watch = watches.CaptureWatch(graph, sys._getframe(0))
    loss = static * 2
    end_manual_capture(graph, watch)
    history = []

    def record(value):
        if copy:
            history.append(value.clone())
        else:
            history.append(value)  # the output kept in the history

    for _ in range(8):
        graph.replay()
        record(loss)
    return history


is_cuda_tensor = watches.is_cuda_tensor
watches.is_cuda_tensor = lambda value: isinstance(value, torch.Tensor)
for copy in (False, True):
    recorder, _ = fresh()
    loss_history(copy)
    held = recorder.of(EventKind.OUTPUTS_HELD)
    if copy:
        check("clean twin: copies of a manual capture's output appended send nothing", not held, held)
    else:
        check("a manual capture's output appended to a list at every replay is sent at the append", len(held) == 1 and
              held[0]["text"] == "loss" and held[0]["line"] == line_of(HERE, "# the output kept in the history"), held)


# A manual capture's output kept by a logger as "the previous value" (blind set 3, logger-attr-output): the method
# reads self.prev, then stores its argument there as it is, so after the next replay prev is that replay's output.
# Its twins keep a copy, or keep the output in an attribute that no method reads before storing (a runner).
class ChurnLogger:
    def __init__(self, clone):
        self.clone, self.prev, self.rows = clone, None, []

    def log(self, logits):
        if self.prev is not None:
            self.rows.append(float((logits - self.prev).abs().sum()))
        self.prev = logits.clone() if self.clone else logits  # the output kept as the previous value


class Runner:
    def __init__(self, graph, out):
        self.graph, self.out = graph, out

    def __call__(self):
        self.graph.replay()
        return self.out


def churn_log(keep):
    static = torch.zeros(4)
    graph = Graph()
    watch = watches.CaptureWatch(graph, sys._getframe(0))
    logits = static * 2
    end_manual_capture(graph, watch)
    if keep == "runner":
        runner = Runner(graph, logits)
        return [runner().clone() for _ in range(8)]
    logger = ChurnLogger(clone=keep == "copy")
    for _ in range(8):
        graph.replay()
        logger.log(logits)
    return logger.rows


for keep in ("as it is", "copy", "runner"):
    recorder, _ = fresh()
    churn_log(keep)
    held = recorder.of(EventKind.OUTPUTS_HELD)
    if keep == "as it is":
        check("a manual capture's output a logger keeps as its previous value is sent at the store", len(held) == 1
              and held[0]["text"] == "ChurnLogger.prev" and held[0]["value"] == 0 and
              held[0]["line"] == line_of(HERE, "# the output kept as the previous value"), held)
    else:
        check("clean twin: a manual capture's output kept by a %s sends nothing" % keep, not held, held)

# The probe holds a manual capture's outputs weakly: an output the program lets go is freed, as it would be without
# the probe (a later capture in a shared pool may take its memory).
graph = Graph()
watch = watches.CaptureWatch(graph, sys._getframe(0))
dropped = torch.zeros(4) * 2
end_manual_capture(graph, watch)
dropped_ref = weakref.ref(dropped)
del dropped
check("a manual capture's output the program lets go is freed", dropped_ref() is None and "dropped" in watch.outputs,
      watch.outputs)
watches.is_cuda_tensor = is_cuda_tensor


# A tensor the captured code reached through a dict entry (a pinned staging buffer, `stage["x"]`) or a constant index
# of a list (`self.params[0]`): the graph reads its memory. Refilled in place: nothing. Rebound to a batch kept
# elsewhere: at the line that rebound it. Rebound so that the old buffer is dropped: released there, and the replay
# sees its memory freed. Its data replaced (`p.data = ...`): the same object, other memory.
def staging_step(stage, model):
    return lambda: model(stage["x"])  # the step reads the staging buffer through its closure


def load_batches(graph, stage, batches, refill):
    for batch in batches:
        if refill:
            stage["x"].copy_(batch)
        else:
            stage["x"] = batch  # rebind the staging buffer
        graph.replay()


for refill, dropped in ((True, False), (False, False), (False, True)):
    recorder, model = fresh()
    stage = {"x": torch.randn(8, 4)}
    step = staging_step(stage, model)
    graph = capture(step)
    batches = [torch.randn(8, 4) for _ in range(2)]
    kept = stage["x"] if not dropped else None
    load_batches(graph, stage, batches, refill)
    rebound = [e for e in recorder.of(EventKind.STATE_REBOUND) if e["type_name"] == "static-input"]
    released = [e for e in recorder.of(EventKind.TENSOR_RELEASED) if e["graph"] == id(graph)]
    if refill:
        check("clean twin: a staging buffer in a dict refilled in place sends nothing",
              not rebound and not released, recorder.events)
    elif not dropped:
        check("a staging buffer in a dict rebound is sent at the line that rebound it", len(rebound) == 1 and
              rebound[0]["text"] == "stage['x']" and rebound[0]["pool"] == 0 and
              rebound[0]["line"] == line_of(HERE, "# rebind the staging buffer"), rebound)
    else:
        check("a staging buffer in a dict dropped by rebinding is released at that line, and freed at the replay",
              len(released) == 1 and released[0]["line"] == line_of(HERE, "# rebind the staging buffer") and
              len(rebound) == 1 and rebound[0]["pool"] == 1, (released, rebound))


class Lookahead:
    def __init__(self, model):
        self.params = list(model.parameters())

    def fast(self):
        return x @ self.params[0].t()


recorder, model = fresh()
lookahead = Lookahead(model)
graph = capture(lookahead.fast)
graph.replay()
with torch.no_grad():
    lookahead.params[0].copy_(torch.zeros(4, 4))
graph.replay()
check("clean twin: a tensor reached by a constant index, updated in place, sends nothing",
      not recorder.of(EventKind.STATE_REBOUND), recorder.events)
lookahead.params[0].data = torch.zeros(4, 4)  # replace the weight's data
graph.replay()
rebound = [e for e in recorder.of(EventKind.STATE_REBOUND) if e["type_name"] == "static-input"]
check("a tensor reached by a constant index whose data was replaced is sent", len(rebound) == 1 and
      rebound[0]["text"] == "self.params[0]", rebound)


class Phase(enum.Enum):
    WARMUP = 0.25
    FULL = 1.0


class Trainer:
    """A phase kept as an Enum member whose value weights a loss (blind set 4, enum-phase-weight)."""

    def __init__(self):
        self.phase = Phase.WARMUP

    def step(self):
        return model(x) * self.phase.value


for phases in ((Phase.WARMUP, Phase.WARMUP), (Phase.WARMUP, Phase.FULL)):
    recorder, model = fresh()
    trainer = Trainer()
    graph = capture(trainer.step)
    for phase in phases:
        trainer.phase = phase  # enter the phase
        graph.replay()
    check_sent_at(phases[-1] is Phase.FULL, "attribute", "self.phase.value", "# enter the phase",
                  "an Enum member's value read inside the capture")


def loss_balance(history):
    """Each task's output divided by the mean of its recent losses, a deque read by the comprehension's key (blind
    set 4, deque-loss-balance)."""
    return lambda: sum(model(x)[:, i] / statistics.fmean(history[task]) for i, task in enumerate(history))


for appended in (False, True):
    recorder, model = fresh()
    history = {task: collections.deque([1.0], maxlen=4) for task in ("regress", "classify")}
    balanced = loss_balance(history)  # the program keeps its step function
    graph = capture(balanced)
    for step in range(2):
        if appended:
            for task in history:
                history[task].append(0.5 + step)  # the recent losses kept
        graph.replay()
    check_sent_at(appended, "entry", "history['regress'][1]", "# the recent losses kept",
                  "a dict of deques read by a variable key (appended to)")


# A 0-d tensor in host memory the step multiplies by (blind set 4, cpu-scalar-weight): a kernel takes its value at
# launch, so the graph replays the value it had at capture. One on the device, filled in place, is read by the graph.
for on_host in (False, True):
    recorder, model = fresh()
    aux_weight = torch.tensor(0.8)
    on_device, contract.on_device = contract.on_device, (lambda t: t is not aux_weight) if on_host else contract.on_device
    graph = capture(lambda: model(x) * aux_weight)
    graph.replay()
    aux_weight.fill_(0.4)  # halve the weight
    graph.replay()
    contract.on_device = on_device
    sent = changed(recorder, "global")
    if on_host:
        check("a 0-d tensor in host memory read inside the capture, filled between replays, is sent with its numbers",
              len(sent) == 1 and sent[0]["text"].startswith("aux_weight\n") and
              (sent[0]["value"], sent[0]["value_now"]) == tuple(bridge.double_bits(torch.tensor(v).item())
                                                                for v in (0.8, 0.4)), sent)
    else:
        check("clean twin: a 0-d tensor on the device filled in place sends nothing", not sent, recorder.events)


# A number a contextvars.ContextVar holds, read inside the capture (blind set 4, contextvar-guidance): each request
# sets its own, and the graph replays the value at capture.
GUIDANCE = contextvars.ContextVar("guidance_scale", default=1.0)


def guided():
    return model(x) * GUIDANCE.get()


for scales in ((1.0, 1.0), (1.0, 4.0)):
    recorder, model = fresh()
    graph = capture(guided)
    for scale in scales:
        token = GUIDANCE.set(scale)  # set the request's guidance
        graph.replay()
        GUIDANCE.reset(token)
    sent = changed(recorder, "attribute")
    if scales[-1] == 1.0:
        check("clean twin: a ContextVar set to its value at capture sends nothing", not sent, recorder.events)
    else:
        check("a ContextVar read inside the capture and set to another number is sent at the set",
              len(sent) == 1 and sent[0]["text"].startswith("ContextVar('guidance_scale').get()\n") and
              sent[0]["line"] == line_of(HERE, "# set the request's guidance"), sent)


class DoubleBuffer:
    """Device double buffering (blind set 4, double-buffer-swap): the step unpacks `current`."""

    def __init__(self, swap):
        self.current, self.spare, self.swap = [torch.randn(8, 4)], [torch.randn(8, 4)], swap

    def put(self, batch):
        self.spare[0].copy_(batch)
        if self.swap:
            self.current, self.spare = self.spare, self.current  # swap the buffers
        else:
            self.current[0].copy_(self.spare[0])

    def step(self):
        features, = self.current
        return model(features)


for swap in (False, True):
    recorder, model = fresh()
    buffers = DoubleBuffer(swap)
    graph = capture(buffers.step)
    for _ in range(2):
        buffers.put(torch.randn(8, 4))
        graph.replay()
    rebound = [e for e in recorder.of(EventKind.STATE_REBOUND) if e["type_name"] == "static-input"]
    if swap:
        check("a list of tensors the step unpacks, swapped for another list, is sent by its entry",
              len(rebound) == 1 and rebound[0]["text"] == "self.current[0]", rebound)
    else:
        check("clean twin: a list of tensors the step unpacks, refilled in place, sends nothing", not rebound,
              recorder.events)


# What is no static input, whatever path reached it (found in review; each sent an error before):
def path_rebounds(recorder):
    return [e for e in recorder.of(EventKind.STATE_REBOUND) if e["type_name"] == "static-input"]


# - a tensor the capture itself made, stored by one function and read by the next (`self.loss`), later rebound by an
#   eager tail batch: it lives in the graph's pool.
class Accumulate:
    def __init__(self, model):
        self.model = model
        self.loss = None

    def forward(self):
        self.loss = self.model(x).sum()

    def backward(self):
        return self.loss * 2


recorder, model = fresh()
accumulate = Accumulate(model)
pool_segments = contract.pool_segments
contract.pool_segments = lambda torch, graph: [(graph_tensors.address(accumulate.loss), 4)]  # the capture made it there
graph = capture(lambda: (accumulate.forward(), accumulate.backward()))
contract.pool_segments = pool_segments
accumulate.forward()  # an eager tail batch
graph.replay()
check("clean twin: a tensor the capture made, read by its next function and later rebound, sends nothing",
      not path_rebounds(recorder), recorder.events)


# - one graph per bucket, each captured from a closure over one variable that moves to the next bucket's input.
def capture_closure_buckets(inputs):
    graphs = {}
    for size in (4, 2):
        static_x = inputs[size]
        graphs[size] = capture(lambda: static_x * 2)
    return graphs


recorder, _ = fresh()
inputs = {size: torch.zeros(size, 4) for size in (4, 2)}
for graph in capture_closure_buckets(inputs).values():
    graph.replay()
check("clean twin: a closure variable that holds another bucket's static input sends nothing",
      not path_rebounds(recorder), recorder.events)


# - a tensor whose shape, device or None-ness the captured code read, not its memory.
class Cache:
    def __init__(self):
        self.cache = torch.zeros(4, 4)

    def step(self):
        rows = self.cache.shape[0]
        return x[:rows] * 2 if self.cache is not None else x


recorder, _ = fresh()
holder = Cache()
graph = capture(holder.step)
holder.cache = torch.zeros(4, 4)
graph.replay()
check("clean twin: a tensor whose shape the capture read, rebound, sends nothing", not path_rebounds(recorder),
      recorder.events)


# What is one, and the probe must not hide: a closure's static input the program drops is freed (the probe holds the
# closure's variable through the function, weakly); a global the body of a function's capture reads, rebound.
def capture_and_drop():
    static_x = torch.zeros(4, 4)
    return capture(lambda: static_x * 2)  # the closure, and with it the static input, dropped


recorder, _ = fresh()
graph = capture_and_drop()
graph.replay()
rebound = path_rebounds(recorder)
check("a closure's static input dropped is freed at the replay", len(rebound) == 1 and rebound[0]["pool"] == 1,
      rebound)

STATIC_X = torch.zeros(4, 4)


def capture_global_body():
    graph = Graph()
    contract.capture_started(graph, Origin.USER)
    contract.trace_body(sys._getframe(0))
    start = sys._getframe(0).f_lasti
    out = STATIC_X * 2
    contract.observe_body(sys._getframe(0), start, sys._getframe(0).f_lasti)
    taken = contract.stop_capture()
    watches.graph_watch(graph).contract = contract.capture_ended(graph, taken, sys._getframe(0), 0, [])
    watches.watch_replays(graph, None)
    return graph, out


recorder, _ = fresh()
graph, _ = capture_global_body()
kept_x = STATIC_X
STATIC_X = torch.ones(4, 4)  # rebind the global the body read
graph.replay()
rebound = path_rebounds(recorder)
check("a global a function's capture body read, rebound, is sent", len(rebound) == 1 and
      rebound[0]["text"] == "STATIC_X" and rebound[0]["pool"] == 0, rebound)


# A number an object's constructor set, changed by another object's method that no frame of the replay's shows: no
# line of its own class sets it after construction, so the change is at the replay, not at `__init__`.
class Brightness:
    def __init__(self, strength):
        self.strength = strength  # the constructor's store

    def apply(self):
        return x * self.strength


class Curriculum:
    def __init__(self, augment):
        self.augment = augment

    def advance(self):
        self.augment.strength = 0.5


recorder, _ = fresh()
brightness = Brightness(0.2)
graph = capture(brightness.apply)
Curriculum(brightness).advance()
graph.replay()
sent = changed(recorder, "attribute")
check("a change no frame or method makes is sent at the replay, not at the constructor", len(sent) == 1 and
      sent[0]["line"] != line_of(HERE, "# the constructor's store"), sent)


# A manual capture's static input read both by the body and by a closure the body calls: one rebinding, one event.
def rebind_read_twice():
    static = torch.zeros(4, 4)
    scaled = lambda: static * 2  # noqa: E731
    graph = Graph()
    contract.capture_started(graph, Origin.USER)
    watch = watches.CaptureWatch(graph, sys._getframe(0))
    out = static + scaled()
    watch.end(sys._getframe(0))
    taken = contract.stop_capture()
    watches.graph_watch(graph).capture = watch
    watches.graph_watch(graph).contract = contract.capture_ended(graph, taken, sys._getframe(0), 0, [])
    watches.watch_replays(graph, None)
    kept = static
    static = torch.ones(4, 4)  # rebind the input the body and its closure read
    graph.replay()
    return out, kept


recorder, _ = fresh()
rebind_read_twice()
check("a static input read by the body and a closure it calls is sent once", len(path_rebounds(recorder)) == 1,
      path_rebounds(recorder))


# Loss weights read with getattr by a computed name, rewritten through vars() (blind set 5, loss-weights-getattr).
for rewritten in (False, True):
    recorder, model = fresh()
    weights = types.SimpleNamespace(cls_weight=1.0, box_weight=0.5)
    graph = capture(lambda: sum(getattr(weights, term + "_weight") * model(x)[:, i]
                                for i, term in enumerate(("cls", "box"))))
    if rewritten:
        vars(weights).update(box_weight=0.25)  # the schedule's new weights
    graph.replay()
    check_sent_at(rewritten, "attribute", "weights.box_weight", "# the schedule's new weights",
                  "an attribute read by getattr with a computed name (through vars())")


# A number in a nested dict reached by another path's value (blind set 5, recipe-nested-gamma).
RECIPE = {"warmup": {"loss": {"gamma": 2.0}}, "main": {"loss": {"gamma": 0.5}}}
for advanced in (False, True):
    recorder, model = fresh()
    stage = types.SimpleNamespace(name="warmup")
    graph = capture(lambda: model(x) * RECIPE[stage.name]["loss"]["gamma"])
    if advanced:
        stage.name = "main"  # the next stage of the recipe
    graph.replay()
    check_sent_at(advanced, "entry", "RECIPE[stage.name]['loss']['gamma']", "# the next stage of the recipe",
                  "an entry whose key is another path's value (the key moved on)")


class Annealer:
    def __init__(self):
        self.kl_weight = 0.0


class VariationalLoss:
    """Reads the KL weight from the trainer it holds weakly, through a property (blind set 5, weakref-trainer-kl)."""

    def __init__(self, trainer):
        self._trainer_ref = weakref.ref(trainer)

    @property
    def trainer(self):
        return self._trainer_ref()

    def __call__(self):
        return model(x) * self.trainer.kl_weight


for annealed in (False, True):
    recorder, model = fresh()
    annealer = Annealer()
    loss = VariationalLoss(annealer)
    graph = capture(loss)
    if annealed:
        annealer.kl_weight = 0.5  # anneal the KL weight
    graph.replay()
    check_sent_at(annealed, "attribute", "self.trainer.kl_weight", "# anneal the KL weight",
                  "a number read through a property returning a weakref's object")



class LossTerms:
    """Hyperparameters kept on an args object: the captured step reads one by a constant name with getattr, and an
    epoch counter the loop moves is never read (args.epoch)."""

    def __init__(self):
        self.label_smoothing, self.epoch = 0.1, 0


for moved in ("epoch", "label_smoothing"):
    recorder, model = fresh()
    args = LossTerms()
    graph = capture(lambda: model(x) * getattr(args, "label_smoothing", 0.0))
    setattr(args, moved, 0.2)  # the loop moves one of them
    graph.replay()
    sent = changed(recorder, "attribute")
    if moved == "epoch":
        check("clean twin: getattr by a constant name reads that attribute only (another one moved sends nothing)",
              not sent, recorder.events)
    else:
        check("getattr by a constant name is that attribute", len(sent) == 1 and
              sent[0]["text"].startswith("args.label_smoothing\n"), sent)


def task_loss(task):
    return model(x) * LOSS_W[task]


# A dict entry read by an argument's key is that entry: the graph never read the others (`LOSS_W["seg"]` annealed).
LOSS_W = {"cls": 1.0, "seg": 0.5}
for annealed in ("seg", "cls"):
    recorder, model = fresh()
    LOSS_W = {"cls": 1.0, "seg": 0.5}
    graph = capture(lambda: task_loss("cls"))
    LOSS_W[annealed] = 0.25  # anneal one task's weight
    graph.replay()
    sent = changed(recorder, "entry")
    if annealed == "seg":
        check("clean twin: an entry the graph did not read (by an argument's key) sends nothing", not sent,
              recorder.events)
    else:
        check("an entry read by an argument's key, changed, is sent by that key", len(sent) == 1 and
              sent[0]["text"].startswith("LOSS_W['cls']\n"), sent)


# The length of a deque the captured code takes (`0.5 if len(recent) >= 4 else 1.0`): appending to a full deque
# changes its entries, not its length; appending to one not yet full changes what the graph took.
for filled in (True, False):
    recorder, model = fresh()
    recent = collections.deque([1.0] * (4 if filled else 2), maxlen=4)
    graph = capture(lambda: model(x) * (0.5 if len(recent) >= 4 else 1.0))
    recent.append(2.0)  # one more loss kept
    graph.replay()
    sent = changed(recorder, "attribute") + changed(recorder, "closure") + changed(recorder, "global")
    if filled:
        check("clean twin: a full deque whose length the graph took, appended to, sends nothing", not sent,
              recorder.events)
    else:
        check("a deque's length the graph took, grown, is sent as len()", len(sent) == 1 and
              sent[0]["text"].startswith("len(recent)\n"), sent)


class Routed:
    """A property that reads a dict by another attribute's value, and a dict keyed by tuples read by a variable:
    neither may keep the probe from the captured code's other reads."""

    def __init__(self):
        self._weights, self._key = {"a": 2.0}, "a"
        self.by_pair = {("enc", "a"): 1.0}
        self.scale = 1.0

    @property
    def weight(self):
        return self._weights[self._key]

    def __call__(self):
        pair = ("enc", "a")
        return model(x) * self.weight * self.by_pair[pair] * self.scale


recorder, model = fresh()
routed = Routed()
graph = capture(routed)
routed.by_pair[("enc", "a")] = 0.5
routed.scale = 0.5  # a plain number beside them
graph.replay()
sent = changed(recorder, "attribute") + changed(recorder, "entry")
check("a property by a key and a tuple-keyed dict read by a variable do not stop the reads beside them",
      any(e["text"].startswith("self.scale\n") for e in sent), sent)

# make_graphed_callables' backward computes gradients only for the inputs that required them at capture (blind set 5,
# graphed-trunk-stem-unfrozen: the frozen stem before the graphed trunk unfrozen).
# One that required them from the first call on (a backbone outside the optimizer, not detached) trains nothing
# eager would.
for calls in ((False, False), (False, True), (True, True)):
    recorder, _ = fresh()
    shapes = graphed_calls.InputShapes.of((torch.zeros(2, 4),))
    for requires_grad in calls:
        shapes.call(1, lambda t: t * 2, (torch.zeros(2, 4, requires_grad=requires_grad),), {})
    sent = changed(recorder, "requires-grad")
    if calls != (False, True):
        check("clean twin: a graphed callable's input that needs no gradient, or needed one from the first call "
              "%s, sends nothing" % (calls,), not sent, recorder.events)
    else:
        check("a graphed callable's input that requires gradients where the captured one and the earlier calls' "
              "did not is sent", len(sent) == 1 and
              sent[0]["text"] == "input 0 and the parameters it was computed from", sent)


def probe_features():
    with torch.no_grad():
        return model(x)


# Fine-tuning with one optimizer for the head and one for the backbone the no_grad graph read: the head's step comes
# first and holds none of the graph's parameters; the backbone's step, with no gradient for them, is the one named.
recorder, model = fresh()
head = torch.nn.Linear(4, 2)
head_optimizer, backbone_optimizer = torch.optim.SGD(head.parameters(), lr=0.1), torch.optim.SGD(model.parameters(),
                                                                                                  lr=0.1)
graph = capture(probe_features)
with torch.no_grad():
    graph.replay()  # linear probing
graph.replay()  # fine-tuning, in grad mode
head(torch.randn(8, 4)).sum().backward()
head_optimizer.step()
backbone_optimizer.step()
sent = changed(recorder, "grad-mode")
check("a no_grad graph replayed into fine-tuning is named at the step of the optimizer that holds what it read, after "
      "another optimizer's", len(sent) == 1 and sent[0]["text"].startswith("model.0.weight"), sent)


# A graph captured under torch.no_grad(), replayed without grad mode (linear probing) and then in it into a step that
# trains what it read (blind set 5, lpft-probe-graph-under-grad). A step that gets its gradients from elsewhere is no
# fault, nor is a graph replayed in grad mode from the first (a frozen backbone's features in a training loop: its
# eager forward ran under no_grad too).
for trained_eagerly, probed_first in ((True, True), (False, False), (False, True)):
    recorder, model = fresh()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    graph = capture(probe_features)
    if probed_first:
        with torch.no_grad():
            graph.replay()
            optimizer.step()
    graph.replay()  # replayed in grad mode to fine-tune
    optimizer.zero_grad(set_to_none=True)
    if trained_eagerly:
        model(x).sum().backward()
    optimizer.step()
    sent = changed(recorder, "grad-mode")
    if trained_eagerly or not probed_first:
        check("clean twin: a no_grad graph replayed in grad mode before a step with gradients (%s), or from its first "
              "replay on (%s), sends nothing" % (trained_eagerly, not probed_first), not sent, recorder.events)
    else:
        check("a no_grad graph replayed in grad mode, then a step with no gradient for what it read, is sent at the "
              "replay", len(sent) == 1 and sent[0]["text"].startswith("model.0.weight, model.0.bias") and
              sent[0]["line"] == line_of(HERE, "# replayed in grad mode to fine-tune"), sent)

finish()
