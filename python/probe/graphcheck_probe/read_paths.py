"""How a value the captured code read is found again at a graph's replays (host_reads.py observes the reads): the
path's root (a module's globals, a closure's cell, an argument's object, a contextvars.ContextVar, torch's grad mode),
its steps through plain storage only (instance and class dictionaries, dicts, lists, a weakref's referent, an entry
by a key that is another path's value, a property whose getter only returns a path; no other property, nor a
__getattr__ or __getitem__ of the program's, runs, but an Enum member's own value and name are read), how the value is
read out at the end (a numpy value, a function's defaults, a partial's numbers, a number kept as text, a 0-d tensor in
host memory), and the read itself (Read): its name, its value at capture, and the stores that can change it.
"""
import collections
import enum
import functools
import itertools
import os
import sys
import types
import weakref

from . import code_paths

MAX_ENTRIES = 64  # numbers of one list or tuple the code loaded, compared at replays


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, type)


_SEQUENCES = (list, tuple, collections.deque)


def entries(value):
    """The numbers of a plain list, tuple or deque, as ((index, number), ...), at most MAX_ENTRIES; None when it
    holds none."""
    if type(value) not in _SEQUENCES:
        return None
    return tuple(itertools.islice(((key, entry) for key, entry in enumerate(value) if is_number(entry)),
                                  MAX_ENTRIES)) or None


# An entry's own list's number (`history['regress'][1]`), told apart from a dict key that is a tuple.
Nested = collections.namedtuple("Nested", "key index")


def all_entries(value):
    """The numbers of every entry of a dict, list, tuple or deque, an entry's own list, tuple or deque read through
    (`history[task]`, each task's deque of recent losses), as ((key, number) or (Nested(key, index), number), ...), at
    most MAX_ENTRIES; None when it holds none."""
    if type(value) is dict:
        items = value.items()
    elif type(value) in _SEQUENCES:
        items = enumerate(value)
    else:
        return None

    def numbers():
        for key, entry in items:
            if is_number(entry):
                yield key, entry
            elif type(entry) in _SEQUENCES:
                yield from ((Nested(key, index), number) for index, number in entries(entry) or ())

    try:
        return tuple(itertools.islice(numbers(), MAX_ENTRIES)) or None
    except RuntimeError:  # changed size while read (another thread)
        return None


def object_attributes(value, parts):
    """The attributes of a plain object (a SimpleNamespace, a dataclass, the program's own config class) whose names
    hold one of `parts`, the strings of a name the code computes for getattr (`term + "_weight"`); None for a class,
    a Python module (`getattr(F, activation)`), an nn.Module (its numbers have watches of their own) or anything
    else."""
    torch = sys.modules.get("torch")
    if isinstance(value, (type, types.ModuleType)) or (torch is not None and isinstance(value, torch.nn.Module)):
        return None
    try:
        held = vars(value)
    except TypeError:
        return None
    if type(held) is not dict:
        return None
    return {name: entry for name, entry in held.items() if type(name) is str and any(p in name for p in parts)}


def text_number(value):
    """The number a string holds (`float(os.environ["NOISE_STD"])` read "0.1"); None for anything else."""
    if type(value) is not str or len(value) > 64:
        return None
    try:
        return float(value)
    except ValueError:
        return None


def partial_numbers(value):
    """The numbers a functools.partial passes, as ((keyword or index, number), ...): `criterion =
    functools.partial(F.smooth_l1_loss, beta=2.0)`, then `criterion.keywords["beta"] = 0.25`; None when none."""
    if type(value) is not functools.partial:
        return None
    numbers = [(key, entry) for key, entry in sorted(value.keywords.items()) if is_number(entry)]
    numbers.extend((index, entry) for index, entry in enumerate(value.args) if is_number(entry))
    return tuple(numbers[:MAX_ENTRIES]) or None


def numpy_plain(value):
    """The Python number or list a numpy scalar or small array holds (`LR = numpy.array(0.1)`, then `LR.fill(...)`
    between replays); None for anything else. Reading it runs numpy's code, never the program's."""
    if type(value).__module__ != "numpy" or not hasattr(value, "tolist"):
        return None
    try:
        if getattr(value, "size", 1) > MAX_ENTRIES or getattr(value, "ndim", 0) > 1:
            return None
        plain = value.tolist()
    except Exception:
        return None
    return plain if is_number(plain) or type(plain) is list else None


def cpu_scalar(value):
    """The number a 0-d tensor in host memory holds: a CUDA kernel takes it as an argument at launch, so a graph
    replays the value it had at capture (`weight = torch.tensor(0.8)`, then `weight.fill_(...)` between replays); None
    for anything else (a device tensor's would be a synchronizing read)."""
    if not is_tensor(value) or value.device.type != "cpu" or value.dim() != 0:
        return None
    number = value.item()
    return number if is_number(number) else None


def context_value(variable):
    """What a contextvars.ContextVar holds in the current context (its own default when unset); None when nothing."""
    try:
        return variable.get()
    except LookupError:
        return None


def role_of(kind, steps):
    """A read's role (events.HostValueRole's value) by its root's kind and the steps to where it lives."""
    named = where_steps(steps)
    if not named:
        return {"global": "global", "cell": "closure", "local": "attribute"}[kind]
    return "entry" if named[-1][0] in ("item", "each", "values", "key") else "attribute"


_MISSING = object()
MAX_GETTERS = 4  # properties followed within one another
_getter_depth = [0]


def where_steps(steps):
    """The steps that lead to where a value lives, without a last step that reads it out (a numpy value, a function's
    defaults)."""
    return steps[:-1] if steps and steps[-1][0] in ("numpy", "defaults", "partial", "text", "scalar", "len") else steps


def plain_attribute(value, key):
    """`value.key` through plain storage: the instance's dictionary, else the dictionaries of its class and bases (a
    class attribute read through `self`, or of a class itself), never a descriptor (property, method) that would run
    code; None when it is in none."""
    if isinstance(value, enum.Enum) and key in ("value", "name"):
        return vars(value).get("_%s_" % key)  # what Enum's own value and name properties return
    try:
        held = vars(value)
    except TypeError:
        held = None
    if isinstance(held, (dict, types.MappingProxyType)) and key in held:
        return held[key]
    classes = value.__mro__[1:] if isinstance(value, type) else type(value).__mro__
    for cls in classes:
        found = cls.__dict__.get(key, _MISSING)
        if found is _MISSING:
            continue
        if type(found) is property and not isinstance(value, type) and _getter_depth[0] < MAX_GETTERS:
            # A property of the program's that only returns a path from its object (`return self._trainer_ref()`):
            # that path, followed as any other
            steps = code_paths.getter_steps(getattr(found.fget, "__code__", None)) if found.fget else None
            if steps is not None:
                _getter_depth[0] += 1
                try:
                    return follow(value, steps)
                finally:
                    _getter_depth[0] -= 1
        return None if hasattr(type(found), "__get__") else found
    return None


def follow_step(value, step):
    """One step of a path through plain storage only (instance and class dictionaries, dicts, lists); None when it
    would run the program's code. ("each", None) stands for the numbers of a list, compared as one value, ("values",
    key name) for the numbers of all a container's entries, ("attrs", name parts) for an object's named so, ("len",
    None) for a container's length; ("deref", None) for a
    weakref's referent, ("key", KeyPath) for the entry its path's value names now; ("numpy", None) for what a numpy
    scalar or array holds."""
    kind, key = step
    if kind == "each":
        return entries(value)
    if kind == "values":
        return all_entries(value)
    if kind == "attrs":
        return all_entries(object_attributes(value, key))
    if kind == "len":
        return len(value) if type(value) in _SEQUENCES or type(value) is dict else None
    if kind == "deref":  # a weakref's referent: calling one (not a subclass's) runs no code of the program's
        return value() if type(value) is weakref.ref else None
    if kind == "key":
        key = key.value()
        if type(value) is dict and isinstance(key, (str, int, enum.Enum)):
            return value.get(key)
        if type(value) in (list, tuple) and type(key) is int and -len(value) <= key < len(value):
            return value[key]
        return None
    if kind == "numpy":
        return numpy_plain(value)
    if kind == "defaults":
        return entries(value.__defaults__ or ()) if type(value) is types.FunctionType else None
    if kind == "partial":
        return partial_numbers(value)
    if kind == "text":
        return text_number(value)
    if kind == "scalar":
        return cpu_scalar(value)
    if kind == "item":
        if type(value) is dict or (value is os.environ and type(key) is str):
            return value.get(key)
        if type(value) in (list, tuple) and isinstance(key, int) and -len(value) <= key < len(value):
            return value[key]
        return None
    return plain_attribute(value, key)


def follow(value, steps):
    for step in steps:
        if value is None or (isinstance(value, (int, float, str, bytes)) and step[0] != "text"):
            return None
        value = follow_step(value, step)
    return value


def is_tensor(value):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def is_value(value):
    """A number, or the numbers of a list (entries)."""
    return is_number(value) or type(value) is tuple


def path_label(root, steps):
    text = root
    for kind, key in steps:
        text += ".%s" % key if kind == "attr" else "[%r]" % (key,) if kind == "item" else ""
        text += "[%s]" % key if kind == "values" else "[%s]" % key.label() if kind == "key" else ""
        text += "()" if kind == "deref" else ""
        text = "len(%s)" % text if kind == "len" else text
    return text


class Root:
    """How to find a path's variable again: a module's globals, a closure's cell, an argument's object (weakly where it
    can be), a ContextVar, or torch's grad mode."""

    __slots__ = ("kind", "holder", "name")

    def __init__(self, kind, holder, name):
        self.kind, self.holder, self.name = kind, holder, name

    def value(self):
        if self.kind == "grad-mode":
            return sys.modules["torch"].is_grad_enabled()
        if self.kind == "context":  # a contextvars.ContextVar, read in the replaying thread's context
            return context_value(self.holder)
        if self.kind == "global":
            return self.holder.get(self.name)
        if self.kind == "cell":
            return self.holder.value()
        return self.holder() if isinstance(self.holder, weakref.ref) else self.holder


def stores_of(root, steps):
    """(opnames, name) of the instructions that can change the value a path reads: the variable stored, or its last
    attribute or item set, or for an entry by another path's value (`RECIPE[trainer.stage]`) that path's store, which
    moves the read on to another entry."""
    if root.kind == "grad-mode":
        return {"LOAD_ATTR", "LOAD_METHOD"}, "set_grad_enabled"
    if root.kind == "context":
        return {"LOAD_ATTR", "LOAD_METHOD"}, "set"
    steps = where_steps(steps)
    keys = [key for kind, key in steps if kind == "key"]
    if keys:
        return stores_of(keys[-1].root, keys[-1].steps)
    if not steps:
        return ({"STORE_GLOBAL", "STORE_NAME"} if root.kind == "global" else {"STORE_DEREF"}), root.name
    kind, key = steps[-1]
    return ({"STORE_ATTR"}, key) if kind == "attr" else ({"STORE_SUBSCR"}, key)


class KeyPath:
    """A subscript's key that is another path's value (`RECIPE[trainer.stage]`), followed again at each replay; equal
    to another that follows the same steps from the same root."""

    __slots__ = ("root", "steps")

    def __init__(self, root, steps):
        self.root, self.steps = root, steps

    def value(self):
        return follow(self.root.value(), self.steps)

    def label(self):
        return path_label(self.root.name, self.steps)

    def _identity(self):
        return self.root.kind, id(self.root.holder), self.root.name, self.steps

    def __eq__(self, other):
        return isinstance(other, KeyPath) and self._identity() == other._identity()

    def __hash__(self):
        return hash(self._identity())


class ClosureSlot:
    """A closure's variable, found again through the function, held weakly: holding its cell would keep what the
    variable holds alive (a tensor the program drops, which the graph then reads freed)."""

    __slots__ = ("function", "index")

    def __init__(self, function, index):
        self.function, self.index = weakref.ref(function), index

    def value(self):
        function = self.function()
        try:
            return function.__closure__[self.index].cell_contents if function is not None else None
        except (ValueError, TypeError, IndexError):
            return None


class Read:
    """A number the captured code read: where it lives, its name, its value at capture, and the (code, offset) of
    the instructions that load it."""

    __slots__ = ("root", "steps", "role", "label", "where", "captured", "sites")

    def __init__(self, root, steps, role, label, where, captured):
        self.root, self.steps, self.role, self.label, self.where, self.captured = (root, steps, role, label, where,
                                                                                    captured)
        self.sites = set()

    def now(self):
        value = follow(self.root.value(), self.steps)
        return value if is_value(value) else None

    def tensor_now(self):
        """For a tensor read: the tensor the path holds now, None when it holds none."""
        value = follow(self.root.value(), self.steps)
        return value if is_tensor(value) else None

    def change(self, now):
        """(label, number at capture, number now, (opnames, name) of the stores that can make it) of what differs
        in `now`: for a container, its first entry that changed (or appeared or went)."""
        if type(self.captured) is not tuple:
            return (self.label, float(self.captured), float(now)) + (self.stores(),)
        before, after = dict(self.captured), dict(now)
        changed = next(key for key in list(before) + list(after) if before.get(key) != after.get(key))
        nan = float("nan")
        numbers = float(before.get(changed, nan)), float(after.get(changed, nan))
        if self.steps[-1][0] == "defaults":  # the function was replaced: its default `changed` differs
            return ("%s (default %s)" % (self.label, self._default_name(changed)),) + numbers + (self.stores(),)
        if self.steps[-1][0] == "partial":
            place = "keywords[%r]" % changed if isinstance(changed, str) else "args[%d]" % changed
            return ("%s.%s" % (self.label, place),) + numbers + (({"STORE_SUBSCR"}, changed),)
        if self.steps[-1][0] in ("values", "attrs"):  # `history[task]`, `getattr(weights, ...)`: the entry
            key, index = changed if type(changed) is Nested else (changed, None)  # that changed, by its own key
            label = path_label(self.root.name, self.steps[:-1])
            label += ("[%r]" if self.steps[-1][0] == "values" else ".%s") % (key,)
            label += "[%d]" % index if index is not None else ""
            stores = {"STORE_SUBSCR"} if self.steps[-1][0] == "values" else {"STORE_ATTR", "STORE_SUBSCR"}
            return (label,) + numbers + ((stores, key),)
        return ("%s[%r]" % (self.label, changed),) + numbers + (({"STORE_SUBSCR"}, changed),)

    def _default_name(self, index):
        """The name of the parameter whose default is the function's `index`-th."""
        function = follow(self.root.value(), self.steps[:-1])
        try:
            code = function.__code__
            return code.co_varnames[code.co_argcount - len(function.__defaults__) + index]
        except Exception:
            return "default %d" % index

    def holder_class(self):
        """The class whose methods may set the attribute the path ends on (the holding object's, or the holder itself
        when it is a class); None when the path does not end on an attribute."""
        steps = where_steps(self.steps)
        if not steps or steps[-1][0] != "attr":
            return None
        holder = follow(self.root.value(), steps[:-1]) if len(steps) > 1 else self.root.value()
        return holder if isinstance(holder, type) else type(holder) if holder is not None else None

    def attribute_holders(self):
        """(object, attribute name) of each attribute step on the path to where the value lives, outermost first,
        as far as the path can be followed now."""
        holders, value = [], self.root.value()
        for step in where_steps(self.steps):
            if value is None:
                break
            if step[0] == "attr":
                holders.append((value, step[1]))
            value = follow_step(value, step)
        return holders

    def cell(self):
        """The closure cell the value lives in, when it is a closure's variable itself; None otherwise."""
        slot = self.root.holder if self.root.kind == "cell" and not where_steps(self.steps) else None
        function = slot.function() if slot is not None else None
        try:
            return function.__closure__[slot.index] if function is not None else None
        except (TypeError, IndexError):
            return None

    def container(self):
        """The variable or attribute whose entries a container read reads (what its slice stores name); None for
        an entry reached by a constant key."""
        steps = [step for step in where_steps(self.steps) if step[0] not in ("each", "values", "attrs")]
        return self.root.name if not steps else steps[-1][1] if steps[-1][0] == "attr" else None

    def stores(self):
        """(opnames, name) of the instructions that can change it (stores_of)."""
        return stores_of(self.root, self.steps)
