"""The hooks the probe sets in torch, each installed as its module is imported (before anything that imports it can bind
its names), and the hooks of uncaught exceptions. A hook never changes arguments or results and never raises into the
program: if torch changed shape, that hook is simply not installed."""
import sys
import threading

from . import (contract, events, frames, graph_tensors, graphed_calls, memory, origins, pool_order, steps, waits,
               watches)
from .bridge import Origin

shadow = None  # the --shadow comparer (shadow.Shadow), set by install() when GRAPHCHECK_SHADOW asks for one


def _record_exception(graph, error, in_capture=True, caller=None):
    text = frames.exception_text(error) + origins.megatron_mismatches(error)
    events.exception(in_capture=in_capture, graph=0 if graph is None else id(graph),
                     type=frames.exception_type(error), message=text, frames=frames.exception_frames(error, caller))


def _replace(owner, name, hook, original):
    hook.__wrapped__ = original
    hook.__name__ = hook.__qualname__ = name
    hook.__doc__ = getattr(original, "__doc__", None)
    setattr(owner, name, hook)


def _patch_graphs(module):
    """torch.cuda.graphs: CUDAGraph.capture_begin / capture_end / reset, the torch.cuda.graph context (and the graphs it
    captures) and make_graphed_callables (and the callables it graphs)."""
    _patch_cuda_graph(module.CUDAGraph)
    _patch_graph_context(module.graph)
    _patch_make_graphed_callables(module)


def _patch_cuda_graph(graph_class):
    """CUDAGraph's capture_begin and capture_end (the capture's events, watches and contract), reset, and replay
    until the first optimizer step (a pass of the program's loop: steps.py)."""
    begin, end, reset = graph_class.capture_begin, graph_class.capture_end, graph_class.reset
    replay = graph_class.replay

    def capture_begin(self, *args, **kwargs):
        origin, value, text = origins.capture_origin(sys._getframe(1))
        mode = kwargs.get("capture_error_mode", args[1] if len(args) > 1 else "global")
        events.capture_begin(origin=origin, graph=id(self), error_mode=mode,
                             compiled_function=value if origin == Origin.CUDAGRAPH_TREES else 0,
                             megatron_layer=value if origin == Origin.MEGATRON else 0, megatron_part=text)
        self._graphcheck_allocated_at_begin = origins.allocated_bytes()
        self._graphcheck_origin = origin
        pool = kwargs.get("pool", args[0] if args else None)
        if pool is not None and origin == Origin.USER:  # a capture into a pool an earlier one used: what it holds
            self._graphcheck_pool_blocks = graph_tensors.pool_blocks(sys.modules["torch"], pool)
        watches.forget_graph(self)
        watches.capture_started(self, origin)
        contract.capture_started(self, origin, frames.program_frame(sys._getframe(1)))
        try:
            return begin(self, *args, **kwargs)
        except BaseException as error:
            contract.stop_capture()
            _record_exception(self, error, caller=sys._getframe(1))
            raise

    def capture_end(self, *args, **kwargs):
        capture = contract.stop_capture()  # before CUDA's end: the forward hook and profile function end with it
        try:
            result = end(self, *args, **kwargs)
        except BaseException as error:
            _record_exception(self, error, caller=sys._getframe(1))
            raise
        pool = origins.pool_key(self)
        events.capture_end(graph=id(self), pool=pool, allocated_at_end=origins.allocated_bytes(),
                           allocated_at_begin=getattr(self, "_graphcheck_allocated_at_begin", 0))
        waits.live_graphs.add(self)
        try:
            stepped = watches.stepping_optimizers()
            host = watches.capture_ended(self, sys._getframe(1))
            terms = contract.capture_ended(self, capture, sys._getframe(1), pool, stepped)
            pooled = None
            if self.__dict__.get("_graphcheck_origin") == Origin.USER:
                before = self.__dict__.pop("_graphcheck_pool_blocks", None)
                after = graph_tensors.pool_blocks(sys.modules["torch"], self.pool()) if before is not None else None
                pooled = pool_order.captured(self, pool, after - before if after is not None else ())
            if host is not None or terms is not None or pooled is not None:
                graph_watch = watches.graph_watch(self)
                graph_watch.host, graph_watch.contract, graph_watch.pooled = host, terms, pooled
                watches.watch_replays(self, shadow)
        except Exception:
            pass
        return result

    def graph_reset(self, *args, **kwargs):
        # A reset graph holds no work: NCCL's teardown does not wait on it, so it is not announced as alive.
        waits.live_graphs.discard(self)
        return reset(self, *args, **kwargs)

    def graph_replay(self, *args, **kwargs):
        steps.replaying(sys._getframe(1))
        return replay(self, *args, **kwargs)

    _replace(graph_class, "capture_begin", capture_begin, begin)
    _replace(graph_class, "capture_end", capture_end, end)
    _replace(graph_class, "reset", graph_reset, reset)
    _replace(graph_class, "replay", graph_replay, replay)
    # Once an optimizer steps, replays are no anchor: the class's own replay again (graphs whose replays a watch
    # wrapped before keep calling graph_replay, which then only passes through).
    steps.when_replays_stop(lambda: setattr(graph_class, "replay", replay))


def _patch_graph_context(context_class):
    """The torch.cuda.graph context: its body's host reads, static inputs and outputs, and its graph's replays."""
    context_enter, context_exit = context_class.__enter__, context_class.__exit__

    def graph_enter(self):
        result = context_enter(self)
        try:
            graph = self.cuda_graph
            if getattr(graph, "_graphcheck_origin", Origin.USER) == Origin.USER:
                frame = sys._getframe(1)
                self._graphcheck_watch = (watches.CaptureWatch(graph, frame), frame.f_lineno)
                contract.trace_body(frame)
        except Exception:
            pass
        return result

    def graph_exit(self, exc_type, exc, tb):
        if exc is not None:
            _record_exception(getattr(self, "cuda_graph", None), exc, caller=sys._getframe(1))
        watch = self.__dict__.pop("_graphcheck_watch", None)
        has_statics = False
        if exc is None and watch is not None:
            try:  # the body's host reads, static inputs and outputs, before the capture ends: its manifest names them
                frame = sys._getframe(1)
                contract.observe_body(frame, watch[0].start, frame.f_lasti)
                has_statics = watch[0].end(frame)
                if has_statics:
                    self.cuda_graph._graphcheck_static_tensors = watch[0].named_tensors(frame)
            except Exception:
                pass
        try:
            result = context_exit(self, exc_type, exc, tb)
        except BaseException:
            if has_statics:  # the capture failed: nothing names them
                self.cuda_graph.__dict__.pop("_graphcheck_static_tensors", None)
            raise
        if exc is None and watch is not None:
            try:
                capture, with_line = watch
                frame = sys._getframe(1)
                graph_watch = watches.graph_watch(self.cuda_graph)
                if has_statics:
                    graph_watch.capture = capture
                pool_order.name_outputs(graph_watch.pooled, capture.output_tensors)
                if shadow is not None:
                    graph_watch.region = shadow.region(self.cuda_graph, frame, with_line)
                watches.watch_replays(self.cuda_graph, shadow)
            except Exception:
                pass
        return result

    graph_enter.__wrapped__ = context_enter
    context_class.__enter__ = graph_enter
    graph_exit.__wrapped__ = context_exit
    context_class.__exit__ = graph_exit


def _patch_make_graphed_callables(module):
    """make_graphed_callables, and the modules and functions it graphs (graphed_calls.py)."""
    make_graphed = module.make_graphed_callables

    def make_graphed_callables(callables, sample_args, *args, **kwargs):
        single = not isinstance(callables, tuple)
        try:  # per callable: the forward it replaces (an instance's own, else None for the class's) and its inputs
            listed = (callables,) if single else callables
            samples = (sample_args,) if single else sample_args
            own_forwards = [c.__dict__.get("forward") if hasattr(c, "named_parameters") else None for c in listed]
            shapes = [graphed_calls.InputShapes.of(s) for s in samples]
            names = [_parameter_names(c) for c in listed]
        except Exception:
            own_forwards, shapes, names = [], [], []
        graphed = make_graphed(callables, sample_args, *args, **kwargs)
        if len(shapes) != (1 if single else len(callables)):
            return graphed
        try:
            result = []
            for index, callable_ in enumerate((graphed,) if single else graphed):
                # Callables graphed together share one pool, their forwards captured in the tuple's order.
                pooled = None if single else pool_order.captured(callable_, ("make_graphed_callables", id(graphed)),
                                                                 origin=Origin.GRAPHED_CALLABLES)
                if hasattr(callable_, "named_parameters"):
                    graphed_calls.watch_graphed_module(callable_, own_forwards[index], shapes[index], shadow, pooled)
                    result.append(callable_)
                else:
                    result.append(graphed_calls.watch_graphed_function(callable_, shapes[index], names[index],
                                                                       pooled))
            return result[0] if single else tuple(result)
        except Exception:
            return graphed

    make_graphed_callables.__wrapped__ = make_graphed
    make_graphed_callables.__doc__ = make_graphed.__doc__
    module.make_graphed_callables = make_graphed_callables


def _parameter_names(function):
    """The positional parameter names of a plain function (a module has none here: its weights are its own)."""
    if hasattr(function, "named_parameters"):
        return ()
    code = getattr(function, "__code__", None)
    return tuple(code.co_varnames[:code.co_argcount]) if code is not None else ()


def _patch_optimizer(module):
    """torch.optim.optimizer: every optimizer constructed is known (for the gradients a capture writes), each step
    inside a capture is noted (its hyperparameters are baked in), each outside one cuts the program's steps
    (steps.py), zero_grad() that detaches a graph's gradients and add_param_group() after a capture that steps the
    optimizer are reported where they are called, and load_state_dict() has live graphs look at the state they
    step."""
    optimizer_class = module.Optimizer
    init, zero_grad = optimizer_class.__init__, optimizer_class.zero_grad
    load_state_dict, add_param_group = optimizer_class.load_state_dict, optimizer_class.add_param_group

    def __init__(self, *args, **kwargs):
        result = init(self, *args, **kwargs)
        watches.optimizers.add(self)
        return result

    def optimizer_zero_grad(self, *args, **kwargs):
        result = zero_grad(self, *args, **kwargs)
        watches.host_values_changed()
        return result

    def optimizer_add_param_group(self, *args, **kwargs):
        result = add_param_group(self, *args, **kwargs)  # a group no live graph that steps this optimizer updates
        watches.host_values_changed(self)
        return result

    def optimizer_load_state_dict(self, *args, **kwargs):
        result = load_state_dict(self, *args, **kwargs)  # new state tensors: graphs that step the old ones look
        _arm(contract.ARMED_ALL)
        return result

    module.register_optimizer_step_pre_hook(watches.optimizer_stepping)
    module.register_optimizer_step_pre_hook(contract.optimizer_stepping)
    module.register_optimizer_step_pre_hook(steps.optimizer_stepping)
    _replace(optimizer_class, "__init__", __init__, init)
    _replace(optimizer_class, "zero_grad", optimizer_zero_grad, zero_grad)
    _replace(optimizer_class, "load_state_dict", optimizer_load_state_dict, load_state_dict)
    _replace(optimizer_class, "add_param_group", optimizer_add_param_group, add_param_group)


_backward = threading.local()  # per thread: the depth of torch.autograd.backward() calls
_backwards = [0]  # outermost backward() calls so far, in the process


def _patch_autograd(module):
    """torch.autograd: backward(), which Tensor.backward() calls. The CUDA backward runs on autograd's own threads,
    which run no Python: the outermost call on a thread is announced (begin and end, its stack the program's call)
    so that their CUDA calls are located at the program's `loss.backward()`."""
    original = getattr(module, "backward", None)
    if original is None or getattr(original, "__wrapped__", None) is not None:
        return

    def backward(*args, **kwargs):
        compiler = getattr(sys.modules.get("torch"), "compiler", None)
        depth = getattr(_backward, "depth", 0)
        if depth > 0 or (compiler is not None and compiler.is_compiling()):
            return original(*args, **kwargs)
        _backwards[0] += 1
        number = _backwards[0]
        _backward.depth = 1
        events.backward(begin=True, number=number)
        try:
            return original(*args, **kwargs)
        finally:
            _backward.depth = 0
            events.backward(begin=False, number=number)

    backward.__wrapped__ = original
    backward.__doc__ = original.__doc__
    module.backward = backward


def _patch_module(module):
    """torch.nn.modules.module: Module.zero_grad, which detaches gradients as the optimizer's does; Module.train
    (which eval() calls), after which live graphs look at the modes they were captured in at their next replay (and
    make_graphed_callables' modules at their next call); Module.requires_grad_, after which live graphs look at
    everything; and
    Module.__setattr__, where a number a live graph baked in is changed and a parameter or buffer replaced inside a
    capture is noted (a thread-local look and a dictionary lookup per attribute set)."""
    module_class = module.Module
    zero_grad, train = module_class.zero_grad, module_class.train
    depth = threading.local()  # train() calls itself on every submodule: only the outermost call looks

    def module_zero_grad(self, *args, **kwargs):
        result = zero_grad(self, *args, **kwargs)
        watches.host_values_changed()
        return result

    def module_train(self, *args, **kwargs):
        outermost = not getattr(depth, "inside", False)
        was = getattr(self, "training", None)
        depth.inside = True
        try:
            return train(self, *args, **kwargs)
        finally:
            if outermost:
                depth.inside = False
                # The call that changed the mode is where a graph replayed in the other mode is named (a batch norm
                # frozen by `model.apply(freeze_bn)`); a call that changed nothing (model.train() each epoch) is not.
                changed = was != getattr(self, "training", None) and (contract.live() or graphed_calls.watching())
                stack = frames.encode_stack(sys._getframe(1)) if changed else None
                graphed_calls.modes_changed(stack)
                _arm(contract.ARMED_MODES, stack)

    def module_requires_grad_(self, *args, **kwargs):
        result = requires_grad_(self, *args, **kwargs)
        if contract.live() or graphed_calls.watching():
            stack = frames.encode_stack(sys._getframe(1))
            graphed_calls.grad_flags_changed(stack)
            _arm(contract.ARMED_ALL, stack)
        return result

    def module_setattr(self, name, value):
        if contract.capturing:
            contract.state_set(self, name)
        setattr_(self, name, value)
        watched = contract.watched_attributes
        # Not while torch.compile traces a forward (it would trace this too): compiled code runs no captured module.
        if watched and not _compiling() and name in watched.get(id(self), ()):
            contract.attribute_set(self, name, frames.encode_stack(sys._getframe(1)))
            _arm(contract.ARMED_ALL)  # the next replay looks at it

    setattr_ = module_class.__setattr__
    requires_grad_ = module_class.requires_grad_
    _replace(module_class, "zero_grad", module_zero_grad, zero_grad)
    _replace(module_class, "train", module_train, train)
    _replace(module_class, "requires_grad_", module_requires_grad_, requires_grad_)
    _replace(module_class, "__setattr__", module_setattr, setattr_)


def _arm(level, stack=None):
    """Live graphs look at what they baked in at their next replay (contract.arm), their replay hooks put back."""
    try:
        for armed in contract.arm(level, stack):
            graph = armed.graph_ref()
            if graph is not None:
                watches.watch_replays(graph, shadow)
    except Exception:
        pass


def _compiling():
    compiler = getattr(sys.modules.get("torch"), "compiler", None)
    try:
        return bool(compiler is not None and compiler.is_compiling())
    except Exception:
        return False


def _patch_lr_scheduler(module):
    """torch.optim.lr_scheduler: each scheduler class's step(); a learning rate a graph baked in that the step
    changed is reported at the program's call of step()."""
    base = module.LRScheduler
    for scheduler in [base] + [c for c in vars(module).values() if isinstance(c, type) and issubclass(c, base)]:
        step = scheduler.__dict__.get("step")
        if step is None or hasattr(step, "__wrapped__"):
            continue

        def make(step):
            def scheduler_step(self, *args, **kwargs):
                result = step(self, *args, **kwargs)
                optimizer = getattr(self, "optimizer", None)
                if optimizer is not None:
                    watches.host_values_changed(optimizer)
                return result

            return scheduler_step

        _replace(scheduler, "step", make(step), step)


def _patch_cudagraph_utils(module):
    """torch._inductor.cudagraph_utils: every reason inductor gives for running without CUDA graphs goes through
    log_cudagraph_skip_and_bump_counter; patched before its importers bind the name."""
    log_skip = module.log_cudagraph_skip_and_bump_counter

    def log_cudagraph_skip_and_bump_counter(msg, *args, **kwargs):
        events.compile_skip(reason=str(msg))
        return log_skip(msg, *args, **kwargs)

    log_cudagraph_skip_and_bump_counter.__wrapped__ = log_skip
    module.log_cudagraph_skip_and_bump_counter = log_cudagraph_skip_and_bump_counter


def _patch_cudagraph_trees(module):
    """torch._inductor.cudagraph_trees: a new recording frees the outputs of the previous one that the program still
    holds; inductor makes a later access raise ("accessing tensor output of CUDAGraphs that has been overwritten")."""
    manager = module.CUDAGraphTreeManager
    dealloc = manager.dealloc_current_path_weakrefs

    def dealloc_current_path_weakrefs(self, *args, **kwargs):
        try:
            held = sum(1 for ref in self.current_node.path_live_weakrefs() if ref())
        except Exception:
            held = 0
        if held:
            events.outputs_invalidated(held=held)
        return dealloc(self, *args, **kwargs)

    dealloc_current_path_weakrefs.__wrapped__ = dealloc
    manager.dealloc_current_path_weakrefs = dealloc_current_path_weakrefs


def _patch_ddp(module):
    """torch.nn.parallel.distributed: DistributedDataParallel's constructor and _pre_forward, which every forward runs
    before the module's own."""
    ddp = module.DistributedDataParallel
    init, pre_forward = ddp.__init__, ddp._pre_forward
    torch = sys.modules["torch"]

    # Without an initialized CUDA context no capture can be under way, and asking for the current stream would create
    # a context (memory on GPU 0) in a program that never asked for one: a DDP of a CPU model over gloo.
    def __init__(self, *args, **kwargs):
        try:
            on_default = torch.cuda.is_initialized() and torch.cuda.current_stream() == torch.cuda.default_stream()
        except Exception:
            on_default = False
        result = init(self, *args, **kwargs)
        events.ddp_constructed(module=id(self), on_default_stream=on_default)
        return result

    def _pre_forward(self, *args, **kwargs):
        # The reducer counts an iteration in every forward that will synchronize gradients (prepare_for_forward).
        counts = torch.is_grad_enabled() and getattr(self, "require_backward_grad_sync", False)
        if not counts:
            return pre_forward(self, *args, **kwargs)
        forwards = self.__dict__.get("_graphcheck_forwards", 0) + 1
        self.__dict__["_graphcheck_forwards"] = forwards
        try:
            capturing = torch.cuda.is_initialized() and torch.cuda.is_current_stream_capturing()
        except Exception:
            capturing = False
        rebuilt_before = getattr(self, "_has_rebuilt_buckets", False)
        try:
            return pre_forward(self, *args, **kwargs)
        finally:  # also when DDP's warmup work raised inside the capture, which is when the event matters most
            if capturing:
                rebuilt = not rebuilt_before and getattr(self, "_has_rebuilt_buckets", False)
                events.ddp_captured_forward(module=id(self), forwards=forwards, rebuilt_buckets=rebuilt,
                                            static_graph=getattr(self, "static_graph", False))

    _replace(ddp, "__init__", __init__, init)
    _replace(ddp, "_pre_forward", _pre_forward, pre_forward)


def _patch_megatron_cuda_graphs(module):
    """Megatron Core's transformer.cuda_graphs: the first layer graph CudaGraphManager records for create_cudagraphs()
    to capture. A program that never calls it (Megatron-LM's training loop does, after the first iteration) runs every
    layer eagerly, and no capture ever shows it."""
    record = module._CudagraphGlobalRecord
    original = record.record_fwd_graph.__func__
    announced = []

    def record_fwd_graph(cls, runner, *args, **kwargs):
        if not announced:
            announced.append(True)
            events.megatron_graph_recorded(layer=origins.megatron_layer_number(runner))
        return original(cls, runner, *args, **kwargs)

    record_fwd_graph.__wrapped__ = original
    record.record_fwd_graph = classmethod(record_fwd_graph)


PATCHES = {
    "torch.cuda": memory.patch_cuda,
    "torch.cuda.graphs": _patch_graphs,
    "torch.optim.optimizer": _patch_optimizer,
    "torch.optim.lr_scheduler": _patch_lr_scheduler,
    "torch.nn.modules.module": _patch_module,
    "torch.autograd": _patch_autograd,
    "torch.nn.parallel.distributed": _patch_ddp,
    "torch._inductor.cudagraph_utils": _patch_cudagraph_utils,
    "torch._inductor.cudagraph_trees": _patch_cudagraph_trees,
    "megatron.core.transformer.cuda_graphs": _patch_megatron_cuda_graphs,
}


def apply(patch, module):
    try:
        patch(module)
    except Exception as error:  # a torch whose shape the probe does not know: record less, never break the program
        sys.stderr.write("graphcheck: Python probe: %s not hooked (%s: %s)\n"
                         % (module.__name__, type(error).__name__, error))


class PatchOnImport:
    """A meta path finder that lets the normal finders find the modules in PATCHES and patches each right after it
    has run, before anything that imports it can bind its names."""

    def find_spec(self, name, path=None, target=None):
        patch = PATCHES.get(name)
        if patch is None:
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            apply(patch, module)

        spec.loader.exec_module = exec_and_patch
        return spec


def hook_uncaught_exceptions():
    """Chains sys.excepthook and threading.excepthook: the program's (or Python's) own hook still runs."""
    import threading

    previous = sys.excepthook

    def excepthook(exc_type, exc, tb):
        if exc is not None and not isinstance(exc, (KeyboardInterrupt, SystemExit)):
            _record_exception(None, exc, in_capture=False)
        return previous(exc_type, exc, tb)

    sys.excepthook = excepthook
    previous_thread = threading.excepthook

    def thread_excepthook(args):
        if args.exc_value is not None and not isinstance(args.exc_value, SystemExit):
            _record_exception(None, args.exc_value, in_capture=False)
        return previous_thread(args)

    threading.excepthook = thread_excepthook
