"""The host values a capture's Python read, observed while it ran: the numbers and bools the program's own functions
loaded inside the capture from a global, a closure cell, an attribute of any object or a dict or list entry
(`TEMPERATURE`, `scale`, `self.cfg.loss_scale`, `CFG["mix"]`). A graph replays the kernels those values shaped, with
the values as they were at capture; at its replays each source is read again, and a change becomes an event, at the
store seen as it happened for an attribute of the program's own objects (attribute_stores.py), else at the line of the
replaying function (or of its callers) that stores to that name when there is one, or of the one method of the
attribute's class that sets it (frames.method_store_site), else at the replay.

How: while a capture runs, the capture's profile function (contract._RandomDraws) hands each Python call to
Observer.call. The first call of each of the program's code objects is disassembled once into the paths it loads (a
variable, then attribute names, constant subscripts, subscripts by another path's value and a weakref's call; a last
subscript by a loop's variable stands for every entry, `history[task]`, one by an argument for the entry it names,
`getattr` by a computed name for the object's numbers named with the name's strings, and `len()` for the length:
code_paths.py); each path is followed at that call through instance and class dictionaries only (a class attribute
read through `self` too; no __getattr__ or __getitem__ of the program's runs, nor a property but one whose getter only
returns a path, so nothing is launched into the capture; an Enum member's value and name are read from it), and a path
that ends on a number, on a list of numbers or on a numpy scalar or small array (`float(LR)` of a 0-d array the
schedule fills in place) is kept with how to follow it again, as is a device tensor, or a list of them, it reaches. A
number the captured code itself changed (a call counter) is not kept. Libraries' code is not read: their constants do
not change, and the optimizers' and modules' numbers have watches of their own (watches.HostStateWatch,
contract.Contract, graphed_calls.ModuleWatch), which also follow a module's own number (`self.p`) for the modules
whose forward ran. Every method a module ran inside the capture is noted (Observer.module_reads), so that those
watches see the attributes its helpers read, not only its forward's; and a read of torch's grad mode by the program's
code (`if torch.is_grad_enabled():`, which host_draws' profile function sees as a call into C) is kept like a number.

A load the code holds but did not run (`SCALE if scaled else 1.0` with `scaled` false) is no read: while the capture
runs, the instructions of the program's own code objects that ran are noted (sys.monitoring's instruction events on
those code objects alone from Python 3.12, opcode events of a trace function before), and a path none of whose loads
ran is dropped at the capture's end. When that cannot be had (a debugger's or coverage's tracer, the monitoring tool
id taken, a profiler of the program's own) every path the code holds is kept.
"""
import functools
import sys
import types
import weakref

from . import code_paths, frames, host_draws
from .read_paths import (MAX_ENTRIES, ClosureSlot, KeyPath, Read, Root, context_value, cpu_scalar, entries, follow,
                         is_number, is_tensor, numpy_plain, partial_numbers, path_label, role_of, text_number)

MAX_PATHS = 256  # numbers watched per capture
_MONITORING_TOOL = 4  # a sys.monitoring tool id no CPython-defined tool uses (0-2 and 5 are)
MAX_CLOSURES = 8  # closures whose cells are looked up per capture (gc.get_referrers: a walk of the heap)
_COMPREHENSIONS = {"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"}


class Observer:
    """What the program's functions read during one capture."""

    def __init__(self):
        self.reads = {}  # (root kind, id(holder), name, steps) -> Read
        self.tensor_reads = {}  # the same keys -> Read of a tensor reached through storage (`stage["x"]`)
        self.codes = {}  # code -> its paths (None: not the program's)
        self.module_reads = {}  # id(module) -> names its methods loaded inside the capture
        self.closures = 0
        self._slots = {}  # (id(function), index) -> ClosureSlot
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
            root = Root("grad-mode", None, "torch.is_grad_enabled()")
            self.reads[key] = Read(root, (), "grad-mode", root.name, where, root.value())

    def context_read(self, frame, variable):
        """The program's code read a contextvars.ContextVar inside the capture (`GUIDANCE.get()`): a number it holds
        is baked in like any other."""
        key = ("context", id(variable))
        value = context_value(variable)
        if key not in self.reads and len(self.reads) < MAX_PATHS and is_number(value):
            code = frame.f_code
            where = "%s() at %s:%d" % (code.co_name, code.co_filename, frame.f_lineno)
            root = Root("context", variable, "ContextVar(%r).get()" % variable.name)
            self.reads[key] = Read(root, (), "attribute", root.name, where, value)

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
        """`in_body`: a running frame, every local variable bound; else a call event, only the arguments bound."""
        variables = _Variables(self, frame, code, in_body)
        for kind, name, steps, line, offset in paths:
            found = variables.find(kind, name)
            steps = variables.keys_found(steps) if found is not None else None
            if steps is None:
                continue
            base, holder = found
            value = follow(base, steps) if steps else base
            if is_tensor(value):
                # A variable of a capture body's own frame (a local, or a global at module level, where the frame's
                # locals are its globals) is watches.CaptureWatch's.
                own = kind == "local" or (in_body and kind == "global" and frame.f_globals is frame.f_locals)
                if (steps or not own) and not code_paths.metadata_only(code, offset):
                    self._note_tensor(kind, holder, base, name, steps, code, line, offset, value)
                continue
            if steps and type(value) in (list, tuple) and any(is_tensor(entry) for entry in value[:MAX_ENTRIES]):
                for index, entry in enumerate(value[:MAX_ENTRIES]):  # a list the code unpacks: `x, y = self.current`
                    if is_tensor(entry):
                        self._note_tensor(kind, holder, base, name, steps + (("item", index),), code, line, offset,
                                          entry)
                continue
            plain = numpy_plain(value)
            if plain is not None:
                steps, value = steps + (("numpy", None),), plain
            if steps and steps[-1][0] in ("values", "attrs"):  # the numbers of every entry, read_paths.all_entries
                if value is None or entries(follow(base, steps[:-1])) is not None:
                    continue  # a list of numbers is its own path's read ("each")
            elif type(value) is types.FunctionType and steps:
                # A function the code holds in an attribute or entry (`self.act = lambda x, slope=0.3: ...`): the
                # graph ran it with its default numbers as they were.
                steps, value = steps + (("defaults", None),), entries(value.__defaults__ or ())
                if value is None:
                    continue
            elif type(value) is str and steps:
                # A number kept as text where the code reads it (an environment variable): the graph ran with it.
                steps, value = steps + (("text", None),), text_number(value)
                if value is None:
                    continue
            elif type(value) is functools.partial:
                # A partial the code calls (a loss with its keywords bound): the graph ran with its numbers.
                steps, value = steps + (("partial", None),), partial_numbers(value)
                if value is None:
                    continue
            elif not is_number(value):
                # A list of numbers the code loaded (`for scale in self.scales`, `self.scales[i]`): any of them.
                numbers = entries(value)
                if numbers is None:
                    if value is not None and not isinstance(value, (str, bytes)):
                        self.generators.note(value, path_label(name, steps), frame, line)
                    continue
                steps, value = steps + (("each", None),), numbers
            if steps and self._module_class is not None and isinstance(base, self._module_class) and len(steps) == 1:
                continue  # a module's own number: contract.Contract and graphed_calls.ModuleWatch follow it
            root = Root(kind, holder, name) if holder is not None else self._local_root(base, name)
            key = (kind, id(root.holder) if root is not None else 0, name, steps)
            if root is None:
                continue
            if key in self.reads:
                self.reads[key].sites.add((code, offset))
                continue
            role = role_of(kind, steps)
            where = "%s() at %s:%d" % (code.co_name, code.co_filename, line)
            self.reads[key] = Read(root, steps, role, path_label(name, steps), where, value)
            self.reads[key].sites.add((code, offset))
            if len(self.reads) >= MAX_PATHS:
                return

    def _note_tensor(self, kind, holder, base, name, steps, code, line, offset, tensor):
        """A tensor the captured code reached through a global, a cell, an attribute or an entry: the graph reads
        its memory, so a path that holds another tensor at a replay no longer feeds the graph."""
        root = Root(kind, holder, name) if holder is not None else self._local_root(base, name)
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
            read = self.tensor_reads[key] = Read(root, steps, "static-input", path_label(name, steps), where, captured)
            if self.tensor_noted is not None:
                self.tensor_noted(tensor)
        read.sites.add((code, offset))

    def _tensors_read(self):
        """(read, tensor) of the tensor reads whose loads ran and whose path still holds the tensor read (the captured
        code did not rebind it itself)."""
        executed = self.executed or None
        for read in self.tensor_reads.values():
            if executed is not None and read.sites and not read.sites & executed:
                continue
            try:
                tensor = read.captured()
                if tensor is not None and read.tensor_now() is tensor:
                    yield read, tensor
            except Exception:
                pass

    def baked_tensors(self, readable):
        """The tensors read that a graph reads at a fixed address (`readable`: on the device, or pinned)."""
        return [read for read, tensor in self._tensors_read() if readable(tensor)]

    def baked_scalars(self, on_host):
        """The tensors read that are 0-d tensors in host memory (`on_host`), each as the number read: a kernel took
        its value at launch, and the graph replays that value (read_paths.cpu_scalar)."""
        scalars = []
        for read, tensor in self._tensors_read():
            number = cpu_scalar(tensor) if on_host(tensor) else None
            if number is not None:
                steps = read.steps + (("scalar", None),)
                scalars.append(Read(read.root, steps, role_of(read.root.kind, steps), read.label, read.where, number))
        return scalars

    @staticmethod
    def _local_root(value, name):
        if value is None or isinstance(value, (int, float, str, bytes)):
            return None
        try:
            return Root("local", weakref.ref(value), name)
        except TypeError:
            return Root("local", value, name) if type(value) in (dict, list) else None

    def _cells(self, frame, code, in_body):
        """name -> ClosureSlot of the closure whose frame this is: the function is found by its code (gc), a few
        times per capture at most; one slot per variable and function, so that its reads share a key."""
        if not code.co_freevars or self.closures >= MAX_CLOSURES:
            return {}
        if code.co_name in _COMPREHENSIONS:
            return self._enclosing_cells(frame, code)
        self.closures += 1
        try:
            import gc

            values = frames.local_values(frame) if in_body else dict(frame.f_locals)
            for function in gc.get_referrers(code):
                closure = getattr(function, "__closure__", None)
                if getattr(function, "__code__", None) is not code or not closure:
                    continue
                if all(_cell_value(cell) is values.get(n) for n, cell in zip(code.co_freevars, closure) if n in values):
                    return {n: self._slots.setdefault((id(function), i), ClosureSlot(function, i))
                            for i, n in enumerate(code.co_freevars)}
        except Exception:
            pass
        return {}

    def _enclosing_cells(self, frame, code):
        """A comprehension's function lives for one pass (before Python 3.12 a list's too; a generator's is gone once
        it was made): its variables are found again through the function whose frame runs it, when they are that
        function's own."""
        outer = frame.f_back
        if outer is None:
            return {}
        values = dict(frame.f_locals)
        return {n: slot for n, slot in self._cells(outer, outer.f_code, False).items()
                if n in code.co_freevars and (n not in values or slot.value() is values[n])}

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


class _Variables:
    """The variables one frame's paths start from: its arguments (every local in a running body), its module's
    globals, its closure's cells, each looked up once."""

    def __init__(self, observer, frame, code, in_body):
        self.observer, self.frame, self.code, self.in_body = observer, frame, code, in_body
        self.arguments = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        self.locals = None
        self.cells = None

    def find(self, kind, name):
        """(value, holder) of the variable; holder None for a local. None when it is not bound here."""
        if kind == "local":
            if name not in self.arguments and not self.in_body:
                return None
            if self.locals is None:
                # A call event's locals dictionary is the one CPython writes back into the frame after the profile
                # function: it must not be emptied, as frames.local_values does.
                self.locals = frames.local_values(self.frame) if self.in_body else dict(self.frame.f_locals)
            return self.locals.get(name), None
        if kind == "global":
            globals_ = self.frame.f_globals
            return (globals_[name], globals_) if name in globals_ else None
        if self.cells is None:
            self.cells = self.observer._cells(self.frame, self.code, self.in_body)
        holder = self.cells.get(name)
        return (holder.value(), holder) if holder is not None else None

    def keys_found(self, steps):
        """`steps` with each ("key", path) step's path rooted (read_paths.KeyPath), and a last ("values", name) by a
        local bound here that is no loop's variable (`self.loss_w[task]`, `task` an argument) made the entry it names;
        None when a key's variable cannot be found again at a replay, or only by holding a dict or list argument (and
        the tensors it holds) alive."""
        if steps and steps[-1][0] == "values":
            return steps[:-1] + (self._bound_key(steps[-1][1]),)
        if not any(kind == "key" for kind, _ in steps):
            return steps
        rooted = []
        for kind, key in steps:
            if kind == "key":
                key_kind, key_name, key_steps = key
                found = self.find(key_kind, key_name)
                if found is None:
                    return None
                value, holder = found
                root = Root(key_kind, holder, key_name) if holder is not None else Observer._local_root(value, key_name)
                if root is None or (root.kind == "local" and not isinstance(root.holder, weakref.ref)):
                    return None
                key = KeyPath(root, key_steps)
            rooted.append((kind, key))
        return tuple(rooted)

    def _bound_key(self, name):
        """("item", key) for a subscript by `name` when it holds one key for the whole call, else ("values", name)."""
        if self.in_body and name in code_paths.loop_targets(self.code):
            return "values", name
        found = self.find("local", name)
        key = found[0] if found is not None else None
        return ("item", key) if type(key) in (str, int) else ("values", name)


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return None
