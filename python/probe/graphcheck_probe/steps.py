"""The program's steps, cut where its own loop comes round (analysis/iterations.h reads them before any guess from the
launch sequence).

Two anchors mark a pass, each sent with its kind: every optimizer.step() outside a capture (a training program's
steps), and, until the first optimizer.step(), every graph replay (patches.py; a serving, decoding or evaluation loop
steps no optimizer). The analysis cuts at replays only where no optimizer stepped, so a training program pays for
their marks until its first step only.

For each anchor the probe finds the loop around the call: the innermost loop running in the program's innermost frame
that runs one, or, where no frame of the program's runs a loop (a library's trainer drives it), in the outermost
library frame that does. The first such call in a pass of that loop (its chain of call sites from the loop's frame in:
the "head") sends one program-step event; later calls of the same pass (a second optimizer, a wrapper's inner step)
send nothing. Another loop, the same loop in another call of its function (the next epoch of a per-epoch function), or
the same loop entered again in the next pass of a `for` loop around it in the same frame (told by that loop's
variable: `epoch`) starts a new phase: an eager twin's loop, a graphed loop and each epoch are phases of their own, so
that no step spans the work between them.

A frame's activation is told by a marker set on its f_trace (a new call's frame has none) while no tracer runs; under
a tracer (a debugger, coverage) by the frame's id. The probe never keeps a frame: a frame held after it returns keeps
its variables, graphs included, alive."""
import dis
import sys
import threading

from . import events, frames, no_grad_replays, watches

_MAX_WALK = 64  # frames looked at from the call outwards
_MAX_CODES = 512  # code objects whose kind and loops are remembered

_PROGRAM, _LIBRARY, _OTHER = 0, 1, 2
# id(code) -> (code, _PROGRAM, _LIBRARY or _OTHER (torch, the standard library, the probe), its loops). Keyed by id:
# a code object's hash is worked out from its bytecode and constants at every lookup; the code is held, so that its
# id is not another's while it is remembered.
_codes = {}
# Per thread, per anchor: {"loop": the loop frame's key, code, first offset; "head": the chain that starts a pass;
# "phase"}.
_local = threading.local()
_phases = [0]  # phases so far, in the process
_replays = {"on": True, "when_stopped": []}  # the replays' marks: on until the first optimizer step


def loops(code):
    """`code`'s loops, each from a backward jump's target to the last jump back there: (first offset, last offset,
    where the loop is: "train.py:30 in main", at the `for` line, or a `while` loop's, whose test 3.11+ repeats at the
    jump back; the variables the `for` loops around it bind, by which a pass of an outer loop is told from the next:
    an epoch loop's `epoch`)."""
    spans, lines, line, stored_after = {}, {}, 0, {}
    previous = None
    for instruction in dis.get_instructions(code):
        line = lines[instruction.offset] = frames.instruction_line(instruction, line)
        target = frames.backward_jump_target(instruction)
        if target is not None:
            end, first_line = spans.get(target, (0, lines.get(target, line)))
            spans[target] = (max(end, instruction.offset), min(first_line, line) if line else first_line)
        if previous is not None and previous.opname == "FOR_ITER" and instruction.opname.startswith("STORE_"):
            stored = instruction.argval
            names = stored if isinstance(stored, tuple) else (stored,)  # 3.13's STORE_FAST_STORE_FAST
            stored_after[previous.offset] = names[0] if names and isinstance(names[0], str) else None
        if instruction.opname not in ("CACHE", "EXTENDED_ARG", "UNPACK_SEQUENCE", "UNPACK_EX"):
            previous = instruction
    # The variable a `for` loop binds, by the loop's first offset (3.11 jumps back to just before its FOR_ITER).
    bound = {start: next((name for offset, name in stored_after.items() if start <= offset <= start + 4 and name),
                         None) for start in spans}
    found = []
    for start, (end, line) in spans.items():
        outer = tuple(bound[s] for s, (e, _) in spans.items() if s < start and e >= end and bound[s])
        found.append((start, end, "%s:%d in %s" % (code.co_filename, line, code.co_name), outer))
    return tuple(found)


def _code_info(code):
    """(code, kind, loops) of a code object, worked out at its first call."""
    info = _codes.get(id(code))
    if info is None or info[0] is not code:
        path = code.co_filename
        kind = _PROGRAM if frames.is_program_file(path) else _LIBRARY if frames.is_library_file(path) else _OTHER
        info = (code, kind, loops(code) if kind != _OTHER else ())
        if len(_codes) >= _MAX_CODES:
            _codes.pop(next(iter(_codes)))
        _codes[id(code)] = info
    return info


def code_loops(code):
    """loops(code), worked out once per code object; none for code that is neither the program's nor a library's."""
    return _code_info(code)[2]


def loop_around(frame, code_loops):
    """(first offset, where, the variables of the `for` loops around it) of the innermost of a frame's loops that its
    running instruction is in; None outside loops."""
    at = frame.f_lasti
    inside = [(start, where, outer) for start, end, where, outer in code_loops if start <= at <= end]
    return max(inside) if inside else None


def find_loop(frame):
    """(loop frame, loop_around's answer, head chain, the program's and libraries' frames inside the loop's) for a
    call made in `frame`: see the module's docstring. None when no frame runs a loop."""
    chain, inside, library = [], [], None
    while frame is not None and len(chain) < _MAX_WALK:
        code = frame.f_code
        chain.append((code, frame.f_lasti))
        _, kind, code_loops = _code_info(code)
        loop = loop_around(frame, code_loops) if code_loops else None
        if loop is not None and kind == _PROGRAM:
            return frame, loop, tuple(chain), inside
        if loop is not None:
            library = (frame, loop, tuple(chain), list(inside))
        if kind != _OTHER:
            inside.append(frame)
        frame = frame.f_back
    return library


def _optimizer_marker(frame, event, arg):
    """Set as f_trace of the frames a pass ran in while no tracer runs: marks their activations (it is never called
    without a tracer). One marker per anchor, so that a replay's mark does not hide an optimizer step's pass."""
    return _optimizer_marker


def _replay_marker(frame, event, arg):
    return _replay_marker


_MARKERS = {events.StepAnchor.OPTIMIZER_STEP: _optimizer_marker, events.StepAnchor.REPLAY: _replay_marker}


def _seen(frame, traced, marker):
    """Whether this activation of `frame` was marked before for this anchor (marking it now); None under a tracer, or
    where another f_trace is set: unknown."""
    current = frame.f_trace
    if traced or (current is not None and current not in _MARKERS.values()):
        return None
    if current is marker:
        return True
    frame.f_trace = marker
    return False


def _mark(anchor, caller):
    """One program-step event when the call made in `caller` starts a pass of its loop (see the module's
    docstring)."""
    found = find_loop(caller)
    if found is None:
        return
    frame, (start, where, outer), chain, inside = found
    marker = _MARKERS[anchor]
    # A call from a frame a pass already marked is that pass again (a chained optimizer's loop over its optimizers
    # calls from one line); under a tracer such calls are not told apart.
    traced = sys.gettrace() is not None
    same_pass = any([_seen(f, traced, marker) for f in inside])
    # An inner loop entered again in the next pass of its outer loop (the next epoch) is another phase.
    loop = (id(frame), frame.f_code, start, frames.loop_variables(frame, outer) if outer and not traced else ())
    states = _local.__dict__  # a missing attribute of a thread-local costs an exception
    state = states.get(anchor)
    if state is None:
        state = states[anchor] = {}
    if _seen(frame, traced, marker) is False or state.get("loop") != loop:
        _phases[0] += 1
        state.update(loop=loop, head=chain, phase=_phases[0])
    elif chain != state["head"] or same_pass:
        return
    events.program_step(phase=state["phase"], loop=where, anchor=anchor)


def optimizer_stepping(optimizer, args, kwargs):
    """torch.optim's global step pre-hook."""
    if watches.capture_under_way():
        return
    try:
        if _replays["on"]:
            _stop_replays()
        no_grad_replays.optimizer_stepping(optimizer)
        _mark(events.StepAnchor.OPTIMIZER_STEP, sys._getframe(1))
    except Exception:
        pass


def replays_marked():
    """Whether replays still mark passes (no optimizer has stepped)."""
    return _replays["on"]


def when_replays_stop(callback):
    """`callback()` runs once, when the first optimizer step turns the replays' marks off (a patch taken out)."""
    _replays["when_stopped"].append(callback)


def _stop_replays():
    _replays["on"] = False
    for callback in _replays["when_stopped"]:
        try:
            callback()
        except Exception:
            pass
    del _replays["when_stopped"][:]


def replaying(caller):
    """A graph replay made in `caller`."""
    if not _replays["on"]:
        return
    try:
        _mark(events.StepAnchor.REPLAY, caller)
    except Exception:
        pass
