"""`graphcheck run --plan` (GRAPHCHECK_MODULE_CALLS=N): the program's outermost module calls with their input shapes,
for `graphcheck plan`. A global forward pre-hook sees the start of an outermost call; each is sent as a begin event
(its stack is the program's call) and an end event that names the module's class and the shape of each tensor input.
Calls inside a capture, under torch.compile's tracing, and past the first N are not sent.

The global hooks are off while an outermost call runs: the call's own forward hook marks its end. So the calls nested
in it take PyTorch's fast path, and the call's time is what it costs unrecorded. Global hooks on every nested call had
cost a 2-layer GPT-2's call (32 nested calls) 15-20% on an H200, which the plan could only estimate and take out.
Module calls that other threads make while an outermost call runs are not seen."""
import threading

from . import events

_MAX_TENSORS = 16  # tensor inputs named per call
_local = threading.local()  # per thread: the outermost call in progress (an _OutermostCall)


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


def _capturing(torch):
    try:
        return torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()
    except Exception:
        return True  # no judgement: the call is not sent


class _OutermostCall:
    """One outermost call in progress: its number, its module's own hooks (until its end), and how deep the module
    is in calls of itself (a module that calls itself ends its inner calls first)."""

    def __init__(self, number, module):
        self.number = number
        self.module = module
        self.reentered = 0
        self.handles = ()


_positional = {}  # forward function -> the names of its positional parameters after self


def _positional_names(module):
    """The names forward gives its positional inputs ("input_ids" for a Hugging Face model's first), so that a plan
    says `input_ids dim 0`; () when forward takes *args or cannot be read."""
    forward = getattr(type(module), "forward", None)
    names = _positional.get(forward)
    if names is None:
        import inspect  # here, not at the probe's start: only `run --plan` hooks module calls

        # Through decorators that keep the function they wrap (functools.wraps): Hugging Face's models' forward is
        # (self, *args, **kwargs) around the real one.
        code = getattr(inspect.unwrap(forward), "__code__", None)
        names = tuple(code.co_varnames[1:code.co_argcount]) if code is not None else ()
        _positional[forward] = names
    return names


def _call_text(module, args, kwargs):
    """The module's class, then one "name=shape" per tensor input, tab-separated: positional inputs by the name
    forward gives them (by their index when it gives none)."""
    try:
        names = _positional_names(module)
        inputs = []
        for index, value in enumerate(args):
            _shapes(value, names[index] if index < len(names) else str(index), inputs)
        _shapes(dict(kwargs or {}), "", inputs)
        return "\t".join([type(module).__name__] + inputs)
    except Exception:
        return type(module).__name__


class _GlobalHooks:
    """The global pre-hook, on while no outermost call is in progress on any thread, and the calls it sends."""

    def __init__(self, hooks, torch, limit):
        self._hooks = hooks
        self._torch = torch
        self._limit = limit
        self._sent = 0
        self._running = 0  # outermost calls in progress, all threads
        self._handle = None
        self._lock = threading.Lock()
        self._turn_on()

    def _turn_on(self):
        if self._handle is None and self._running == 0 and self._sent < self._limit:
            self._handle = self._hooks.register_module_forward_pre_hook(self._before)

    def _turn_off(self):
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def _before(self, module, args):
        if _compiling(self._torch) or _capturing(self._torch) or getattr(_local, "call", None) is not None:
            return None
        with self._lock:
            if self._sent >= self._limit:
                self._turn_off()
                return None
            self._sent += 1
            self._running += 1
            self._turn_off()  # the calls nested in this one run without hooks
            number = self._sent
        call = _OutermostCall(number, module)
        # Registered now, the module's own pre-hook sees only its calls of itself; its forward hook sees this call end.
        try:
            call.handles = (module.register_forward_pre_hook(self._reentered),
                            module.register_forward_hook(self._after, with_kwargs=True, always_call=True))
        except Exception:  # a module that takes no hooks: not sent, and the global hook back on
            self._ended()
            return None
        _local.call = call
        events.module_call(begin=True, module=id(module), number=call.number)
        return None

    def _reentered(self, module, args):
        call = getattr(_local, "call", None)
        if call is not None and call.module is module:
            call.reentered += 1
        return None

    def _after(self, module, args, kwargs, output):
        call = getattr(_local, "call", None)
        if call is None or call.module is not module:
            return None
        if call.reentered > 0:
            call.reentered -= 1
            return None
        # The end's stack is not read: an empty one costs the recorder nothing.
        events.module_call(begin=False, module=id(module), number=call.number,
                           call_text=_call_text(module, args, kwargs))
        _local.call = None
        for handle in call.handles:
            handle.remove()
        self._ended()
        return None

    def _ended(self):
        with self._lock:
            self._running -= 1
            self._turn_on()


def install(hooks, torch, limit):
    """Registers the global pre-hook on torch.nn.modules.module (`hooks`); returns what holds it."""
    return _GlobalHooks(hooks, torch, limit)
