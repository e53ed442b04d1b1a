"""What a graph baked in at capture, watched while it is replayed: a change becomes an event at the replay (or at the
call that made it), and graphcheck's checks judge it.

- Manual captures (CaptureWatch): the capturing frame's names that held the device or pinned host tensors the body
  read (static inputs) and bound to CUDA tensors (static outputs). An input whose memory is freed is noted at the line
  that dropped it; a name that holds another tensor at a replay from the same function, one that no other capture
  reads (a serving loop's variable moving from one bucket's static input to the next is no rebinding), is a rebinding;
  and no replay should find the program holding ever more references to an output.
- Host state of a capture (HostStateWatch): the numeric hyperparameters of every optimizer whose step() ran inside the
  capture (a float learning rate is baked into the graph; a tensor one is read at each replay), and the .grad tensors
  the graph writes for an optimizer that steps outside it (`zero_grad()` setting them to None detaches them).
- Every replay of a watched graph (watch_replays) looks at these and at the graph's contract.Contract.

make_graphed_callables' callables are watched on their calls (graphed_calls.py). Looks happen on the first calls and
replays and then at exponentially spaced ones (due), after which the per-replay hook is removed; changes made by an
LR scheduler's step() or by zero_grad() are seen at that call, whenever it is.
"""
import sys
import threading
import weakref

from . import contract, events, frames, graph_tensors, kept_values, pool_order
from .bridge import Origin

# Calls of a graphed module and replays of a watched graph that are looked at: the first FIRST_LOOKS, then the powers
# of two up to LAST_LOOK; after that the replay hook is removed.
FIRST_LOOKS = 8
LAST_LOOK = 4096
_HELD_GROWTH = 3  # looks in a row at which the program held more references to an output: outputs kept across replays
_MAX_HYPERPARAMETERS = 256  # per capture


def due(n):
    return n <= FIRST_LOOKS or (n & (n - 1)) == 0


def is_cuda_tensor(value):
    try:
        return bool(value.is_cuda) and callable(value.data_ptr)
    except Exception:
        return False


def is_graph_readable(value):
    """A tensor a captured graph can read at a fixed address: on a CUDA device, or in pinned host memory (a copy
    node's source)."""
    if is_cuda_tensor(value):
        return True
    try:
        return value.device.type == "cpu" and bool(value.is_pinned())
    except Exception:
        return False


def address(tensor):
    try:
        return int(tensor.data_ptr())
    except Exception:
        return 0


def _references(tensor):
    """References the program holds to a tensor's memory: to the Python object, and to its storage through other
    tensors (views, detached copies)."""
    count = sys.getrefcount(tensor)
    try:
        import torch

        count += torch._C._storage_Use_Count(tensor.untyped_storage()._cdata)
    except Exception:
        pass
    return count


def _attribute_holders(tensor):
    """(object, attribute) of the objects whose attributes hold `tensor` itself (gc.get_referrers: one walk of the
    heap, made once per output whose references grew)."""
    import gc
    import types

    skipped = (types.FrameType, types.ModuleType, types.FunctionType, type, list, tuple, set)
    holders = []
    for referrer in gc.get_referrers(tensor):
        if type(referrer) is dict:  # an instance's __dict__ (CPython 3.10), or any dict: find its owner
            keys = [k for k, v in referrer.items() if v is tensor and type(k) is str]
            owners = [o for o in gc.get_referrers(referrer) if keys and getattr(o, "__dict__", None) is referrer]
            holders.extend((owner, key) for owner in owners[:1] for key in keys)
        elif not isinstance(referrer, skipped) and hasattr(referrer, "__dict__"):  # inline attributes (3.11+)
            holders.extend((referrer, k) for k, v in vars(referrer).items() if v is tensor and type(k) is str)
    return holders[:8]


def describe_shape(shape, dtype):
    return "%s %s" % ("x".join(str(d) for d in shape) or "scalar", str(dtype).replace("torch.", ""))


# Instructions that load or store a variable (CPython 3.10-3.14), with the variables of their argument, in order;
# the superinstructions of 3.13+ name two.
_LOADS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_BORROW", "LOAD_FAST_LOAD_FAST",
          "LOAD_FAST_BORROW_LOAD_FAST_BORROW", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_DEREF", "LOAD_CLASSDEREF"}
_STORES = {"STORE_FAST", "STORE_FAST_STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF"}


def _names_used(code, start, end):
    """The variables the instructions of `code` strictly between byte offsets `start` and `end` (a with block's body)
    load and store."""
    import dis

    loaded, stored = set(), set()
    for instruction in dis.get_instructions(code):
        if not start < instruction.offset < end:
            continue
        names = instruction.argval if isinstance(instruction.argval, tuple) else (instruction.argval,)
        names = [n for n in names if isinstance(n, str)]
        if instruction.opname in _LOADS:
            loaded.update(names)
        elif instruction.opname in _STORES:
            stored.update(names)
        elif instruction.opname == "STORE_FAST_LOAD_FAST" and len(names) == 2:
            stored.add(names[0])
            loaded.add(names[1])
    return loaded, stored


class CaptureWatch:
    """A manual capture (torch.cuda.graph) of the program's: its static inputs (device or pinned host tensors the
    body read) and outputs, by name, and the memory of each input, whose freeing is noted at the line that dropped
    it."""

    def __init__(self, graph, frame):
        self.graph_id = id(graph)
        self.code = frame.f_code
        self.start = frame.f_lasti
        self.with_line = frame.f_lineno
        self.before = {name: v for name, v in frames.local_values(frame).items() if is_graph_readable(v)}
        self.inputs, self.outputs, self.held, self.reported = {}, {}, {}, set()
        self.output_tensors = []  # weak references to the CUDA tensors the body bound, in a tuple, list or dict too
        self.first_count, self.scanned = {}, set()  # an output's references at the first look; outputs looked for
        self.storages = {}  # name -> weak reference to the input's memory

    def end(self, frame):
        loaded, stored = _names_used(self.code, self.start, frame.f_lasti)
        inputs = {name: self.before[name] for name in loaded - stored if name in self.before}
        self.inputs = {name: address(tensor) for name, tensor in inputs.items()}
        for name, tensor in inputs.items():
            self.storages[name] = graph_tensors.storage_ref(tensor)
            graph_tensors.add_static_input(self.inputs[name], self.graph_id)
            try:
                weakref.finalize(tensor, graph_tensors.released, self.graph_id, "static-input", name,
                                 self.inputs[name]).atexit = False
            except Exception:
                pass
        weakref.finalize(self, graph_tensors.forget_static_inputs, self.graph_id,
                         list(self.inputs.values())).atexit = False
        values = frames.local_values(frame)
        # Held weakly: a probe that kept them alive would change what the program's later captures allocate.
        self.outputs = {name: weakref.ref(values[name]) for name in stored if is_cuda_tensor(values.get(name))}
        bound = [values.get(name) for name in stored]
        bound += [entry for value in bound if isinstance(value, (tuple, list, dict))
                  for entry in (value.values() if isinstance(value, dict) else value)]
        self.output_tensors = [weakref.ref(value) for value in bound if is_cuda_tensor(value)]
        self.before = None
        return bool(self.inputs or self.outputs)

    def named_tensors(self, frame):
        """("static-input" or "static-output", name, tensor) for what end() found, for the graph's manifest."""
        values = frames.local_values(frame)
        named = [("static-input", name, values[name]) for name in self.inputs if is_graph_readable(values.get(name))]
        named.extend(("static-output", name, tensor) for name, output in self.outputs.items()
                     if (tensor := output()) is not None)
        return named

    def look(self, frame):
        for name, captured in self.inputs.items():
            if name not in self.reported and graph_tensors.expired(self.storages.get(name)):
                self.reported.add(name)  # freed: the graph reads memory the allocator hands out again
                events.state_rebound(origin=Origin.USER, graph=self.graph_id, role=events.TensorRole.STATIC_INPUT,
                                     name=name, address_at_capture=captured, freed=True)
        if frame.f_code is self.code:
            values = frames.local_values(frame)
            for name, captured in self.inputs.items():
                now = values.get(name)
                if name in self.reported or not is_graph_readable(now):
                    continue
                moved = address(now)
                if moved != captured and not graph_tensors.another_graphs_input(moved, self.graph_id):
                    self.reported.add(name)
                    events.state_rebound(origin=Origin.USER, graph=self.graph_id,
                                         role=events.TensorRole.STATIC_INPUT, name=name, address_at_capture=captured,
                                         address_now=moved)
        for name, output in self.outputs.items():
            tensor = output()
            if name in self.reported or tensor is None:
                continue
            count = _references(tensor)
            if count > self.first_count.setdefault(name, count) and name not in self.scanned:
                self.scanned.add(name)
                if self._kept_as_previous(name, tensor):
                    continue
            history = self.held.setdefault(name, [])
            if history and count <= history[-1]:
                history.clear()
            history.append(count)
            if len(history) > _HELD_GROWTH:
                self.reported.add(name)
                events.outputs_held(origin=Origin.USER, graph=self.graph_id, name=name,
                                    references_added=history[-1] - history[0], frames=kept_values.append_site(frame, tensor))

    def _kept_as_previous(self, name, tensor):
        """An output an object keeps in an attribute as it is, through a method that reads the attribute before
        storing its argument there (a logger's `self.prev = logits`): what it reads after the next replay is that
        replay's output, not the previous one. Sent at the store."""
        for holder, attribute in _attribute_holders(tensor):
            site = frames.previous_value_site(type(holder), attribute)
            if site is not None:
                self.reported.add(name)
                events.outputs_held(origin=Origin.USER, graph=self.graph_id, references_added=0,
                                    name="%s.%s" % (type(holder).__name__, attribute), frames=site)
                return True
        return False


# Every optimizer the program constructed (Optimizer.__init__ is hooked), for the parameters a capture may write.
optimizers = weakref.WeakSet()
# Host-state watches of graphs still alive, for the scheduler and zero_grad hooks.
_host_watches = weakref.WeakSet()
_capturing = threading.local()  # .state: the CaptureState of the capture under way on this thread


def parameter_names(frame):
    """id(tensor) -> "model.fc1.weight" for the parameters and buffers of the modules the capturing frame can name
    (its locals and its module's globals)."""
    names = {}
    try:
        import torch

        Module = torch.nn.Module
        scopes = [frames.local_values(frame), frame.f_globals] if frames.is_function_frame(frame) else [
            frame.f_globals]
        for scope in scopes:
            for variable, value in list(scope.items()):
                if isinstance(value, Module):
                    for name, tensor in value.named_parameters():
                        names.setdefault(id(tensor), "%s.%s" % (variable, name))
                    for name, tensor in value.named_buffers():
                        names.setdefault(id(tensor), "%s.%s" % (variable, name))
    except Exception:
        pass
    return names


def _numbers(value, suffix=""):
    """(suffix, float) of a hyperparameter's numbers: itself, or each element of a tuple such as Adam's betas."""
    if type(value) in (int, float):
        yield suffix, float(value)
    elif isinstance(value, (tuple, list)) and len(value) <= 8:
        for index, item in enumerate(value):
            yield from _numbers(item, "%s[%d]" % (suffix, index))


def _number_at(group, key, suffix):
    value = group.get(key)
    for part in suffix.strip("[]").split("]["):
        if part:
            try:
                value = value[int(part)]
            except Exception:
                return None
    return value


class CaptureState:
    """What a capture under way needs at its end: the optimizers that stepped inside it and the gradients before it."""

    def __init__(self, graph, origin):
        self.graph_id = id(graph)
        self.origin = origin
        self.stepped = []
        self.grads_before = []
        for optimizer in list(optimizers):
            for group in optimizer.param_groups:
                for parameter in group["params"]:
                    grad = parameter.grad
                    self.grads_before.append((parameter, None if grad is None else id(grad),
                                              None if grad is None else grad._version))


class HostStateWatch:
    """The host values a capture baked in: float hyperparameters of the optimizers that stepped inside it (and the
    memory of their tensor ones), and the gradients it writes for optimizers stepping outside it."""

    def __init__(self, state, names):
        self.graph_id, self.origin = state.graph_id, state.origin
        self.hyperparameters = []  # (optimizer ref, group index, key, suffix, label, value at capture)
        self.tensors = []  # (optimizer ref, group index, key, label, address at capture) of device hyperparameters
        for optimizer in state.stepped:
            kind = type(optimizer).__name__
            for index, group in enumerate(optimizer.param_groups):
                for key, value in group.items():
                    if key in ("params", "param_names"):
                        continue
                    if is_cuda_tensor(value):  # a capturable optimizer's tensor lr: the graph reads its memory
                        label = "%s param_groups[%d].%s" % (kind, index, key)
                        self.tensors.append((weakref.ref(optimizer), index, key, label, address(value)))
                    for suffix, number in _numbers(value):
                        label = "%s param_groups[%d].%s%s" % (kind, index, key, suffix)
                        self.hyperparameters.append((weakref.ref(optimizer), index, key, suffix, label, number))
        del self.hyperparameters[_MAX_HYPERPARAMETERS:]
        del self.tensors[_MAX_HYPERPARAMETERS:]
        # A group added after the capture (add_param_group) is one the graph never steps.
        self.group_counts = [(weakref.ref(optimizer), "%s param_groups" % type(optimizer).__name__,
                              len(optimizer.param_groups)) for optimizer in state.stepped]
        stepped = {id(p) for optimizer in state.stepped for g in optimizer.param_groups for p in g["params"]}
        self.grads = []  # (parameter ref, id of its grad, address, label)
        # Only the program's own captures: libraries point .grad at what their graphs write themselves (Megatron's
        # optimizers set .grad to the main_grad buffer its layer graphs accumulate into, every step: seen on an H200
        # with megatron-core 0.19.2, zero_grad() between replays and training right).
        grads_before = state.grads_before if state.origin == Origin.USER else []
        for parameter, grad_id, version in grads_before:
            grad = parameter.grad
            if grad is None or id(parameter) in stepped or (id(grad) == grad_id and grad._version == version):
                continue
            label = names.get(id(parameter), "a %s parameter" % describe_shape(tuple(parameter.shape),
                                                                                 parameter.dtype))
            self.grads.append((weakref.ref(parameter), id(grad), address(grad), label))
        self.reported = set()

    def __bool__(self):
        return bool(self.hyperparameters or self.tensors or self.grads or self.group_counts)

    def _look_tensors(self, attributed, optimizer):
        """A device hyperparameter replaced by another tensor (`group["lr"] = base * factor`): the graph still reads
        the memory of the one it had at capture. Sent as a rebound static input, at the line that stored it."""
        for optimizer_ref, index, key, label, captured in self.tensors:
            owner = optimizer_ref()
            if owner is None or label in self.reported or (optimizer is not None and owner is not optimizer):
                continue
            groups = owner.param_groups
            now = groups[index].get(key) if index < len(groups) else None
            if not is_cuda_tensor(now) or address(now) == captured:
                continue
            self.reported.add(label)
            stack = None if attributed else frames.change_site(sys._getframe(2), {"STORE_SUBSCR"}, key)
            events.state_rebound(origin=self.origin, graph=self.graph_id, role=events.TensorRole.STATIC_INPUT,
                                 name=label, address_at_capture=captured, address_now=address(now), frames=stack)

    def look(self, attributed=False, optimizer=None):
        for optimizer_ref, label, captured in self.group_counts:
            owner = optimizer_ref()
            if owner is None or label in self.reported or (optimizer is not None and owner is not optimizer):
                continue
            if len(owner.param_groups) != captured:
                self.reported.add(label)
                events.host_value_change(graph=self.graph_id, role=events.HostValueRole.OPTIMIZER_PARAM_GROUPS,
                                         name=label, captured=captured, now=len(owner.param_groups),
                                         at_change=attributed)
        for optimizer_ref, index, key, suffix, label, captured in self.hyperparameters:
            owner = optimizer_ref()
            if owner is None or label in self.reported or (optimizer is not None and owner is not optimizer):
                continue
            try:
                now = _number_at(owner.param_groups[index], key, suffix)
            except Exception:
                continue
            if type(now) not in (int, float) or float(now) == captured:
                continue  # a tensor now: the program moved to a value the graph reads at replay, or not a number
            self.reported.add(label)
            # Seen at a replay: the one line of the replaying function or its callers (or a callback they define)
            # that stores the key (`group["weight_decay"] = ...`), when there is one.
            stack = None if attributed else frames.change_site(sys._getframe(1), {"STORE_SUBSCR"}, key)
            events.host_value_change(graph=self.graph_id, role=events.HostValueRole.OPTIMIZER_HYPERPARAMETER,
                                     name=label, captured=captured, now=now, at_change=attributed or bool(stack),
                                     frames=stack)
        self._look_tensors(attributed, optimizer)
        if optimizer is not None:
            return
        for parameter_ref, grad_id, captured, label in self.grads:
            parameter = parameter_ref()
            if parameter is None or label in self.reported:
                continue
            grad = parameter.grad
            if grad is not None and id(grad) == grad_id:
                continue
            self.reported.add(label)
            # zero_grad() sets a .grad to None, never to another tensor: a .grad rebound was seen after the fact, at
            # the one line of the calling function or its callers (or a callback they define) that sets a .grad
            # (`p.grad = p.grad / accum`), when there is one.
            by_this_call = attributed and grad is None
            stack = None if by_this_call else frames.change_site(sys._getframe(1), {"STORE_ATTR"}, "grad")
            events.host_value_change(graph=self.graph_id, role=events.HostValueRole.GRAD, name=label,
                                     captured=captured, now=0 if grad is None else address(grad),
                                     at_change=by_this_call or bool(stack), frames=stack)


def capture_under_way():
    """Whether a capture is under way on this thread (at every optimizer step: a thread-local's missing attribute
    costs an exception, its dictionary does not)."""
    return _capturing.__dict__.get("state") is not None


def stepping_optimizers():
    """The optimizers that stepped inside the capture under way on this thread (before capture_ended)."""
    state = getattr(_capturing, "state", None)
    return list(state.stepped) if state is not None else []


def capture_started(graph, origin):
    try:
        _capturing.state = CaptureState(graph, origin)
    except Exception:
        _capturing.state = None


def capture_ended(graph, frame):
    """The HostStateWatch of the capture that just ended on this thread (None when it baked in nothing watched).
    Notes on the graph's watch which parameters had no .grad when it began: its backward assigned their gradients
    rather than adding to them, which is what running its code again must start from."""
    state = getattr(_capturing, "state", None)
    _capturing.state = None
    if state is None or state.graph_id != id(graph):
        return None
    graph_watch(graph).grads_none_at_capture = [weakref.ref(p) for p, grad_id, _ in state.grads_before
                                                if grad_id is None]
    try:
        watch = HostStateWatch(state, parameter_names(frames.program_frame(frame) or frame))
    except Exception:
        return None
    if not watch:
        return None
    _host_watches.add(watch)
    return watch


def optimizer_stepping(optimizer, args, kwargs):
    """torch.optim's global step pre-hook: an optimizer stepping inside a capture bakes its hyperparameters in."""
    state = getattr(_capturing, "state", None)
    if state is not None and not any(o is optimizer for o in state.stepped):
        state.stepped.append(optimizer)


def host_values_changed(optimizer=None):
    """After an LR scheduler's step() (`optimizer`: its optimizer) or a zero_grad(): a change of what a live graph
    baked in is reported at this call."""
    for watch in list(_host_watches):
        try:
            watch.look(attributed=True, optimizer=optimizer)
        except Exception:
            pass


class GraphWatch:
    """Everything watched on one captured graph's replays."""

    def __init__(self, graph):
        self.graph_id = id(graph)
        self.capture = None  # CaptureWatch
        self.host = None  # HostStateWatch
        self.region = None  # shadow.Region, under --shadow
        self.contract = None  # contract.Contract: the modules, modes and tensors its capture ran with
        self.pooled = None  # pool_order.PooledGraph: the program's capture, in its pool's capture order
        self.grads_none_at_capture = []  # parameters (weak) without a .grad when the capture began
        self.replays = 0


def graph_watch(graph):
    watch = graph.__dict__.get("_graphcheck_watch")
    if watch is None:
        watch = graph.__dict__["_graphcheck_watch"] = GraphWatch(graph)
    return watch


def forget_graph(graph):
    """A graph captured again: its earlier capture's watch ends."""
    graph.__dict__.pop("replay", None)
    graph.__dict__.pop("_graphcheck_watch", None)


def watch_replays(graph, shadow):
    """Wraps `graph.replay` on this graph object only. The wrapper holds the graph weakly (a graph the program drops
    must free its pool at once, not at the next cyclic collection) and calls the class's replay. `shadow`: the
    --shadow comparer, None when off."""
    watch = graph_watch(graph)
    watched = watch.capture, watch.host, watch.region, watch.contract, watch.pooled
    if all(w is None for w in watched) or "replay" in graph.__dict__:
        return
    replay, graph_ref = type(graph).replay, weakref.ref(graph)

    def replay_and_look(*args, **kwargs):
        this = graph_ref()
        watch.replays += 1
        if watch.pooled is not None:
            pool_order.replayed(watch.pooled)
        looking = due(watch.replays) and watch.replays <= LAST_LOOK
        armed = watch.contract.armed if watch.contract is not None else None
        if looking or armed:
            try:
                caller = sys._getframe(1)
                if looking and watch.capture is not None:
                    watch.capture.look(caller)
                if looking and watch.host is not None:
                    watch.host.look()
                if looking and watch.pooled is not None:
                    pool_order.replaying(watch.pooled, caller)
                if watch.contract is not None:
                    watch.contract.look(modes_only=not looking and armed != contract.ARMED_ALL, frame=caller)
            except Exception:
                pass
        shadowed = 0 if shadow is None or watch.region is None else shadow.calls
        if watch.replays <= shadowed:
            return shadow.replay(this, watch, lambda: replay(this, *args, **kwargs))
        if watch.replays >= max(LAST_LOOK, shadowed) and this.__dict__.get("replay") is replay_and_look:
            del this.replay  # contract.arm() puts it back for the contract's next look
        return replay(this, *args, **kwargs)

    graph.replay = replay_and_look
