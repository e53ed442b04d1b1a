"""What the probe's tests against real torch share: the probe and torch on the path (from the command line's
PROBE_DIR [TORCH_SITE_DIR]), a check that prints its outcome and keeps the failures, and the exit status."""
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
