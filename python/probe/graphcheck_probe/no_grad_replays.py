"""A graph captured under torch.no_grad() replayed while grad mode is on, to train what it reads: its outputs carry no
autograd history, so a backward through them gives the parameters the captured forward read no gradient, and an
optimizer that holds them never moves them, where eager code run in grad mode would train them (a linear probe's
feature graph replayed on into full fine-tuning).

Replaying a graph in grad mode is no fault by itself (a validation loop that did not turn grad mode off, a graph of
forward and backward whose gradients the optimizer steps, a frozen backbone's features replayed in a training loop):
what the probe sends is the next optimizer step after a replay in grad mode, where the graph's first replay was
without it, that holds parameters the graph read, requiring gradients, none of which has a gradient.
contract.Contract.look notes the replays (note()); torch.optim's global step pre-hook (steps.optimizer_stepping) asks
at each step (optimizer_stepping()).
"""
import sys
import weakref

from . import events, frames
from .bridge import listed

_pending = {}  # id(contract) -> (weakref to the contract, the stack of the replay in grad mode)
_first_mode = weakref.WeakKeyDictionary()  # contract -> grad mode at the first replay looked at


def note(contract, frame):
    """At a look at a replay of `contract`'s graph, from `frame`: one in grad mode after replays without it (a linear
    probe's phase under torch.no_grad(), then fine-tuning) is noted for the next optimizer step. A graph replayed in
    grad mode from the first is the program's own way (a frozen backbone's features under a training loop): eager,
    its forward ran under no_grad as well."""
    if not contract.watched or "no-grad-replay" in contract.reported or id(contract) in _pending:
        return
    torch = sys.modules.get("torch")
    if torch is None:
        return
    grad_mode = torch.is_grad_enabled()
    if _first_mode.setdefault(contract, grad_mode) or not grad_mode:
        return
    _pending[id(contract)] = (weakref.ref(contract), frames.encode_stack(frame) if frame is not None else None)


def optimizer_stepping(optimizer):
    """Before `optimizer` steps: the graphs replayed in grad mode since, whose parameters it holds that require
    gradients all have none."""
    if not _pending:
        return
    held = {id(p) for group in getattr(optimizer, "param_groups", ()) for p in group.get("params", ())}
    for key, (contract_ref, stack) in list(_pending.items()):
        contract = contract_ref()
        trained = [(e.name, p) for e in (contract.tensors if contract is not None else ()) if e.role == "parameter"
                   for p in (e.now(),) if p is not None and id(p) in held and p.requires_grad]
        if contract is not None and not trained:
            continue  # another optimizer's step (a head's before the backbone's): the graph's stays pending
        del _pending[key]
        missing = [name for name, parameter in trained if parameter.grad is None]
        if not missing or len(missing) < len(trained) or "no-grad-replay" in contract.reported:
            continue  # some have gradients: the step trains what the graph read (those without were unused)
        contract.reported.add("no-grad-replay")
        events.host_value_change(origin=contract.origin, graph=contract.graph_id,
                                 role=events.HostValueRole.GRAD_MODE, name=listed(missing), captured=0.0, now=1.0,
                                 at_change=False, frames=stack)
