"""host_reads.Observer's trace of the instructions a capture ran, in each CPython the probe may meet (one ctest entry
per interpreter, as python_stack_test.py): a path the code loads only in a branch not taken is dropped, one it ran is
kept, in a called function and in a `with` body's frame that was already running, with a profile function set as the
capture's is. Python 3.12 gives a trace function no opcode events under a profile function (sys.monitoring is used
there), which a 3.11-only test did not see. No torch needed.

usage: host_reads_tracing_test.py PROBE_DIR
"""
import sys
import types

sys.path.insert(0, sys.argv[1])
from graphcheck_probe import host_reads  # noqa: E402

SCALE = 1.0
CFG = types.SimpleNamespace(gain=2.0)


def scaled(x):
    return x * (SCALE if x else 1.0) * CFG.gain


def observed(function, argument):
    """The labels of the reads a capture around `function(argument)` keeps."""
    observer = host_reads.Observer()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code is function.__code__:
            observer.call(frame)

    sys.setprofile(profile)  # before the tracing starts, as the capture's profile function is (host_draws.Draws)
    observer.start_tracing()
    function(argument)
    sys.setprofile(None)
    observer.stop_tracing()
    return sorted(read.label for read in observer.baked())


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
        ("in a running frame's body too", observed_body()[0], ["CFG.gain"])):
    print(("ok   " if got == expected else "FAIL ") + "%s %s: %s" % (sys.version.split()[0], name, got))
    if got != expected:
        failures.append(name)
check_trace = sys.gettrace() is None and (not hasattr(sys, "monitoring") or sys.monitoring.get_tool(4) is None)
print(("ok   " if check_trace else "FAIL ") + "the trace function and monitoring tool are gone after the capture")
sys.exit(1 if failures or not check_trace else 0)
