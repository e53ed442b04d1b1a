"""make_graphed_callables' callables, watched on their calls: what their graphs baked in at capture.

- Modules (ModuleWatch): their graphs read the parameter objects they held then (a parameter's new .data is copied in
  on every call, a new parameter object is not seen), their buffers' memory, the Python numbers their forward read
  (`self.scale`), the requires_grad of each parameter (the backward graph computes gradients for what required them
  at capture), the training mode of their submodules whose code reads it (batch norm frozen inside a module still in
  training), and inputs of the captured shapes and dtypes (InputShapes: a call with another shape raises copying it
  into the static input, or broadcasts into it silently).
- Plain functions: the shapes of their inputs, and the leaf tensors among them (weights passed as inputs).
- Both: before a graphed backward, a leaf's .grad that lives in the graphs' pool (PyTorch #181723:
  check_grads_before_backward), on the first calls and then exponentially spaced ones (watches.due); and an output
  the program reads after the next call overwrote it (HeldOutputs: every call writes into the same static memory).
"""
import sys
import threading
import weakref

from . import contract, events, frames, graph_tensors, kept_values, pool_order, watches
from .bridge import Origin, listed

_MAX_ATTRIBUTES = 256  # numeric attributes of one graphed module watched


# Calls of one graphed callable whose outputs are followed (the defect shows from the second call on).
_HELD_CALLS = 64


class HeldOutputs:
    """The tensors a graphed callable returned at its last call, held weakly, and the program's line that called it.
    Every call returns new tensors that share the graph's static output memory, so an output the program still holds
    at the next call is overwritten by it. Holding is not reading: in `for x in xs: out = f(x)` the last output is
    alive at each call until `out` is rebound. An output is reported where a variable of the calling frame holds it
    and the frame's code reads that variable after the call before rebinding it (`a = f(x); b = f(y); g(a)`), at the
    line that kept it under that name (`prev = logits`), else at the line of the call that returned it. Sent once per
    callable."""

    def __init__(self, graph_id):
        self.graph_id = graph_id
        self.previous, self.previous_stack = [], None
        self.calls = 0
        self.pooled = None  # pool_order.PooledGraph of a callable graphed with others, which share its pool

    def before_call(self, frame):
        if self.pooled is not None and self.calls < _HELD_CALLS:
            try:
                pool_order.replayed(self.pooled)
                if watches.due(self.calls + 1):
                    pool_order.replaying(self.pooled, frame)
            except Exception:
                self.pooled = None
        if self.calls >= _HELD_CALLS or not self.previous:
            return
        try:
            alive = {id(t) for t in (ref() for ref in self.previous) if t is not None}
            frame = frames.program_frame(frame) if alive else None
            if frame is None:
                return
            for name, value in frames.local_values(frame).items():
                if id(value) in alive and kept_values.read_before_rebound(frame, name):
                    self.calls = _HELD_CALLS  # reported: stop following
                    kept_at = kept_values.alias_store_line(frame.f_code, name)
                    events.outputs_held(origin=Origin.GRAPHED_CALLABLES, graph=self.graph_id, name=name,
                                        references_added=1,
                                        frames=frames.encode_stack(frame, kept_at) if kept_at else
                                        frames.encode_frames(self.previous_stack or []) or None)
                    return
        except Exception:
            self.calls = _HELD_CALLS  # the probe never raises into the program; stop following this callable

    def after_call(self, result, frame):
        if self.calls >= _HELD_CALLS:
            return
        self.calls += 1
        try:
            torch = sys.modules.get("torch")
            self.previous = [weakref.ref(t) for t in torch.utils._pytree.tree_leaves(result)
                             if isinstance(t, torch.Tensor)]
            pool_order.name_outputs(self.pooled, self.previous)
            caller = frames.program_frame(frame)
            self.previous_stack = frames.stack_of(caller) if caller is not None and self.previous else None
        except Exception:
            self.previous = []


class InputShapes:
    """The tensors a graphed callable was captured with (make_graphed_callables' sample_args, flattened as it
    flattens the arguments of every call), and the calls that passed others."""

    def __init__(self, leaves):
        self.captured = None if leaves is None else [(tuple(t.shape), t.dtype) for t in leaves]
        # make_graphed_callables captures a backward that computes gradients only for the inputs that required
        # them in its sample_args: one that requires them later (a frozen layer before it unfrozen) gets none.
        self.needed_grad = None if leaves is None else [bool(getattr(t, "requires_grad", False)) for t in leaves]
        self.grad_flags_seen = _grad_flag_calls.count
        self.without_grad = set()  # inputs that were called without requiring gradients, as captured
        self.reported = set()

    @staticmethod
    def of(sample_args):
        """The shapes of one callable's sample_args; none known (nothing checked) where torch cannot flatten them."""
        try:
            import torch

            return InputShapes(torch.utils._pytree.arg_tree_leaves(*sample_args))
        except Exception:
            return InputShapes(None)

    def changes(self, leaves):
        """(key, index, description) of each input whose shape or dtype differs from the capture's, not reported
        yet."""
        found = []
        if self.captured is None:
            return found
        if len(leaves) != len(self.captured):
            key = ("count", len(leaves))
            if key not in self.reported:
                found.append((key, -1, "%d inputs, captured with %d" % (len(leaves), len(self.captured))))
            return found
        for index, (tensor, (shape, dtype)) in enumerate(zip(leaves, self.captured)):
            now = (tuple(getattr(tensor, "shape", ())), getattr(tensor, "dtype", None))
            if now == (shape, dtype) or (index, now) in self.reported:
                continue
            found.append(((index, now), index, "input %d: %s, captured %s" % (
                index, watches.describe_shape(*now), watches.describe_shape(shape, dtype))))
        return found

    def look_grads(self, graph_id, leaves):
        """HOST_VALUE_CHANGED for the first input that requires gradients where the captured one and the earlier calls'
        did not (a frozen layer before it unfrozen; one that required them from the first call trains nothing the
        eager code would not either, its graph's backward aside), at the program's Module.requires_grad_ since the
        callable's last call (graphed_calls.grad_flags_changed), else at the call."""
        stack, self.grad_flags_seen = _grad_flag_calls.stack_since(self.grad_flags_seen), _grad_flag_calls.count
        if "grads" in self.reported or len(leaves) != len(self.needed_grad):
            return
        for index, (tensor, needed) in enumerate(zip(leaves, self.needed_grad)):
            if needed:
                continue
            if not getattr(tensor, "requires_grad", False):
                self.without_grad.add(index)
            elif index in self.without_grad:  # an input that needed none at earlier calls (not from the first)
                self.reported.add("grads")
                events.host_value_change(origin=Origin.GRAPHED_CALLABLES, graph=graph_id,
                                         role=events.HostValueRole.REQUIRES_GRAD,
                                         name="input %d and the parameters it was computed from" % index,
                                         captured=0.0, now=1.0, at_change=stack is not None, frames=stack)
                return

    def call(self, graph_id, function, args, kwargs):
        """Runs `function` (the graphed callable) and sends an INPUT_SHAPE_CHANGED event for each input of another
        shape, saying whether PyTorch raised copying it into the static input or copied it silently."""
        changes = []
        if self.captured is not None:
            try:
                import torch

                plain = not kwargs and all(isinstance(a, torch.Tensor) for a in args)
                leaves = args if plain else torch.utils._pytree.arg_tree_leaves(*args)
                changes = self.changes(leaves)
                if torch.is_grad_enabled():
                    self.look_grads(graph_id, leaves)
            except Exception:
                pass
        if not changes:
            return function(*args, **kwargs)
        try:
            result = function(*args, **kwargs)
        except BaseException as error:
            for key, index, text in changes:
                self.reported.add(key)
                events.input_shape_change(graph=graph_id, input=None if index < 0 else index,
                                          handling=events.ShapeChangeHandling.RAISED, description=text,
                                          error="%s: %s" % (frames.exception_type(error), frames.exception_text(error)))
            raise
        for key, index, text in changes:
            self.reported.add(key)
            converted = key[0] != "count" and key[1][0] == self.captured[index][0]
            events.input_shape_change(graph=graph_id, input=None if index < 0 else index,
                                      handling=events.ShapeChangeHandling.CONVERTED if converted
                                      else events.ShapeChangeHandling.BROADCAST, description=text)
        return result


def _numeric_attributes(module):
    """(submodule, path, name, value) of the int and float attributes that a module's or submodule's forward reads
    as `self.NAME`: make_graphed_callables' graphs keep the values they had at capture."""
    found = []
    if not hasattr(module, "named_modules"):
        return found
    for path, sub in module.named_modules():
        code = getattr(getattr(type(sub), "forward", None), "__code__", None)
        read = set(code.co_names) if code is not None else set()
        for name, value in vars(sub).items():
            if name.startswith("_") or type(value) not in (int, float) or name not in read:
                continue
            found.append((weakref.ref(sub), path, name, value))
            if len(found) >= _MAX_ATTRIBUTES:
                return found
    return found


class _ProgramCalls:
    """Calls of the program's that graphed modules look at after them: how many there were, and the stack of the
    last one that changed something, which a look names only when it came after that look's previous one."""

    def __init__(self):
        self.count, self.stack, self.stack_count = 0, None, 0

    def made(self, stack=None):
        self.count += 1
        if stack:
            self.stack, self.stack_count = stack, self.count

    def stack_since(self, seen):
        """The last changing call's stack when it came after the `seen`-th call, else None."""
        return self.stack if self.stack_count > seen else None


# Every outermost Module.train()/eval() (a graphed module looks at its submodules' modes at its next call), with the
# stack of those that changed their module's mode while graphed modules were watched.
_mode_calls = _ProgramCalls()
_grad_flag_calls = _ProgramCalls()  # the program's Module.requires_grad_ while graphed modules were watched
_graphed_modules = [0]  # modules watch_graphed_module wrapped, in the process


def grad_flags_changed(stack):
    _grad_flag_calls.made(stack)


def modes_changed(stack=None):
    _mode_calls.made(stack)


def watching():
    """Whether a module graphed by make_graphed_callables is watched (a hook's cheap test before it takes a stack)."""
    return _graphed_modules[0] > 0


class ModuleWatch:
    """A module graphed by make_graphed_callables."""

    def __init__(self, module, own_forward, shapes):
        self.module = weakref.ref(module)  # the watch must not keep a module the program dropped
        self.module_id = id(module)
        # make_graphed_callables replays its graphs only in the training mode it captured them in (else it runs
        # the forward it replaced: the instance's own, `own_forward`, else its class's).
        self.training = getattr(module, "training", None)
        self.own_forward = own_forward
        self.shapes = shapes
        self.parameters = {name: (id(p), watches.address(p), getattr(p, "requires_grad", None))
                           for name, p in module.named_parameters()}
        # Its submodules whose code reads their training flag (batch norm, dropout), with the mode captured: the
        # graphs replay it whatever mode they are put in while the module itself stays in the captured one.
        named = module.named_modules() if hasattr(module, "named_modules") else ()
        self.modes = [(weakref.ref(sub), path, sub.training) for path, sub in named
                      if path and contract.mode_sensitive(sub)]
        self.held = HeldOutputs(self.module_id)
        self.modes_generation = _mode_calls.count
        self.buffers = {name: watches.address(b) for name, b in module.named_buffers() if watches.is_cuda_tensor(b)}
        self.attributes = _numeric_attributes(module)
        self.reported = set()
        self.grads_aliased = []  # non-empty once a .grad in the graphs' pool was reported
        self.calls = 0

    def look(self):
        module = self.module()
        if module is None:
            return
        for name, parameter in module.named_parameters():
            captured = self.parameters.get(name)
            if captured is None or name in self.reported:
                continue
            if id(parameter) != captured[0]:
                self.reported.add(name)
                events.state_rebound(origin=Origin.GRAPHED_CALLABLES, graph=self.module_id,
                                     role=events.TensorRole.PARAMETER, name=name, address_at_capture=captured[1],
                                     address_now=watches.address(parameter))
            elif getattr(parameter, "requires_grad", None) != captured[2]:
                self.reported.add(name)
                events.host_value_change(origin=Origin.GRAPHED_CALLABLES, graph=self.module_id,
                                         role=events.HostValueRole.REQUIRES_GRAD, name=name,
                                         captured=float(captured[2]), now=float(parameter.requires_grad),
                                         at_change=False)
        for name, buffer in module.named_buffers():
            captured = self.buffers.get(name)
            if captured is not None and name not in self.reported and watches.address(buffer) != captured:
                self.reported.add(name)
                events.state_rebound(origin=Origin.GRAPHED_CALLABLES, graph=self.module_id,
                                     role=events.TensorRole.BUFFER, name=name, address_at_capture=captured,
                                     address_now=watches.address(buffer))
        for sub, path, name, captured in self.attributes:
            owner = sub()
            key = (path, name)
            if owner is None or key in self.reported:
                continue
            now = getattr(owner, name, captured)
            if type(now) in (int, float) and now != captured:
                self.reported.add(key)
                label = "%s.%s" % (path, name) if path else "%s.%s" % (type(owner).__name__, name)
                events.host_value_change(origin=Origin.GRAPHED_CALLABLES, graph=self.module_id,
                                         role=events.HostValueRole.MODULE_ATTRIBUTE, name=label, captured=captured,
                                         now=now, at_change=False)

    def look_modes(self):
        """Submodules in another training mode than at capture while the module is in the captured one: sent once,
        as the graphs replay (make_graphed_callables runs its eager forward when the module's own mode changed)."""
        stack, self.modes_generation = _mode_calls.stack_since(self.modes_generation), _mode_calls.count
        if "modes" in self.reported:
            return
        differ, captured = [], None
        for sub_ref, path, training in self.modes:
            sub = sub_ref()
            if sub is not None and sub.training != training:
                differ.append(path)
                captured = training
        if differ:
            self.reported.add("modes")
            events.training_mode_change(origin=Origin.GRAPHED_CALLABLES, graph=self.module_id,
                                        captured_training=captured, modules=len(differ), names=listed(differ),
                                        frames=stack)


def watch_graphed_module(module, own_forward, shapes, shadow, pooled=None):
    """Wraps the forward make_graphed_callables gave `module`. `own_forward`: the instance's own forward that it
    replaced, None for its class's; `shapes`: its InputShapes; `shadow`: the --shadow comparer, None when off;
    `pooled`: its place among callables graphed together. The wrapper stays for the shape check (a Python call per
    graphed call); the looks stop after watches.LAST_LOOK calls."""
    graphed_forward = module.__dict__.get("forward")
    if graphed_forward is None:
        return
    watch = ModuleWatch(module, own_forward, shapes)
    watch.held.pooled = pooled
    _graphed_modules[0] += 1

    def forward(*args, **kwargs):
        watch.calls += 1
        if watch.calls <= watches.LAST_LOOK and watches.due(watch.calls):
            try:
                watch.look()
            except Exception:
                pass
        if getattr(module, "training", None) != watch.training:  # make_graphed_callables runs the eager forward
            return graphed_forward(*args, **kwargs)
        if watch.modes_generation != _mode_calls.count:
            try:
                watch.look_modes()
            except Exception:
                pass
        watch.held.before_call(sys._getframe(1))
        if shadow is not None and watch.calls <= shadow.calls:
            result = shadow.module_call(module, watch,
                                        lambda: shapes.call(watch.module_id, graphed_forward, args, kwargs), args,
                                        kwargs)
        else:
            result = shapes.call(watch.module_id, graphed_forward, args, kwargs)
        watch.held.after_call(result, sys._getframe(1))
        if watch.calls <= watches.LAST_LOOK and watches.due(watch.calls) and not watch.grads_aliased:
            arguments = leaf_arguments(args)
            watch_backward(result, lambda: _live_leaves(watch.module, arguments), watch.module_id,
                           watch.grads_aliased)
        return result

    module.forward = forward


def _live_leaves(module_ref, arguments):
    """(name, tensor) of a graphed call's leaves: its module's parameters (`module_ref`, a weak reference, or None)
    and the leaf tensors among its arguments (`arguments`: contract.leaf_arguments)."""
    module = module_ref() if module_ref is not None else None
    leaves = list(module.named_parameters()) if module is not None else []
    known = {id(p) for _, p in leaves}
    for name, ref in arguments:
        tensor = ref()
        if tensor is not None and id(tensor) not in known:
            leaves.append((name, tensor))
    return leaves


def watch_graphed_function(function, shapes, names=(), pooled=None):
    """A plain callable graphed by make_graphed_callables, wrapped so that its calls' shapes are checked and the
    leaf tensors it takes (its weights) are held to their gradients at its first backwards. `names`: the original
    function's parameter names; `pooled`: its place among callables graphed together."""
    calls, aliased = [0], []
    held = HeldOutputs(0)
    held.pooled = pooled

    def graphed_function(*args, **kwargs):
        held.before_call(sys._getframe(1))
        result = shapes.call(id(graphed_function), function, args, kwargs)
        held.after_call(result, sys._getframe(1))
        calls[0] += 1
        if calls[0] <= watches.LAST_LOOK and watches.due(calls[0]) and not aliased:
            arguments = leaf_arguments(args, names)
            if arguments:
                watch_backward(result, lambda: _live_leaves(None, arguments), id(graphed_function), aliased)
        return result

    held.graph_id = id(graphed_function)
    graphed_function.__wrapped__ = function
    graphed_function.__doc__ = getattr(function, "__doc__", None)
    return graphed_function


def watch_backward(outputs, leaves, graph_id, reported):
    """Hooks the backward of a graphed callable's call (the node of its first output that has one): see
    check_grads_before_backward."""
    try:
        torch = sys.modules.get("torch")
        flat = torch.utils._pytree.tree_leaves(outputs)
        node = next((t.grad_fn for t in flat if isinstance(t, torch.Tensor) and t.grad_fn is not None), None)
        if node is not None:
            node.register_prehook(check_grads_before_backward(leaves, graph_id, threading.get_ident(), reported))
    except Exception:
        pass


def leaf_arguments(args, names=()):
    """(name, weak reference) of the leaf tensors among a call's arguments that require gradients: the weights a
    plain function graphed by make_graphed_callables takes as inputs. `names`: the function's parameter names."""
    found = []
    try:
        tensor = sys.modules["torch"].Tensor
        for index, value in enumerate(args):
            if isinstance(value, tensor) and value.is_leaf and value.requires_grad:
                found.append((names[index] if index < len(names) else "argument %d" % index, weakref.ref(value)))
    except Exception:
        pass
    return found


def check_grads_before_backward(leaves, graph_id, thread, reported):
    """An autograd pre-hook for the backward node of a graphed callable's output: its graphs will write their static
    gradients, and a leaf tensor's .grad that lives in their pool is overwritten (and then added to itself).
    `leaves()`: (name, tensor) of the leaves its backward writes gradients for."""

    def prehook(grad_outputs):
        if reported:
            return None
        try:
            aliased = []
            for name, parameter in leaves():
                grad = parameter.grad
                if grad is not None and contract.on_device(grad) and graph_tensors.in_pool(watches.address(grad)):
                    aliased.append((name, watches.address(grad)))
            if aliased:
                reported.append(True)
                caller = sys._current_frames().get(thread)
                events.grad_aliased(module=graph_id, count=len(aliased), first_address=aliased[0][1],
                                    names=listed(n for n, _ in aliased),
                                    frames=frames.encode_stack(caller) if caller is not None else None)
        except Exception:
            pass
        return None

    return prehook
