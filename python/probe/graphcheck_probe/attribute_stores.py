"""Stores to the attributes a live graph's host values are read through, seen as they happen: for each (object,
attribute) on the path of a number a capture read (`self.epoch`, `normalizer.stats[0]`, `self.cfg.scale`) whose
object is an instance of one of the program's own classes, the class gets a __setattr__ that keeps the stack of the
last store that gave the attribute another value. A change made anywhere (one of two branches of a method, a callback
the loop calls, a closure that is not on the stack at the replay) is then named at its line; contract.py falls back to
finding a store after the fact (frames.change_site) only where none was seen. Modules are not hooked here:
Module.__setattr__ is hooked already (patches.py), and torch's and libraries' classes are left alone."""
import sys

from . import frames

_MAX_WATCHED = 4096  # (object, attribute) pairs watched, over every live graph
_watched = {}  # (id(object), attribute) -> the stack of the last store that changed it; None before one
_hooked = set()  # ids of the classes whose __setattr__ is ours (classes live as long as their programs)
_missing = object()


def _program_class(cls):
    module = sys.modules.get(getattr(cls, "__module__", None))
    path = getattr(module, "__file__", None) or ""
    torch = sys.modules.get("torch")
    module_class = getattr(getattr(torch, "nn", None), "Module", None)
    return frames.is_program_file(path) and not (module_class is not None and issubclass(cls, module_class))


def _differs(before, value):
    if before is _missing or before is value:
        return before is _missing
    try:
        return bool(before != value)
    except Exception:  # an array's comparison has no single truth
        return True


def _hook(cls):
    if id(cls) in _hooked:
        return
    original = cls.__setattr__

    def __setattr__(self, name, value):
        key = (id(self), name)
        if key in _watched:
            try:
                before = vars(self).get(name, _missing)
            except TypeError:  # __slots__
                before = getattr(self, name, _missing)
            if _differs(before, value):
                _watched[key] = frames.encode_stack(sys._getframe(1))
        original(self, name, value)

    __setattr__.__wrapped__ = original
    try:
        cls.__setattr__ = __setattr__
        _hooked.add(id(cls))
    except (TypeError, AttributeError):  # a class that takes no attribute (a C type reached by subclassing)
        pass


def watch(read):
    """Watches the attributes on `read`'s path (read_paths.Read) from now on."""
    for holder, attribute in read.attribute_holders():
        cls = type(holder)
        if isinstance(holder, type) or not _program_class(cls) or len(_watched) >= _MAX_WATCHED:
            continue
        _hook(cls)
        _watched.setdefault((id(holder), attribute), None)


def store_stack(read):
    """The stack of the last store seen that changed an attribute on `read`'s path, the innermost attribute first;
    None when none was seen."""
    for holder, attribute in reversed(read.attribute_holders()):
        stack = _watched.get((id(holder), attribute))
        if stack:
            return stack
    return None
