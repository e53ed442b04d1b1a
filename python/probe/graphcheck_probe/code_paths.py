"""What a code object loads, read from its bytecode once: the paths to values it follows (a variable, then attribute
names and constant subscripts, or a last subscript by a variable's value), the names its loops bind, and whether a
load only reads a tensor's metadata. For host_reads.py, which follows those paths while a capture runs."""
import dis

from . import frames

MAX_STEPS = 4  # attribute or subscript steps after the variable

_GLOBAL_LOADS = {"LOAD_GLOBAL", "LOAD_NAME"}
_FAST_LOADS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"}
_PAIR_LOADS = {"LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"}  # 3.13+: the second name is the path's
_SUBSCRIPTS = {"BINARY_SUBSCR"}


def paths(code, start=-1, end=None):
    """(root kind, root name, steps, line, offset of the load that ends it) of each path `code` loads (between byte
    offsets `start` and `end`, exclusive, when given): root kind "global", "cell" or "local"; steps (("attr", name) or
    ("item", constant), ...), or a last ("values", the key's name) where the key is a variable's value
    (`history[task]`): which entry it was is not in the code, so all of them stand for it. Every prefix of a chain is
    a path of its own."""
    found = []
    path, line = None, 0
    pending_constant = None
    keyed = None  # the path a variable just loaded may be the subscript key of
    for instruction in dis.get_instructions(code):
        name = instruction.opname
        line = frames.instruction_line(instruction, line)
        if instruction.offset <= start or (end is not None and instruction.offset >= end):
            continue
        root = None
        if name in _GLOBAL_LOADS:
            root = ("global", instruction.argval)
        elif name == "LOAD_DEREF" or name == "LOAD_CLASSDEREF":
            root = ("cell", instruction.argval)
        elif name in _FAST_LOADS:
            root = ("local", instruction.argval)
        elif name in _PAIR_LOADS and isinstance(instruction.argval, tuple) and len(instruction.argval) == 2:
            root = ("local", instruction.argval[1])
        if root is not None and isinstance(root[1], str):
            keyed = (path, root[1]) if path is not None and pending_constant is None else None
            if name in _PAIR_LOADS:  # `table[key]` of two locals loads both in one instruction
                keyed = (("local", instruction.argval[0], ()), root[1])
            path = (root[0], root[1], ())
            pending_constant = None
            found.append(path + (line, instruction.offset))
            continue
        if path is not None and name in ("LOAD_ATTR", "LOAD_METHOD") and len(path[2]) < MAX_STEPS:
            path = (path[0], path[1], path[2] + (("attr", instruction.argval),))
            found.append(path + (line, instruction.offset))
            continue
        if path is not None and name == "LOAD_CONST" and pending_constant is None:
            pending_constant = (instruction.argval,)
            continue
        if path is not None and name in _SUBSCRIPTS and pending_constant is not None:
            key = pending_constant[0]
            pending_constant = None
            if isinstance(key, (str, int)) and len(path[2]) < MAX_STEPS:
                path = (path[0], path[1], path[2] + (("item", key),))
                found.append(path + (line, instruction.offset))
                continue
        if keyed is not None and name in _SUBSCRIPTS and pending_constant is None:
            path = keyed[0][:2] + (keyed[0][2] + (("values", keyed[1]),),)
            found.append(path + (line, instruction.offset))
            path, keyed = None, None
            continue
        if name in ("CACHE", "EXTENDED_ARG", "NOP"):
            continue
        path, pending_constant, keyed = None, None, None
    return found


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
