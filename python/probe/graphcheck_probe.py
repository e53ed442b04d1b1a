"""graphcheck's Python probe: records what only Python knows about CUDA graphs, into the trace that graphcheck's
recorder writes for this process, on the recorder's clock.

- Captures: who began each one (the program, torch.cuda.make_graphed_callables, torch.compile's cudagraph trees and
  their pool-creating empty capture, Transformer Engine, Megatron Core), its graph, pool and capture mode, and the
  exception that left it (type, message, the frames of its traceback), caught by the program or not.
- torch.compile: the reasons inductor gives for running a function without CUDA graphs, and the outputs its cudagraph
  trees invalidate while the program still holds them.
- Exceptions that end the program or a thread (sys.excepthook, threading.excepthook), with their frames: PyTorch's
  errors about graphs are raised where the program touched something, which is the line to show.
- Tensors a graph reads that the program moves after capture: parameters and buffers of modules graphed by
  make_graphed_callables rebound to new tensors, and names that held a manual capture's static inputs rebound
  (`static_x = batch` instead of `static_x.copy_(batch)`); and outputs of a manual capture that the program keeps
  across replays without a copy. Looked at on the first calls and replays and then at exponentially spaced ones
  (_due), then no longer hooked.
- DistributedDataParallel: the stream each DDP module was constructed on (its gradient accumulators run on it in
  backward), and each forward that runs inside a capture with the number of forwards the module had run (DDP's reducer
  synchronizes CUDA events in its first ten iterations and rebuilds its buckets in the second) and whether it rebuilt
  its buckets there.
- Under `graphcheck run --shadow N` (GRAPHCHECK_SHADOW=N): each output of a module graphed by make_graphed_callables,
  on its first N calls, against the module's own eager forward run twice on the same input right after the graphed
  call (random state and buffers restored before each run), reduced on the GPU to the figures numerics-forward
  judges (the largest difference, where, the eager-vs-eager spread, non-finite counts).

It records; graphcheck's analyzers judge. It hooks only torch's capture and cudagraph-skip functions, as their
modules are imported, so a program that makes no capture pays nothing but one dictionary lookup per import; a replay
pays a Python call only while its graph is watched (at most _LAST_LOOK replays), nothing after (the recorder sees
every cudaGraphLaunch; the capture-end event ties it to its Python graph). A
hook never changes arguments or results and never raises into the program: if torch changed shape, that hook is
simply not installed. Events reach the recorder through graphcheck_probe_event in the injection library
(capture/injection.cc), found once CUDA has loaded it; before that there is no capture to record.
"""
import ctypes
import dis
import os
import sys
import time
import traceback
import weakref

# core/trace/events.h: ProbeEventKind and ProbeOrigin.
(CAPTURE_BEGIN, CAPTURE_END, CAPTURE_EXCEPTION, COMPILE_SKIP, OUTPUTS_INVALIDATED, UNCAUGHT_EXCEPTION, STATE_REBOUND,
 OUTPUTS_HELD, DDP_CONSTRUCTED, DDP_CAPTURED_FORWARD) = range(1, 11)
UNKNOWN, USER, GRAPHED_CALLABLES, CUDAGRAPH_TREES, CUDAGRAPH_TREES_INIT, TRANSFORMER_ENGINE, MEGATRON = range(7)

_FIELD, _FRAME = "\x1f", "\x1e"  # explicit frames: "file\x1fline\x1ffunction" joined by \x1e, innermost first
_MAX_FRAMES = 64
_MAX_TEXT = 4096
_MAX_ORIGIN_WALK = 128  # frames looked at to tell who began a capture
# Calls of a graphed module and replays of a watched graph that are looked at: the first _FIRST_LOOKS, then the powers
# of two up to _LAST_LOOK; after that the hook is removed.
_FIRST_LOOKS = 8
_LAST_LOOK = 4096
_HELD_GROWTH = 3  # looks in a row at which the program held more references to an output: outputs kept across replays
_MAX_SHADOW_OUTPUTS = 64  # outputs of one call compared under --shadow


class _Recorder:
    """graphcheck_probe_event of the injection library, once the CUDA driver has loaded it (the probe never loads it:
    a second copy would be a second recorder)."""

    def __init__(self, library):
        self._library = library
        self._event = None
        self._shadow = None

    def _load(self):
        if self._library is None:
            return None
        try:
            library = ctypes.CDLL(self._library, mode=os.RTLD_NOLOAD | os.RTLD_NOW)
        except OSError:  # not loaded yet: CUDA is not initialised, so there is nothing to record
            return None
        try:
            event, shadow = library.graphcheck_probe_event, library.graphcheck_probe_shadow
        except AttributeError:  # CUDA_INJECTION64_PATH names another tool's library: record nothing, for good
            self._library = None
            return None
        u64, text = ctypes.c_uint64, ctypes.c_char_p
        event.argtypes = [ctypes.c_int, ctypes.c_int, u64, u64, u64, u64, text, text, text]
        event.restype = ctypes.c_int
        shadow.argtypes = [u64, text, ctypes.c_uint32, text, text, text, u64, ctypes.c_double, ctypes.c_int64,
                           ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_double, u64, u64, ctypes.c_int,
                           u64]
        shadow.restype = ctypes.c_int
        self._event, self._shadow = event, shadow
        return event

    def emit(self, kind, origin=UNKNOWN, graph=0, pool=0, value=0, type_name=None, text=None, frames=None,
             value_now=0):
        event = self._event or self._load()
        if event is None:
            return
        mask = 0xFFFFFFFFFFFFFFFF
        try:
            event(kind, origin, graph & mask, pool & mask, value & mask, value_now & mask, _utf8(type_name),
                  _utf8(text), _utf8(frames))
        except Exception:
            pass

    def shadow(self, module, module_type, call, name, dtype, precision, figures, random, shadow_ns):
        """One output compared under --shadow; `figures`: numel, max_abs_error, worst_index, eager_at_worst,
        graphed_at_worst, eager_abs_max, eager_spread, eager_nonfinite, graphed_nonfinite."""
        if self._shadow is None and self._load() is None:
            return
        numel, error, worst, eager_at, graphed_at, scale, spread, eager_bad, graphed_bad = figures
        try:
            self._shadow(module, _utf8(module_type), call, _utf8(name), _utf8(dtype), _utf8(precision), numel, error,
                         worst, eager_at, graphed_at, scale, spread, eager_bad, graphed_bad, int(random), shadow_ns)
        except Exception:
            pass


_recorder = None
_shadow_calls = 0  # GRAPHCHECK_SHADOW


def _utf8(text):
    if text is None:
        return None
    return text[:_MAX_TEXT].replace("\0", " ").encode("utf-8", "replace")


def _exception_frames(error, caller=None):
    """The frames of an exception's traceback, innermost first: the raise site, then the lines above it. An exception
    caught inside a hook has not reached the program yet: `caller`, the frame that called the hooked function, and
    its callers complete the stack."""
    try:
        frames = list(reversed(traceback.extract_tb(error.__traceback__)))
        if caller is not None:
            frames += reversed(traceback.extract_stack(caller))
    except Exception:
        return None
    return _FRAME.join("%s%s%d%s%s" % (f.filename, _FIELD, f.lineno or 0, _FIELD, f.name)
                       for f in frames[:_MAX_FRAMES])


def _exception_text(error):
    try:
        return str(error)
    except Exception:
        return "<unprintable %s>" % type(error).__name__


def _record_exception(graph, error, kind=CAPTURE_EXCEPTION, caller=None):
    cls = type(error)
    name = cls.__qualname__ if cls.__module__ in ("builtins", None) else "%s.%s" % (cls.__module__, cls.__qualname__)
    _recorder.emit(kind, graph=0 if graph is None else id(graph), type_name=name, text=_exception_text(error),
                   frames=_exception_frames(error, caller))


def _origin(frame):
    """Who began the capture whose capture_begin is running above `frame`, and for cudagraph trees the compiled
    function's id (+1; 0 when unknown)."""
    walked = 0
    while frame is not None and walked < _MAX_ORIGIN_WALK:
        code = frame.f_code
        path = code.co_filename.replace("\\", "/")
        if path.endswith("/torch/_inductor/cudagraph_trees.py"):
            if code.co_name == "_record":
                return CUDAGRAPH_TREES, _compiled_function_id(frame)
            if code.co_name == "__init__":
                return CUDAGRAPH_TREES_INIT, 0
            return CUDAGRAPH_TREES, 0
        if "/torch/_inductor/" in path:
            return CUDAGRAPH_TREES, 0
        if path.endswith("/torch/cuda/graphs.py") and code.co_name == "make_graphed_callables":
            return GRAPHED_CALLABLES, 0
        if path.endswith("/transformer_engine/pytorch/graph.py"):
            return TRANSFORMER_ENGINE, 0
        if "/megatron/core/" in path and "cuda_graph" in path:
            return MEGATRON, 0
        frame = frame.f_back
        walked += 1
    return USER, 0


def _compiled_function_id(frame):
    try:
        return int(frame.f_locals["self"].wrapped_function.id.id) + 1
    except Exception:
        return 0


def _pool_key(graph):
    try:
        first, second = graph.pool()
        return (int(first) << 32) ^ int(second)
    except Exception:
        return 0


def _allocated_bytes():
    """What PyTorch's caching allocator has allocated on the current device (a host-side counter: no CUDA call, so
    safe inside a capture); 0 when unknown. At capture begin and end it tells what a graph left allocated in its pool
    (its outputs, a cuBLAS workspace), which graph-memory needs to say what sharing a pool would hold."""
    try:
        return int(sys.modules["torch.cuda.memory"].memory_allocated())
    except Exception:
        return 0


def _due(n):
    return n <= _FIRST_LOOKS or (n & (n - 1)) == 0


def _is_cuda_tensor(value):
    try:
        return bool(value.is_cuda) and callable(value.data_ptr)
    except Exception:
        return False


def _address(tensor):
    try:
        return int(tensor.data_ptr())
    except Exception:
        return 0


def _references(tensor):
    """References the program holds to a tensor's memory: to the Python object, and to its storage through other
    tensors (views, detached copies)."""
    count = sys.getrefcount(tensor)
    try:
        import torch

        count += torch._C._storage_Use_Count(tensor.untyped_storage()._cdata)
    except Exception:
        pass
    return count


def _emit_rebound(origin, graph_id, role, name, address, address_now):
    _recorder.emit(STATE_REBOUND, origin=origin, graph=graph_id, value=address, value_now=address_now,
                   type_name=role, text=name)


class _ModuleWatch:
    """A module graphed by make_graphed_callables. Its graphs read the parameter objects it held then (a parameter's
    new .data is copied in on every call, a new parameter object is not seen) and its buffers' memory at capture."""

    def __init__(self, module, own_forward):
        self.module = weakref.ref(module)  # the watch must not keep a module the program dropped
        self.module_id = id(module)
        # make_graphed_callables replays its graphs only in the training mode it captured them in (else it runs
        # the forward it replaced: the instance's own, `own_forward`, else its class's).
        self.training = getattr(module, "training", None)
        self.own_forward = own_forward
        self.parameters = {name: (id(p), _address(p)) for name, p in module.named_parameters()}
        self.buffers = {name: _address(b) for name, b in module.named_buffers() if _is_cuda_tensor(b)}
        self.reported = set()
        self.calls = 0

    def look(self):
        module = self.module()
        if module is None:
            return
        for name, parameter in module.named_parameters():
            captured = self.parameters.get(name)
            if captured is not None and name not in self.reported and id(parameter) != captured[0]:
                self.reported.add(name)
                _emit_rebound(GRAPHED_CALLABLES, self.module_id, "parameter", name, captured[1], _address(parameter))
        for name, buffer in module.named_buffers():
            captured = self.buffers.get(name)
            if captured is not None and name not in self.reported and _address(buffer) != captured:
                self.reported.add(name)
                _emit_rebound(GRAPHED_CALLABLES, self.module_id, "buffer", name, captured, _address(buffer))


def _watch_graphed_module(module, own_forward):
    """`own_forward`: the instance's own forward that make_graphed_callables replaced, None for its class's."""
    graphed_forward = module.__dict__.get("forward")
    if graphed_forward is None:
        return
    watch = _ModuleWatch(module, own_forward)

    def forward(*args, **kwargs):
        watch.calls += 1
        if _due(watch.calls):
            try:
                watch.look()
            except Exception:
                pass
        if watch.calls >= max(_LAST_LOOK, _shadow_calls) and module.__dict__.get("forward") is forward:
            module.forward = graphed_forward
        result = graphed_forward(*args, **kwargs)
        if watch.calls <= _shadow_calls and module.training == watch.training:
            try:
                _shadow(module, watch, args, kwargs, result)
            except Exception:
                pass
        return result

    module.forward = forward


def _named_tensors(value, name, out):
    """The tensors in what a forward returned, by place: "output", "output 0", "output 1.logits"."""
    if len(out) >= _MAX_SHADOW_OUTPUTS:
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
    """The math an output of `dtype` was computed in: autocast's dtype, TF32 for float32 where PyTorch allows it."""
    if torch.is_autocast_enabled("cuda"):
        return str(torch.get_autocast_dtype("cuda")).replace("torch.", "")
    name = str(dtype).replace("torch.", "")
    if name == "float32" and (torch.backends.cuda.matmul.allow_tf32 or torch.backends.cudnn.allow_tf32):
        return "tf32"
    return name


def _compare(torch, graphed, eager, repeat):
    """numel, the largest |graphed - eager| over elements finite in both, its flat index, the two values there, the
    largest finite |eager|, the largest |repeat - eager| and the non-finite counts: one synchronization."""
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
    return (g.numel(), error, int(index), eager_at, graphed_at, scale, spread, int(eager_bad), int(graphed_bad))


def _shadow(module, watch, args, kwargs, graphed):
    """--shadow: runs the module's eager forward twice on this call's input and sends, per output, how the graphed
    output differs from the first run and the second from the first. The CUDA generator and the module's buffers
    (running statistics) are put back after each run, so the program continues as if they had not happened."""
    import torch

    if torch.cuda.is_current_stream_capturing():
        return
    started = time.perf_counter_ns()
    generator = torch.cuda.default_generators[torch.cuda.current_device()]
    state = generator.get_state()
    # Every buffer slot with its tensor and a copy of its values: a forward may update a buffer in place (running
    # statistics) or rebind it (`self.count = self.count + 1`); both are undone.
    buffers = [(owner._buffers, name, tensor, tensor.clone()) for owner in module.modules()
               for name, tensor in owner._buffers.items() if tensor is not None]
    runs, random = [], False
    eager_forward = watch.own_forward or type(module).forward.__get__(module)
    for _ in range(2):
        try:
            runs.append(eager_forward(*args, **kwargs))
        finally:
            random = random or not torch.equal(generator.get_state(), state)
            generator.set_state(state)
            with torch.no_grad():
                for slots, name, tensor, saved in buffers:
                    slots[name] = tensor
                    tensor.copy_(saved)
    outputs = _named_tensors(graphed, "output", [])
    eager, repeat = (dict(_named_tensors(run, "output", [])) for run in runs)
    compared = []
    for name, tensor in outputs:
        first, second = eager.get(name), repeat.get(name)
        if (first is None or second is None or not tensor.is_floating_point() or tensor.shape != first.shape
                or tensor.shape != second.shape or tensor.numel() == 0):
            continue
        figures = (tensor.numel(), 0.0, -1, 0.0, 0.0, 0.0, -1.0, 0, 0) if random else _compare(
            torch, tensor, first, second)
        compared.append((name, str(tensor.dtype).replace("torch.", ""), _precision(torch, tensor.dtype), figures))
    elapsed = time.perf_counter_ns() - started
    for name, dtype, precision, figures in compared:
        _recorder.shadow(watch.module_id, type(module).__name__, watch.calls, name, dtype, precision, figures, random,
                         elapsed)


# Instructions that load or store a variable (CPython 3.10-3.14), with the variables of their argument, in order;
# the superinstructions of 3.13+ name two.
_LOADS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_BORROW", "LOAD_FAST_LOAD_FAST",
          "LOAD_FAST_BORROW_LOAD_FAST_BORROW", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_DEREF", "LOAD_CLASSDEREF"}
_STORES = {"STORE_FAST", "STORE_FAST_STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF"}


def _names_used(code, start, end):
    """The variables the instructions of `code` strictly between byte offsets `start` and `end` (a with block's body)
    load and store."""
    loaded, stored = set(), set()
    for instruction in dis.get_instructions(code):
        if not start < instruction.offset < end:
            continue
        names = instruction.argval if isinstance(instruction.argval, tuple) else (instruction.argval,)
        names = [n for n in names if isinstance(n, str)]
        if instruction.opname in _LOADS:
            loaded.update(names)
        elif instruction.opname in _STORES:
            stored.update(names)
        elif instruction.opname == "STORE_FAST_LOAD_FAST" and len(names) == 2:
            stored.add(names[0])
            loaded.add(names[1])
    return loaded, stored


class _CaptureWatch:
    """A manual capture (torch.cuda.graph): the capturing frame's names that held CUDA tensors the body read (static
    inputs, by address) and that the body bound to CUDA tensors (static outputs). Replays from the same function must
    find the inputs where they were; no replay should find the program holding ever more references to an output."""

    def __init__(self, graph, frame):
        self.graph_id = id(graph)
        self.code = frame.f_code
        self.start = frame.f_lasti
        self.before = {name: _address(v) for name, v in frame.f_locals.items() if _is_cuda_tensor(v)}
        self.inputs, self.outputs, self.held, self.reported = {}, {}, {}, set()
        self.replays = 0

    def end(self, frame):
        loaded, stored = _names_used(self.code, self.start, frame.f_lasti)
        self.inputs = {name: self.before[name] for name in loaded - stored if name in self.before}
        values = frame.f_locals
        self.outputs = {name: values[name] for name in stored if _is_cuda_tensor(values.get(name))}
        self.before = None
        return bool(self.inputs or self.outputs)

    def look(self, frame):
        if frame.f_code is self.code:
            values = frame.f_locals
            for name, address in self.inputs.items():
                now = values.get(name)
                if name not in self.reported and _is_cuda_tensor(now) and _address(now) != address:
                    self.reported.add(name)
                    _emit_rebound(USER, self.graph_id, "static-input", name, address, _address(now))
        for name, tensor in self.outputs.items():
            if name in self.reported:
                continue
            count = _references(tensor)
            history = self.held.setdefault(name, [])
            if history and count <= history[-1]:
                history.clear()
            history.append(count)
            if len(history) > _HELD_GROWTH:
                self.reported.add(name)
                _recorder.emit(OUTPUTS_HELD, origin=USER, graph=self.graph_id, value=history[-1] - history[0],
                               text=name)


def _watch_replays(graph, watch):
    """Wraps `graph.replay` on this graph object only. The wrapper holds the graph weakly (a graph the program drops
    must free its pool at once, not at the next cyclic collection) and calls the class's replay."""
    graph.__dict__.pop("replay", None)  # a graph captured again: its earlier capture's watch ends
    replay, graph_ref = type(graph).replay, weakref.ref(graph)

    def replay_and_look(*args, **kwargs):
        this = graph_ref()
        watch.replays += 1
        if _due(watch.replays):
            try:
                watch.look(sys._getframe(1))
            except Exception:
                pass
        if watch.replays >= _LAST_LOOK and this.__dict__.get("replay") is replay_and_look:
            del this.replay
        return replay(this, *args, **kwargs)

    graph.replay = replay_and_look


def _patch_graphs(module):
    """torch.cuda.graphs: CUDAGraph.capture_begin / capture_end, the torch.cuda.graph context (and the graphs it
    captures) and make_graphed_callables (and the modules it graphs)."""
    graph_class = module.CUDAGraph
    begin, end = graph_class.capture_begin, graph_class.capture_end
    context_enter, context_exit = module.graph.__enter__, module.graph.__exit__
    make_graphed = module.make_graphed_callables

    def capture_begin(self, *args, **kwargs):
        origin, function = _origin(sys._getframe(1))
        mode = kwargs.get("capture_error_mode", args[1] if len(args) > 1 else "global")
        _recorder.emit(CAPTURE_BEGIN, origin=origin, graph=id(self), value=function, type_name=str(mode))
        self._graphcheck_allocated_at_begin = _allocated_bytes()
        try:
            return begin(self, *args, **kwargs)
        except BaseException as error:
            _record_exception(self, error, caller=sys._getframe(1))
            raise

    def capture_end(self, *args, **kwargs):
        try:
            result = end(self, *args, **kwargs)
        except BaseException as error:
            _record_exception(self, error, caller=sys._getframe(1))
            raise
        _recorder.emit(CAPTURE_END, graph=id(self), pool=_pool_key(self), value=_allocated_bytes(),
                       value_now=getattr(self, "_graphcheck_allocated_at_begin", 0))
        return result

    def graph_enter(self):
        result = context_enter(self)
        try:
            self._graphcheck_watch = _CaptureWatch(self.cuda_graph, sys._getframe(1))
        except Exception:
            pass
        return result

    def graph_exit(self, exc_type, exc, tb):
        if exc is not None:
            _record_exception(getattr(self, "cuda_graph", None), exc)
        result = context_exit(self, exc_type, exc, tb)
        watch = self.__dict__.pop("_graphcheck_watch", None)
        if exc is None and watch is not None:
            try:
                if watch.end(sys._getframe(1)):
                    _watch_replays(self.cuda_graph, watch)
            except Exception:
                pass
        return result

    def make_graphed_callables(callables, *args, **kwargs):
        try:  # the forwards make_graphed_callables replaces: an instance's own, else None for the class's
            own_forwards = [c.__dict__.get("forward") if hasattr(c, "named_parameters") else None
                            for c in (callables if isinstance(callables, tuple) else (callables,))]
        except Exception:
            own_forwards = []
        graphed = make_graphed(callables, *args, **kwargs)
        try:
            for index, callable_ in enumerate(graphed if isinstance(graphed, tuple) else (graphed,)):
                if hasattr(callable_, "named_parameters"):
                    _watch_graphed_module(callable_, own_forwards[index] if index < len(own_forwards) else None)
        except Exception:
            pass
        return graphed

    for name, hook, original in (("capture_begin", capture_begin, begin), ("capture_end", capture_end, end)):
        hook.__wrapped__ = original
        hook.__name__ = hook.__qualname__ = name
        hook.__doc__ = original.__doc__
        setattr(graph_class, name, hook)
    graph_enter.__wrapped__ = context_enter
    module.graph.__enter__ = graph_enter
    graph_exit.__wrapped__ = context_exit
    module.graph.__exit__ = graph_exit
    make_graphed_callables.__wrapped__ = make_graphed
    make_graphed_callables.__doc__ = make_graphed.__doc__
    module.make_graphed_callables = make_graphed_callables


def _patch_cudagraph_utils(module):
    """torch._inductor.cudagraph_utils: every reason inductor gives for running without CUDA graphs goes through
    log_cudagraph_skip_and_bump_counter; patched before its importers bind the name."""
    log_skip = module.log_cudagraph_skip_and_bump_counter

    def log_cudagraph_skip_and_bump_counter(msg, *args, **kwargs):
        _recorder.emit(COMPILE_SKIP, text=str(msg))
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
            _recorder.emit(OUTPUTS_INVALIDATED, value=held)
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
        _recorder.emit(DDP_CONSTRUCTED, graph=id(self), value=int(on_default),
                       text="the default stream" if on_default else "a side stream")
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
                _recorder.emit(DDP_CAPTURED_FORWARD, graph=id(self), value=forwards, value_now=int(rebuilt),
                               text="static_graph" if getattr(self, "static_graph", False) else None)

    for name, hook, original in (("__init__", __init__, init), ("_pre_forward", _pre_forward, pre_forward)):
        hook.__wrapped__ = original
        hook.__doc__ = original.__doc__
        setattr(ddp, name, hook)


_PATCHES = {
    "torch.cuda.graphs": _patch_graphs,
    "torch.nn.parallel.distributed": _patch_ddp,
    "torch._inductor.cudagraph_utils": _patch_cudagraph_utils,
    "torch._inductor.cudagraph_trees": _patch_cudagraph_trees,
}


def _apply(patch, module):
    try:
        patch(module)
    except Exception as error:  # a torch whose shape the probe does not know: record less, never break the program
        sys.stderr.write("graphcheck: Python probe: %s not hooked (%s: %s)\n"
                         % (module.__name__, type(error).__name__, error))


class _PatchOnImport:
    """A meta path finder that lets the normal finders find the modules in _PATCHES and patches each right after it
    has run, before anything that imports it can bind its names."""

    def find_spec(self, name, path=None, target=None):
        patch = _PATCHES.get(name)
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
            _apply(patch, module)

        spec.loader.exec_module = exec_and_patch
        return spec


def _hook_uncaught_exceptions():
    """Chains sys.excepthook and threading.excepthook: the program's (or Python's) own hook still runs."""
    import threading

    previous = sys.excepthook

    def excepthook(exc_type, exc, tb):
        if exc is not None and not isinstance(exc, (KeyboardInterrupt, SystemExit)):
            _record_exception(None, exc, UNCAUGHT_EXCEPTION)
        return previous(exc_type, exc, tb)

    sys.excepthook = excepthook
    previous_thread = threading.excepthook

    def thread_excepthook(args):
        if args.exc_value is not None and not isinstance(args.exc_value, SystemExit):
            _record_exception(None, args.exc_value, UNCAUGHT_EXCEPTION)
        return previous_thread(args)

    threading.excepthook = thread_excepthook


def install():
    """Starts the probe in this process (idempotent). Does nothing outside `graphcheck run`."""
    global _recorder, _shadow_calls
    library = os.environ.get("CUDA_INJECTION64_PATH")
    if _recorder is not None or not library:
        return
    _recorder = _Recorder(library)
    try:
        _shadow_calls = max(0, int(os.environ.get("GRAPHCHECK_SHADOW", "0")))
    except ValueError:
        _shadow_calls = 0
    for name, patch in _PATCHES.items():
        if name in sys.modules:  # imported before the probe (a sitecustomize that imports torch)
            _apply(patch, sys.modules[name])
    sys.meta_path.insert(0, _PatchOnImport())
    _hook_uncaught_exceptions()
