"""The settings `graphcheck run` hands the probe, in the environment, as trace/run_settings.h names them
(tests/capture/probe_abi_test.py holds these names to the header's): a value that does not parse is the default."""
import os

SHADOW = "GRAPHCHECK_SHADOW"
HANG_TIMEOUT_MS = "GRAPHCHECK_HANG_TIMEOUT_MS"
MODULE_CALLS = "GRAPHCHECK_MODULE_CALLS"


def _count(name):
    try:
        return max(0, int(os.environ.get(name, "0")))
    except ValueError:
        return 0


def shadow_calls():
    """--shadow N: the graphed calls and replays compared with their eager code; 0: off."""
    return _count(SHADOW)


def hang_timeout_ms():
    """--hang-timeout: 0 when the waits are not bounded."""
    return _count(HANG_TIMEOUT_MS)


def module_calls():
    """--plan: the outermost module calls recorded with their input shapes; 0: off."""
    return _count(MODULE_CALLS)
