"""Every event the probe sends, one function per kind with named arguments: the probe's side of the typed records of
trace/probe_records.h, whose structs carry the same names. The trace format sends each kind in the same six raw
fields (graph, pool, value, value_now, type, text); which argument goes into which field is decided here and nowhere
else (no other module calls bridge.recorder.emit). The role enums' values are the names probe_records.cc decodes;
tests/capture/probe_abi_test.py holds the two sides to each other.

`frames`, where a function takes it: explicit frames as frames.exception_frames() or frames.encode_stack() give them,
None for the calling thread's Python stack (taken by the recorder), "" for none.
"""
import enum

from . import bridge
from .bridge import EventKind, Origin


class TensorRole(str, enum.Enum):
    """trace::TensorRole: a tensor a graph reads."""

    PARAMETER = "parameter"
    BUFFER = "buffer"
    STATIC_INPUT = "static-input"
    OPTIMIZER_STATE = "optimizer-state"


class HostValueRole(str, enum.Enum):
    """trace::HostValueRole: what a host value a graph baked in is."""

    OPTIMIZER_HYPERPARAMETER = "optimizer-hyperparameter"
    MODULE_ATTRIBUTE = "module-attribute"
    GRAD = "grad"
    GLOBAL = "global"
    CLOSURE = "closure"
    ATTRIBUTE = "attribute"
    ENTRY = "entry"
    REQUIRES_GRAD = "requires-grad"
    GRAD_MODE = "grad-mode"
    AUTOCAST = "autocast"
    OPTIMIZER_PARAM_GROUPS = "optimizer-param-groups"


class ShapeChangeHandling(str, enum.Enum):
    """trace::ShapeChangeHandling: how a graphed callable took an input of another shape or dtype."""

    RAISED = "raised"
    BROADCAST = "broadcast"
    CONVERTED = "converted"


class DrawSource(str, enum.Enum):
    """trace::DrawSource: where a host draw inside a capture came from."""

    PYTHON_RANDOM = "python-random"
    NUMPY = "numpy"
    TORCH_CPU = "torch-cpu"
    CLOCK = "clock"
    OS_URANDOM = "os-urandom"
    ITERATOR = "iterator"


class MadeStateRole(str, enum.Enum):
    """trace::MadeStateRole: state kept across steps that a capture made."""

    PARAMETER = "parameter"
    BUFFER = "buffer"
    OPTIMIZER_STATE = "optimizer-state"


class StepAnchor(str, enum.Enum):
    """trace::StepAnchor: the call at which a pass of the program's loop was marked."""

    OPTIMIZER_STEP = "optimizer-step"
    REPLAY = "replay"  # a graph replay, before any optimizer step


def _send(kind, **fields):
    bridge.recorder.emit(kind, **fields)


def capture_begin(*, origin, graph, error_mode, compiled_function=0, megatron_layer=0, megatron_part=None):
    """`compiled_function`: cudagraph trees' function id; `megatron_layer`, `megatron_part`: which of Megatron's
    graphs ("forward", "training", ...)."""
    _send(EventKind.CAPTURE_BEGIN, origin=origin, graph=graph, value=compiled_function or megatron_layer,
          type_name=str(error_mode), text=megatron_part)


def capture_end(*, graph, pool, allocated_at_end, allocated_at_begin):
    _send(EventKind.CAPTURE_END, graph=graph, pool=pool, value=allocated_at_end, value_now=allocated_at_begin)


def exception(*, in_capture, graph, type, message, frames):
    _send(EventKind.CAPTURE_EXCEPTION if in_capture else EventKind.UNCAUGHT_EXCEPTION, graph=graph, type_name=type,
          text=message, frames=frames)


def compile_skip(*, reason):
    _send(EventKind.COMPILE_SKIP, text=reason)


def outputs_invalidated(*, held):
    _send(EventKind.OUTPUTS_INVALIDATED, value=held)


def state_rebound(*, origin, graph, role, name, address_at_capture, address_now=0, freed=False, frames=None):
    """`frames`: the line that rebound it, when known; else the replay's."""
    _send(EventKind.STATE_REBOUND, origin=origin, graph=graph, pool=int(freed), value=address_at_capture,
          value_now=address_now, type_name=TensorRole(role).value, text=name, frames=frames)


def outputs_held(*, origin, graph, name, references_added, overwritten_by=0, address=0, frames=None):
    """`overwritten_by`: an earlier graph of the same pool whose replay the output `name` holds (at `address`) is read
    across (pool_order.py)."""
    _send(EventKind.OUTPUTS_HELD, origin=origin, graph=graph, value=references_added, text=name, pool=overwritten_by,
          value_now=address, frames=frames)


def ddp_constructed(*, module, on_default_stream):
    _send(EventKind.DDP_CONSTRUCTED, graph=module, value=int(on_default_stream),
          text="the default stream" if on_default_stream else "a side stream")


def ddp_captured_forward(*, module, forwards, rebuilt_buckets, static_graph):
    _send(EventKind.DDP_CAPTURED_FORWARD, graph=module, value=forwards, value_now=int(rebuilt_buckets),
          text="static_graph" if static_graph else None)


def host_value_change(*, origin=Origin.UNKNOWN, graph, role, name, captured, now, at_change, read_at=None,
                      frames=None):
    """`captured`, `now`: numbers, or for HostValueRole.GRAD the .grad's addresses (0: None)."""
    role = HostValueRole(role)
    if role is HostValueRole.GRAD:
        value, value_now = captured, now
    else:
        value, value_now = bridge.double_bits(captured), bridge.double_bits(now)
    _send(EventKind.HOST_VALUE_CHANGED, origin=origin, graph=graph, pool=int(bool(at_change)), value=value,
          value_now=value_now, type_name=role.value, text=name if read_at is None else "%s\n%s" % (name, read_at),
          frames=frames)


def input_shape_change(*, graph, input, handling, description, error=None):
    """`input`: the input's index, None for another number of inputs."""
    _send(EventKind.INPUT_SHAPE_CHANGED, origin=Origin.GRAPHED_CALLABLES, graph=graph,
          value=0xFFFFFFFF if input is None else input & 0xFFFFFFFF, type_name=ShapeChangeHandling(handling).value,
          text=description if error is None else "%s\n%s" % (description, error))


def audit(*, begin, graph):
    _send(EventKind.AUDIT_BEGIN if begin else EventKind.AUDIT_END, graph=graph)


def shadow_skipped(*, graph, call, reason):
    _send(EventKind.SHADOW_SKIPPED, graph=graph, type_name=call, text=reason)


def wait(*, begin, what):
    _send(EventKind.WAIT_BEGIN if begin else EventKind.WAIT_END, text=what)


def graph_alive(*, graph):
    _send(EventKind.GRAPH_ALIVE, graph=graph)


def megatron_graph_recorded(*, layer):
    _send(EventKind.MEGATRON_GRAPH_RECORDED, value=layer)


class CaptureWrites(str, enum.Enum):
    """trace::CaptureWrites: what one of the program's captures wrote."""

    OWN_MEMORY = "own-memory"
    PROGRAM_MEMORY = "program-memory"


def graph_tensors(*, origin, graph, pool, host_values, modules, tensors, writes=None):
    """`writes`: a CaptureWrites for the program's own captures, None when not known."""
    _send(EventKind.GRAPH_TENSORS, origin=origin, graph=graph, pool=pool, value=host_values, value_now=modules,
          type_name=None if writes is None else CaptureWrites(writes).value, text=tensors,
          text_limit=bridge.MAX_TENSOR_LIST)


def training_mode_change(*, origin, graph, captured_training, modules, names, frames=None):
    """`frames`: the Module.train()/eval() call that changed the mode, where it was seen; else the replay's stack."""
    _send(EventKind.TRAINING_MODE_CHANGED, origin=origin, graph=graph, value=int(captured_training), value_now=modules,
          text=names, frames=frames)


def host_random_draw(*, graph, source, call, frames=None):
    _send(EventKind.HOST_RANDOM_DRAW, graph=graph, type_name=DrawSource(source).value, text=call, frames=frames)


def grad_aliased(*, module, count, first_address, names, frames=None, origin=Origin.GRAPHED_CALLABLES):
    """`module`: the graphed module's id; for the program's own capture (`origin` USER), its graph's."""
    _send(EventKind.GRAD_ALIASED, origin=origin, graph=module, value=count, value_now=first_address, text=names,
          frames=frames)


def tensor_released(*, graph, role, name, address):
    _send(EventKind.TENSOR_RELEASED, graph=graph, type_name=TensorRole(role).value, text=name, value=address)


def module_call(*, begin, module, number, call_text=None, hooked_calls=0, hook_ns_each=0):
    """The begin carries the program's stack; the end the call's text and what the probe's hooks cost (no stack)."""
    if begin:
        _send(EventKind.MODULE_CALL_BEGIN, graph=module, value=number)
    else:
        _send(EventKind.MODULE_CALL_END, graph=module, value=number, pool=hooked_calls, value_now=hook_ns_each,
              text=call_text, frames="")


def backward(*, begin, number):
    _send(EventKind.BACKWARD_BEGIN if begin else EventKind.BACKWARD_END, value=number)


def program_step(*, phase, loop, anchor):
    """A pass of the program's loop begins (steps.py); `loop` says where the loop is ("train.py:30 in main")."""
    _send(EventKind.PROGRAM_STEP, value=phase, type_name=StepAnchor(anchor).value, text=loop, frames="")


def state_made_in_capture(*, origin, graph, role, names, address_now, address_before=0, bytes=0, tensors=0,
                          frames=None):
    """For parameters and buffers `address_before` and `bytes`; for optimizer state `tensors`, how many."""
    role = MadeStateRole(role)
    _send(EventKind.STATE_MADE_IN_CAPTURE, origin=origin, graph=graph, type_name=role.value, text=names,
          value=address_before, value_now=address_now,
          pool=tensors if role is MadeStateRole.OPTIMIZER_STATE else bytes, frames=frames)
