"""What one of the program's captures wrote, as far as the host can tell: only memory the capture allocated, or also
memory the program held before the capture began. A graph that writes only its own memory computes nothing the
program can read once every block its capture left allocated is freed: graphcheck names the launch after that
(graph-reads-freed, from the caching allocator's history).

Every in-place op and out= bumps a tensor's version counter, also while capturing. Each tensor the program held that
the captured code could write is noted once with its counter, and compared when the capture ends:
- the capturing frame's tensors, two levels into its containers and objects, and every parameter and buffer of its
  modules, when the capture begins;
- each module's own parameters (with their .grad), buffers and tensor attributes, as its forward begins inside the
  capture;
- the tensors the program's code reached through a path (host_reads), when first reached.
A changed counter, a .grad made or replaced, an optimizer that stepped inside the capture or a module tensor replaced
there means the program's memory. So does a tensor whose counter cannot be read (an inference tensor), and running
out of room to note: no finding rests on what was not looked at.
"""
import itertools
import sys
import types
import weakref

from .events import CaptureWrites

MAX_NOTED = 50000  # tensors noted per capture
MAX_ITEMS = 64  # items of one container looked into
_NO_GRAD = object()  # the note of a tensor that is not a parameter: its .grad is not looked at


def _torch_class(*path):
    """torch.Tensor, torch.nn.Module; None where torch (or a stand-in of it) has none."""
    found = sys.modules.get("torch")
    for name in path:
        found = getattr(found, name, None)
    return found if isinstance(found, type) else None


class Writes:
    """The tensors one capture could write, each with its version counter when noted."""

    def __init__(self):
        self.noted = {}  # id(tensor) -> (weak reference, version, the .grad's (weak reference, version) or _NO_GRAD)
        self.modules = set()  # ids of modules whose tensors were noted
        self.unknown = False  # a counter unread, or too many tensors: the capture may have written anything
        self._tensor, self._module = _torch_class("Tensor"), _torch_class("nn", "Module")

    def note(self, tensor, parameter=False):
        if id(tensor) in self.noted:
            return
        if len(self.noted) >= MAX_NOTED:
            self.unknown = True
            return
        try:
            grad = _NO_GRAD
            if parameter:
                now = tensor.grad
                grad = (None, 0) if now is None else (weakref.ref(now), now._version)
            self.noted[id(tensor)] = (weakref.ref(tensor), tensor._version, grad)
        except Exception:
            self.unknown = True

    def note_module(self, module, recurse=False):
        """A module's parameters, buffers and the tensors among its attributes (`recurse`: its submodules' too)."""
        try:
            for each in (module.modules() if recurse else (module,)):
                if id(each) in self.modules or self.unknown:
                    continue
                self.modules.add(id(each))
                for tensor in (each.__dict__.get("_parameters") or {}).values():
                    if tensor is not None:
                        self.note(tensor, parameter=True)
                for name, value in list(each.__dict__.items()):
                    if name not in ("_parameters", "_modules"):
                        self.note_value(value, depth=1)
        except Exception:
            self.unknown = True

    def note_value(self, value, depth):
        """A tensor; or, `depth` levels down, the tensors in a list, tuple or dict, or among an object's attributes;
        a module's own tensors."""
        if self._tensor is not None and isinstance(value, self._tensor):
            self.note(value)
        elif self._module is not None and isinstance(value, self._module):
            self.note_module(value)
        elif depth <= 0 or isinstance(value, (str, bytes, int, float, types.ModuleType)):
            return
        else:
            if type(value) in (list, tuple):
                items = value
            elif isinstance(value, dict):
                items = value.values()
            else:
                attributes = getattr(value, "__dict__", None)  # a class's is a mappingproxy, left alone
                items = attributes.values() if type(attributes) is dict else ()
            for item in itertools.islice(items, MAX_ITEMS):
                self.note_value(item, depth - 1)

    def note_frame(self, variables):
        """The capturing frame's variables (frames.local_values): its modules whole."""
        try:
            for value in variables.values():
                if self._module is not None and isinstance(value, self._module):
                    self.note_module(value, recurse=True)
                else:
                    self.note_value(value, depth=2)
        except Exception:
            self.unknown = True

    def written(self):
        """Whether a noted tensor, or a noted parameter's .grad, changed since it was noted."""
        for ref, version, grad in self.noted.values():
            tensor = ref()
            if tensor is None:
                continue  # dropped inside the capture: the program no longer holds it
            try:
                if tensor._version != version:
                    return True
                if grad is not _NO_GRAD:
                    now, (grad_ref, grad_version) = tensor.grad, grad
                    if (now is not (grad_ref() if grad_ref is not None else None) or
                            (now is not None and now._version != grad_version)):
                        return True
            except Exception:
                return True
        return False

    def result(self, stepped, replaced):
        """A CaptureWrites, at the capture's end. `stepped`: optimizers that stepped inside it;
        `replaced`: module tensors its code replaced."""
        if self.unknown or stepped or replaced or self.written():
            return CaptureWrites.PROGRAM_MEMORY
        return CaptureWrites.OWN_MEMORY
