"""What a code object loads, read from its bytecode once: the paths to values it follows (a variable, then attribute
names, constant subscripts, subscripts by another path's value and a weakref's call, or a last subscript by a local's
value), the names its loops bind, and whether a load only reads a tensor's metadata. For host_reads.py, which follows those paths while a capture runs."""
import dis

from . import frames

MAX_STEPS = 4  # attribute or subscript steps after the variable

_GLOBAL_LOADS = {"LOAD_GLOBAL", "LOAD_NAME"}
_FAST_LOADS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"}
_PAIR_LOADS = {"LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"}  # 3.13+: the second name is the path's
_SUBSCRIPTS = {"BINARY_SUBSCR"}
_NO_EFFECT = frozenset(frames.PADDING) | {"RESUME", "KW_NAMES"}


def paths(code, start=-1, end=None):
    """(root kind, root name, steps, line, offset of the load that ends it) of each path `code` loads (between byte
    offsets `start` and `end`, exclusive, when given): root kind "global", "cell" or "local"; steps are ("attr",
    name), ("item", constant), ("key", (kind, name, steps) of the path whose value is the key: `RECIPE[trainer.stage]`)
    and ("deref", None) for a call without arguments (a weakref's, `self.trainer_ref().kl_weight`). A subscript by a
    bare local (`history[task]`, a loop's variable, gone at the replays) ends a path with ("values", its name): which
    entry it was is not in the code, so all of them stand for it; ("attrs", the name's string parts) ends the object
    of a `getattr(obj, prefix + "_weight")`, and ("len", None) a path whose length the code takes. Every prefix of a
    chain is a path of its own."""
    walk = _PathWalk()
    line = 0
    for instruction in dis.get_instructions(code):
        line = frames.instruction_line(instruction, line)
        if instruction.offset <= start or (end is not None and instruction.offset >= end):
            continue
        walk.step(instruction, line)
    return walk.found


class _PathWalk:
    """paths()'s reading of one code object, instruction by instruction."""

    def __init__(self):
        self.found = []
        self.path = None  # (kind, name, steps) being followed
        self.pending_constant = None  # (constant,) loaded after the path: a subscript's key
        self.keyed = None  # (container path, None): the path a variable just loaded may be the key of
        self.callee = None  # "getattr" or "len" when the path is that builtin's first argument
        self.getattr_call = None  # [object path, line, offset, the name argument's instructions] until the call

    def _emit(self, path, line, offset):
        self.path = path
        self.found.append(path + (line, offset))

    def step(self, instruction, line):
        name = instruction.opname
        if self.getattr_call is not None and name not in _NO_EFFECT:
            self._getattr_argument(instruction)
        root = _root(instruction)
        if root is not None:
            self._end_getattr_object(instruction, line)
            callee = self.path[1] if self.path is not None and self.path[0] == "global" and not self.path[2] else None
            self.keyed = (self.path, None) if self.path is not None and self.pending_constant is None else None
            if name in _PAIR_LOADS:  # `table[key]` of two locals loads both in one instruction
                self.keyed = (("local", instruction.argval[0], ()), None)
                if callee == "getattr":  # `getattr(obj, name)` of two locals, the same way
                    self.getattr_call = [("local", instruction.argval[0], ()), line, instruction.offset, [instruction]]
            self.pending_constant = None
            self._emit((root[0], root[1], ()), line, instruction.offset)
            self.callee = callee if callee in ("getattr", "len") and name not in _PAIR_LOADS else None
            return
        if self.path is None:
            return
        steps = self.path[2]
        if name in ("LOAD_ATTR", "LOAD_METHOD") and len(steps) < MAX_STEPS:
            self._emit(self.path[:2] + (steps + (("attr", instruction.argval),),), line, instruction.offset)
            return
        if name in frames.CALLS and instruction.argval == 1 and self.callee == "len":
            # `len(self.window)`: the number the code reads is the length, not the entries
            if self.found and self.found[-1][:3] == self.path:
                self.found.pop()
            self.found.append(self.path[:2] + (steps + (("len", None),),) + (line, instruction.offset))
            self.path, self.callee = None, None
            return
        if name in frames.CALLS and instruction.argval == 0 and len(steps) < MAX_STEPS:
            self._emit(self.path[:2] + (steps + (("deref", None),),), line, instruction.offset)
            return
        if name in _NO_EFFECT:
            return
        if name == "LOAD_CONST" and self.pending_constant is None:
            self._end_getattr_object(instruction, line)
            self.pending_constant = (instruction.argval,)
            return
        if name in _SUBSCRIPTS and self._subscript(line, instruction.offset):
            return
        self.path, self.pending_constant, self.keyed, self.callee = None, None, None, None

    def _subscript(self, line, offset):
        """Follows a subscript of the path by a constant, or of the path before by this one's value; whether it
        did."""
        steps = self.path[2]
        if self.pending_constant is not None:
            key = self.pending_constant[0]
            self.pending_constant = None
            if isinstance(key, (str, int)) and len(steps) < MAX_STEPS:
                self._emit(self.path[:2] + (steps + (("item", key),),), line, offset)
                return True
            return False
        if self.keyed is None or self.keyed[0] is None or len(self.keyed[0][2]) >= MAX_STEPS:
            return False
        container, key = self.keyed[0], self.path
        self.keyed = None
        if key[0] == "local" and not key[2]:
            self.found.append(container[:2] + (container[2] + (("values", key[1]),),) + (line, offset))
            self.path = None
            return True
        self._emit(container[:2] + (container[2] + (("key", key),),), line, offset)
        return True

    def _end_getattr_object(self, instruction, line):
        """getattr's object, once its name argument begins with `instruction`: the rest of the call is read next
        (_getattr_argument)."""
        if self.callee == "getattr" and self.path is not None and len(self.path[2]) < MAX_STEPS:
            self.getattr_call = [self.path, line, instruction.offset, [instruction]]
        self.callee = None if self.callee == "getattr" else self.callee

    def _getattr_argument(self, instruction):
        """An instruction of getattr's name (and default) arguments; at the call, the path it reads: `getattr(cfg,
        "clip", None)` is cfg.clip; `getattr(weights, term + "_weight")` every number of weights whose name holds
        "_weight" (a name none of whose parts is in the code is not followed)."""
        path, line, offset, argument = self.getattr_call
        if instruction.opname not in frames.CALLS:
            argument.append(instruction)
            if len(argument) > 8:
                self.getattr_call = None
            return
        self.getattr_call = None
        first = argument[0] if argument else None
        if first is not None and first.opname == "LOAD_CONST" and isinstance(first.argval, str) and len(argument) <= 2:
            step = ("attr", first.argval)
        else:
            parts = tuple(sorted({i.argval for i in argument if i.opname == "LOAD_CONST" and isinstance(i.argval, str)
                                  and i.argval}))
            step = ("attrs", parts) if parts else None
        if step is not None:
            self.found.append(path[:2] + (path[2] + (step,),) + (line, offset))


def _root(instruction):
    """(kind, name) of a variable the instruction loads; None for any other instruction."""
    name = instruction.opname
    if name in _GLOBAL_LOADS:
        root = ("global", instruction.argval)
    elif name == "LOAD_DEREF" or name == "LOAD_CLASSDEREF":
        root = ("cell", instruction.argval)
    elif name in _FAST_LOADS:
        root = ("local", instruction.argval)
    elif name in _PAIR_LOADS and isinstance(instruction.argval, tuple) and len(instruction.argval) == 2:
        root = ("local", instruction.argval[1])
    else:
        return None
    return root if isinstance(root[1], str) else None


_getter_paths = {}  # code -> the steps it returns from its first argument, or None


def getter_steps(code):
    """The steps a property getter's code returns from its first argument, when that is all it does (`return
    self._trainer_ref()`, `return self.cfg["opt"].lr`); None for any other code."""
    if code is None:
        return None
    if code in _getter_paths:
        return _getter_paths[code]
    steps = None
    if code.co_argcount >= 1 and frames.is_program_file(code.co_filename):
        instructions = [i for i in dis.get_instructions(code) if i.opname not in _NO_EFFECT]
        found = paths(code)
        if (instructions and instructions[-1].opname in ("RETURN_VALUE", "RETURN_CONST") and found and
                found[0][:2] == ("local", code.co_varnames[0]) and found[-1][:2] == found[0][:2] and
                len(found) == len(instructions) - 1 - _subscript_constants(instructions)):
            steps = found[-1][2]
            steps = steps if all(kind in ("attr", "item", "deref") for kind, _ in steps) else None
    _getter_paths[code] = steps
    return steps


def _subscript_constants(instructions):
    """The LOAD_CONSTs among `instructions` that a subscript takes as its key (one path step for two instructions)."""
    return sum(1 for a, b in zip(instructions, instructions[1:]) if a.opname == "LOAD_CONST" and b.opname in _SUBSCRIPTS)


def loop_targets(code):
    """The names a code object's `for` loops bind: a serving loop's bucket size, read inside a `with
    torch.cuda.graph` body as a key (`static_in[size]`), moves on by design."""
    targets, after_loop = set(), False
    for instruction in dis.get_instructions(code):
        if instruction.opname == "FOR_ITER":
            after_loop = True
        elif after_loop and instruction.opname.startswith("STORE_") and isinstance(instruction.argval, str):
            targets.add(instruction.argval)
        elif after_loop and instruction.opname not in ("UNPACK_SEQUENCE", "UNPACK_EX", "CACHE", "EXTENDED_ARG"):
            after_loop = instruction.opname.startswith("STORE_")
    return targets


# What a load followed by these reads of a tensor is not its memory: its shape, device or dtype, or whether it is None.
_METADATA = {"shape", "device", "dtype", "size", "dim", "ndim", "numel", "is_cuda", "layout", "requires_grad"}
_NONE_TESTS = {"POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE", "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE",
               "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE"}
_next_instructions = {}  # code -> {offset: the instruction after it}


def metadata_only(code, offset):
    """Whether the load at `offset` in `code` is followed by a read of the tensor's metadata or a test against None:
    the graph does not read its memory there (`self.cache.shape[1]`, `if self.mask is not None`)."""
    following = _next_instructions.get(code)
    if following is None:
        instructions = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "EXTENDED_ARG")]
        following = _next_instructions[code] = {a.offset: b for a, b in zip(instructions, instructions[1:])}
    after = following.get(offset)
    if after is None:
        return False
    if after.opname in ("LOAD_ATTR", "LOAD_METHOD") and after.argval in _METADATA:
        return True
    return after.opname in _NONE_TESTS or (after.opname == "LOAD_CONST" and after.argval is None)
