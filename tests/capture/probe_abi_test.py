"""The Python probe and the C++ side agree on every number and layout they share: the probe's event kinds, capture
origins and shadow subjects (python/probe/graphcheck_probe/bridge.py) are trace/events.h's enums, value for
value, its allocator actions are AllocatorEvent::Action's, the environment variables it reads are
trace/run_settings.h's, and its ctypes records are capture/probe_abi.h's structs, field for field in order with the
same C types. Each kind is sent by one function of events.py whose named arguments are fields of the kind's typed
record (trace/probe_records.h), with the same role names. A kind added on one side only, or a field moved, fails
here instead of writing events the analysis misreads.

usage: probe_abi_test.py SOURCE_DIR
"""
import ctypes
import os
import re
import sys

source = sys.argv[1]
sys.path.insert(0, os.path.join(source, "python", "probe"))
from graphcheck_probe import bridge  # noqa: E402

failures = []


def check(name, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else ": " + str(detail)))
    if not condition:
        failures.append(name)


def read(path):
    with open(os.path.join(source, path)) as f:
        return f.read()


def cpp_enum(text, name):
    """{CONSTANT_NAME: value} of `enum class NAME : ... { kFooBar = 1, ... }`, kFooBar read as FOO_BAR."""
    body = re.search(r"enum class %s\b[^{]*\{(.*?)\};" % name, text, re.S).group(1)
    values = {}
    for constant, value in re.findall(r"^\s*k(\w+)\s*=\s*(\d+)\s*,", body, re.M):
        values[re.sub(r"(?<!^)(?=[A-Z])", "_", constant).upper()] = int(value)
    return values


events = read("trace/events.h")
for cpp, python in (("ProbeEventKind", bridge.EventKind), ("ProbeOrigin", bridge.Origin),
                    ("ShadowSubject", bridge.ShadowSubject)):
    expected = cpp_enum(events, cpp)
    got = {member.name: int(member) for member in python}
    check("%s: the probe's %s is events.h's" % (cpp, python.__name__), got == expected,
          "probe %s, events.h %s" % (sorted(got.items()), sorted(expected.items())))
actions = cpp_enum(events, "Action")
from graphcheck_probe import memory  # noqa: E402
check("the probe's allocator actions are AllocatorEvent::Action's",
      {name.upper(): value for name, value in (("alloc", memory._ACTIONS["alloc"]),
                                               ("free", memory._ACTIONS["free_completed"]))} == actions, actions)
largest = int(re.search(r"kMaxProbeEventKind = (\d+);", events).group(1))
check("kMaxProbeEventKind is the probe's largest kind", largest == max(bridge.EventKind), largest)

from graphcheck_probe import settings  # noqa: E402

run_settings_h = read("trace/run_settings.h")
variables = dict(re.findall(r'inline constexpr char (k\w+Variable)\[\] = "(GRAPHCHECK_\w+)";', run_settings_h))
for python_name, cpp_name in (("SHADOW", "kShadowVariable"), ("HANG_TIMEOUT_MS", "kHangTimeoutVariable"),
                              ("MODULE_CALLS", "kModuleCallsVariable")):
    check("the probe's settings.%s is run_settings.h's %s" % (python_name, cpp_name),
          getattr(settings, python_name) == variables.get(cpp_name), variables)
probe_variables = {v for v in vars(settings).values() if isinstance(v, str) and v.startswith("GRAPHCHECK_")}
check("the probe names no variable run_settings.h does not", probe_variables <= set(variables.values()),
      probe_variables - set(variables.values()))
# The counts are the recorder's uint32_t fields: the probe takes what the recorder takes.
for field in ("shadow_calls", "module_calls"):
    check("RunSettings::%s is a uint32_t, the probe's bound" % field,
          re.search(r"\buint32_t %s = 0;" % field, run_settings_h) is not None)
# Read as the recorder reads them (tests/trace/run_settings_test.cc holds the same values): what graphcheck writes
# reads back, a variable not set is 0, and anything else is an error naming the variable and its value.
written = {settings.SHADOW: "4", settings.HANG_TIMEOUT_MS: "600000", settings.MODULE_CALLS: "100000"}
check("the settings graphcheck writes read back",
      settings.read(written) == settings.Settings(shadow_calls=4, hang_timeout_ms=600000, module_calls=100000),
      settings.read(written))
check("a variable not set is 0", settings.read({}) == settings.Settings(0, 0, 0), settings.read({}))
for name, value in ((settings.HANG_TIMEOUT_MS, "ten minutes"), (settings.HANG_TIMEOUT_MS, "-3"),
                    (settings.HANG_TIMEOUT_MS, "1e3"), (settings.HANG_TIMEOUT_MS, " 5"), (settings.HANG_TIMEOUT_MS, ""),
                    (settings.SHADOW, "+2"), (settings.SHADOW, "4294967296"), (settings.SHADOW, "-1"),
                    (settings.SHADOW, "\u0663"), (settings.MODULE_CALLS, "1_000")):
    try:
        settings.read({name: value})
        error = "no error"
    except ValueError as e:
        error = str(e)
    check("%s=%r is an error naming it" % (name, value), error.startswith('%s is "%s": ' % (name, value)), error)

C_TYPES = {"uint32_t": ctypes.c_uint32, "int32_t": ctypes.c_int32, "uint64_t": ctypes.c_uint64,
           "int64_t": ctypes.c_int64, "uint8_t": ctypes.c_uint8, "double": ctypes.c_double,
           "const char*": ctypes.c_char_p}
abi = read("capture/probe_abi.h")
C_TYPES["const GraphcheckAllocation*"] = ctypes.POINTER(bridge.AllocationRecord)
for struct, python in (("GraphcheckProbeEvent", bridge.ProbeEventRecord),
                       ("GraphcheckShadowRecord", bridge.ShadowRecord),
                       ("GraphcheckAllocation", bridge.AllocationRecord),
                       ("GraphcheckAllocations", bridge.AllocationBatch)):
    body = re.search(r"struct %s \{(.*?)\};" % struct, abi, re.S).group(1)
    fields = []
    for line in body.splitlines():
        line = line.split("//")[0].strip()
        match = re.match(r"(const \w+\*|\w+)\s+(\w+);", line)
        if match:
            fields.append((match.group(2), C_TYPES[match.group(1)]))
    check("%s: the probe's %s has its fields in order" % (struct, python.__name__),
          [(n, t) for n, t in python._fields_] == fields, "probe %s, probe_abi.h %s" % (python._fields_, fields))

# The typed records: each kind is sent by one function of events.py whose named arguments are fields of the kind's
# record in trace/probe_records.h, the role enums are its enums with probe_records.cc's names, and nothing else sends.
from graphcheck_probe import events  # noqa: E402
import inspect  # noqa: E402

records_h, records_cc = read("trace/probe_records.h"), read("trace/probe_records.cc")


def struct_fields(name):
    body = re.search(r"struct %s \{(.*?)\n\};" % name, records_h, re.S).group(1)
    return set(re.findall(r"^\s+[\w:<>,\s]+?\s(\w+)(?: = [^;]*)?;", body, re.M))


RECORDS = {"capture_begin": "CaptureBegin", "capture_end": "CaptureEnd", "exception": "PythonExceptionRecord",
           "compile_skip": "CompileSkip", "outputs_invalidated": "OutputsInvalidated",
           "state_rebound": "StateRebound", "outputs_held": "OutputsHeld", "ddp_constructed": "DdpConstructed",
           "ddp_captured_forward": "DdpCapturedForward", "host_value_change": "HostValueChange",
           "input_shape_change": "InputShapeChange", "audit": "ProbeMark", "shadow_skipped": "ShadowSkipped",
           "wait": "ProbeMark", "graph_alive": "GraphAlive", "megatron_graph_recorded": "MegatronGraphRecorded",
           "graph_tensors": "GraphTensors", "training_mode_change": "TrainingModeChange",
           "host_random_draw": "HostRandomDraw", "grad_aliased": "GradAliased", "tensor_released": "TensorReleased",
           "module_call": "ModuleCallRecord", "backward": "ProbeMark", "state_made_in_capture": "StateMadeInCapture",
           "program_step": "ProgramStep"}
NOT_FIELDS = {"origin", "frames", "begin"}  # the header's origin and stack; which of two marks
functions = {name: f for name, f in inspect.getmembers(events, inspect.isfunction) if not name.startswith("_")}
check("events.py has one function per record", set(functions) == set(RECORDS),
      sorted(set(functions) ^ set(RECORDS)))
for name, function in sorted(functions.items()):
    if name not in RECORDS:
        continue
    fields = struct_fields(RECORDS[name])
    arguments = set(inspect.signature(function).parameters) - NOT_FIELDS
    check("events.%s's arguments are %s's fields" % (name, RECORDS[name]), arguments <= fields,
          "not fields: %s" % sorted(arguments - fields))
sent = set(re.findall(r"EventKind\.(\w+)", read("python/probe/graphcheck_probe/events.py")))
check("events.py sends every event kind", sent == {k.name for k in bridge.EventKind},
      sorted({k.name for k in bridge.EventKind} ^ sent))
probe_modules = os.path.join("python", "probe", "graphcheck_probe")
senders = [f for f in os.listdir(os.path.join(source, probe_modules)) if f.endswith(".py")
           and f not in ("events.py", "bridge.py") and "recorder.emit(" in read(os.path.join(probe_modules, f))]
check("only events.py sends events", not senders, senders)
for cpp, table, python in (("TensorRole", "kTensorRoles", events.TensorRole),
                           ("HostValueRole", "kHostValueRoles", events.HostValueRole),
                           ("ShapeChangeHandling", "kShapeChangeHandlings", events.ShapeChangeHandling),
                           ("DrawSource", "kDrawSources", events.DrawSource),
                           ("MadeStateRole", "kMadeStateRoles", events.MadeStateRole),
                           ("StepAnchor", "kStepAnchors", events.StepAnchor),
                           ("CaptureWrites", "kCaptureWrites", events.CaptureWrites)):
    constants = cpp_enum(records_h, cpp)
    names = re.findall(r'"([a-z-]+)"', re.search(r"%s = \{(.*?)\};" % table, records_cc, re.S).group(1))
    expected = {constant: names[value] for constant, value in constants.items() if value < len(names)}
    got = {member.name: member.value for member in python}
    check("%s: the probe's names are probe_records.cc's" % cpp, got == expected and len(names) == len(constants),
          "probe %s, C++ %s" % (sorted(got.items()), sorted(expected.items())))

if failures:
    print("%d failed" % len(failures))
    sys.exit(1)
print("all passed")
