"""Graphs that share a memory pool, in capture order, and a later graph's output read across a replay of an earlier
one. A capture into a pool that an earlier capture used takes the memory that capture let go at its end (its
temporaries), so the earlier graph's next replay writes its temporaries over the later graph's outputs: PyTorch has
graphs that share a pool replayed in the order they were captured, or their outputs copied first.

A graph's outputs are the blocks its capture left allocated in the pool (the allocator's snapshot before and after a
capture into a given pool), else the tensors its `with torch.cuda.graph` body bound. At a replay of the program's own
graph, an output of a graph captured after it into the same pool (or a view of one) is sent, as an outputs-held event
naming the replayed graph, where the program's frames hold it in

- a variable, or a list, tuple, deque, dict, object or closure a variable holds, that the code binds or adds to in a
  loop around the replay (`scores = static_scores`; `pending.append(out[size])`) and reads after it before binding it
  again;
- an attribute of an object a variable holds (`agent.last_logp`), that the code reads after the replay;

and that did not hold that output at its graph's first replay: a handle on the static output, bound before the graph
ran (`static_out[size]`, `self.static_logp`), is read after its own graph's replays, not this one's. Whether the replay
writes into the output is the recorder's to tell, from the graph's manifest and the allocator's history. One event per
pair of graphs. Straight-line code, with no loop around the replay, is not looked at."""
import sys
import weakref

from . import events, frames, graph_tensors, kept_values, steps
from .bridge import Origin

_MAX_GRAPHS = 64  # per pool
_MAX_ENTRIES = 64  # of a container looked at
_MAX_FRAMES = 3  # of the program's, from the replay's out

_pools = {}  # pool key -> [PooledGraph] in capture order


class PooledGraph:
    """One of the program's captures into a pool and its outputs."""

    def __init__(self, graph, pool, blocks, origin):
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
    for graph in graphs[index + 1:]:
        ranges = graph.output_ranges() if graph.graph_id not in pooled.reported and graph.handles is not None else ()
        for key, (held_in, name, attribute, output) in (_holders(frame, ranges) if ranges else ()):
            if key not in graph.handles and _read_across(held_in, name, attribute):
                pooled.reported.add(graph.graph_id)
                _send(pooled, graph, held_in, name, attribute, output)
                break


def _holders(frame, ranges):
    """(key, (frame, variable, attribute or None, output)) of what the program's frames from `frame` out hold of
    `ranges`: a variable's value or its entries, or an attribute of an object a variable holds."""
    found, walked = [], 0
    frame = frames.program_frame(frame)
    while frame is not None and walked < _MAX_FRAMES:
        if frames.is_program_file(frame.f_code.co_filename):
            walked += 1
            for name, value in frames.local_values(frame).items():
                output = _held(_entries(value), ranges)
                if output is not None:
                    found.append(((id(frame.f_code), name), (frame, name, None, output)))
                for attribute, entry in _attributes(value):
                    output = _held([entry], ranges)
                    if output is not None:
                        found.append(((id(value), attribute), (frame, name, attribute, output)))
        frame = frame.f_back
    return found


def _read_across(frame, name, attribute):
    """Whether the holder is read after the replay the frame runs: a variable bound or added to in a loop around it
    and read before it is bound again; an attribute read before it is stored again."""
    if attribute is not None:
        return kept_values.read_before_rebound(frame, name, attribute)
    around = [(start, end) for start, end, _, _ in steps.code_loops(frame.f_code) if start <= frame.f_lasti <= end]
    return any(kept_values.changed_in(frame.f_code, name, start, end) for start, end in around) and \
        kept_values.read_before_rebound(frame, name)


def _send(pooled, graph, frame, name, attribute, output):
    if attribute is None:
        kept = kept_values.alias_store_line(frame.f_code, name) if output is frames.local_values(frame).get(name) else \
            kept_values.kept_append_line(frame.f_code, name)
    else:
        kept = None
    events.outputs_held(origin=graph.origin, graph=graph.graph_id, references_added=0,
                        name=name if attribute is None else "%s.%s" % (name, attribute),
                        overwritten_by=pooled.graph_id, address=graph_tensors.address(output),
                        frames=frames.encode_stack(frame, kept) if kept else frames.encode_stack(frame))


def _entries(value):
    """`value` and what it holds one level down: a container's entries, an object's attributes, a closure's cells."""
    if isinstance(value, dict):
        return [value] + list(value.values())[:_MAX_ENTRIES]
    if isinstance(value, (list, tuple)) or type(value).__name__ == "deque":
        return [value] + list(value)[:_MAX_ENTRIES]
    cells = getattr(value, "__closure__", None) if callable(value) else None
    if cells:
        return [value] + [_cell(c) for c in cells]
    return [value] + [entry for _, entry in _attributes(value) if _is_plain(value)]


def _attributes(value):
    """(name, value) of an object's instance attributes; none for modules, classes, functions and containers."""
    attributes = getattr(value, "__dict__", None) if not isinstance(value, type) else None
    if not isinstance(attributes, dict) or not _is_object(value):
        return []
    return list(attributes.items())[:_MAX_ENTRIES]


def _is_object(value):
    torch = sys.modules["torch"]
    return not isinstance(value, (torch.nn.Module, torch.Tensor, type(sys))) and not callable(value)


def _is_plain(value):
    """A record of values (a dataclass, a namedtuple-like object): its attributes are entries of the variable."""
    return hasattr(type(value), "__dataclass_fields__") or hasattr(value, "__slots__")


def _cell(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return None


def _held(entries, ranges):
    """The tensor among `entries` that lies in one of `ranges` (an output or a view of one); None."""
    tensor = sys.modules["torch"].Tensor
    for entry in entries:
        start = graph_tensors.address(entry) if isinstance(entry, tensor) else 0
        if start and any(low <= start < high for low, high in ranges):
            return entry
    return None
