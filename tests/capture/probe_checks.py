"""What the probe's tests against real torch share: the probe and torch on the path (from the command line's
PROBE_DIR [TORCH_SITE_DIR]), a check that prints its outcome and keeps the failures, the exit status, and stand-ins
for the recorder and a CUDA graph."""
import sys

failures = []


def use_probe_and_torch(argv):
    """Puts PROBE_DIR (argv[1]) and, when given, TORCH_SITE_DIR (argv[2]) first on the import path."""
    sys.path.insert(0, argv[1])
    if len(argv) > 2:
        sys.path.insert(0, argv[2])


def check(name, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else ": " + str(detail)))
    if not condition:
        failures.append(name)


def finish():
    """Prints the count of failures and exits 1 when there were any."""
    print("%d failure(s)" % len(failures))
    sys.exit(1 if failures else 0)


class Recorder:
    """bridge.recorder's stand-in: each event with the line of the test file `path` it was sent from (its explicit
    frames' first line there, else the caller's)."""

    def __init__(self, path):
        self.path = path
        self.events = []

    def emit(self, kind, **fields):
        line = None
        frames = fields.get("frames")
        if frames:  # explicit frames, innermost first
            for frame in frames.split("\x1e"):
                path, number, _ = frame.split("\x1f")
                if path == self.path:
                    line = int(number)
                    break
        else:
            frame = sys._getframe(1)
            while frame is not None and frame.f_code.co_filename != self.path:
                frame = frame.f_back
            line = frame.f_lineno if frame is not None else None
        self.events.append(dict(fields, kind=kind, line=line))

    def of(self, kind):
        return [e for e in self.events if e["kind"] == kind]


class Graph:
    """A CUDAGraph's stand-in: the contract needs its identity and pool(), the replay watch its replay()."""

    def pool(self):
        raise RuntimeError("no pool on a CPU")

    def replay(self):
        pass


def line_of(path, text):
    """The line of the file `path` holding `text` (the planted defects' lines)."""
    with open(path) as source:
        lines = source.read().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if text in line and "line_of(" not in line)
