"""`graphcheck run --plan` (GRAPHCHECK_MODULE_CALLS=N): the program's outermost module calls with their input shapes,
for `graphcheck plan`. Global forward hooks see every module call; only a call made from no other module's forward
(per thread) is sent, as a begin event (its stack is the program's call) and an end event that names the module's
class and the shape of each tensor input. Calls inside a capture, under torch.compile's tracing, and past the first N
are not sent.

Global hooks slow every module call (PyTorch leaves its fast path): a 2-layer GPT-2's outermost call makes about 30
nested ones. The end event says how many nested calls the outermost one made (`pool`) and what the hooks add to each
(`value_now`, ns, measured once torch is imported by measure_hook_cost), so that `graphcheck plan` takes the hooks'
cost out of the call's time."""
import threading
import time

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


_hooks = {}  # "register": the function that registers the two hooks and returns their handles; "handles"
_cost_ns = [0]  # what the hooks add to a nested module call


def install(hooks, torch, limit):
    """Registers the two global hooks on torch.nn.modules.module (`hooks`); they cost a Python call per module
    call."""
    count = [0]

    def before(module, args):
        depth = getattr(_local, "depth", 0)
        _local.depth = depth + 1
        if depth > 0:
            _local.nested = getattr(_local, "nested", 0) + 1
            return None
        if count[0] >= limit or _compiling(torch):
            return None
        try:
            if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
                return None
        except Exception:
            return None
        count[0] += 1
        _local.call = count[0]
        _local.nested = 0
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
            bridge.recorder.emit(EventKind.MODULE_CALL_END, graph=id(module), value=call,
                                 pool=getattr(_local, "nested", 0), value_now=_cost_ns[0], text=text)
        return None

    def register():
        return (hooks.register_module_forward_pre_hook(before),
                hooks.register_module_forward_hook(after, with_kwargs=True, always_call=True))

    _hooks["register"] = register
    _hooks["handles"] = register()


def measure_hook_cost(torch, calls=200, rounds=5):
    """What the hooks add to a nested module call, in ns: a small module's call on the CPU through the hooks' nested
    path and without the hooks, the best of `rounds` rounds of `calls` calls each. Run once torch is imported (the
    "torch" patch), outside any module call: the hooks come off and back on here."""
    if "handles" not in _hooks:
        return
    module = torch.nn.Identity()
    x = torch.zeros(1)

    def per_call_ns():
        best = float("inf")
        for _ in range(rounds):
            start = time.perf_counter_ns()
            for _ in range(calls):
                module(x)
            best = min(best, (time.perf_counter_ns() - start) / calls)
        return best

    _local.depth = 1  # the calls below take the path of calls inside an outermost one
    try:
        hooked = per_call_ns()
        for handle in _hooks["handles"]:
            handle.remove()
        try:
            unhooked = per_call_ns()
        finally:
            _hooks["handles"] = _hooks["register"]()
    finally:
        _local.depth = 0
        _local.nested = 0
    _cost_ns[0] = max(0, int(hooked - unhooked))
