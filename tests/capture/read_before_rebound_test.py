"""kept_values.read_before_rebound and kept_values.alias_store_line in each CPython the probe may meet (one ctest entry per
interpreter): the bytecode that names a variable changed between 3.10 and 3.13 (LOAD_FAST_CHECK, LOAD_FAST_AND_CLEAR,
LOAD_FAST_LOAD_FAST, STORE_FAST_STORE_FAST), and HeldOutputs asks them whether the program reads a kept output after
the call that overwrote it, and which line kept it. No torch needed.

usage: read_before_rebound_test.py PROBE_DIR
"""
import sys

sys.path.insert(0, sys.argv[1])
from graphcheck_probe import frames, kept_values  # noqa: E402

asked = []


def call(name):
    """A graphed callable's stand-in: asks, for its caller, whether `name` is read before it is rebound."""
    asked.append(kept_values.read_before_rebound(sys._getframe(1), name))
    return len(asked)


def kept_and_read():
    for _ in range(2):
        weak = call("weak")
        strong = call("weak")  # weak is read below, after this call
        total = weak + strong
    return total


def rebound_first():
    out = 0
    for _ in range(2):
        out = call("out")  # out is rebound by this very assignment
        out += 1
    return out


def kept_behind_a_branch(copy):
    first = None
    for step in range(2):
        out = call("first")  # first is stored only behind an if, and read after the loop
        if step == 0:
            if copy:
                first = out + 0
            else:
                first = out
    return first


def read_together():
    a = 1
    b = call("a")  # a and b are loaded by one instruction from 3.13 on
    return a + b


def kept_under_another_name(copy):
    prev = None
    for _ in range(2):
        logits = call("prev")
        if copy:
            prev = logits + 0
        else:
            prev = logits  # kept under another name
    return prev


def two_aliases(a, b):
    kept = a
    kept = b
    return kept


def appended_in_a_callback(copy):
    """A value appended to a list by a callback defined in the frame that holds the list; append_site asked from
    this frame (a replay's)."""
    kept, value = [], object()

    def record(item):
        if copy:
            kept.append(str(item))
        else:
            kept.append(item)  # kept as it is

    for _ in range(3):
        record(value)
    return kept_values.append_site(sys._getframe(0), value), appended_in_a_callback.__code__.co_firstlineno + 9


def read_attribute(name, attribute):
    """asks, for its caller, whether `name`.`attribute` is read before it is stored again."""
    asked.append(kept_values.read_before_rebound(sys._getframe(1), name, attribute))


class Agent:
    def __init__(self):
        self.last, self.other = 0, 0

    def act(self):
        self.last = 1
        return self.last


def attribute_read(agent, order):
    for _ in range(2):
        if order == "read":
            read_attribute("agent", "last")
            agent.other + agent.last
        elif order == "method first":
            read_attribute("agent", "last")
            agent.act()  # may store agent.last anew: the read after it is not counted
            agent.last + 1
        else:
            read_attribute("agent", "last")
            agent.last = 2
            agent.last + 1


def changes_in_a_loop(items, table):
    pending, kept, outputs = [], [], {}
    for item in items:
        pending = []
        kept.append(item[0])  # an entry as it is
        kept.append(item.copy())
        outputs[item] = item
    return pending, kept, outputs


class Replayer:
    """A graph's stand-in whose replay asks, for its caller, read_across_replay of `name` (None: asks nothing)."""

    def __init__(self, name=None):
        self.name = name

    def replay(self):
        if self.name is not None:
            asked.append(kept_values.read_across_replay(sys._getframe(1), self.name))


def pipeline(earlier, later, static):
    kept = []
    for _ in range(2):
        later.replay()
        scores = static
        earlier.replay()  # scores is read in this pass
        kept.append(scores[0])
    return kept


def ticks(earlier, later, outputs):
    results, pending, seen = {}, [], []
    for tick in range(2):
        pending = []
        for graph in (earlier, later):
            graph.replay()
            results[tick] = outputs
            pending.append(outputs)
        seen.append(len(results) + len(pending))
    return seen


def decode(prefill, step, static):
    best = []
    for prompt in range(2):
        prefill.replay()
        for t in range(2):
            step.replay()  # refreshes what logits holds before the read below
            logits = static
        best.append(logits[0])
    return best


def proposals(static_q, copy):
    for _ in range(2):
        if copy:
            proposal = dict(q=static_q.copy(), tokens=static_q.count(1))
        else:
            proposal = dict(q=static_q, tokens=static_q.count(1))  # the handle as it is
    return proposal


failures = []


def verdict(name, got, expected):
    print(("ok   " if got == expected else "FAIL ") + "%s %s: %s" % (sys.version.split()[0], name, got))
    if got != expected:
        failures.append(name)


def asked_of(cases):
    """Runs each case's function and compares what it asked with its expected answers."""
    for name, run, expected in cases:
        asked.clear()
        run()
        verdict(name, asked[:], expected)


# frames.next_of_kept_iterator: next() of a variable or attribute path is a draw from an iterator the program keeps;
# next() of an iterator made for the call is not. frames.previous_value_site: a method that reads self.prev and then
# stores its argument there as it is.
taken = []


def profile(frame, event, arg):
    if event == "c_call" and getattr(arg, "__name__", "") == "next":
        taken.append(frames.next_of_kept_iterator(frame))


class Holder:
    def __init__(self):
        self.order = iter(range(9))
        self.prev = None

    def log(self, logits):
        if self.prev is not None:
            logits = logits + self.prev
        self.prev = logits  # kept as the previous value

    def log_copy(self, value):
        if self.prev is not None:
            value = value + self.prev
        self.prev = value + 0

    def lazily(self, x):
        out = x
        if self.prev is None:
            self.prev = out


def draws(order, holder):
    next(order)
    next(holder.order)
    next(iter(range(3)))
    next(order, None)


frames.is_program_file = lambda path: True
sys.setprofile(profile)
draws(iter(range(9)), Holder())
sys.setprofile(None)
log_line = Holder.log.__code__.co_firstlineno + 3
for name, got, expected in (
        ("next() of kept iterators only", taken, ["next(order)", "next(holder.order)", None, None]),
        ("the line of a method that keeps its argument as the previous value",
         frames.previous_value_site(Holder, "prev"), "%s\x1f%d\x1flog" % (__file__, log_line)),
        ("none for methods that store a copy, or a local only when unset",
         frames.previous_value_site(type("Copies", (), {"log_copy": Holder.log_copy, "lazily": Holder.lazily}),
                                    "prev"), None)):
    verdict(name, got, expected)
code = kept_under_another_name.__code__
site, append_line = appended_in_a_callback(False)
copied, _ = appended_in_a_callback(True)
for name, got, expected in (
        ("the line that keeps a value under another name", kept_values.alias_store_line(code, "prev"),
         code.co_firstlineno + 7),
        ("no such line for a name only a call's result binds", kept_values.alias_store_line(code, "logits"), None),
        ("the plain one among stores of a constant and of an expression",
         kept_values.alias_store_line(kept_behind_a_branch.__code__, "first"),
         kept_behind_a_branch.__code__.co_firstlineno + 8),
        ("none where two lines do", kept_values.alias_store_line(two_aliases.__code__, "kept"), None),
        ("the line of a callback that appended a value as it is", int(site.split("\x1f")[1]) if site else None,
         append_line),
        ("none where only copies were appended", copied, None)):
    verdict(name, got, expected)
asked_of((
        ("a variable read after the call", kept_and_read, [False, True, False, True]),
        ("a variable the call's result rebinds", rebound_first, [False, False]),
        ("a variable loaded with another in one instruction", read_together, [True]),
        ("a variable stored behind a branch and read after the loop", lambda: kept_behind_a_branch(False),
         [True, True])))
loop = changes_in_a_loop.__code__
start, end = min(i.offset for i in frames.code_instructions(loop)[0] if i.opname == "FOR_ITER"), len(loop.co_code)
asked_of((
        ("an attribute read after the call", lambda: attribute_read(Agent(), "read"), [True, True]),
        ("an attribute after a method of its object", lambda: attribute_read(Agent(), "method first"), [False, False]),
        ("an attribute stored again first", lambda: attribute_read(Agent(), "stored"), [False, False]),
        ("variables a loop binds, adds to or stores into", lambda: asked.extend(
            kept_values.changed_in(loop, name, start, end) for name in ("pending", "kept", "outputs", "items")),
         [True, True, True, False]),
        ("the one line appending an entry as it is", lambda: asked.append(
            kept_values.kept_append_line(loop, "kept") == loop.co_firstlineno + 4), [True])))
DIRECT, AFTER = kept_values.DIRECT, kept_values.AFTER_THE_LOOP
asked_of((
        ("an alias read in the pass of the replay", lambda: pipeline(Replayer("scores"), Replayer(), [1]),
         [DIRECT, DIRECT]),
        ("a list added to, read after the loop", lambda: ticks(Replayer("pending"), Replayer(), [1]),
         [AFTER, AFTER]),
        ("a dict stored into: the path ends", lambda: ticks(Replayer("results"), Replayer(), [1]), [None, None]),
        ("a loop entered after the replay runs its replay first", lambda: decode(Replayer("logits"), Replayer(), [1]),
         [None, None])))
code = proposals.__code__
verdict("the one line binding a value made of a handle as it is",
        kept_values.store_line_using(code, "proposal", {"static_q"}), code.co_firstlineno + 5)
sys.exit(1 if failures else 0)
