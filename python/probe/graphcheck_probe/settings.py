"""The settings `graphcheck run` hands the probe, in the environment: three of trace/run_settings.h's variables, by
the header's names (tests/capture/probe_abi_test.py holds these to it), read once by read(). A variable not set is 0;
a value that is not as graphcheck writes it (decimal digits, within the recorder's type) raises ValueError naming the
variable, and the probe does not start, as the recorder does not."""
import collections
import os
import re

SHADOW = "GRAPHCHECK_SHADOW"
HANG_TIMEOUT_MS = "GRAPHCHECK_HANG_TIMEOUT_MS"
MODULE_CALLS = "GRAPHCHECK_MODULE_CALLS"

# shadow_calls: --shadow N, the graphed calls and replays compared with their eager code; 0: off.
# hang_timeout_ms: --hang-timeout; 0 when the waits are not bounded.
# module_calls: --plan, the outermost module calls recorded with their input shapes; 0: off.
Settings = collections.namedtuple("Settings", "shadow_calls hang_timeout_ms module_calls")

_UINT32_MAX = 2 ** 32 - 1
_INT64_MAX = 2 ** 63 - 1


def _whole_number(environ, name, largest):
    value = environ.get(name)
    if value is None:
        return 0
    if not re.fullmatch(r"[0-9]+", value) or int(value) > largest:
        raise ValueError('%s is "%s": not a whole number from 0 to %d' % (name, value, largest))
    return int(value)


def read(environ=None):
    """The settings in `environ` (default: this process's environment)."""
    environ = os.environ if environ is None else environ
    return Settings(shadow_calls=_whole_number(environ, SHADOW, _UINT32_MAX),
                    hang_timeout_ms=_whole_number(environ, HANG_TIMEOUT_MS, _INT64_MAX),
                    module_calls=_whole_number(environ, MODULE_CALLS, _UINT32_MAX))
