"""`graphcheck run --plan` (GRAPHCHECK_MODULE_CALLS=N): the program's outermost module calls with their input shapes,
for `graphcheck plan`. Global forward hooks see every module call; only a call made from no other module's forward
(per thread) is sent, as a begin event (its stack is the program's call) and an end event that names the module's
class and the shape of each tensor input. Calls inside a capture, under torch.compile's tracing, and past the first N
are not sent."""
import threading

from . import bridge
from .bridge import EventKind

_MAX_TENSORS = 16  # tensor inputs named per call
_local = threading.local()


def _shapes(value, name, out):
    """One "name=shape" per tensor in `value`, nested lists, tuples and dicts included."""
    if len(out) >= _MAX_TENSORS:
        return out
    if hasattr(value, "shape") and hasattr(value, "dtype") and hasattr(value, "device"):
        out.append("%s=%s" % (name, "x".join(str(int(d)) for d in value.shape) or "scalar"))
    elif isinstance(value, dict):
        for key, item in value.items():
            _shapes(item, "%s.%s" % (name, key) if name else str(key), out)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _shapes(item, "%s.%d" % (name, index) if name else str(index), out)
    return out


def _compiling(torch):
    compiler = getattr(torch, "compiler", None)  # imported after torch.nn
    return compiler is not None and compiler.is_compiling()


def install(hooks, torch, limit):
    """Registers the two global hooks on torch.nn.modules.module (`hooks`); they cost a Python call per module
    call."""
    count = [0]

    def before(module, args):
        depth = getattr(_local, "depth", 0)
        _local.depth = depth + 1
        if depth > 0 or count[0] >= limit or _compiling(torch):
            return None
        try:
            if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
                return None
        except Exception:
            return None
        count[0] += 1
        _local.call = count[0]
        bridge.recorder.emit(EventKind.MODULE_CALL_BEGIN, graph=id(module), value=count[0])
        return None

    def after(module, args, kwargs, output):
        depth = max(0, getattr(_local, "depth", 1) - 1)
        _local.depth = depth
        call = getattr(_local, "call", 0)
        if depth == 0 and call:
            _local.call = 0
            try:
                inputs = _shapes(tuple(args), "", [])
                _shapes(dict(kwargs or {}), "", inputs)
                text = "\t".join([type(module).__name__] + inputs)
            except Exception:
                text = type(module).__name__
            bridge.recorder.emit(EventKind.MODULE_CALL_END, graph=id(module), value=call, text=text)
        return None

    hooks.register_module_forward_pre_hook(before)
    hooks.register_module_forward_hook(after, with_kwargs=True, always_call=True)
