"""The host values a capture's Python read, observed while it ran: the numbers and bools the program's own functions
loaded inside the capture from a global, a closure cell, an attribute of any object or a dict or list entry
(`TEMPERATURE`, `scale`, `self.cfg.loss_scale`, `CFG["mix"]`). A graph replays the kernels those values shaped, with
the values as they were at capture; at its replays each source is read again, and a change becomes an event, at the
store seen as it happened for an attribute of the program's own objects (attribute_stores.py), else at the line of the
replaying function (or of its callers) that stores to that name when there is one, or of the one method of the
attribute's class that sets it (frames.method_store_site), else at the replay.

How: while a capture runs, the capture's profile function (contract._RandomDraws) hands each Python call to
Observer.call. The first call of each of the program's code objects is disassembled once into the paths it loads (a
variable, then attribute names and constant subscripts); each path is followed at that call through instance and
class dictionaries only (a class attribute read through `self` too; no property, __getattr__ or __getitem__ of the
program's runs, so nothing is launched into the capture; an Enum member's value and name are read from it), and a
path that ends on a number, on a list of numbers or on a numpy scalar or small array (`float(LR)` of a 0-d array the
schedule fills in place) is kept with how to follow it again, as is a device tensor, or a list of them, it reaches. A
number the captured code itself changed (a call counter) is not kept. Libraries' code is not read: their constants do
not change, and the
optimizers' and modules' numbers have watches of their own (watches.HostStateWatch, contract.Contract,
graphed_calls.ModuleWatch), which also follow a module's own number (`self.p`) for the modules whose forward ran.
Every method a module ran inside the capture is noted (Observer.module_reads), so that those watches see the
attributes its helpers read, not only its forward's; and a read of torch's grad mode by the program's code
(`if torch.is_grad_enabled():`, which host_draws' profile function sees as a call into C) is kept like a number.

A load the code holds but did not run (`SCALE if scaled else 1.0` with `scaled` false) is no read: while the capture
runs, the instructions of the program's own code objects that ran are noted (sys.monitoring's instruction events on
those code objects alone from Python 3.12, opcode events of a trace function before), and a path none of whose loads
ran is dropped at the capture's end. When that cannot be had (a debugger's or coverage's tracer, the monitoring tool
id taken, a profiler of the program's own) every path the code holds is kept.
"""
import enum
import functools
import itertools
import os
import sys
import types
import weakref

from . import code_paths, frames, host_draws

MAX_PATHS = 256  # numbers watched per capture
MAX_ENTRIES = 64  # numbers of one list or tuple the code loaded, compared at replays
_MONITORING_TOOL = 4  # a sys.monitoring tool id no CPython-defined tool uses (0-2 and 5 are)
MAX_CLOSURES = 8  # closures whose cells are looked up per capture (gc.get_referrers: a walk of the heap)

def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, type)


def _entries(value):
    """The numbers of a plain list or tuple, as ((index, number), ...), at most MAX_ENTRIES; None when it holds
    none."""
    if type(value) not in (list, tuple):
        return None
    return tuple(itertools.islice(((key, entry) for key, entry in enumerate(value) if is_number(entry)),
                                  MAX_ENTRIES)) or None


def _text_number(value):
    """The number a string holds (`float(os.environ["NOISE_STD"])` read "0.1"); None for anything else."""
    if type(value) is not str or len(value) > 64:
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _partial_numbers(value):
    """The numbers a functools.partial passes, as ((keyword or index, number), ...): `criterion =
    functools.partial(F.smooth_l1_loss, beta=2.0)`, then `criterion.keywords["beta"] = 0.25`; None when none."""
    if type(value) is not functools.partial:
        return None
    numbers = [(key, entry) for key, entry in sorted(value.keywords.items()) if is_number(entry)]
    numbers.extend((index, entry) for index, entry in enumerate(value.args) if is_number(entry))
    return tuple(numbers[:MAX_ENTRIES]) or None


def _numpy_plain(value):
    """The Python number or list a numpy scalar or small array holds (`LR = numpy.array(0.1)`, then `LR.fill(...)`
    between replays); None for anything else. Reading it runs numpy's code, never the program's."""
    if type(value).__module__ != "numpy" or not hasattr(value, "tolist"):
        return None
    try:
        if getattr(value, "size", 1) > MAX_ENTRIES or getattr(value, "ndim", 0) > 1:
            return None
        plain = value.tolist()
    except Exception:
        return None
    return plain if is_number(plain) or type(plain) is list else None


_MISSING = object()


def _where_steps(steps):
    """The steps that lead to where a value lives, without a last step that reads it out (a numpy value, a function's
    defaults)."""
    return steps[:-1] if steps and steps[-1][0] in ("numpy", "defaults", "partial", "text") else steps


def _attribute(value, key):
    """`value.key` through plain storage: the instance's dictionary, else the dictionaries of its class and bases (a
    class attribute read through `self`, or of a class itself), never a descriptor (property, method) that would run
    code; None when it is in none."""
    if isinstance(value, enum.Enum) and key in ("value", "name"):
        return vars(value).get("_%s_" % key)  # what Enum's own value and name properties return
    try:
        held = vars(value)
    except TypeError:
        held = None
    if isinstance(held, (dict, types.MappingProxyType)) and key in held:
        return held[key]
    classes = value.__mro__[1:] if isinstance(value, type) else type(value).__mro__
    for cls in classes:
        found = cls.__dict__.get(key, _MISSING)
        if found is not _MISSING:
            return None if hasattr(type(found), "__get__") else found
    return None


def _step(value, step):
    """One step of a path through plain storage only (instance and class dictionaries, dicts, lists); None when it
    would run the program's code. ("each", None) stands for the numbers of a list, compared as one value; ("numpy",
    None) for what a numpy scalar or array holds."""
    kind, key = step
    if kind == "each":
        return _entries(value)
    if kind == "numpy":
        return _numpy_plain(value)
    if kind == "defaults":
        return _entries(value.__defaults__ or ()) if type(value) is types.FunctionType else None
    if kind == "partial":
        return _partial_numbers(value)
    if kind == "text":
        return _text_number(value)
    if kind == "item":
        if type(value) is dict or (value is os.environ and type(key) is str):
            return value.get(key)
        if type(value) in (list, tuple) and isinstance(key, int) and -len(value) <= key < len(value):
            return value[key]
        return None
    return _attribute(value, key)


def _follow(value, steps):
    for step in steps:
        if value is None or (isinstance(value, (int, float, str, bytes)) and step[0] != "text"):
            return None
        value = _step(value, step)
    return value


def _is_tensor(value):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _is_value(value):
    """A number, or the numbers of a list (_entries)."""
    return is_number(value) or type(value) is tuple


def _label(root, steps):
    text = root
    for kind, key in steps:
        text += ".%s" % key if kind == "attr" else "[%r]" % (key,) if kind == "item" else ""
    return text


class _Root:
    """How to find a path's variable again: a module's globals, a closure's cell, or an argument's object (weakly
    where it can be)."""

    __slots__ = ("kind", "holder", "name")

    def __init__(self, kind, holder, name):
        self.kind, self.holder, self.name = kind, holder, name

    def value(self):
        if self.kind == "grad-mode":
            return sys.modules["torch"].is_grad_enabled()
        if self.kind == "global":
            return self.holder.get(self.name)
        if self.kind == "cell":
            return self.holder.value()
        return self.holder() if isinstance(self.holder, weakref.ref) else self.holder


class _ClosureSlot:
    """A closure's variable, found again through the function, held weakly: holding its cell would keep what the
    variable holds alive (a tensor the program drops, which the graph then reads freed)."""

    __slots__ = ("function", "index")

    def __init__(self, function, index):
        self.function, self.index = weakref.ref(function), index

    def value(self):
        function = self.function()
        try:
            return function.__closure__[self.index].cell_contents if function is not None else None
        except (ValueError, TypeError, IndexError):
            return None


class Read:
    """A number the captured code read: where it lives, its name, its value at capture, and the (code, offset) of
    the instructions that load it."""

    __slots__ = ("root", "steps", "role", "label", "where", "captured", "sites")

    def __init__(self, root, steps, role, label, where, captured):
        self.root, self.steps, self.role, self.label, self.where, self.captured = (root, steps, role, label, where,
                                                                                    captured)
        self.sites = set()

    def now(self):
        value = _follow(self.root.value(), self.steps) if self.steps else self.root.value()
        return value if _is_value(value) else None

    def tensor_now(self):
        """For a tensor read: the tensor the path holds now, None when it holds none."""
        value = _follow(self.root.value(), self.steps) if self.steps else self.root.value()
        return value if _is_tensor(value) else None

    def change(self, now):
        """(label, number at capture, number now, (opnames, name) of the stores that can make it) of what differs
        in `now`: for a container, its first entry that changed (or appeared or went)."""
        if type(self.captured) is not tuple:
            return (self.label, float(self.captured), float(now)) + (self.stores(),)
        before, after = dict(self.captured), dict(now)
        changed = next(key for key in list(before) + list(after) if before.get(key) != after.get(key))
        nan = float("nan")
        numbers = float(before.get(changed, nan)), float(after.get(changed, nan))
        if self.steps[-1][0] == "defaults":  # the function was replaced: its default `changed` differs
            return ("%s (default %s)" % (self.label, self._default_name(changed)),) + numbers + (self.stores(),)
        if self.steps[-1][0] == "partial":
            place = "keywords[%r]" % changed if isinstance(changed, str) else "args[%d]" % changed
            return ("%s.%s" % (self.label, place),) + numbers + (({"STORE_SUBSCR"}, changed),)
        return ("%s[%r]" % (self.label, changed),) + numbers + (({"STORE_SUBSCR"}, changed),)

    def _default_name(self, index):
        """The name of the parameter whose default is the function's `index`-th."""
        function = _follow(self.root.value(), self.steps[:-1])
        try:
            code = function.__code__
            return code.co_varnames[code.co_argcount - len(function.__defaults__) + index]
        except Exception:
            return "default %d" % index

    def holder_class(self):
        """The class whose methods may set the attribute the path ends on (the holding object's, or the holder itself
        when it is a class); None when the path does not end on an attribute."""
        steps = _where_steps(self.steps)
        if not steps or steps[-1][0] != "attr":
            return None
        holder = _follow(self.root.value(), steps[:-1]) if len(steps) > 1 else self.root.value()
        return holder if isinstance(holder, type) else type(holder) if holder is not None else None

    def attribute_holders(self):
        """(object, attribute name) of each attribute step on the path to where the value lives, outermost first,
        as far as the path can be followed now."""
        holders, value = [], self.root.value()
        for step in _where_steps(self.steps):
            if value is None:
                break
            if step[0] == "attr":
                holders.append((value, step[1]))
            value = _step(value, step)
        return holders

    def cell(self):
        """The closure cell the value lives in, when it is a closure's variable itself; None otherwise."""
        slot = self.root.holder if self.root.kind == "cell" and not _where_steps(self.steps) else None
        function = slot.function() if slot is not None else None
        try:
            return function.__closure__[slot.index] if function is not None else None
        except (TypeError, IndexError):
            return None

    def container(self):
        """The variable or attribute whose entries a container read reads (what its slice stores name); None for
        an entry reached by a constant key."""
        steps = [step for step in _where_steps(self.steps) if step[0] != "each"]
        return self.root.name if not steps else steps[-1][1] if steps[-1][0] == "attr" else None

    def stores(self):
        """(opnames, name) of the instructions that can change it: the variable stored, or its last attribute or
        item set."""
        if self.root.kind == "grad-mode":
            return {"LOAD_ATTR", "LOAD_METHOD"}, "set_grad_enabled"
        steps = _where_steps(self.steps)
        if not steps:
            return ({"STORE_GLOBAL", "STORE_NAME"} if self.root.kind == "global" else {"STORE_DEREF"}), self.root.name
        kind, key = steps[-1]
        return ({"STORE_ATTR"}, key) if kind == "attr" else ({"STORE_SUBSCR"}, key)


class Observer:
    """What the program's functions read during one capture."""

    def __init__(self):
        self.reads = {}  # (root kind, id(holder), name, steps) -> Read
        self.tensor_reads = {}  # the same keys -> Read of a tensor reached through storage (`stage["x"]`)
        self.codes = {}  # code -> its paths (None: not the program's)
        self.module_reads = {}  # id(module) -> names its methods loaded inside the capture
        self.closures = 0
        self._slots = {}  # (id(function), index) -> _ClosureSlot
        self.generators = host_draws.Generators()
        self.executed = None  # (code, offset) of the program's instructions that ran; None: not traced
        self.tensor_noted = None  # called with each tensor when a path first reaches it (capture_writes.Writes.note)
        self._monitored = None  # the code objects with instruction events on, under sys.monitoring
        self._body_frame = None
        self._module_class = None
        torch = sys.modules.get("torch")
        if torch is not None:
            self._module_class = torch.nn.Module

    def call(self, frame):
        code = frame.f_code
        self._note_module_method(frame, code)
        paths = self.codes.get(code, False)
        if paths is False:
            paths = self.codes[code] = code_paths.paths(code) if frames.is_program_file(code.co_filename) else None
        if paths and self._monitored is not None:
            self._monitor(code)
        if paths and len(self.reads) < MAX_PATHS:
            self._read(frame, code, paths)

    def start_tracing(self):
        """Notes the program's instructions that run from now on (see the module's doc)."""
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is not None:
            # Python 3.12 gives a trace function no opcode events while a profile function is set (3.12.1): the
            # capture's is. Instruction events are turned on per code object as the profile function sees it.
            try:
                monitoring.use_tool_id(_MONITORING_TOOL, "graphcheck")
            except ValueError:  # another tool holds the id
                return
            monitoring.register_callback(_MONITORING_TOOL, monitoring.events.INSTRUCTION, self._instruction)
            self.executed, self._monitored = set(), set()
            return
        if sys.gettrace() is not None:
            return
        self.executed = set()
        sys.settrace(self._trace)

    def trace_body(self, frame):
        """Notes the instructions a frame already running runs from now on: a `with torch.cuda.graph` body."""
        if self.executed is None or not frames.is_program_file(frame.f_code.co_filename):
            return
        if self._monitored is not None:
            self._monitor(frame.f_code)
        else:
            self._trace_opcodes(frame)
            self._body_frame = frame

    def stop_tracing(self):
        if self.executed is None:
            return
        if self._monitored is not None:
            monitoring = sys.monitoring
            for code in self._monitored:
                monitoring.set_local_events(_MONITORING_TOOL, code, 0)
            monitoring.register_callback(_MONITORING_TOOL, monitoring.events.INSTRUCTION, None)
            monitoring.free_tool_id(_MONITORING_TOOL)
            self._monitored = set()
            return
        if sys.gettrace() == self._trace:
            sys.settrace(None)
        if self._body_frame is not None:
            self._body_frame.f_trace, self._body_frame.f_trace_opcodes = None, False
            self._body_frame = None

    def _monitor(self, code):
        if code not in self._monitored:
            self._monitored.add(code)
            sys.monitoring.set_local_events(_MONITORING_TOOL, code, sys.monitoring.events.INSTRUCTION)

    def _instruction(self, code, offset):
        self.executed.add((code, offset))

    def _trace(self, frame, event, arg):
        if event != "call" or not frames.is_program_file(frame.f_code.co_filename):
            return None
        return self._trace_opcodes(frame)

    def _trace_opcodes(self, frame):
        # f_trace first: from Python 3.12 on, f_trace_opcodes turns opcode events on only for a frame that already
        # has its trace function (set before, they never come: seen with 3.12.1 and 3.13.0).
        frame.f_trace = self._opcode
        frame.f_trace_lines, frame.f_trace_opcodes = False, True
        return self._opcode

    def _opcode(self, frame, event, arg):
        if event == "opcode":
            self.executed.add((frame.f_code, frame.f_lasti))
        return self._opcode

    def grad_mode_read(self, frame):
        """The program's code read torch.is_grad_enabled() inside the capture (a branch on it is baked in)."""
        key = ("grad-mode",)
        if key not in self.reads:
            code = frame.f_code
            where = "%s() at %s:%d" % (code.co_name, code.co_filename, frame.f_lineno)
            root = _Root("grad-mode", None, "torch.is_grad_enabled()")
            self.reads[key] = Read(root, (), "grad-mode", root.name, where, root.value())

    def _note_module_method(self, frame, code):
        """The names a method of an nn.Module loads, when its first argument is the module."""
        if self._module_class is None or code.co_argcount == 0 or code.co_varnames[0] != "self":
            return
        try:
            module = frame.f_locals.get("self")
        except Exception:
            return
        if isinstance(module, self._module_class):
            self.module_reads.setdefault(id(module), set()).update(code.co_names)

    def observe_body(self, frame, start, end):
        """The reads of the code a frame ran between byte offsets `start` and `end` (a `with torch.cuda.graph` body,
        which runs in the frame that began the capture: no call event shows it)."""
        if frames.is_program_file(frame.f_code.co_filename):
            loops = code_paths.loop_targets(frame.f_code)
            paths = [p for p in code_paths.paths(frame.f_code, start, end) if p[2] or p[1] not in loops]
            self._read(frame, frame.f_code, paths, in_body=True)

    def _read(self, frame, code, paths, in_body=False):
        """`in_body`: a running frame, every local variable bound; else a call event, only the arguments bound, and
        the frame's locals dictionary is the one CPython writes back into the frame after the profile function (it
        must not be emptied, as frames.local_values does)."""
        arguments = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        local_values = None
        cells = None
        for kind, name, steps, line, offset in paths:
            if kind == "local":
                if name not in arguments and not in_body:
                    continue
                if local_values is None:
                    local_values = frames.local_values(frame) if in_body else dict(frame.f_locals)
                base, holder = local_values.get(name), None
            elif kind == "global":
                if name not in frame.f_globals:
                    continue
                base, holder = frame.f_globals[name], frame.f_globals
            else:
                if cells is None:
                    cells = self._cells(frame, code, in_body)
                holder = cells.get(name)
                if holder is None:
                    continue
                base = holder.value()
            value = _follow(base, steps) if steps else base
            if _is_tensor(value):
                # A variable of a capture body's own frame (a local, or a global at module level, where the frame's
                # locals are its globals) is watches.CaptureWatch's.
                own = kind == "local" or (in_body and kind == "global" and frame.f_globals is frame.f_locals)
                if (steps or not own) and not code_paths.metadata_only(code, offset):
                    self._note_tensor(kind, holder, base, name, steps, code, line, offset, value)
                continue
            if steps and type(value) in (list, tuple) and any(_is_tensor(entry) for entry in value[:MAX_ENTRIES]):
                for index, entry in enumerate(value[:MAX_ENTRIES]):  # a list the code unpacks: `x, y = self.current`
                    if _is_tensor(entry):
                        self._note_tensor(kind, holder, base, name, steps + (("item", index),), code, line, offset,
                                          entry)
                continue
            plain = _numpy_plain(value)
            if plain is not None:
                steps, value = steps + (("numpy", None),), plain
            if type(value) is types.FunctionType and steps:
                # A function the code holds in an attribute or entry (`self.act = lambda x, slope=0.3: ...`): the
                # graph ran it with its default numbers as they were.
                steps, value = steps + (("defaults", None),), _entries(value.__defaults__ or ())
                if value is None:
                    continue
            elif type(value) is str and steps:
                # A number kept as text where the code reads it (an environment variable): the graph ran with it.
                steps, value = steps + (("text", None),), _text_number(value)
                if value is None:
                    continue
            elif type(value) is functools.partial:
                # A partial the code calls (a loss with its keywords bound): the graph ran with its numbers.
                steps, value = steps + (("partial", None),), _partial_numbers(value)
                if value is None:
                    continue
            elif not is_number(value):
                # A list of numbers the code loaded (`for scale in self.scales`, `self.scales[i]`): any of them.
                entries = _entries(value)
                if entries is None:
                    if value is not None and not isinstance(value, (str, bytes)):
                        self.generators.note(value, _label(name, steps), frame, line)
                    continue
                steps, value = steps + (("each", None),), entries
            if steps and self._module_class is not None and isinstance(base, self._module_class) and len(steps) == 1:
                continue  # a module's own number: contract.Contract and graphed_calls.ModuleWatch follow it
            root = _Root(kind, holder, name) if holder is not None else self._local_root(base, name)
            key = (kind, id(root.holder) if root is not None else 0, name, steps)
            if root is None:
                continue
            if key in self.reads:
                self.reads[key].sites.add((code, offset))
                continue
            named = _where_steps(steps)
            role = {"global": "global", "cell": "closure", "local": "attribute"}[kind] if not named else (
                "entry" if named[-1][0] in ("item", "each") else "attribute")
            where = "%s() at %s:%d" % (code.co_name, code.co_filename, line)
            self.reads[key] = Read(root, steps, role, _label(name, steps), where, value)
            self.reads[key].sites.add((code, offset))
            if len(self.reads) >= MAX_PATHS:
                return

    def _note_tensor(self, kind, holder, base, name, steps, code, line, offset, tensor):
        """A tensor the captured code reached through a global, a cell, an attribute or an entry: the graph reads
        its memory, so a path that holds another tensor at a replay no longer feeds the graph."""
        root = _Root(kind, holder, name) if holder is not None else self._local_root(base, name)
        if root is None or len(self.tensor_reads) >= MAX_PATHS or (kind == "local" and type(root.holder) in (dict,
                                                                                                          list)):
            return  # a dict or list argument cannot be held weakly: holding it would keep its tensors alive
        key = (kind, id(root.holder), name, steps)
        read = self.tensor_reads.get(key)
        if read is None:
            where = "%s() at %s:%d" % (code.co_name, code.co_filename, line)
            try:
                captured = weakref.ref(tensor)  # never kept alive by the probe: its freeing is a finding's line
            except TypeError:
                return
            read = self.tensor_reads[key] = Read(root, steps, "static-input", _label(name, steps), where, captured)
            if self.tensor_noted is not None:
                self.tensor_noted(tensor)
        read.sites.add((code, offset))

    def baked_tensors(self, readable):
        """The tensor reads whose loads ran and whose path still holds the tensor read (the captured code did not
        rebind it itself) and that a graph reads at a fixed address (`readable`: on the device, or pinned)."""
        executed = self.executed or None
        kept = []
        for read in self.tensor_reads.values():
            if executed is not None and read.sites and not read.sites & executed:
                continue
            try:
                tensor = read.captured()
                if tensor is not None and read.tensor_now() is tensor and readable(tensor):
                    kept.append(read)
            except Exception:
                pass
        return kept

    @staticmethod
    def _local_root(value, name):
        if value is None or isinstance(value, (int, float, str, bytes)):
            return None
        try:
            return _Root("local", weakref.ref(value), name)
        except TypeError:
            return _Root("local", value, name) if type(value) in (dict, list) else None

    def _cells(self, frame, code, in_body):
        """name -> _ClosureSlot of the closure whose frame this is: the function is found by its code (gc), a few
        times per capture at most; one slot per variable and function, so that its reads share a key."""
        if not code.co_freevars or self.closures >= MAX_CLOSURES:
            return {}
        self.closures += 1
        try:
            import gc

            values = frames.local_values(frame) if in_body else dict(frame.f_locals)
            for function in gc.get_referrers(code):
                closure = getattr(function, "__closure__", None)
                if getattr(function, "__code__", None) is not code or not closure:
                    continue
                if all(_cell_value(cell) is values.get(n) for n, cell in zip(code.co_freevars, closure) if n in values):
                    return {n: self._slots.setdefault((id(function), i), _ClosureSlot(function, i))
                            for i, n in enumerate(code.co_freevars)}
        except Exception:
            pass
        return {}

    def baked(self):
        """The reads whose value is still what the code read and whose loads ran: a number the captured code changed
        itself is its own counter, not a value the graph baked in."""
        kept = []
        # No opcode event at all means the tracing did not take (another tool's): every path the code holds is kept.
        executed = self.executed or None
        for read in self.reads.values():
            if executed is not None and read.sites and not read.sites & executed:
                continue
            try:
                if read.now() == read.captured:
                    kept.append(read)
            except Exception:
                pass
        return kept


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return None
