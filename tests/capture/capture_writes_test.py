"""What one of the program's captures wrote (python/probe/graphcheck_probe/capture_writes.py), against real torch on a
CPU: a capture whose code wrote only tensors it made says "own-memory" in its graph-tensors event; one that wrote a
tensor the program held before it (a batch norm's running stats, a static output copied into, a cache in a list, a
.grad, an optimizer's step, a buffer through a global) says "program-memory". As in contract_observed_test.py, the
capture is the contract's own begin and end around eager code, and the recorder is a list.

usage: capture_writes_test.py PROBE_DIR [TORCH_SITE_DIR]
"""
import sys

from probe_checks import Graph, Recorder, check, finish, use_probe_and_torch

use_probe_and_torch(sys.argv)
import torch  # noqa: E402

from graphcheck_probe import bridge, contract, patches  # noqa: E402
from graphcheck_probe.bridge import EventKind, Origin  # noqa: E402

contract.on_device = lambda tensor: True
patches.apply(patches._patch_optimizer, sys.modules["torch.optim.optimizer"])
HERE = __file__


def wrote(body, frame, stepped=()):
    """What the capture around `body`, begun in `frame`, wrote: the graph-tensors event's type."""
    bridge.recorder = Recorder(HERE)
    graph = Graph()
    contract.capture_started(graph, Origin.USER, frame)
    body()
    taken = contract.stop_capture()
    contract.capture_ended(graph, taken, frame, 0, list(stepped))
    sent = bridge.recorder.of(EventKind.GRAPH_TENSORS)
    return sent[-1]["type_name"] if sent else None


def model_of(train):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4)).train(train)


def inference():
    model, static_x, outputs = model_of(False), torch.randn(8, 4), {}

    def body():
        with torch.no_grad():
            outputs["y"] = model(static_x)

    return wrote(body, sys._getframe(0))


def forward_with_grad_mode_on():
    model, static_x = model_of(False), torch.randn(8, 4)
    return wrote(lambda: model(static_x).sum(), sys._getframe(0))


def batch_norm_in_training():
    model, static_x = model_of(True), torch.randn(8, 4)

    def body():
        with torch.no_grad():
            model(static_x)  # updates running stats in place

    return wrote(body, sys._getframe(0))


def copied_into_static_output():
    model, static_x, static_out = model_of(False), torch.randn(8, 4), torch.zeros(8, 4)

    def body():
        with torch.no_grad():
            static_out.copy_(model(static_x))

    return wrote(body, sys._getframe(0))


class Runner:
    """Keeps its cache in a list, out of any module."""

    def __init__(self):
        self.cache = [torch.zeros(4), torch.zeros(4)]


def cache_in_a_list():
    runner = Runner()
    return wrote(lambda: runner.cache[1].add_(1.0), sys._getframe(0))


class Cached(torch.nn.Module):
    """A layer that keeps a key cache as a plain attribute, written by its forward."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.keys = [torch.zeros(8, 4)]

    def forward(self, x):
        y = self.fc(x)
        self.keys[0].copy_(y.detach())
        return y


# The same layer as a library's: its code is not the program's, so no path to its cache is traced.
_LIBRARY = {"torch": torch}
exec(compile("""
class LibraryCached(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.keys = [torch.zeros(8, 4)]

    def forward(self, x):
        self.keys[0].copy_(x)
        return x * 2
""", "/usr/lib/python3/dist-packages/cachelib/layers.py", "exec"), _LIBRARY)


def library_attribute_cache():
    layer, static_x = _LIBRARY["LibraryCached"](), torch.randn(8, 4)
    return wrote(lambda: holder(layer, static_x), None)


def body_in_the_capturing_frame(write):
    """A `with torch.cuda.graph` body in this frame (as patches' __enter__ and __exit__ run it) that writes a local
    static output through a library call, or leaves it alone."""
    static_x, static_out = torch.randn(8, 4), torch.zeros(8, 4)
    bridge.recorder = Recorder(HERE)
    graph = Graph()
    frame = sys._getframe(0)
    contract.capture_started(graph, Origin.USER, frame)
    contract.trace_body(frame)
    start = frame.f_lasti
    if write:
        torch.mul(static_x, 2, out=static_out)
    else:
        doubled = torch.mul(static_x, 2)
    contract.observe_body(frame, start, frame.f_lasti)
    contract.capture_ended(graph, contract.stop_capture(), frame, 0, [])
    return bridge.recorder.of(EventKind.GRAPH_TENSORS)[-1]["type_name"]


def module_attribute_cache():
    layer, static_x = Cached(), torch.randn(8, 4)

    def body():
        with torch.no_grad():
            return holder(layer, static_x)

    return wrote(body, None)  # no frame: the forward's pre-hook notes the layer


def holder(layer, x):
    return layer(x)


def backward(grads_before):
    model, static_x = model_of(False), torch.randn(8, 4)
    if grads_before:
        model(static_x).sum().backward()
    return wrote(lambda: model(static_x).sum().backward(), sys._getframe(0))


def optimizer_step():
    model, static_x = model_of(False), torch.randn(8, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(static_x).sum().backward()
    return wrote(lambda: model(static_x), sys._getframe(0), stepped=[optimizer])


SCALE = torch.ones(4)


def scaled():
    SCALE.mul_(0.5)  # a global tensor written by the program's helper


def global_written():
    return wrote(scaled, None)


def inference_tensor_read():
    with torch.inference_mode():
        static_x = torch.randn(8, 4)
    model = model_of(False)

    def body():
        with torch.no_grad():
            model(static_x.clone())

    return wrote(body, sys._getframe(0))


for name, case in (("inference under no_grad", inference), ("a forward with grad mode on", forward_with_grad_mode_on),
                   ("a body in the capturing frame", lambda: body_in_the_capturing_frame(False))):
    result = case()
    check("a capture that wrote only what it made says own-memory: " + name, result == "own-memory", result)
for name, case in (("batch norm in training mode", batch_norm_in_training),
                   ("a static output copied into", copied_into_static_output),
                   ("a cache in a list of an object", cache_in_a_list),
                   ("a module's cache attribute, written by its forward", module_attribute_cache),
                   ("a library module's cache attribute", library_attribute_cache),
                   ("a local written by out= in the capturing frame", lambda: body_in_the_capturing_frame(True)),
                   ("a backward that makes .grad", lambda: backward(False)),
                   ("a backward that accumulates into .grad", lambda: backward(True)),
                   ("an optimizer that stepped inside", optimizer_step),
                   ("a global tensor written by a helper", global_written),
                   ("an inference tensor, whose version cannot be read", inference_tensor_read)):
    result = case()
    check("a capture that wrote the program's memory says program-memory: " + name, result == "program-memory", result)

bridge.recorder = Recorder(HERE)
graph = Graph()
contract.capture_started(graph, Origin.MEGATRON)
taken = contract.stop_capture()
contract.capture_ended(graph, taken, sys._getframe(0), 0, [])
sent = bridge.recorder.of(EventKind.GRAPH_TENSORS)
check("a library's capture says nothing of what it wrote", len(sent) == 1 and sent[0]["type_name"] is None, sent)
finish()
