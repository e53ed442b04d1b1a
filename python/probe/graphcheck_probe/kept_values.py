"""Where a program keeps a value it got from a graph, and whether it reads it again, from its frames' bytecode: a
variable read before it is bound again (read_before_rebound) or before a replay refreshes it (read_across_replay),
the line that kept a value under another name (alias_store_line), bound it into a new value (store_line_using) or
appended it to a list (kept_append_line, append_site), a variable changed inside a loop (changed_in), the loops
around an instruction (loops_around). graphed_calls.py, watches.py and pool_order.py ask these of the program's
frames at graphed calls and replays."""
import gc

from . import frames

_ENDS = ("RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE")


def _successors(instructions, index, at_offset):
    """The indices of the instructions that may run after instructions[index] (exception edges left out)."""
    instruction = instructions[index]
    if instruction.opname in _ENDS:
        return []
    jump = "JUMP" in instruction.opname or instruction.opname in ("FOR_ITER", "SEND")
    following = [] if jump and "IF" not in instruction.opname and instruction.opname not in ("FOR_ITER", "SEND") \
        else [index + 1]
    if jump and isinstance(instruction.argval, int) and instruction.argval in at_offset:
        following.append(at_offset[instruction.argval])
    return [i for i in following if i < len(instructions)]


def read_before_rebound(frame, name, attribute=None):
    """Whether `frame`'s code, going on from the instruction it runs, may read the variable `name` (its attribute
    `attribute`, when given) before it stores to or deletes it: a path through the code's jumps (round its loops too)
    from that instruction to a load of `name` that passes no store. `a = f(x); b = f(y); g(a)`: at the second call, a
    is read after it; in `for x in xs: out = f(x)`, at a call, out is rebound first; `if i == 0: first = out` may be
    jumped over, and a read of `first` after the loop is reached."""
    return _answer(_read_before_rebound, frame.f_code, frame.f_lasti, name, attribute)


# (the question, id(code), its arguments) -> (code, answer): the same at each call from one instruction (a graphed call
# in a loop), kept by the code's id, since hashing a code object hashes all the code nested in it (a module's: 50-190
# us).
_answers = {}


def _answer(question, code, *arguments):
    """question(code, *arguments), worked out once per code object and arguments."""
    key = (question, id(code)) + arguments
    answer = _answers.get(key)
    if answer is None or answer[0] is not code:
        if len(_answers) >= 4096:
            _answers.pop(next(iter(_answers)))
        answer = _answers[key] = (code, question(code, *arguments))
    return answer[1]


def _read_before_rebound(code, lasti, name, attribute=None):
    """read_before_rebound's answer, found from the code."""
    try:
        instructions, at_offset = frames.code_instructions(code)
        # The instruction the frame runs: f_lasti may point into its inline caches (3.11+), which dis leaves out.
        start = max((n for offset, n in at_offset.items() if offset <= lasti), default=None)
        if start is None:
            return False
        seen, todo = set(), _successors(instructions, start, at_offset)
        while todo:
            index = todo.pop()
            if index in seen:
                continue
            seen.add(index)
            instruction = instructions[index]
            names = instruction.argval if isinstance(instruction.argval, tuple) else (instruction.argval,)
            if name in names and instruction.opname in frames.LOADS:
                after = _next_instruction(instructions, index)
                if attribute is None or after is not None and after.argval == attribute and \
                        after.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                    return True
                if _stores_anew(after, attribute):
                    continue
            if name in names and instruction.opname in frames.REBINDS:
                continue
            todo.extend(_successors(instructions, index, at_offset))
    except Exception:
        pass
    return False


DIRECT, AFTER_THE_LOOP = "direct", "after the loop"
_SUBSCRIPT_STORES = ("STORE_SUBSCR", "STORE_SLICE")


def read_across_replay(frame, name, attribute=None):
    """Whether `frame`'s code, going on from a graph replay it runs, may read what the variable `name` (its attribute
    `attribute`) holds before a replay refreshes it: DIRECT on a path that stays in the innermost loop around the
    replay, AFTER_THE_LOOP on one that leaves it first, else None. Unlike read_before_rebound: a call that adds an
    entry (`pending.append(out)`) reads nothing; a store into an entry (`results[size] = out`, which may replace the
    entry held) ends the path, and so do a `.replay()` call (it may be the later graph's, writing the output anew) and,
    for an attribute, a method of the holder's object; a `for` loop entered on the path runs its body at least once
    (its exit is not taken from its head)."""
    return _answer(_read_across_replay, frame.f_code, frame.f_lasti, name, attribute)


def _read_across_replay(code, lasti, name, attribute):
    instructions, at_offset = frames.code_instructions(code)
    start = max((n for offset, n in at_offset.items() if offset <= lasti), default=None)
    if start is None:
        return None
    at = instructions[start].offset
    inner = next(iter(loops_around(code, at)), None)
    found, seen = None, set()
    todo = [(i, False) for i in _successors(instructions, start, at_offset)]
    while todo:
        index, outside = todo.pop()
        instruction = instructions[index]
        outside = outside or inner is not None and not inner[0] <= instruction.offset <= inner[1]
        if (index, outside) in seen:
            continue
        seen.add((index, outside))
        names = instruction.argval if isinstance(instruction.argval, tuple) else (instruction.argval,)
        after = _next_instruction(instructions, index)
        if instruction.opname in ("LOAD_ATTR", "LOAD_METHOD") and instruction.argval == "replay":
            continue
        if name in names and instruction.opname in frames.LOADS:
            if attribute is None and _stores_entry(instructions, index):
                continue  # `results[key] = out` may replace the entry held
            if _reads(instructions, index, after, attribute):
                if not outside:
                    return DIRECT
                found = AFTER_THE_LOOP
                continue
            if attribute is not None and _stores_anew(after, attribute):
                continue
        if name in names and instruction.opname in frames.REBINDS:
            continue
        following = _successors(instructions, index, at_offset)
        if instruction.opname == "FOR_ITER":
            own = next(iter(loops_around(code, instruction.offset)), None)
            if own is not None and not own[0] <= at <= own[1]:
                following = [index + 1]  # a loop entered on the path: its body runs
        todo.extend((i, outside) for i in following)
    return found


def _reads(instructions, index, after, attribute):
    """Whether the load of a variable at instructions[index] reads what it holds (its attribute `attribute`): not to
    add an entry (`pending.append(out)`)."""
    if attribute is not None:
        return after is not None and after.argval == attribute and after.opname in ("LOAD_ATTR", "LOAD_METHOD")
    return not (after is not None and after.opname in ("LOAD_ATTR", "LOAD_METHOD") and after.argval in frames.MUTATORS)


def _stores_entry(instructions, index):
    """Whether the load at instructions[index] is of the container a subscript store then stores into."""
    following = [i for i in instructions[index + 1:index + 6] if i.opname not in frames.PADDING][:2]
    return len(following) == 2 and following[1].opname in _SUBSCRIPT_STORES


def _stores_anew(after, attribute):
    """Whether the instruction `after` a load of an object stores its attribute `attribute`, or calls a method of it
    first, which may store it anew (`agent.act()` replaying the graph whose output `agent.last_logp` keeps)."""
    return after is not None and (after.opname == "STORE_ATTR" and after.argval == attribute or
                                  after.opname == "LOAD_METHOD" or "NULL|self" in after.argrepr)


def loops_around(code, offset):
    """The (first, last) byte offsets of `code`'s loops that hold `offset`, innermost first (steps.loops)."""
    from . import steps  # steps imports watches, which imports this module

    return sorted(((first, last) for first, last, _, _ in steps.code_loops(code) if first <= offset <= last),
                  key=lambda span: span[1] - span[0])


def _next_instruction(instructions, index):
    """The instruction after instructions[index], padding left out; None at the end."""
    for instruction in instructions[index + 1:index + 4]:
        if instruction.opname not in frames.PADDING:
            return instruction
    return None


def alias_store_line(code, name, within=(0, float("inf"))):
    """The one line of `code` (between the byte offsets `within`, a loop's) that binds `name` to another variable's
    object as it is, a load of a name then the store (`prev = logits`, not `prev = logits.clone()`): where a graphed
    callable's output kept past its next call was kept under another name. None where no line or several do."""
    try:
        instructions, _ = frames.code_instructions(code)
        lines, line, previous = set(), 0, None
        for instruction in instructions:
            line = frames.instruction_line(instruction, line)
            if instruction.opname in frames.PADDING:
                continue
            if instruction.opname in frames.STORES and instruction.argval == name and previous is not None and \
                    previous.opname in frames.LOADS and previous.opname != "LOAD_CLOSURE" and \
                    within[0] <= instruction.offset <= within[1]:
                lines.add(line)
            previous = instruction
        return lines.pop() if len(lines) == 1 else None
    except Exception:
        return None


_APPENDS = ("append", "extend", "insert", "add", "appendleft")


def _append_lines(code, container, depth=2):
    """The lines of `code`, and of the functions defined in it (`depth` levels), that call `container.append(...)` with
    a value as it is: a variable, an entry or an attribute (`pending.append(out[size])`), no call made of it on that
    line (not `container.append(out.clone())`)."""
    calls, line, previous, appending = {}, 0, None, set()
    for instruction in frames.code_instructions(code)[0]:
        line = frames.instruction_line(instruction, line)
        if instruction.opname in frames.PADDING:
            continue
        if instruction.opname in frames.CALLS:
            calls[line] = calls.get(line, 0) + 1
        elif instruction.opname in ("LOAD_ATTR", "LOAD_METHOD") and instruction.argval in _APPENDS and \
                previous is not None and previous.opname in frames.LOADS and previous.argval == container:
            appending.add(line)
        previous = instruction
    lines = {line for line in appending if calls.get(line) == 1}
    if depth > 0:
        for constant in code.co_consts:
            if hasattr(constant, "co_code"):
                lines |= _append_lines(constant, container, depth - 1)
    return lines


def kept_append_line(code, container):
    """The one line of `code` (or of a function defined in it) that appends a value as it is to `container`; None
    where no line or several do."""
    try:
        lines = _append_lines(code, container)
        return lines.pop() if len(lines) == 1 else None
    except Exception:
        return None


def store_line_using(code, name, sources):
    """The one line of `code` that binds `name` and loads a variable of `sources` as it is, not to call a method or
    take an attribute of it (`proposal = Proposal(q=static_q)`, `scorer = make_scorer(static_emb)`, not
    `make_scorer(static_emb.clone())`); None where no line or several do."""
    try:
        stores, bare, line, pending = set(), set(), 0, None
        for instruction in frames.code_instructions(code)[0]:
            line = frames.instruction_line(instruction, line)
            if instruction.opname in frames.PADDING:
                continue
            if pending is not None and instruction.opname not in ("LOAD_ATTR", "LOAD_METHOD"):
                bare.add(pending)
            pending = None
            names = instruction.argval if isinstance(instruction.argval, tuple) else (instruction.argval,)
            if instruction.opname in frames.LOADS and any(n in sources for n in names[:-1]):
                bare.add(line)  # 3.13's LOAD_FAST_LOAD_FAST: the first is followed by the second load
            if instruction.opname in frames.LOADS and names[-1] in sources:
                pending = line
            elif instruction.opname in frames.STORES and name in names:
                stores.add(line)
        lines = stores & bare
        return lines.pop() if len(lines) == 1 else None
    except Exception:
        return None


def changed_in(code, name, start, end):
    """Whether an instruction of `code` between byte offsets `start` and `end` (a loop's) binds the variable `name`,
    calls a method on it that adds entries (`pending.append(x)`), or stores an entry into it (`outputs[rid] = x`)."""
    return _answer(_changed_in, code, name, start, end)


def _changed_in(code, name, start, end):
    instructions, _ = frames.code_instructions(code)
    recent = []
    for i in instructions:
        if i.opname in frames.PADDING:
            continue
        names = i.argval if isinstance(i.argval, tuple) else (i.argval,)
        if start <= i.offset <= end and (
                i.opname in frames.REBINDS and name in names or
                i.opname in ("LOAD_ATTR", "LOAD_METHOD") and i.argval in frames.MUTATORS and recent[-1:] == [name] or
                i.opname == "STORE_SUBSCR" and name in recent[-3:-1]):
            return True
        recent = (recent + [n for n in names if isinstance(n, str)])[-4:] if i.opname in frames.LOADS else recent + [None]
    return False


def append_site(frame, value, depth=16):
    """The stack of the one line that appended `value` (a graph's output) as it is to a list the program keeps,
    found after the fact: the list that holds it most often, the name the innermost program frame from `frame` out
    that holds the list gives it, and the one line of that frame's code, or of the functions defined in it (a
    callback the loop calls), that appends a variable to that name. None when any of these is not one."""
    try:
        lists = [r for r in gc.get_referrers(value) if isinstance(r, list)]
        held = max(lists, key=lambda entries: sum(entry is value for entry in entries), default=None)
        walked = 0
        while held is not None and frame is not None and walked < depth:
            if frames.is_program_file(frame.f_code.co_filename):
                names = [name for name, local in frames.local_values(frame).items() if local is held]
                if names:
                    line = kept_append_line(frame.f_code, names[0])
                    return frames.encode_stack(frame, line) if line is not None else None
            frame = frame.f_back
            walked += 1
    except Exception:
        pass
    return None
