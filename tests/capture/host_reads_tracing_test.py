"""host_reads.Observer's trace of the instructions a capture ran, in each CPython the probe may meet (one ctest entry
per interpreter, as python_stack_test.py): a path the code loads only in a branch not taken is dropped, one it ran is
kept, in a called function and in a `with` body's frame that was already running, with a profile function set as the
capture's is; a comprehension's read of a closure's dict by its loop's key is followed again after the comprehension
is gone. Python 3.12 gives a trace function no opcode events under a profile function (sys.monitoring is used
there), which a 3.11-only test did not see. No torch needed.

usage: host_reads_tracing_test.py PROBE_DIR
"""
import collections
import statistics
import sys
import types

sys.path.insert(0, sys.argv[1])
from graphcheck_probe import host_reads  # noqa: E402

SCALE = 1.0
CFG = types.SimpleNamespace(gain=2.0)


def scaled(x):
    return x * (SCALE if x else 1.0) * CFG.gain


def observed(function, argument, reads=None):
    """The labels of the reads a capture around `function(argument)` keeps (into `reads` too, when given)."""
    observer = host_reads.Observer()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename == __file__:
            observer.call(frame)

    sys.setprofile(profile)  # before the tracing starts, as the capture's profile function is (host_draws.Draws)
    observer.start_tracing()
    function(argument)
    sys.setprofile(None)
    observer.stop_tracing()
    baked = observer.baked()
    if reads is not None:
        reads.extend(baked)
    return sorted(read.label for read in baked)


def loss_balance():
    """A step whose comprehension reads each task's deque of recent losses by the loop's key (a function of its own
    before Python 3.12, which dies after one pass), and the loop that appends to them."""
    history = {task: collections.deque([1.0], maxlen=4) for task in ("regress", "classify")}

    def step(losses):
        return sum(loss / statistics.fmean(history[task]) for task, loss in zip(history, losses))

    def record(losses):
        for task, loss in zip(history, losses):
            history[task].append(loss)

    return step, record


def balance_changed():
    """The deque read's label, and whether an append after the capture is seen as a change of it."""
    step, record = loss_balance()
    reads = []
    labels = observed(step, (1.0, 2.0), reads)
    record((0.5, 0.5))
    changed = [read.label for read in reads if read.now() != read.captured]
    return labels, changed


def observed_body():
    observer = host_reads.Observer()
    sys.setprofile(lambda frame, event, arg: None)
    observer.start_tracing()
    frame = sys._getframe(0)
    observer.trace_body(frame)
    start = frame.f_lasti
    taken = False
    result = 2 * (SCALE if taken else 1.0) * CFG.gain
    observer.observe_body(frame, start, frame.f_lasti)
    sys.setprofile(None)
    observer.stop_tracing()
    return sorted(read.label for read in observer.baked()), result


failures = []
for name, got, expected in (
        ("a global in the branch taken and an attribute are kept", observed(scaled, 3.0), ["CFG.gain", "SCALE"]),
        ("a global in a branch not taken is dropped", observed(scaled, 0.0), ["CFG.gain"]),
        ("in a running frame's body too", observed_body()[0], ["CFG.gain"]),
        ("a comprehension's entries by a variable key, then a change of them", balance_changed(),
         (["history[task]"], ["history[task]"]))):
    print(("ok   " if got == expected else "FAIL ") + "%s %s: %s" % (sys.version.split()[0], name, got))
    if got != expected:
        failures.append(name)
check_trace = sys.gettrace() is None and (not hasattr(sys, "monitoring") or sys.monitoring.get_tool(4) is None)
print(("ok   " if check_trace else "FAIL ") + "the trace function and monitoring tool are gone after the capture")
sys.exit(1 if failures or not check_trace else 0)
