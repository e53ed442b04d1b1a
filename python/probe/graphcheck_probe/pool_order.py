"""Graphs that share a memory pool, in capture order, and a later graph's output read across a replay of an earlier
one. A capture into a pool that an earlier capture used takes the memory that capture let go at its end (its
temporaries), so the earlier graph's next replay writes its temporaries over the later graph's outputs: PyTorch has
graphs that share a pool replayed in the order they were captured, or their outputs copied first.

A graph's outputs are the blocks its capture left allocated in the pool (the allocator's snapshot before and after a
capture into a given pool), else the tensors its `with torch.cuda.graph` body bound. At a replay of the program's own
graph, an output of a graph captured after it into the same pool (or a view of one) is sent, as an outputs-held event
naming the replayed graph, where the program's frames hold it in

- a variable, or a list, tuple, deque, dict, object or closure a variable holds, that the code binds or adds to in a
  loop around the replay (`scores = static_scores`; `pending.append(out[size])`);
- an attribute of an object a variable holds (`agent.last_logp`);

that the code reads after the replay before a `.replay()` call, a store to it or (an attribute) a method of its
object (kept_values.read_across_replay): in the loop around the replay, or after leaving that loop where the pool's
replays went back to a graph captured before the one replayed last, not the first (a tick serving buckets in
arrival order; one that replays them in capture order, restarting from the first, refreshes each output before the
tick's end reads it);

and that did not hold that output at its graph's first replay: a handle on the static output, bound before the graph
ran (`static_out[size]`, `self.static_logp`), is read after its own graph's replays, not this one's. Whether the replay
writes into the output is the recorder's to tell, from the graph's manifest and the allocator's history. One event per
pair of graphs. Straight-line code, with no loop around the replay, is not looked at."""
import itertools
import sys
import weakref

from . import events, frames, graph_tensors, kept_values
from .bridge import Origin

_MAX_GRAPHS = 64  # per pool
_MAX_ENTRIES = 64  # of a container looked at
_MAX_FRAMES = 3  # of the program's, from the replay's out

_pools = {}  # pool key -> [PooledGraph] in capture order
_captures = itertools.count()


class PooledGraph:
    """One of the program's captures into a pool and its outputs."""

    def __init__(self, graph, pool, blocks, origin):
        self.sequence = next(_captures)  # capture order
        self.origin = origin  # Origin.USER, or GRAPHED_CALLABLES for callables graphed together
        self.graph_id = id(graph)
        self.graph = weakref.ref(graph)
        self.pool = pool
        self.blocks = blocks  # sorted (start, end) the capture left allocated in the pool; () when not known
        self.outputs = []  # weak references to the tensors the capture's body bound
        self.handles = None  # holders of its outputs at its first replay looked at (None: not replayed yet)
        self.reported = set()  # ids of the later graphs sent against this one

    def output_ranges(self):
        """(start, end) of its outputs: the tensors its body bound while they live, else the capture's blocks."""
        ranges = []
        for output in self.outputs:
            tensor = output()
            start = graph_tensors.address(tensor) if tensor is not None else 0
            if start:
                ranges.append((start, start + max(graph_tensors.nbytes(tensor), 1)))
        return ranges or list(self.blocks)


def captured(graph, pool, blocks=(), origin=Origin.USER):
    """The program's capture of `graph` (or a callable make_graphed_callables graphed with others: `origin`) into
    `pool` ended, leaving `blocks` allocated there: its PooledGraph, last in the pool's capture order (None without a
    pool key)."""
    if not pool:
        return None
    graphs = _pools.setdefault(pool, [])
    graphs[:] = [g for g in graphs if g.graph() is not None and g.graph_id != id(graph)][-(_MAX_GRAPHS - 1):]
    pooled = PooledGraph(graph, pool, tuple(sorted(blocks)), origin)
    graphs.append(pooled)
    return pooled


def name_outputs(pooled, outputs):
    """Weak references to the tensors the capture's body bound (its static outputs), or a graphed callable's last call
    returned."""
    if pooled is not None:
        pooled.outputs = list(outputs)


def replaying(pooled, frame):
    """At a looked-at replay of `pooled`'s graph from `frame`: its first notes the holders of its outputs (handles);
    each sends the later graphs' outputs the program reads across it."""
    graphs = _pools.get(pooled.pool, ())
    if pooled not in graphs:
        return
    index = graphs.index(pooled)
    if pooled.handles is None:  # only a graph with an earlier one in its pool has outputs another replay overwrites
        ranges = pooled.output_ranges() if index > 0 else ()
        pooled.handles = {key for key, _ in _holders(frame, ranges)} if ranges else set()
    later = [(g, g.output_ranges()) for g in graphs[index + 1:]
             if g.graph_id not in pooled.reported and g.handles is not None and g.graph() is not None]
    later = [(g, ranges) for g, ranges in later if ranges]
    if not later:
        return
    for key, (held_in, name, attribute, output) in _holders(frame, [r for _, ranges in later for r in ranges]):
        start = graph_tensors.address(output)
        graph = next(g for g, ranges in later if _within(start, ranges))
        handle = key in graph.handles and not (attribute is None and _bound_in_loop(held_in, name) and
                                               frames.local_values(held_in).get(name) is output)
        if graph.graph_id not in pooled.reported and not handle and _read_across(pooled, held_in, name, attribute):
            pooled.reported.add(graph.graph_id)
            _send(pooled, graph, held_in, name, attribute, output)


_PLAIN = (int, float, bool, str, bytes, type(None))


def _holders(frame, ranges):
    """(key, (frame, variable, attribute or None, output)) of what the program's frames from `frame` out hold of
    `ranges`: a variable's value or its entries, or an attribute of an object a variable holds."""
    tensor = sys.modules["torch"].Tensor
    found, walked = [], 0
    frame = frames.program_frame(frame)
    while frame is not None and walked < _MAX_FRAMES:
        if frames.is_program_file(frame.f_code.co_filename):
            walked += 1
            for name, value in frames.local_values(frame).items():
                if isinstance(value, _PLAIN):
                    continue
                output = _held(_entries(value, tensor), ranges, tensor)
                if output is not None:
                    found.append(((id(frame.f_code), name), (frame, name, None, output)))
                for attribute, entry in _attributes(value, tensor):
                    if _held((entry,), ranges, tensor) is not None:
                        found.append(((id(value), attribute), (frame, name, attribute, entry)))
        frame = frame.f_back
    return found


def _bound_in_loop(frame, name):
    """Whether the frame's code binds or adds to `name` in a loop around the instruction it runs: a value the loop
    keeps, not a handle bound once (an alias bound before the loop too is one: `scores = static_scores` both before
    and in the loop)."""
    return any(kept_values.changed_in(frame.f_code, name, start, end)
               for start, end in kept_values.loops_around(frame.f_code, frame.f_lasti))


def _read_across(pooled, frame, name, attribute):
    """Whether the holder is read after the replay the frame runs, before a replay refreshes it: an attribute, or a
    variable bound or added to in a loop around the replay, read in that loop; read only after the loop, where the
    pool's replays went back to a graph captured before the one replayed last (not the first: a capture order
    started again), as a tick serving buckets in arrival order does and one serving them in capture order does not."""
    if attribute is None and not _bound_in_loop(frame, name):
        return False
    reach = kept_values.read_across_replay(frame, name, attribute)
    return reach == kept_values.DIRECT or reach == kept_values.AFTER_THE_LOOP and pooled.pool in _went_back


def replayed(pooled):
    """At every replay (call) of a pooled graph: whether its pool's replays went back (see _read_across). On every
    replay up to watches.LAST_LOOK: a pool known to have gone back costs one set lookup."""
    pool = pooled.pool
    if pool in _went_back:
        return
    last = _last_replayed.get(pool)
    if last is not None and last > pooled.sequence and pooled is not _pools[pool][0]:
        _went_back.add(pool)
    _last_replayed[pool] = pooled.sequence


_last_replayed = {}  # pool key -> the capture sequence of the graph replayed last
_went_back = set()  # pool keys


def _send(pooled, graph, frame, name, attribute, output):
    """The event, at the line that kept the output: `name = handle`, an append of it, else the one line that binds
    `name` to a value made of a handle as it is (the frame's own handles on the output); else at the replay."""
    kept = None
    if attribute is None:
        code = frame.f_code
        loop = next(iter(kept_values.loops_around(code, frame.f_lasti)), (0, float("inf")))
        kept = kept_values.alias_store_line(code, name, loop) if output is frames.local_values(frame).get(name) else \
            kept_values.kept_append_line(code, name)
        handles = {variable for code_id, variable in graph.handles if code_id == id(code)}
        kept = kept or kept_values.store_line_using(code, name, handles)
    events.outputs_held(origin=graph.origin, graph=graph.graph_id, references_added=0,
                        name=name if attribute is None else "%s.%s" % (name, attribute),
                        overwritten_by=pooled.graph_id, address=graph_tensors.address(output),
                        frames=frames.encode_stack(frame, kept) if kept else frames.encode_stack(frame))


def _entries(value, tensor):
    """`value` and what it holds one level down: a container's entries, a record's fields, a closure's cells."""
    if isinstance(value, tensor):
        return (value,)
    if isinstance(value, dict):
        return list(value.values())[:_MAX_ENTRIES]
    if isinstance(value, (list, tuple)) or type(value).__name__ == "deque":
        return list(value)[:_MAX_ENTRIES]
    cells = getattr(value, "__closure__", None) if callable(value) else None
    if cells:
        return [_cell(c) for c in cells]
    if hasattr(type(value), "__dataclass_fields__") or hasattr(value, "__slots__"):
        return [entry for _, entry in _attributes(value, tensor)]
    return ()


def _attributes(value, tensor):
    """(name, value) of an object's instance attributes; none for tensors, modules, classes, functions and
    containers."""
    attributes = getattr(value, "__dict__", None)
    if not isinstance(attributes, dict) or isinstance(value, (type, tensor, type(sys))) or callable(value):
        return []
    return list(attributes.items())[:_MAX_ENTRIES]


def _cell(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return None


def _within(start, ranges):
    return any(low <= start < high for low, high in ranges)


def _held(entries, ranges, tensor):
    """The tensor among `entries` that lies in one of `ranges` (an output or a view of one); None."""
    for entry in entries:
        if isinstance(entry, tensor) and _within(graph_tensors.address(entry), ranges):
            return entry
    return None
