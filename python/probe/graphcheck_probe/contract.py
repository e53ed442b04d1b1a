"""The host side of a graph's capture contract: what a capture ran and baked in, named for graphcheck's manifest and
checked at the graph's replays. A graph reads fixed addresses and replays host values as they were at capture; this
module knows, per captured graph:

- the modules whose forward ran inside the capture (a global forward pre-hook, installed only while a capture is under
  way on this thread): their training flag where their forward reads it, the Python numbers their forward reads, and
  their parameters and buffers (address, and a weak reference to the memory);
- the host draws inside the capture (host_draws.py): the graph replays the value drawn at capture;
- the segments of the graph's memory pool, and the .grad tensors and optimizer state that exist when it ends;
- whether it wrote only memory it allocated (capture_writes.py);
- state the program keeps that the capture made in the graph's pool: a parameter or buffer the captured code replaced
  (Module.__setattr__ inside the capture, `self.ema = self.ema * 0.9 + ...`), and optimizer state an optimizer's
  first step inside the capture created. The graph replays the making too: each replay starts from the state as it
  was at capture.

At capture end the named tensors go to the recorder in one GRAPH_TENSORS event (joined with the recorder's manifest
of the graph's nodes). At the graph's replays (the first ones, then exponentially spaced ones, and the first after any
Module.train()/eval()), another training mode or autocast, a parameter or buffer that lives elsewhere, a tensor a path
reached that holds another now, a changed requires_grad, optimizer state replaced, a changed number (the modules' own,
and any the capture's Python read: host_reads.py) and a replay in grad mode (no_grad_replays.py) become events.
make_graphed_callables' modules are watched by graphed_calls.ModuleWatch, but for the numbers host_reads saw."""
import sys
import threading
import weakref

from . import (attribute_stores, autocast_sites, capture_writes, events, frames, host_draws, host_reads,
               no_grad_replays)
from .graph_tensors import (NamedTensor, PathTensor, add_static_input, address, another_graphs_input, expired,
                            forget_static_inputs, graphs_input, in_pool, inside, nbytes, pinned, pool_segments, pools,
                            released, storage_ref)
from .bridge import Origin, listed

MAX_TENSORS = 20000  # tensors named per capture
MAX_MODULES = 4096  # modules noted per capture
MAX_REPLACED = 32  # parameters and buffers replaced inside a capture, noted per capture
# Origins whose modules this module watches at replays: not torch.compile's (its guards recompile on a changed mode
# or attribute, and its captures run compiled code, not modules), not make_graphed_callables' (graphed_calls.ModuleWatch).
_REPLAY_WATCHED = {Origin.USER, Origin.UNKNOWN, Origin.MEGATRON, Origin.MEGATRON_FULL_ITERATION}
_NOT_NAMED = {Origin.CUDAGRAPH_TREES, Origin.CUDAGRAPH_TREES_INIT}
_OWN_CAPTURES = {Origin.USER, Origin.UNKNOWN}  # the program's torch.cuda.graph and CUDAGraph.capture_begin
_local = threading.local()  # .capture: the Capture under way on this thread
capturing = set()  # the threads with a Capture under way: one look tells Module.__setattr__ there is none
# id(module) -> names of its attributes a live graph baked in: Module.__setattr__ (patches.py) reports a change at the
# line that makes it. Ids of modules that died stay until their contract does; a reused id only costs a look.
watched_attributes = {}
_live = weakref.WeakSet()  # Contracts of graphs still alive with something to watch at replays
_grads_at_captures = {}  # address -> storage_ref of a parameter's .grad when a watched capture ended, while it lives


def _torch():
    return sys.modules.get("torch")


def on_device(tensor):
    """Whether a tensor lives on a CUDA device (what a graph can read); tests on a CPU replace it."""
    return bool(getattr(tensor, "is_cuda", False))


def _reads(module, name, observed=()):
    """Whether the module's forward, or a method of its that ran inside the capture (`observed`, the names they
    load), reads `name`."""
    if name in observed:
        return True
    code = getattr(getattr(type(module), "forward", None), "__code__", None)
    return code is not None and name in code.co_names


def mode_sensitive(module, observed=()):
    """Whether a module's own code reads its training flag (dropout, batch norm, attention dropout, Megatron's
    bias-dropout-add), leaving out dropout that drops nothing."""
    if not _reads(module, "training", observed):
        return False
    p = getattr(module, "p", None)
    return not (type(p) is float and p == 0.0 and type(module).__name__.endswith("Dropout"))


_AUTOCAST_DTYPES = {"float16": 2, "bfloat16": 3, "float32": 4}  # trace::AutocastStateName


def autocast_state(torch):
    """CUDA autocast on this thread: 0 off, else its dtype's code (1: another); None when torch cannot say."""
    try:
        enabled = torch.is_autocast_enabled("cuda")
        return _AUTOCAST_DTYPES.get(str(torch.get_autocast_dtype("cuda")).replace("torch.", ""), 1) if enabled else 0
    except Exception:
        return None


class Capture:
    """A capture under way on this thread: the modules that run inside it and its host random draws."""

    def __init__(self, graph, origin):
        self.graph_id = id(graph)
        self.origin = origin
        self.thread = threading.get_ident()
        torch = _torch()
        self.grad_enabled = bool(torch is not None and torch.is_grad_enabled())  # a training graph, or inference
        self.autocast = autocast_state(torch)
        self.modules = {}  # id -> module, in the order their forward first ran
        # (id(module), attribute) -> (module ref, attribute, role, address, bytes, stack) of a parameter or buffer
        # the captured code replaced, as it was before, and the line that replaced it first
        self.replaced = {}
        self.state_before = {}  # id(optimizer) -> (ids of the parameters with state, the stack of its step)
        self.hook = None
        self.draws = None
        self.reads = None  # host_reads.Observer: what the program's code read on the host
        self.writes = capture_writes.Writes() if origin in _OWN_CAPTURES else None
        if origin in _NOT_NAMED:
            return
        try:
            self.hook = _torch().nn.modules.module.register_module_forward_pre_hook(self._ran)
        except Exception:
            self.hook = None
        try:
            self.reads = host_reads.Observer()
            self.reads.tensor_noted = self.writes.note if self.writes is not None else None
            self.draws = host_draws.Draws(self.graph_id, self.reads)
            self.reads.start_tracing()
        except Exception:
            self.draws = None

    def _ran(self, module, args):
        if threading.get_ident() == self.thread and len(self.modules) < MAX_MODULES:
            self.modules.setdefault(id(module), module)
            if self.writes is not None:
                self.writes.note_module(module)  # once per module: Writes keeps the ids of those it noted

    def state_replacing(self, module, name):
        key = (id(module), name)
        if key in self.replaced or len(self.replaced) >= MAX_REPLACED:
            return
        for role, table in (("parameter", "_parameters"), ("buffer", "_buffers")):
            tensors = module.__dict__.get(table)
            old = tensors.get(name) if tensors else None
            if old is not None and on_device(old):
                self.replaced[key] = (weakref.ref(module), name, role, address(old), nbytes(old),
                                      frames.encode_stack(sys._getframe(1)))
                return

    def optimizer_stepping(self, optimizer):
        if id(optimizer) not in self.state_before:
            self.state_before[id(optimizer)] = ({id(p) for p in list(getattr(optimizer, "state", {}))},
                                                frames.encode_stack(sys._getframe(1)))

    def stop(self):
        if self.hook is not None:
            self.hook.remove()
            self.hook = None
        if self.reads is not None:
            self.reads.stop_tracing()
        if self.draws is not None:
            self.draws.stop(self.reads.generators if self.reads is not None else None)
            self.draws = None


class Contract:
    """What one graph's capture ran and baked in, checked at its replays."""

    def __init__(self, graph, origin, modules, names, grad_enabled=True, observed=None, autocast=None):
        """`observed`: the capture's host_reads.Observer, None when nothing was observed; `autocast`: autocast_state
        during the capture (None: unknown)."""
        self.graph_id = id(graph)
        self.graph_ref = weakref.ref(graph)
        self.origin = origin
        # An inference graph (captured without autograd) captured in eval mode may be replayed while the program
        # trains eagerly: its eval behaviour is what it is for. A training graph replayed in the other mode is not.
        self.grad_enabled = grad_enabled
        self.watched = origin in _REPLAY_WATCHED
        self.modes = []  # (module ref, name, training at capture) of modules whose forward reads the flag
        self.attributes = []  # (module ref, label, attribute, value at capture)
        self.attribute_stacks = {}  # label -> the stack of the last store that made it differ from its capture
        self.tensors = []  # NamedTensor
        self.host_values = (observed.baked() + observed.baked_scalars(lambda t: not on_device(t) and not pinned(t))
                            if observed is not None else [])  # read_paths.Read
        self.capture_sites = {}  # frames.running_sites where the capture ended
        for read in self.host_values:
            attribute_stores.watch(read)
        self.tensor_reads = []  # PathTensor: tensors the captured code reached through a path (`stage["x"]`)
        if observed is not None:
            for read in observed.baked_tensors(lambda t: on_device(t) or pinned(t))[:MAX_TENSORS]:
                self.tensor_reads.append(PathTensor(read))
        # Autocast at capture, and whether a replay looked at ran in it: replaying outside the capture's autocast is
        # usual, but one that replayed in it and then turned it another way meant the precision to change.
        self.autocast, self.autocast_matched = autocast, False
        self.reported = set()
        # ARMED_MODES once a Module.train() ran since the last look (the next replay looks at the modes), ARMED_ALL
        # once state a graph reads may have been replaced (load_state_dict, requires_grad_): it looks at everything
        self.armed = None
        self.change_stack = None  # the program's call that armed it (Module.requires_grad_), for the events it finds
        self.modes_stack = None  # the last Module.train()/eval() since the last look that changed its module's mode
        module_reads = observed.module_reads if observed is not None else {}
        for module in modules:
            name = names.get(id(module)) or type(module).__name__
            read = module_reads.get(id(module), ())
            if mode_sensitive(module, read):
                self.modes.append((weakref.ref(module), name, bool(getattr(module, "training", True))))
            for attribute, value in vars(module).items():
                if attribute.startswith("_") or type(value) not in (int, float) or not _reads(module, attribute,
                                                                                                read):
                    continue
                self.attributes.append((weakref.ref(module), "%s.%s" % (name, attribute), attribute, value))
            for role, table in (("parameter", "_parameters"), ("buffer", "_buffers")):
                for attribute, tensor in (getattr(module, table, None) or {}).items():
                    if tensor is None or len(self.tensors) >= MAX_TENSORS or not on_device(tensor):
                        continue
                    self.tensors.append(NamedTensor(module, attribute, role, "%s.%s" % (name, attribute), tensor))
        # The .grad tensors there when the capture ended: a whole-step capture's backward makes .grad in the graph's
        # pool, to be overwritten by each replay as it should (and a graph captured before it, sharing the pool, sees
        # them there at its own replays).
        for gone in [a for a, storage in _grads_at_captures.items() if expired(storage)]:
            del _grads_at_captures[gone]
        for grad in (getattr(e.now(), "grad", None) for e in self.tensors if e.role == "parameter"):
            if grad is not None and on_device(grad):
                _grads_at_captures[address(grad)] = storage_ref(grad)

    def baked(self):
        return len(self.modes) + len(self.attributes)

    def watch_releases(self):
        """Notes the line where the program drops the last Python reference to a tensor the graph reads."""
        for entry in self.tensor_reads:
            entry.watch_release(self.graph_id)
        for entry in self.tensors:
            tensor = entry.now()
            if tensor is None:
                continue
            try:
                entry.finalizer = weakref.finalize(tensor, released, self.graph_id, entry.role, entry.name,
                                                   entry.address)
                entry.finalizer.atexit = False
            except Exception:
                pass

    def look(self, modes_only=False, frame=None):
        """Looks at what the graph baked in (`modes_only`: the training modes alone) at a replay called from
        `frame`."""
        self.armed = None
        if self.watched:
            self._look_modes()
        self.modes_stack = None
        if modes_only:
            return
        if self.watched:
            self._look_tensors(frame)
            self._look_grads(frame)
            self._look_attributes()
        self._look_host_values(frame)
        self._look_tensor_reads(frame)
        self._look_autocast(frame)
        no_grad_replays.note(self, frame)
        self.change_stack = None

    def _look_modes(self):
        differ, captured = [], None
        for module_ref, name, training in self.modes:
            module = module_ref()
            if module is None or bool(getattr(module, "training", training)) == training:
                continue
            if not training and not self.grad_enabled:
                continue  # an eval inference graph replayed between training steps
            differ.append(name)
            captured = training
        key = ("mode", captured)
        if not differ or key in self.reported:
            return
        self.reported.add(key)
        events.training_mode_change(origin=self.origin, graph=self.graph_id, captured_training=captured,
                                    modules=len(differ), names=listed(differ), frames=self.modes_stack)

    def _look_autocast(self, frame=None):
        now = autocast_state(_torch())
        if self.autocast is None or now is None or "autocast" in self.reported:
            return
        if now == self.autocast:
            self.autocast_matched = True
        elif self.autocast_matched:
            self.reported.add("autocast")
            self._host_value_changed(events.HostValueRole.AUTOCAST, "torch.is_autocast_enabled('cuda')",
                                     float(self.autocast), float(now), autocast_sites.autocast_site(frame))

    def _look_tensors(self, frame=None):
        for entry in self.tensors:
            if id(entry) in self.reported:
                continue
            tensor = entry.now()
            if entry.requires_grad is not None and tensor is not None and tensor.requires_grad != entry.requires_grad:
                self.reported.add(id(entry))
                stack = self.change_stack or frames.change_site(frame, {"STORE_ATTR"}, "requires_grad")
                self._host_value_changed(events.HostValueRole.REQUIRES_GRAD, entry.name, float(entry.requires_grad),
                                         float(tensor.requires_grad), stack)
                continue
            now = address(tensor) if tensor is not None else 0
            freed = entry.freed()
            if now == entry.address and not freed:
                continue
            self.reported.add(id(entry))
            stores = ({"STORE_SUBSCR"} if entry.parameter is not None else {"STORE_ATTR"}), entry.attribute
            events.state_rebound(origin=self.origin, graph=self.graph_id, role=entry.role, name=entry.name, freed=freed,
                                 address_at_capture=entry.address, address_now=now,
                                 frames=frames.change_site(frame, *stores, captured_at=self.capture_sites))

    def _look_grads(self, frame):
        """A parameter's .grad that the capture did not make and that lies in a graph's pool: the program made a
        graph's output the .grad (`p.grad = static_grads[i]`), and each replay overwrites what it accumulates there.
        Sent at the line of the replaying function or its callers that sets a .grad, when one does."""
        if "grads" in self.reported or self.origin not in _OWN_CAPTURES:
            return  # Megatron keeps its gradients itself (main_grad); make_graphed_callables' are graphed_calls'
        aliased = []
        for entry in self.tensors:
            if entry.role != "parameter":
                continue
            grad = getattr(entry.now(), "grad", None)
            at = address(grad) if grad is not None and on_device(grad) else 0
            if at and (at not in _grads_at_captures or expired(_grads_at_captures[at])) and in_pool(at):
                aliased.append((entry.name, at))
        if not aliased:
            return
        self.reported.add("grads")
        events.grad_aliased(origin=self.origin, module=self.graph_id, count=len(aliased), first_address=aliased[0][1],
                            names=listed(n for n, _ in aliased), frames=self.change_stack or frames.change_site(frame, {"STORE_ATTR"}, "grad"))

    def _look_host_values(self, frame):
        """A number the captured code read (host_reads) that is another now: at the line of the replaying function
        or its callers that stores to it, when one does, else at the replay."""
        for read in self.host_values:
            if id(read) in self.reported:
                continue
            now = read.now()
            if now is None or now == read.captured:
                continue
            self.reported.add(id(read))
            label, captured, now, (opnames, name) = read.change(now)
            stack = attribute_stores.store_stack(read) or frames.change_site(
                frame, opnames, name, container=read.container(), captured_at=self.capture_sites)
            if stack is None and opnames == {"STORE_ATTR"}:
                stack = frames.method_store_site(read.holder_class(), opnames, name)
            elif stack is None and opnames == {"STORE_DEREF"}:
                stack = frames.cell_store_site(read.cell(), name)
            self._host_value_changed(read.role, label, captured, now, stack, read_at=read.where)

    def _look_tensor_reads(self, frame):
        """A path to a tensor the captured code read that holds another tensor now, or whose tensor was freed: the
        graph still reads the memory it had (a staging buffer rebound, `stage["x"] = batch`)."""
        for entry in self.tensor_reads:
            read = entry.read
            if id(entry) in self.reported:
                continue
            freed = expired(entry.storage)
            tensor = read.tensor_now()
            now = address(tensor) if tensor is not None else 0
            if not freed and (tensor is None or now == entry.address or another_graphs_input(now, self.graph_id)):
                continue
            self.reported.add(id(entry))
            opnames, name = read.stores()
            events.state_rebound(origin=self.origin, graph=self.graph_id, role=events.TensorRole.STATIC_INPUT,
                                 name=read.label, address_at_capture=entry.address, address_now=now, freed=freed,
                                 frames=frames.change_site(frame, opnames, name))

    def _host_value_changed(self, role, name, captured, now, stack=None, attributed=None, read_at=None):
        """HOST_VALUE_CHANGED at the line that made the change: `stack`, or the calling thread's (`attributed`, the
        caller is that line); else at the replay."""
        events.host_value_change(origin=self.origin, graph=self.graph_id, role=role, name=name, captured=captured,
                                 now=now, at_change=stack is not None or bool(attributed), read_at=read_at,
                                 frames=stack)

    def _look_attributes(self):
        """A number a captured forward reads that differs at a replay, named at the store that made it differ."""
        for module_ref, label, attribute, captured in self.attributes:
            module = module_ref()
            now = getattr(module, attribute, captured) if module is not None else captured
            if label not in self.reported and type(now) in (int, float) and now != captured:
                self.reported.add(label)
                self._host_value_changed(events.HostValueRole.MODULE_ATTRIBUTE, label, captured, now,
                                         stack=self.attribute_stacks.get(label))

    def attribute_stored(self, module, name, stack):
        """`module`.`name` was set at `stack`: kept while it differs from the capture's value, for the next replay's
        look (a value put back before it, a context manager's, is no change)."""
        for module_ref, label, attribute, captured in self.attributes:
            if module_ref() is module and attribute == name:
                now = getattr(module, attribute, captured)
                self.attribute_stacks[label] = stack if type(now) in (int, float) and now != captured else None

    def watch_attributes(self):
        for module_ref, _, attribute, _ in self.attributes:
            module = module_ref()
            if module is not None:
                watched_attributes.setdefault(id(module), set()).add(attribute)


def capture_started(graph, origin, frame=None):
    """`frame`: the program's frame that began the capture, whose tensors it may write (None: none)."""
    stop_capture()
    try:
        _local.capture = Capture(graph, origin)
        capturing.add(threading.get_ident())
        if frame is not None and _local.capture.writes is not None:
            _local.capture.writes.note_frame(frames.local_values(frame))
    except Exception:
        _local.capture = None


def trace_body(frame):
    """The instructions of a `with torch.cuda.graph` body that run in its capture (host_reads.Observer.trace_body)."""
    capture = getattr(_local, "capture", None)
    if capture is not None and capture.reads is not None:
        try:
            capture.reads.trace_body(frame)
        except Exception:
            pass


def observe_body(frame, start, end):
    """The host reads of a `with torch.cuda.graph` body (host_reads.Observer.observe_body), before its capture
    ends on this thread."""
    capture = getattr(_local, "capture", None)
    if capture is not None and capture.reads is not None:
        try:
            capture.reads.observe_body(frame, start, end)
        except Exception:
            pass


def stop_capture():
    """Ends what runs only during a capture (the forward hook, the profile function); returns the Capture."""
    capture = getattr(_local, "capture", None)
    _local.capture = None
    capturing.discard(threading.get_ident())
    if capture is not None:
        try:
            capture.stop()
        except Exception:
            pass
    return capture


def _optimizer_state_entries(optimizers, parameter_names, left_out=()):
    """(optimizer, parameter, key, "Adam exp_avg of model.fc.weight", tensor) for the device state of `optimizers`,
    but that of the parameters whose ids are in `left_out`."""
    for optimizer in optimizers:
        kind = type(optimizer).__name__
        for parameter, state in list(getattr(optimizer, "state", {}).items()):
            if id(parameter) in left_out:
                continue
            owner = parameter_names.get(id(parameter), "a parameter")
            for key, value in list(state.items()) if isinstance(state, dict) else []:
                if on_device(value):
                    yield optimizer, parameter, key, "%s %s of %s" % (kind, key, owner), value


def _keep_static_inputs(contract, ranges, parameter_names):
    """The tensors the captured code reached through a path that are static inputs: not made by the capture (in
    its pool, or another graph's: the graph's own output, `self.logits` read by the capture's next function), not a
    parameter or buffer (NamedTensor's), not a name the manual capture already watches (watches.CaptureWatch), each
    memory once; registered as static inputs, for the other graphs."""
    kept, addresses = [], set()
    for entry in contract.tensor_reads:
        tensor = entry.read.captured()
        if (tensor is None or id(tensor) in parameter_names or entry.address in addresses or
                graphs_input(entry.address, contract.graph_id) or inside(ranges, entry.address) or
                in_pool(entry.address)):
            continue
        kept.append(entry)
        addresses.add(entry.address)
        add_static_input(entry.address, contract.graph_id)
    contract.tensor_reads = kept
    if addresses:
        weakref.finalize(contract, forget_static_inputs, contract.graph_id, list(addresses)).atexit = False


def capture_ended(graph, capture, frame, pool_key, stepped):
    """At a capture's end (after CUDAGraph.capture_end): sends the tensors it can name and returns the graph's
    Contract when it has something to check at replays (else None). `capture`: what stop_capture() returned before
    CUDA's capture end; `stepped`: the optimizers that stepped inside it."""
    if capture is None or capture.graph_id != id(graph) or capture.origin in _NOT_NAMED:
        return None
    program = frames.program_frame(frame) or frame
    names = frames.module_names(program)
    modules = list(capture.modules.values())
    contract = Contract(graph, capture.origin, modules, names, capture.grad_enabled, capture.reads, capture.autocast)
    contract.capture_sites = frames.running_sites(frame)
    segments = pool_segments(_torch(), graph)
    ranges = sorted((address, address + size) for address, size in segments)
    if pool_key and ranges:
        pools[pool_key] = ranges
    lines = []
    parameter_names = {}
    for entry in contract.tensors:
        tensor = entry.now()
        if tensor is not None:
            parameter_names[id(tensor)] = entry.name
            lines.append((entry.role, entry.name, tensor))
            grad = getattr(tensor, "grad", None) if entry.role == "parameter" else None
            if grad is not None and on_device(grad):
                lines.append(("grad", entry.name, grad))
    for optimizer, parameter, key, label, tensor in _optimizer_state_entries(stepped, parameter_names):
        lines.append(("optimizer-state", label, tensor))
        if len(contract.tensors) < MAX_TENSORS:  # load_state_dict() replaces it
            contract.tensors.append(NamedTensor(optimizer, key, "optimizer-state", label, tensor, parameter))
    _keep_static_inputs(contract, ranges, parameter_names)
    for entry in contract.tensor_reads:
        lines.append(("static-input", entry.read.label, entry.read.captured()))
    lines.extend(graph.__dict__.pop("_graphcheck_static_tensors", ()))
    text = ["%s\t%s\t%x\t%x" % (role, name.replace("\t", " ").replace("\n", " "), address(t), nbytes(t))
            for role, name, t in lines[:MAX_TENSORS]]
    text.extend("pool\t\t%x\t%x" % segment for segment in segments)
    events.graph_tensors(origin=capture.origin, graph=id(graph), pool=pool_key, host_values=contract.baked(),
                         modules=len(modules), tensors="\n".join(text),
                         writes=capture.writes and capture.writes.result(stepped, capture.replaced))
    _send_state_made(capture, names, ranges, stepped, parameter_names)
    if not contract.host_values and not contract.tensor_reads and not (
            contract.watched and (contract.modes or contract.attributes or contract.tensors)):
        return None
    contract.watch_releases()
    contract.watch_attributes()
    _live.add(contract)
    return contract


def attribute_set(module, name, stack):
    """After the program set `module`.`name` at `stack`, a number a live graph baked in (watched_attributes)."""
    for contract in list(_live):
        try:
            contract.attribute_stored(module, name, stack)
        except Exception:
            pass


ARMED_MODES, ARMED_ALL = 1, 2


def arm(level, stack=None):
    """After the program's Module.train()/eval() (ARMED_MODES: every live graph with modes looks at them at its next
    replay) or a call that may replace what graphs read (ARMED_ALL: Optimizer.load_state_dict,
    Module.requires_grad_, whose stack the flags it changed are reported at); every live graph looks at everything).
    Returns the contracts armed, whose graphs' replay hooks must be in place."""
    armed = []
    for contract in list(_live):
        if contract.watched and (contract.modes or level == ARMED_ALL):
            contract.armed = max(contract.armed or 0, level)
            if level == ARMED_MODES:
                contract.modes_stack = stack or contract.modes_stack
            else:
                contract.change_stack = stack or contract.change_stack
            armed.append(contract)
    return armed


def live():
    """Whether a graph with a contract is alive (a hook's cheap test before it takes a stack)."""
    return bool(_live)


def state_set(module, name):
    """Before the program sets `module`.`name`: inside a capture on this thread, a parameter or buffer it replaces is
    noted (capture_ended judges it)."""
    capture = getattr(_local, "capture", None)
    if capture is not None and capture.origin not in _NOT_NAMED:
        capture.state_replacing(module, name)


def optimizer_stepping(optimizer, args, kwargs):
    """torch.optim's global step pre-hook: inside a capture on this thread, which parameters have state before the
    optimizer's first step in it."""
    capture = getattr(_local, "capture", None)
    if capture is not None and capture.origin not in _NOT_NAMED:
        try:
            capture.optimizer_stepping(optimizer)
        except Exception:
            pass


def _send_state_made(capture, names, ranges, stepped, parameter_names):
    """Sends the state the program keeps that the capture made in the graph's pool (`ranges`, its segments): the
    parameters and buffers its code replaced, and the optimizer state created by a first step inside it."""
    for module_ref, attribute, role, address_before, size, stack in capture.replaced.values():
        module = module_ref()
        tensor = getattr(module, attribute, None) if module is not None else None
        now = address(tensor) if tensor is not None else 0
        # The same tensor set again (spectral_norm's power iteration: self._u = normalize(..., out=self._u)) is an
        # update in place.
        if now and now != address_before and inside(ranges, now):
            name = "%s.%s" % (names.get(id(module)) or type(module).__name__, attribute)
            events.state_made_in_capture(origin=capture.origin, graph=capture.graph_id, role=role, names=name,
                                         address_before=address_before, address_now=now, bytes=size, frames=stack)
    for optimizer in stepped:
        before = capture.state_before.get(id(optimizer))
        if before is None:
            continue
        made = [(label, tensor) for *_, label, tensor in _optimizer_state_entries([optimizer], parameter_names,
                                                                                  before[0])
                if inside(ranges, address(tensor))]
        if made:
            events.state_made_in_capture(origin=capture.origin, graph=capture.graph_id,
                                         role=events.MadeStateRole.OPTIMIZER_STATE,
                                         names=listed(label for label, _ in made),
                                         address_now=address(made[0][1]), tensors=len(made), frames=before[1])
