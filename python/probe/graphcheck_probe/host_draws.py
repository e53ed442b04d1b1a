"""Host draws during a capture: a random number, a clock reading, random bytes or the next item of an iterator the
program keeps, taken on the host while a graph is captured, become a constant of the graph, replayed as they were.
The capture's profile function (one per capture, this thread's, never in place of a profiler of the program's own)
sees the calls into C that draw (Python's random, time, os.urandom, the program's next(order), and torch's draws that
may use the CPU generator), and hands every Python call to the capture's
host_reads.Observer, which also notes the generator objects the program's code reaches (numpy's and torch's, whose
methods no profile event shows: numpy's are Cython methods). At the capture's end a generator whose state moved was
drawn from inside it.
"""
import contextvars
import random
import sys

from . import events, frames

# torch functions and Tensor methods that draw from a generator: on a CPU tensor, from the CPU one.
_TORCH_DRAWS = {"rand", "randn", "randint", "randperm", "bernoulli", "normal", "multinomial", "poisson", "rand_like",
                "randn_like", "randint_like", "random_", "uniform_", "normal_", "bernoulli_", "exponential_",
                "geometric_", "cauchy_", "log_normal_"}
# Functions of the time module whose value changes from call to call.
_CLOCKS = {"time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time",
           "process_time_ns", "thread_time", "thread_time_ns"}
_MAX_GENERATORS = 64  # generator objects followed per capture


def _generator(value):
    """The generator object behind `value`: the numpy.random module stands for its global RandomState."""
    numpy = sys.modules.get("numpy")
    if numpy is not None and value is getattr(numpy, "random", None):
        return getattr(numpy.random.mtrand, "_rand", None)
    return value


def generator_state(value):
    """(source, comparable state) of a host generator object the program can draw from: a numpy Generator or
    RandomState (the numpy.random module: its global RandomState) or a CPU torch.Generator; None for anything else."""
    value = _generator(value)
    module = getattr(type(value), "__module__", "") or ""
    try:
        if module.startswith("numpy.random"):
            bit_generator = getattr(value, "bit_generator", None) or getattr(value, "_bit_generator", None)
            return ("numpy", repr(bit_generator.state)) if bit_generator is not None else None
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(value, torch.Generator) and value.device.type == "cpu":
            return "torch-cpu", bytes(value.get_state().tolist())
    except Exception:
        pass
    return None


class Generators:
    """The generator objects the captured code reached, with their state when first reached."""

    def __init__(self):
        self.seen = {}  # id -> (object, source, state then, label, stack)

    def note(self, value, label, frame, line):
        """`value`, reached by the program's `label` at `line` of `frame`: a generator or one of its methods."""
        owner = getattr(value, "__self__", None) if callable(value) else None
        for candidate in (_generator(value), owner):
            if candidate is None:
                continue
            known = self.seen.get(id(candidate))
            if known is not None:
                if label.startswith(known[3]) and label != known[3]:  # the longer name: the method drawn
                    self.seen[id(candidate)] = known[:3] + (label, frames.encode_stack(frame, line))
                continue
            if len(self.seen) >= _MAX_GENERATORS:
                return
            state = generator_state(candidate)
            if state is not None:
                self.seen[id(candidate)] = (candidate, state[0], state[1], label, frames.encode_stack(frame, line))

    def drawn(self):
        """(source, label, stack) of each generator whose state moved since it was noted."""
        for candidate, source, before, label, stack in self.seen.values():
            now = generator_state(candidate)
            if now is not None and now[1] != before:
                yield source, label, stack


def _next_is_device_data(iterator):
    """Whether `iterator` walks a list or tuple whose next item is device data: a CUDA tensor, or a dict, list or tuple
    of them. The graph then reads that item's memory, which is no host value (Megatron's full-iteration graphs take
    each microbatch's static buffers through a fresh iter() of them, the same buffers at every step)."""
    if type(iterator).__name__ not in ("list_iterator", "tuple_iterator"):
        return False
    try:
        _, (sequence,), index = iterator.__reduce__()
        item = sequence[index]
    except Exception:  # exhausted: no next item
        return False
    values = list(item.values()) if isinstance(item, dict) else item if isinstance(item, (list, tuple)) else [item]
    return any(getattr(v, "is_cuda", False) for v in values) and all(
        v is None or getattr(v, "is_cuda", False) for v in values)


class Draws:
    """A capture's profile function and what it saw; `observer` (a host_reads.Observer) is given every Python call,
    and every read of torch's grad mode by the program's code."""

    def __init__(self, graph_id, observer=None):
        self.graph_id = graph_id
        self.observer = observer
        self.seen = set()
        self.sent = set()  # the sources whose draws the profile function sent at their line
        self.torch_candidates = []  # encoded stacks of torch calls that may have drawn on the CPU
        self.states = self._states()
        self.previous_profile = sys.getprofile()
        self.profiling = self.previous_profile is None  # a profiler of the program's own is never replaced
        if self.profiling:
            sys.setprofile(self._profile)

    @staticmethod
    def _states():
        """A comparable snapshot of each process-wide host generator's state."""
        states = {"python-random": random.getstate()}
        numpy = sys.modules.get("numpy")
        if numpy is not None:
            state = generator_state(numpy.random)
            if state is not None:
                states["numpy"] = state[1]
        torch = sys.modules.get("torch")
        if torch is not None:
            try:
                states["torch-cpu"] = bytes(torch.get_rng_state().tolist())
            except Exception:
                pass
        return states

    def _profile(self, frame, event, arg):
        if event == "call":
            if self.observer is not None:
                try:
                    self.observer.call(frame)
                except Exception:
                    pass
            return
        if event != "c_call":
            return
        try:
            owner = getattr(arg, "__self__", None)
            name = getattr(arg, "__name__", "")
            if name == "is_grad_enabled" and self.observer is not None and self._programs(frame):
                self.observer.grad_mode_read(frame)
                return
            if isinstance(owner, contextvars.ContextVar) and name == "get" and self.observer is not None and \
                    self._programs(frame):
                self.observer.context_read(frame, owner)
                return
            if isinstance(owner, random.Random):
                source, label = "python-random", "random.%s" % name
            elif owner is not None and (getattr(type(owner), "__module__", "") or "").startswith("numpy.random"):
                source, label = "numpy", "numpy.random.%s" % name
            elif name in _CLOCKS and getattr(owner, "__name__", None) == "time" and self._programs(frame):
                source, label = "clock", "time.%s" % name
            elif name == "urandom" and getattr(owner, "__name__", None) in ("posix", "nt", "os"):
                source, label = "os-urandom", "os.urandom"
            elif name == "next" and getattr(owner, "__name__", None) == "builtins" and self._programs(frame):
                source, label = "iterator", frames.next_of_kept_iterator(frame)
                if label is None or _next_is_device_data(frames.path_value(frame, label[len("next("):-1])):
                    return
            else:
                # torch.rand and the like (no __self__), or a Tensor's in-place draw: a candidate for a CPU draw,
                # which the CPU generator's state at the capture's end confirms.
                if name in _TORCH_DRAWS and len(self.torch_candidates) < 8:
                    torch = sys.modules.get("torch")
                    if not isinstance(owner, torch.Tensor) or owner.device.type == "cpu":
                        self.torch_candidates.append(frames.encode_stack(frame))
                return
            key = (id(frame.f_code), frame.f_lineno)
            if key in self.seen:
                return
            self.seen.add(key)
            self.sent.add(source)
            events.host_random_draw(graph=self.graph_id, source=source, call=label)
        except Exception:
            pass

    @staticmethod
    def _programs(frame):
        """A clock read by the program's own code: libraries time themselves (logging, profilers) without baking
        the time into a kernel."""
        return frames.is_program_file(frame.f_code.co_filename)

    def stop(self, generators=None):
        """Ends the profiling and sends the draws the generators' states show and the profile function did not name:
        the generator objects the captured code reached (`generators`, a Generators), and the process-wide
        generators. Those are the whole process's, so while the profile function watches this thread, only torch's
        CPU generator is read from them, and only when this thread made a call that can draw from it: another
        thread's draws are not the capture's. Under a profiler of the program's own every generator's state is
        read."""
        if self.profiling and sys.getprofile() == self._profile:
            sys.setprofile(self.previous_profile)
        for source, label, stack in generators.drawn() if generators is not None else ():
            self.sent.add(source)
            events.host_random_draw(graph=self.graph_id, source=source, call=label, frames=stack)
        for source, before in self.states.items():
            if source in self.sent or (self.profiling and (source != "torch-cpu" or not self.torch_candidates)):
                continue
            try:
                after = self._states().get(source)
            except Exception:
                continue
            if after is None or after == before:
                continue
            stack = self.torch_candidates[0] if source == "torch-cpu" and self.torch_candidates else None
            label = {"python-random": "random", "numpy": "numpy.random", "torch-cpu": "torch's CPU generator"}[source]
            events.host_random_draw(graph=self.graph_id, source=source, call=label, frames=stack)
