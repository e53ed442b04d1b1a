"""Python frames as the probe sends them: an exception's traceback (the raise site first) completed by the frames that
called the hooked function, without the probe's own frames, and within a bound that always keeps the program's
outermost frames, so that a failure six frames deep in a library still names the program's line.

Explicit frames travel as "file\\x1fline\\x1ffunction" records joined by \\x1e, innermost first
(capture/probe_events.cc reads them). Also what a program's frame says about it: its local values, the line that
changed a value it keeps (change_site), the names it gives its modules (module_names); its bytecode, instruction by
instruction, for kept_values.py and code_paths.py."""
import dis
import functools
import gc
import os
import sys
import sysconfig
import traceback

_FIELD, _FRAME = "\x1f", "\x1e"
MAX_FRAMES = 64  # frames sent for one exception
INNERMOST = 24  # of them, kept from the raise site; the rest of the bound goes to the program's outermost frames

PROBE_DIR = os.path.dirname(os.path.abspath(__file__))
_SITECUSTOMIZE = os.path.join(os.path.dirname(PROBE_DIR), "sitecustomize.py")
_STDLIB = tuple(p for p in {sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")} if p)


def is_probe_file(path):
    return path.startswith(PROBE_DIR) or path == _SITECUSTOMIZE


@functools.lru_cache(maxsize=4096)
def is_program_file(path):
    """The program's own source, as trace/python_frames.cc judges it: not a library, the standard library,
    generated code or the probe."""
    if not path or path.startswith("<") or is_probe_file(path):
        return False
    normalized = path.replace("\\", "/")
    if any(part in normalized for part in ("/site-packages/", "/dist-packages/", "/torch/", "/torchinductor_")):
        return False
    return not path.startswith(_STDLIB)


def is_library_file(path):
    """An installed library's source other than torch's (a trainer's loop: transformers, accelerate, Megatron)."""
    normalized = path.replace("\\", "/")
    return ("/site-packages/" in normalized or "/dist-packages/" in normalized) and "/torch/" not in normalized


def select(frames, is_program):
    """At most MAX_FRAMES of `frames` (innermost first): the INNERMOST first ones, then the program's own among the
    rest, outermost kept first when they are too many."""
    if len(frames) <= MAX_FRAMES:
        return frames
    inner, rest = frames[:INNERMOST], frames[INNERMOST:]
    program = [f for f in rest if is_program(f)]
    budget = MAX_FRAMES - INNERMOST
    return inner + program[-budget:]


def exception_frames(error, caller=None):
    """The frames of an exception's traceback, innermost first: the raise site, then the lines above it. An exception
    caught inside a hook has not reached the program yet: `caller`, the frame that called the hooked function, and
    its callers complete the stack. Encoded for the recorder; None when they cannot be read."""
    try:
        stack = [(f.filename, f.lineno or 0, f.name) for f in reversed(traceback.extract_tb(error.__traceback__))]
        return encode_frames(stack + (stack_of(caller) if caller is not None else []))
    except Exception:
        return None


def stack_of(frame):
    """`frame` and its callers, innermost first, as (file, line, function): cheap to take at every call of a hook,
    encoded (encode_frames) only when an event needs it."""
    stack = []
    while frame is not None:
        code = frame.f_code
        stack.append((code.co_filename, frame.f_lineno or 0, code.co_name))
        frame = frame.f_back
    return stack


def encode_frames(stack, line=None):
    """A stack_of() without the probe's own frames, encoded for the recorder (as exception_frames). `line`: the line
    to name in the innermost frame instead."""
    try:
        stack = select([f for f in stack if not is_probe_file(f[0])], lambda f: is_program_file(f[0]))
    except Exception:
        return None
    if line is not None and stack:
        stack[0] = (stack[0][0], line, stack[0][2])
    return _FRAME.join("%s%s%d%s%s" % (path, _FIELD, n, _FIELD, name) for path, n, name in stack)


def encode_stack(frame, line=None):
    """`frame` and its callers, innermost first, without the probe's own frames, encoded for the recorder (as
    exception_frames). `line`: the line to name in `frame` instead of the one it runs. The frames are walked as they
    are: traceback.extract_stack also reads each one's source line (3x the cost)."""
    try:
        return encode_frames(stack_of(frame), line)
    except Exception:
        return None


def instruction_line(instruction, previous):
    """The source line of a dis instruction (CPython 3.10-3.14), else `previous`."""
    positions = getattr(instruction, "positions", None)  # 3.11+
    if positions is not None and positions.lineno:
        return positions.lineno
    return instruction.starts_line if type(instruction.starts_line) is int else previous


_JUMPS = frozenset(op for group in ("hasjrel", "hasjabs", "hasjump") for op in getattr(dis, group, ()))


def backward_jump_target(instruction):
    """The offset a backward jump goes to, the first instruction of the loop it closes; None for any other instruction.
    Jumps were renamed from 3.10 to 3.13 (JUMP_ABSOLUTE, JUMP_BACKWARD, POP_JUMP_BACKWARD_IF_*, and 3.10's
    POP_JUMP_IF_* back to a while loop's body): any jump whose target is not after it."""
    target = instruction.argval
    backward = instruction.opcode in _JUMPS and isinstance(target, int) and target <= instruction.offset
    return target if backward else None


MUTATORS = {"append", "appendleft", "extend", "extendleft", "insert", "update", "setdefault"}


def _store_sites(code, opnames, name, container=None):
    """(offset, line) of the instructions of `code` in `opnames` on `name` (STORE_SUBSCR: under a constant key
    `name`, or, into the variable or attribute `container`, a slice or a key not constant, which may store under any
    key: `weights[:] = [...]`, `self.scales[k] = value`, or a call of a method that adds entries to it or to one of
    its entries: `history[task].append(loss)`), and the (start, end) byte offsets of its loops."""
    sites, loops, line, constant, sliced, recent = [], [], 0, None, False, []
    for instruction in code_instructions(code)[0]:
        line = instruction_line(instruction, line)
        subscript = instruction.opname == "STORE_SUBSCR"
        any_key = instruction.opname == "STORE_SLICE" or subscript and (sliced or constant is None)
        if any_key and "STORE_SUBSCR" in opnames and container is not None and container in recent[-3:-1]:
            sites.append((instruction.offset, line))
        elif (instruction.opname in ("LOAD_ATTR", "LOAD_METHOD") and instruction.argval in MUTATORS and
              "STORE_SUBSCR" in opnames and container is not None and container in recent[-2:]):
            sites.append((instruction.offset, line))  # `history[task].append(loss)`, `self.window.append(x)`
        elif instruction.opname in opnames and (instruction.argval == name if not subscript else constant == (name,)):
            sites.append((instruction.offset, line))
        if backward_jump_target(instruction) is not None:
            loops.append((instruction.argval, instruction.offset))
        constant = (instruction.argval,) if instruction.opname == "LOAD_CONST" else None
        sliced = instruction.opname == "BUILD_SLICE"
        if instruction.opname.startswith("LOAD_"):  # the container is loaded just before a slice's bounds
            names = instruction.argval if isinstance(instruction.argval, tuple) else (instruction.argval,)
            recent = (recent + list(names))[-4:]
    return sites, loops


def running_sites(frame, depth=16):
    """{(id(frame), code): the instruction it runs} of `frame` and its callers: where each was when a capture ended,
    so that a store a frame made before it (straight-line code, not round a loop) is not taken for a change after."""
    sites = {}
    while frame is not None and len(sites) < depth:
        sites[(id(frame), frame.f_code)] = frame.f_lasti
        frame = frame.f_back
    return sites


def change_site(frame, opnames, name, depth=16, container=None, captured_at=None):
    """The stack of the line that most likely changed a value the program keeps, found after the fact: the first
    of `frame` and its callers (the program's own, within `depth` frames) whose code has an instruction in `opnames`
    on `name` (STORE_GLOBAL TEMPERATURE, STORE_ATTR scale; STORE_SUBSCR on a constant key `name`; a LOAD_ATTR of a
    method name is its call) on one line, or on one line of the innermost loop running the frame's current
    instruction (`TEMPERATURE = 1.0` before the loop, `TEMPERATURE = ...` in it), or else on one line of the
    functions defined in it (a callback the loop calls). A frame's stores that cannot have run since the capture are
    left out: straight-line (not round a loop) after the instruction it runs, or, with `captured_at` (running_sites
    at the capture), before where it was then (`CFG["x"] = 0.05` above the training call, `CFG["x"] = ...` in the
    callback it passes; `set_grad_enabled(True)` below it). None when no frame names one line."""
    try:
        walked = set()  # the codes of the frames looked at: their stores were judged by where they ran
        for _ in range(depth):
            if frame is None:
                break
            code = frame.f_code
            walked.add(code)
            if is_program_file(code.co_filename):
                sites, loops = _store_sites(code, opnames, name, container)
                then = (captured_at or {}).get((id(frame), code), -1)
                now = frame.f_lasti

                def may_have_run(offset):
                    return then < offset <= now or any(start <= offset <= end and (start <= now <= end or
                                                                                   start <= then <= end)
                                                       for start, end in loops)

                sites = [(offset, n) for offset, n in sites if may_have_run(offset)]
                lines = {n for _, n in sites}
                if len(lines) > 1:
                    inside = [(end - start, start, end) for start, end in loops if start <= frame.f_lasti <= end]
                    if inside:
                        _, start, end = min(inside)
                        lines = {n for offset, n in sites if start <= offset <= end}
                if not sites and "STORE_DEREF" not in opnames:  # a closure's definer always stores it too
                    nested = [c for c in code.co_consts if hasattr(c, "co_code") and c not in walked]
                    lines = {n for c in nested for _, n in _store_sites(c, opnames, name, container)[0]}
                if len(lines) == 1:
                    return encode_stack(frame, lines.pop())
                if lines:
                    return None
            frame = frame.f_back
    except Exception:
        pass
    return None


_CONSTRUCTORS = {"__init__", "__new__", "__post_init__", "__init_subclass__"}


def _function_site(filename, line, function):
    """One line of one function, encoded as a stack of that function alone."""
    return "%s%s%d%s%s" % (filename, _FIELD, line, _FIELD, function)


def _one_store_site(codes, opnames, name):
    """The one line of the program's `codes` with an instruction in `opnames` on `name`, encoded as a stack of that
    function alone; None when no line or several do."""
    found = set()
    for code in codes:
        if code is None or not is_program_file(code.co_filename):
            continue
        for _, line in _store_sites(code, opnames, name)[0]:
            found.add((code.co_filename, line, code.co_name))
    if len(found) != 1:
        return None
    return _function_site(*found.pop())


def _method_codes(cls):
    """The code of every method of `cls` and its bases but the constructors (classmethods too); None for a member
    without code."""
    return [getattr(getattr(member, "__func__", member), "__code__", None) for klass in cls.__mro__
            for key, member in vars(klass).items() if key not in _CONSTRUCTORS]


def method_store_site(cls, opnames, name):
    """The one line of the methods of `cls` and its bases (the program's own) with an instruction in `opnames` on
    `name`, encoded as a stack of that method alone: where an attribute is set when no frame on the stack sets it (a
    `set_epoch` or a classmethod's schedule called between replays). A constructor is no such method: it set the value
    the capture read. None when no line or several do."""
    try:
        return _one_store_site(_method_codes(cls), opnames, name)
    except Exception:
        return None


def previous_value_site(cls, name):
    """The line of a method of `cls` (the program's, not a constructor) that reads `self.<name>` and then stores one
    of its own arguments as it is into it: the "previous value" idiom (`def log(self, x): ... self.prev ...;
    self.prev = x`), encoded as a stack of that method alone. None when no method does."""
    try:
        codes = _method_codes(cls)
    except Exception:
        return None
    for code in codes:
        if code is None or not is_program_file(code.co_filename):
            continue
        arguments = set(code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount])
        loaded, line, recent = False, 0, []
        for instruction in code_instructions(code)[0]:
            line = instruction_line(instruction, line)
            if instruction.opname in PADDING:
                continue
            if instruction.opname == "LOAD_ATTR" and instruction.argval == name:
                loaded = True
            elif instruction.opname == "STORE_ATTR" and instruction.argval == name and loaded:
                # The value stored is loaded before the object: `x` of LOAD_FAST x; LOAD_FAST self (3.13+: one
                # LOAD_FAST_LOAD_FAST of both).
                values = recent[-1][:1] if recent and len(recent[-1]) == 2 else recent[-2][:1] if len(recent) > 1 \
                    else ()
                if values and values[0] in arguments:
                    return _function_site(code.co_filename, line, code.co_name)
            names = instruction.argval if isinstance(instruction.argval, tuple) else (instruction.argval,)
            recent = (recent + [names if instruction.opname.startswith("LOAD_FAST") else ()])[-2:]
    return None


def cell_store_site(cell, name):
    """The one line of the functions that share the closure cell `cell` (the closures holding it: gc.get_referrers)
    that stores to it, encoded as a stack of that function alone: a setter's `nonlocal scale; scale = value`, called
    between replays after the function that made both closures returned. None when no line or several do."""
    try:
        tuples = [t for t in gc.get_referrers(cell) if isinstance(t, tuple)]
        functions = [f for t in tuples for f in gc.get_referrers(t) if getattr(f, "__closure__", None) is t]
        return _one_store_site([f.__code__ for f in functions], {"STORE_DEREF"}, name)
    except Exception:
        return None


def exception_text(error):
    try:
        return str(error)
    except Exception:
        return "<unprintable %s>" % type(error).__name__


def exception_type(error):
    cls = type(error)
    return cls.__qualname__ if cls.__module__ in ("builtins", None) else "%s.%s" % (cls.__module__, cls.__qualname__)


LOADS = ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW", "LOAD_FAST_BORROW_LOAD_FAST_BORROW",
          "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_NAME", "LOAD_GLOBAL")
REBINDS = ("STORE_FAST", "STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST", "STORE_DEREF", "STORE_NAME", "STORE_GLOBAL",
            "DELETE_FAST", "DELETE_DEREF", "DELETE_NAME", "DELETE_GLOBAL", "LOAD_FAST_AND_CLEAR")
STORES = ("STORE_FAST", "STORE_DEREF", "STORE_NAME", "STORE_GLOBAL")
PADDING = ("CACHE", "EXTENDED_ARG", "NOP", "PRECALL", "PUSH_NULL")  # between the instructions a pattern reads
CALLS = ("CALL", "CALL_METHOD", "CALL_FUNCTION")
_code_instructions = {}  # code object -> (its instructions, their indices by offset): a frame's code is read once


def code_instructions(code):
    """(its dis instructions, their indices by byte offset) of a code object, read once."""
    cached = _code_instructions.get(code)
    if cached is None:
        instructions = list(dis.get_instructions(code))
        cached = _code_instructions[code] = (instructions, {i.offset: n for n, i in enumerate(instructions)})
        if len(_code_instructions) > 256:
            _code_instructions.pop(next(iter(_code_instructions)))
    return cached


_NAME_LOADS = ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_GLOBAL",
               "LOAD_NAME")


def next_of_kept_iterator(frame):
    """`next(order)` or `next(self.batches)` when `frame` is calling the builtin next() with one argument that is a
    variable or an attribute path of one: an iterator the program keeps, whose item the call takes. None for
    anything else (`next(iter(xs))`, `next(self.parameters())`: an iterator made for the call)."""
    instructions, at_offset = code_instructions(frame.f_code)
    index = at_offset.get(frame.f_lasti)
    if index is None or not instructions[index].opname.startswith("CALL"):
        return None
    path = []
    index -= 1
    while index >= 0 and instructions[index].opname in PADDING:
        index -= 1
    while index >= 0 and instructions[index].opname == "LOAD_ATTR":
        path.insert(0, str(instructions[index].argval))
        index -= 1
    if index < 1 or instructions[index].opname not in _NAME_LOADS:
        return None
    path.insert(0, str(instructions[index].argval))
    callee = index - 1
    while callee >= 0 and instructions[callee].opname in PADDING:
        callee -= 1
    if callee < 0 or instructions[callee].opname not in ("LOAD_GLOBAL", "LOAD_NAME") or \
            instructions[callee].argval != "next":
        return None
    return "next(%s)" % ".".join(path)


def path_value(frame, dotted):
    """What `dotted` ("order", "self.batches") names in `frame`: a variable of the frame or a global, then plain
    attributes (an object's own __dict__: no property runs); None when it names nothing. For a profile function's
    frame only: up to CPython 3.12 the f_locals dictionary read there is the one CPython writes back into the frame
    after the profile function, so it is read as it is, never emptied as local_values empties it (emptied, it wiped
    the variables of Megatron's forward step on an H200)."""
    root, *attributes = dotted.split(".")
    variables = frame.f_locals
    value = variables[root] if root in variables else frame.f_globals.get(root)
    for attribute in attributes:
        held = getattr(value, "__dict__", None)
        value = held.get(attribute) if type(held) is dict else None
    return value


def program_frame(frame):
    """The innermost of `frame` and its callers that is the program's own code; None when there is none."""
    walked = 0
    while frame is not None and walked < 256:
        if is_program_file(frame.f_code.co_filename):
            return frame
        frame = frame.f_back
        walked += 1
    return None


def local_values(frame):
    """A copy of a frame's variables. Up to CPython 3.12, reading frame.f_locals of a function's frame caches a
    snapshot dict on the frame that holds every variable until the frame ends: a captured graph the program then
    deletes (`del graph` before destroy_process_group) would stay alive in it and NCCL's teardown wait for ever (seen
    on two H100s). The snapshot is emptied after it is copied; the variables themselves are untouched."""
    return _read_locals(frame, dict)


def _read_locals(frame, read):
    """`read` of the frame's f_locals, the snapshot emptied after (see local_values)."""
    values = frame.f_locals
    try:
        return read(values)
    finally:
        if sys.version_info < (3, 13) and is_function_frame(frame):
            values.clear()


def loop_variables(frame, names):
    """What `frame`'s variables `names` hold, as something to compare: numbers and strings themselves, other objects
    by identity. Up to 3.12 a function frame's f_locals snapshot is emptied after (see local_values)."""
    return _read_locals(frame, lambda values: tuple(_compared(values.get(name)) for name in names))


def _compared(value):
    return value if value is None or type(value) in (int, float, str, bool) else id(value)


def is_function_frame(frame):
    """A function's frame (its variables are its own), not a module's or a class body's (whose are a dict)."""
    return bool(frame.f_code.co_flags & 0x1)  # CO_OPTIMIZED, without touching f_locals


def module_names(frame):
    """id(module) -> "model.encoder.layers.0.dropout" for the modules the program's frame can name (its variables
    and its module's globals)."""
    names = {}
    try:
        Module = sys.modules["torch"].nn.Module
        scopes = [local_values(frame), frame.f_globals] if is_function_frame(frame) else [
            frame.f_globals]
        for scope in scopes:
            for variable, value in list(scope.items()):
                if isinstance(value, Module) and not variable.startswith("__"):
                    for name, sub in value.named_modules():
                        names.setdefault(id(sub), "%s.%s" % (variable, name) if name else variable)
    except Exception:
        pass
    return names
