"""`graphcheck run --shadow N`, the gradients of a module graphed by make_graphed_callables: what training keeps.

On each of the module's first N graphed calls in training, the shadow's two eager forwards (shadow.py) are kept with
their autograd graphs. When the graphed call's backward runs, hooks on its autograd node and on the parameters'
gradient accumulators compare two things:

- **The graph's gradient** (subject MODULE_BACKWARD): what the backward graph returns for each parameter, against
  the gradient of the eager forward's outputs for the same output gradients (the second eager forward gives eager's
  own spread). It differs where the backward reads something frozen at capture: a host value in a custom autograd
  function, a backward hook's setting.
- **The accumulation** (subject GRAD_ACCUMULATION): each parameter's `.grad` right after PyTorch's AccumulateGrad
  has added this backward's gradient, against `.grad` as it was before the graphed backward plus the gradient
  AccumulateGrad received. The two are equal bit for bit unless something wrote into `.grad`'s memory during the
  backward: a graph whose static gradient buffers are the `.grad` (PyTorch #181723) overwrites it and then adds it
  to itself.

A process with a process group is left out (DDP reduces `.grad` across ranks in the same hooks), and so is a call
whose forward drew random numbers the eager run could not draw alike (its gradients are sent as not comparable; the
accumulation is still compared). Records carry the stack of the thread that called the backward.
"""
import sys
import threading
import time

from . import frames
from .bridge import ShadowSubject

_MAX_PARAMETERS = 256  # parameters of one call compared


class _Described:
    """What a record needs of a tensor (its element count and dtype), without holding the tensor."""

    def __init__(self, tensor):
        self._numel = tensor.numel()
        self.dtype = tensor.dtype

    def numel(self):
        return self._numel


def comparable_call(torch, graphed_outputs):
    """Whether a graphed call's gradients can be shadowed: grad mode on, an output with a backward node, and no
    process group."""
    distributed = sys.modules.get("torch.distributed")
    if distributed is not None and distributed.is_available() and distributed.is_initialized():
        return None
    if not torch.is_grad_enabled():
        return None
    for _, tensor in graphed_outputs:
        if tensor.grad_fn is not None:
            return tensor.grad_fn
    return None


class GradientShadow:
    """The backward of one shadowed call: `runs` are the two eager forwards' outputs by name, `graphed` the graphed
    call's; `differ` when the graph and eager drew random numbers differently; `send(subject, name, tensor, figures,
    draws, elapsed_ns, stack, precision)` sends one record."""

    def __init__(self, torch, module, node, graphed, runs, draws, differ, precision, send, compare):
        self.torch = torch
        # By output index, not the tensors: the node's hooks hold this object, and a tensor held here would hold
        # the node back.
        self.graphed = [(name, t.output_nr) for name, t in graphed if t.grad_fn is node]
        self.runs = runs
        self.draws = draws
        self.differ = differ
        self.precision = precision
        self.send = send
        self.compare = compare
        self.names = {id(p): name for name, p in module.named_parameters()}
        self.parameters = self._parameters(node)
        self.thread = threading.get_ident()
        self.handles = []
        self.records = []  # (subject, name, _Described tensor, figures, draws, precision)
        self.before = {}  # id(parameter) -> .grad before the backward (None: none)
        self.expected = {}  # id(parameter) -> .grad before plus the gradient AccumulateGrad received
        self.eager = [{}, {}]  # per eager run: id(parameter) -> its gradient
        self.stack = None
        self.started = 0
        self.handles.append(node.register_prehook(self._before_backward))
        self.handles.append(node.register_hook(self._after_backward))

    def _parameters(self, node):
        """The parameters `node` sends gradients to, with their gradient accumulators and the node's input index (the
        node itself is not kept: its hooks hold this object)."""
        found = []
        for index, (next_node, _) in enumerate(node.next_functions):
            variable = getattr(next_node, "variable", None)
            if variable is not None and id(variable) in self.names and len(found) < _MAX_PARAMETERS:
                found.append((index, variable, next_node))
        return found

    def _before_backward(self, grad_outputs):
        torch = self.torch
        try:
            self.started = time.perf_counter_ns()
            caller = sys._current_frames().get(self.thread)
            self.stack = frames.encode_stack(caller) if caller is not None else None
            parameters = self.parameters
            for _, parameter, _ in parameters:
                grad = parameter.grad
                self.before[id(parameter)] = None if grad is None else grad.detach().clone()
            self._eager_gradients(torch, grad_outputs, [p for _, p, _ in parameters])
            for _, parameter, accumulator in parameters:
                if getattr(parameter, "_post_accumulate_grad_hooks", None):
                    continue  # the program's own hooks (an optimizer stepping in backward) change .grad first
                self.handles.append(accumulator.register_prehook(self._received(parameter)))
                self.handles.append(parameter.register_post_accumulate_grad_hook(self._accumulated))
            torch.autograd.Variable._execution_engine.queue_callback(self._finish)
        except Exception:
            self._remove()
        return None

    def _eager_gradients(self, torch, grad_outputs, parameters):
        """The gradients of each eager forward's outputs for the graphed outputs' gradients."""
        if self.differ:
            return
        pairs = []
        for name, index in self.graphed:
            grad = grad_outputs[index] if index < len(grad_outputs) else None
            if grad is not None:
                pairs.append((name, grad))
        for run, into in zip(self.runs, self.eager):
            outputs = [(run.get(name), grad) for name, grad in pairs]
            outputs = [(o, g) for o, g in outputs if o is not None and o.grad_fn is not None]
            wanted = [p for p in parameters if p.requires_grad]
            if not outputs or not wanted:
                continue
            grads = torch.autograd.grad([o for o, _ in outputs], wanted, [g for _, g in outputs],
                                        allow_unused=True)
            for parameter, grad in zip(wanted, grads):
                if grad is not None:
                    into[id(parameter)] = grad
        self.runs = None  # the eager graphs are spent

    def _after_backward(self, grad_inputs, grad_outputs):
        """The gradients the backward graph returned, against eager's."""
        try:
            for index, parameter, _ in self.parameters:
                graph_grad = grad_inputs[index] if index < len(grad_inputs) else None
                if graph_grad is None:
                    continue
                eager, repeat = self.eager[0].get(id(parameter)), self.eager[1].get(id(parameter))
                name = "gradient %s" % self.names[id(parameter)]
                if self.differ:
                    figures = None
                elif eager is not None and repeat is not None and eager.shape == graph_grad.shape:
                    figures = self.compare(graph_grad, eager, repeat)
                else:
                    continue
                # Not the tensor itself: a reference held past this hook would stop AccumulateGrad from taking it
                # as .grad (PyTorch #181723's aliasing would not form under --shadow).
                self.records.append((ShadowSubject.MODULE_BACKWARD, name, _Described(graph_grad), figures,
                                     self.draws, self.precision))
        except Exception:
            pass
        return None

    def _received(self, parameter):
        def prehook(grad_outputs):
            incoming = grad_outputs[0] if grad_outputs else None
            if incoming is not None and not incoming.is_sparse:
                before = self.before.pop(id(parameter), None)
                incoming = incoming.detach()
                self.expected[id(parameter)] = incoming.clone() if before is None else before + incoming
            return None

        return prehook

    def _accumulated(self, parameter):
        try:
            expected = self.expected.pop(id(parameter), None)
            grad = parameter.grad
            if expected is not None and grad is not None and grad.shape == expected.shape:
                # Exact arithmetic: eager's spread is 0, and the math is the gradient's own dtype.
                self.records.append((ShadowSubject.GRAD_ACCUMULATION, "gradient %s" % self.names[id(parameter)],
                                     _Described(grad), self.compare(grad, expected, expected), "", None))
        except Exception:
            pass

    def _finish(self):
        self._remove()
        elapsed = time.perf_counter_ns() - self.started
        for subject, name, tensor, figures, draws, precision in self.records:
            self.send(subject, name, tensor, figures, draws, elapsed, self.stack, precision)
        self.records, self.before, self.expected, self.eager, self.parameters = [], {}, {}, [{}, {}], []

    def _remove(self):
        for handle in self.handles:
            try:
                handle.remove()
            except Exception:
                pass
        self.handles = []
