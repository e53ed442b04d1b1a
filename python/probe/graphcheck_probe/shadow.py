"""`graphcheck run --shadow N` (GRAPHCHECK_SHADOW=N): graphs against the eager code they were captured from.

- Modules graphed by make_graphed_callables: on each module's first N graphed calls, the module's own eager forward
  runs twice on the same input, and each output is compared with the graphed call's; in training, the call's backward
  is compared too (shadow_grads.py: the gradients the backward graph returns, and what it accumulates into .grad).
- The program's own captures (`with torch.cuda.graph(g): ...`): on the graph's first N replays, the capture's body
  (from the program's source, run in a copy of the capturing frame's variables as they were when the capture ended)
  runs eagerly twice from the state the replay starts from; every tensor it writes in place (parameters, optimizer
  state, buffers) is kept before its first write, and so are the gradients; the state is put back, the replay runs,
  and every written tensor, gradient and output is compared. A body that returns, yields or jumps out of the block, or
  a process with a process group (its body may issue collectives that one process cannot repeat alone), is reported
  as not compared, with the reason.

Before each eager run every random source the program can draw from is put back to where the graph started: the
current device's CUDA generator (a graph draws from it at the offsets eager would), the CPU generator, Python's
`random` and numpy's global state. Each comparison names the sources the eager run drew from: a draw on the host is
one the capture froze (rng-frozen-mask). Where the graph and its eager code advance the CUDA generator by different
amounts, their draws cannot match, and the comparison is sent as not comparable. The probe's own eager work is marked (AUDIT_BEGIN / AUDIT_END) so that the
analysis leaves it out of the program's steps. Each comparison is reduced on the GPU to the figures of a numerics
sample, which graphcheck's numerics rule judges.
"""
import ast
import linecache
import random as python_random
import sys
import time

from . import bridge, events, frames, shadow_grads, watches
from .bridge import ShadowRecord, ShadowSubject

_MAX_OUTPUTS = 64  # outputs of one module call compared
_MAX_COMPARISONS = 512  # tensors of one shadowed replay compared


class RandomState:
    """The random sources a forward can draw from that can be put back."""

    def __init__(self, torch):
        self.generator = torch.cuda.default_generators[torch.cuda.current_device()]
        self.cuda = self.generator.get_state()
        self.cpu = torch.get_rng_state()
        self.python = python_random.getstate()
        numpy = sys.modules.get("numpy")
        self.numpy = numpy.random.get_state() if numpy is not None else None

    def restore(self, torch, cuda=None):
        self.generator.set_state(self.cuda if cuda is None else cuda)
        torch.set_rng_state(self.cpu)
        python_random.setstate(self.python)
        if self.numpy is not None:
            sys.modules["numpy"].random.set_state(self.numpy)

    def drawn(self, torch):
        """The sources whose state moved since this was taken."""
        sources = set()
        if not torch.equal(self.generator.get_state(), self.cuda):
            sources.add("cuda")
        if not torch.equal(torch.get_rng_state(), self.cpu):
            sources.add("cpu")
        if python_random.getstate() != self.python:
            sources.add("python-random")
        numpy = sys.modules.get("numpy")
        if numpy is not None:
            now = numpy.random.get_state()
            if self.numpy is None or now[2] != self.numpy[2] or not numpy.array_equal(now[1], self.numpy[1]):
                sources.add("numpy")
        return sources


def _named_tensors(value, name, out):
    """The tensors in what a call returned, by place: "output", "output 0", "output 1.logits"."""
    if len(out) >= _MAX_OUTPUTS:
        return out
    if hasattr(value, "is_floating_point") and hasattr(value, "shape"):
        out.append((name, value))
    elif isinstance(value, dict):
        for key, item in value.items():
            _named_tensors(item, "%s.%s" % (name, key), out)
    elif isinstance(value, (tuple, list)):
        for index, item in enumerate(value):
            _named_tensors(item, "%s %d" % (name, index) if name == "output" else "%s.%d" % (name, index), out)
    return out


def _precision(torch, dtype):
    """The math a tensor of `dtype` was computed in: autocast's dtype, TF32 for float32 where PyTorch allows it."""
    if torch.is_autocast_enabled("cuda") and dtype in (torch.float16, torch.bfloat16, torch.float32):
        return str(torch.get_autocast_dtype("cuda")).replace("torch.", "")
    name = str(dtype).replace("torch.", "")
    if name == "float32" and (torch.backends.cuda.matmul.allow_tf32 or torch.backends.cudnn.allow_tf32):
        return "tf32"
    return name


def _compare(torch, graphed, eager, repeat):
    """The figures of a numerics sample (core/numerics_sample.h) for one tensor: numel, the largest |graphed - eager|
    over elements finite in both, its flat index, the two values there, the largest finite |eager|, the largest
    |repeat - eager| and the non-finite counts; one synchronization."""
    wide = torch.float64 if graphed.dtype == torch.float64 else torch.float32
    g, e, r = (t.detach().to(wide).flatten() for t in (graphed, eager, repeat))
    zero = torch.zeros((), dtype=wide, device=g.device)
    e_finite, g_finite = torch.isfinite(e), torch.isfinite(g)
    difference = torch.where(e_finite & g_finite, (g - e).abs(), zero)
    worst = difference.argmax()
    spread = torch.where(e_finite & torch.isfinite(r), (r - e).abs(), zero).max()
    scale = torch.where(e_finite, e.abs(), zero).max()
    figures = torch.stack([difference[worst], worst.to(wide), e[worst], g[worst], scale, spread,
                           (~e_finite).sum().to(wide), (~g_finite).sum().to(wide)]).tolist()
    error, index, eager_at, graphed_at, scale, spread, eager_bad, graphed_bad = figures
    return dict(numel=g.numel(), max_abs_error=error, worst_index=int(index), eager_at_worst=eager_at,
                graphed_at_worst=graphed_at, eager_abs_max=scale, eager_spread=spread,
                eager_nonfinite=int(eager_bad), graphed_nonfinite=int(graphed_bad))


def _comparable(torch, graphed, eager, repeat):
    return (eager is not None and repeat is not None and isinstance(graphed, torch.Tensor)
            and graphed.shape == eager.shape == repeat.shape and graphed.numel() > 0
            and not graphed.is_complex() and graphed.dtype != torch.bool)


def _send(subject, owner, owner_type, call, name, tensor, figures, draws, shadow_ns, torch, stack=None,
          precision=None):
    """One comparison; `figures` None: not comparable (the graph and its eager code drew differently). `stack`: the
    encoded frames to name (None: the calling thread's); `precision`: the math it was computed in, when not the one
    in effect now."""
    random = figures is None
    if random:
        figures = dict(numel=tensor.numel(), worst_index=-1, eager_spread=-1.0)
    record = ShadowRecord(call=call, module=owner, module_type=bridge.utf8(owner_type), name=bridge.utf8(name),
                          dtype=bridge.utf8(str(tensor.dtype).replace("torch.", "")),
                          precision=bridge.utf8(precision or _precision(torch, tensor.dtype)),
                          draws=bridge.utf8(",".join(sorted(draws))), random=int(random), subject=int(subject),
                          shadow_ns=shadow_ns, frames=bridge.utf8(stack, bridge.MAX_TENSOR_LIST), **figures)
    bridge.recorder.shadow(record)


def _draws_differ(torch, drawn, graph_generator, eager_generator):
    """Whether the graph and its eager code advanced the CUDA generator by different amounts: their random numbers
    cannot match (a kernel that draws otherwise under capture), so their values are not comparable."""
    return "cuda" in drawn and eager_generator is not None and not torch.equal(graph_generator, eager_generator)


# --- the program's captures: the code a capture's body ran ---------------------------------------------------

_trees = {}  # file -> its parsed module (None when it does not parse)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _leaves_the_block(node, in_loop=False):
    """Whether a statement of a with-body returns, yields, awaits or jumps out of it (so it cannot run on its own);
    nested functions and loops keep their own."""
    if isinstance(node, _SCOPES):
        return False
    if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Nonlocal, ast.Global)):
        return True
    if isinstance(node, (ast.Break, ast.Continue)) and not in_loop:
        return True
    loop = in_loop or isinstance(node, (ast.For, ast.AsyncFor, ast.While))
    return any(_leaves_the_block(child, loop) for child in ast.iter_child_nodes(node))


def _with_statement(path, line):
    tree = _trees.get(path)
    if path not in _trees:
        try:
            tree = ast.parse("".join(linecache.getlines(path)), path)
        except (SyntaxError, ValueError):
            tree = None
        _trees[path] = tree
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)) and node.lineno <= line and (
                line < node.body[0].lineno or line == node.lineno):
            return node
    return None


def _stored_names(statements):
    """The names a block assigns at its own level and below, in order: its outputs."""
    names = []
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in names:
                names.append(node.id)
    return names


class Region:
    """The body of one of the program's captures, compiled to run again eagerly in a copy of the capturing frame's
    variables as they were when the capture ended (the same model, optimizer and static tensors), with the capture's
    static outputs by name; or why it cannot be run again (`reason`)."""

    def __init__(self, graph, frame, with_line):
        self.graph_id = id(graph)
        self.reason = None
        self.label = "the captured block"
        self.code, self.globals, self.scope, self.outputs = None, None, None, []
        self.names = {}
        self.skip_reported = False
        try:
            self._compile(graph, frame, with_line)
        except Exception as error:
            self.reason = "its body could not be read (%s)" % type(error).__name__

    def _compile(self, graph, frame, with_line):
        path = frame.f_code.co_filename
        statement = _with_statement(path, with_line)
        if statement is None:
            self.reason = "its source could not be read"
            return
        if any(_leaves_the_block(node) for node in statement.body):
            self.reason = "its body returns, yields or jumps out of the block"
            return
        body = statement.body
        if len(body) == 1 and isinstance(getattr(body[0], "value", None), ast.Call):
            function = body[0].value.func
            self.label = ast.unparse(function) if hasattr(ast, "unparse") else self.label
        else:
            self.label = "the block at %s:%d" % (path.rsplit("/", 1)[-1], statement.lineno)
        self.code = compile(ast.Module(body=body, type_ignores=[]), path, "exec")
        self.globals = frame.f_globals
        locals_ = frames.local_values(frame) if frames.is_function_frame(frame) else {}
        # Not the graph itself: holding it would keep a graph the program deletes alive.
        self.scope = {name: value for name, value in locals_.items() if value is not graph}
        for name in _stored_names(body):
            value = locals_.get(name, frame.f_globals.get(name))
            if hasattr(value, "data_ptr"):
                self.outputs.append((name, value))
        self.names = watches.parameter_names(frame)

    def run(self):
        """Runs the body once in a fresh copy of the captured variables; returns what it assigned."""
        scope = dict(self.scope)
        exec(self.code, self.globals, scope)
        return scope


def _written_names(torch, names, written):
    """What each tensor a region's call wrote is, role first (the numerics rule reads the role): "parameter
    model.fc.weight", "buffer model.bn.running_mean", "state Adam exp_avg of model.fc.weight"."""
    labels = {}
    for key, (tensor, _) in written.items():
        if key in names:
            role = "parameter" if isinstance(tensor, torch.nn.Parameter) else "buffer"
            labels[key] = "%s %s" % (role, names[key])
    for optimizer in list(watches.optimizers):
        kind = type(optimizer).__name__
        for parameter, state in list(optimizer.state.items()):
            owner = names.get(id(parameter), "a parameter")
            for key, value in state.items():
                if id(value) in written:
                    labels.setdefault(id(value), "state %s %s of %s" % (kind, key, owner))
    for key, (tensor, _) in written.items():
        labels.setdefault(key, "state a %s tensor the call writes" % watches.describe_shape(tuple(tensor.shape),
                                                                                         tensor.dtype))
    return labels


def _parameters():
    """The parameters whose gradients a region may produce: those of every optimizer."""
    found = {}
    for optimizer in list(watches.optimizers):
        for group in optimizer.param_groups:
            for parameter in group["params"]:
                found[id(parameter)] = parameter
    return list(found.values())


def _write_recorder(torch):
    """A dispatch mode that keeps a copy of every tensor an op writes in place (or into out=) before its first write,
    leaving out the tensors made during the run."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class WriteRecorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.saved = {}  # id -> (tensor, its values before the run)
            self.created = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            positional = 0
            for argument in func._schema.arguments:
                if argument.kwarg_only:
                    value = kwargs.get(argument.name)
                else:
                    value = args[positional] if positional < len(args) else kwargs.get(argument.name)
                    positional += 1
                alias = argument.alias_info
                if alias is None or not alias.is_write:
                    continue
                for tensor in value if isinstance(value, (list, tuple)) else (value,):
                    if (isinstance(tensor, torch.Tensor) and id(tensor) not in self.saved
                            and id(tensor) not in self.created):
                        self.saved[id(tensor)] = (tensor, tensor.detach().clone())
            result = func(*args, **kwargs)
            inputs = {id(a) for a in args if isinstance(a, torch.Tensor)}
            for value in result if isinstance(result, (list, tuple)) else (result,):
                if isinstance(value, torch.Tensor) and id(value) not in inputs:
                    self.created.add(id(value))
            return result

    return WriteRecorder()


class Shadow:
    """Compares graphed calls and replays with their eager code, on the first `calls` of each."""

    def __init__(self, calls):
        self.calls = calls

    def _audit(self, begin, owner):
        events.audit(begin=begin, graph=owner)

    # --- modules graphed by make_graphed_callables ---------------------------------------------------------------

    def module_call(self, module, watch, graphed, args, kwargs):
        try:
            import torch

            state = None if torch.cuda.is_current_stream_capturing() else RandomState(torch)
        except Exception:
            state = None
        if state is None:
            return graphed()
        result = graphed()  # what it draws from: `state`
        try:
            self._compare_module(torch, module, watch, state, args, kwargs, result)
        except Exception:
            pass
        return result

    def _compare_module(self, torch, module, watch, state, args, kwargs, graphed):
        started = time.perf_counter_ns()
        after_replay = state.generator.get_state()
        # Every buffer slot with its tensor and a copy of its values: a forward may update a buffer in place (running
        # statistics) or rebind it (`self.count = self.count + 1`); both are undone.
        buffers = [(owner._buffers, name, tensor, tensor.clone()) for owner in module.modules()
                   for name, tensor in owner._buffers.items() if tensor is not None]
        eager_forward = watch.own_forward or type(module).forward.__get__(module)
        runs, drawn, eager_generator = [], set(), None
        self._audit(True, watch.module_id)
        try:
            for _ in range(2):
                state.restore(torch)
                try:
                    runs.append(eager_forward(*args, **kwargs))
                finally:
                    drawn |= state.drawn(torch)
                    eager_generator = state.generator.get_state()
                    with torch.no_grad():
                        for slots, name, tensor, saved in buffers:
                            slots[name] = tensor
                            tensor.copy_(saved)
        finally:
            state.restore(torch, cuda=after_replay)
            self._audit(False, watch.module_id)
        eager, repeat = (dict(_named_tensors(run, "output", [])) for run in runs)
        differ = _draws_differ(torch, drawn, after_replay, eager_generator)
        outputs = _named_tensors(graphed, "output", [])
        compared = []
        for name, tensor in outputs:
            first, second = eager.get(name), repeat.get(name)
            if tensor.is_floating_point() and _comparable(torch, tensor, first, second):
                compared.append((name, tensor, None if differ else _compare(torch, tensor, first, second)))
        elapsed = time.perf_counter_ns() - started
        for name, tensor, figures in compared:
            _send(ShadowSubject.MODULE_FORWARD, watch.module_id, type(module).__name__, watch.calls, name, tensor,
                  figures, drawn, elapsed, torch)
        self._watch_backward(torch, module, watch, outputs, (eager, repeat), drawn, differ)

    def _watch_backward(self, torch, module, watch, outputs, runs, drawn, differ):
        """Keeps the eager runs for this call's backward (shadow_grads.py), when it will have one."""
        node = shadow_grads.comparable_call(torch, outputs)
        if node is None:
            return
        owner, owner_type, call = watch.module_id, type(module).__name__, watch.calls

        def send(subject, name, tensor, figures, draws, elapsed, stack, precision):
            _send(subject, owner, owner_type, call, name, tensor, figures, draws, elapsed, torch, stack, precision)

        shadow_grads.GradientShadow(torch, module, node, outputs, runs, drawn, differ,
                                    _precision(torch, torch.float32), send,
                                    lambda graphed, eager, repeat: _compare(torch, graphed, eager, repeat))

    # --- the program's captures ----------------------------------------------------------------------------------

    def region(self, graph, frame, with_line):
        return Region(graph, frame, with_line)

    def replay(self, graph, watch, replay):
        """Replays the graph, compared with its capture's body run eagerly first; the replay itself always runs once
        and whatever the comparison meets (a torch without an API it uses, a body that raises) never reaches the
        program."""
        try:
            import torch

            prepared = self._prepare_region(torch, watch)
        except Exception:
            prepared = None
        if prepared is None:
            return replay()
        state, runs, drawn, parameters, started = prepared
        result = replay()
        try:
            differ = _draws_differ(torch, drawn, state.generator.get_state(), runs[0].get("generator"))
            self._compare_region(torch, watch.region, watch.replays, runs, drawn, differ, parameters, started)
        except Exception:
            pass
        if watch.replays >= self.calls:  # the last shadowed replay: let go of the captured variables
            watch.region.code = watch.region.scope = None
            watch.region.outputs = []
        return result

    def _prepare_region(self, torch, watch):
        """The eager runs of the region before its replay, with the random state put back for the replay; None when
        the replay is not compared (the reason sent once)."""
        region = watch.region
        distributed = sys.modules.get("torch.distributed")
        if region.reason is None and distributed is not None and distributed.is_available() and \
                distributed.is_initialized():
            region.reason = "a process group is initialized: its body may issue collectives that one process cannot " \
                            "repeat"
        if region.reason is None and torch.cuda.is_current_stream_capturing():
            return None
        if region.reason is None:
            state = RandomState(torch)
            started = time.perf_counter_ns()
            try:
                runs, drawn, parameters = self._run_region(torch, region, state, watch.grads_none_at_capture)
                state.restore(torch)  # the replay draws from where the eager runs did
                return state, runs, drawn, parameters, started
            except Exception as error:
                state.restore(torch)
                region.reason = "running it again raised %s: %s" % (frames.exception_type(error),
                                                                   frames.exception_text(error)[:200])
        if not region.skip_reported:
            region.skip_reported = True
            events.shadow_skipped(graph=region.graph_id, call=region.label, reason=region.reason)
        return None

    def _run_region(self, torch, region, state, grads_none_at_capture):
        """Runs the region's code twice from the current state, each time keeping what it wrote and returned, and puts
        the state back after each run. Parameters that had no .grad when the capture began start without one, as the
        captured backward did (it assigns their gradients; with a .grad there, eager would add to it)."""
        parameters = _parameters()
        grads = [(p, p.grad, None if p.grad is None else p.grad.detach().clone()) for p in parameters]
        fresh = [p for p in (ref() for ref in grads_none_at_capture) if p is not None]
        runs, drawn = [], set()
        self._audit(True, region.graph_id)
        try:
            for _ in range(2):
                state.restore(torch)
                for parameter in fresh:
                    parameter.grad = None
                recorder = _write_recorder(torch)
                run = {"written": {}, "grads": {}, "outputs": {}}
                try:
                    with recorder:
                        scope = region.run()
                    drawn |= state.drawn(torch)
                    run["generator"] = state.generator.get_state()
                    for key, (tensor, _) in recorder.saved.items():
                        run["written"][key] = (tensor, tensor.detach().clone())
                    for parameter, _, _ in grads:
                        if parameter.grad is not None:
                            run["grads"][id(parameter)] = parameter.grad.detach().clone()
                    run["outputs"] = {name: scope.get(name) for name, _ in region.outputs}
                finally:
                    with torch.no_grad():
                        for tensor, before in recorder.saved.values():
                            tensor.copy_(before)
                        for parameter, grad, before in grads:
                            parameter.grad = grad
                            if grad is not None:
                                grad.copy_(before)
                runs.append(run)
        finally:
            self._audit(False, region.graph_id)
        return runs, drawn, parameters

    def _compare_region(self, torch, region, replay_number, runs, drawn, differ, parameters, started):
        first, second = runs
        labels = _written_names(torch, region.names, first["written"])
        grad_ids = {id(p.grad) for p in parameters if p.grad is not None}
        compared = []
        for key, (tensor, eager) in first["written"].items():
            repeat = second["written"].get(key, (None, None))[1]
            if key not in grad_ids and _comparable(torch, tensor, eager, repeat):
                compared.append((labels[key], tensor, eager, repeat))
        for parameter in parameters:
            grad, eager, repeat = parameter.grad, first["grads"].get(id(parameter)), second["grads"].get(id(parameter))
            if grad is not None and _comparable(torch, grad, eager, repeat):
                compared.append(("gradient %s" % region.names.get(id(parameter), "of a parameter"), grad, eager,
                                 repeat))
        for name, tensor in region.outputs:
            eager, repeat = first["outputs"].get(name), second["outputs"].get(name)
            if _comparable(torch, tensor, eager, repeat):
                compared.append(("output %s" % name, tensor, eager, repeat))
        figures = [(name, tensor, None if differ else _compare(torch, tensor, eager, repeat))
                   for name, tensor, eager, repeat in compared[:_MAX_COMPARISONS]]
        elapsed = time.perf_counter_ns() - started
        for name, tensor, figure in figures:
            _send(ShadowSubject.CAPTURED_REGION, region.graph_id, region.label, replay_number, name, tensor, figure,
                  drawn, elapsed, torch)
