"""pool_order.py against real torch on a CPU: graphs captured into one pool, replayed out of capture order, and a
later graph's output the program still holds and reads after an earlier graph's replay is sent (an outputs-held event
naming the earlier graph), at the line that kept it where there is one; the clean twins (the output copied first, the
graphs replayed in capture order, handles on the static outputs, a lazily filled dict of them) send nothing. The
graphs are stand-ins whose replays the probe watches as it watches CUDA's; their outputs are CPU tensors, named by the
capture's body or known only by the blocks the capture left allocated in the pool.

usage: pool_order_test.py PROBE_DIR [TORCH_SITE_DIR]
"""
import sys
import weakref

from probe_checks import Graph, Recorder, check, finish, line_of, use_probe_and_torch

use_probe_and_torch(sys.argv)
import torch  # noqa: E402

from graphcheck_probe import bridge, graph_tensors, pool_order, watches  # noqa: E402
from graphcheck_probe.bridge import EventKind  # noqa: E402

HERE = __file__
POOL = 7


def pooled_graphs(*outputs, named=True):
    """Graphs captured in order into POOL, the k-th leaving `outputs[k]` (a tensor, or None for none): named by the
    capture's body, or known by their blocks. Their replays are watched."""
    graphs = []
    for output in outputs:
        graph = Graph()
        blocks = () if named or output is None else {(graph_tensors.address(output),
                                                      graph_tensors.address(output) + graph_tensors.nbytes(output))}
        watch = watches.graph_watch(graph)
        watch.pooled = pool_order.captured(graph, POOL, blocks)
        if named and output is not None:
            pool_order.name_outputs(watch.pooled, [weakref.ref(output)])
        watches.watch_replays(graph, None)
        graphs.append(graph)
    return graphs


def fresh():
    bridge.recorder = Recorder(HERE)
    pool_order._pools.clear()
    return bridge.recorder


def sent(recorder):
    return [(e["text"], e["line"]) for e in recorder.of(EventKind.OUTPUTS_HELD)]


# An encoder and a scorer (blind set 5's pipeline-pool-out-of-order): the scores read after the next query's encoder
# replay; the twin copies them first.
def pipeline(copy):
    static_emb, static_scores = torch.zeros(4), torch.zeros(4)
    encode, score = pooled_graphs(static_emb, static_scores)
    results = []
    encode.replay()
    for i in range(4):
        score.replay()
        if copy:
            scores = static_scores.clone()
        else:
            scores = static_scores  # kept under another name
        encode.replay()
        results.append(scores.sum())
    return results


# The same with `scores` bound to the output once before the loop too (a handle at the scorer's first replay, then
# kept in the loop): from a review, missed at b9de567.
def pipeline_prebound():
    static_emb, static_scores = torch.zeros(4), torch.zeros(4)
    encode, score = pooled_graphs(static_emb, static_scores)
    scores = static_scores
    results = []
    encode.replay()
    for i in range(4):
        score.replay()
        scores = static_scores  # kept again in the loop
        encode.replay()
        results.append(scores.sum())
    return results


recorder = fresh()
pipeline_prebound()
check("pipeline: an alias bound before the loop and again in it is sent",
      sent(recorder) == [("scores", line_of(HERE, "# kept again in the loop"))], sent(recorder))

for copy in (False, True):
    recorder = fresh()
    pipeline(copy)
    if copy:
        check("pipeline: scores copied before the encoder's replay send nothing", not sent(recorder), sent(recorder))
    else:
        check("pipeline: scores read after the earlier graph's replay are sent at the line that kept them",
              sent(recorder) == [("scores", line_of(HERE, "# kept under another name"))], sent(recorder))
        event = recorder.of(EventKind.OUTPUTS_HELD)[0]
        check("the event names the earlier graph and the output's address",
              event["pool"] != 0 and event["value_now"] != 0 and event["value"] == 0, event)


# Bucket graphs captured smallest first, replayed in arrival order, the outputs gathered in a list (blind set 5's
# bucket-tick-gather), known only by the blocks their captures left: sent at the append. The twin appends copies.
def bucket_ticks(copy):
    outputs = {size: torch.zeros(size) for size in (4, 8, 16)}
    graphs = dict(zip(outputs, pooled_graphs(*outputs.values(), named=False)))
    results = []
    for order in ((16, 8, 4), (8, 4, 16)):
        pending = []
        for size in order:
            graphs[size].replay()
            if copy:
                pending.append(outputs[size].clone())
            else:
                pending.append(outputs[size])  # gathered as it is
        results.extend(out.sum() for out in pending)
    return results


for copy in (False, True):
    recorder = fresh()
    bucket_ticks(copy)
    lines = {line for _, line in sent(recorder)}
    if copy:
        check("buckets: copies gathered send nothing", not sent(recorder), sent(recorder))
    else:
        check("buckets: a list of later buckets' outputs read after an earlier bucket's replay is sent at the append",
              lines == {line_of(HERE, "# gathered as it is")} and {t for t, _ in sent(recorder)} == {"pending"},
              sent(recorder))


# An actor-critic agent keeping the policy's output in an attribute (blind pool-order ppo-act-then-value): read after
# the critic's replay (captured first), at the loop's line that replays it.
class Agent:
    def __init__(self):
        self.static_value, self.static_logp = torch.zeros(4), torch.zeros(4)
        self.critic, self.policy = pooled_graphs(self.static_value, self.static_logp, named=False)
        self.last_logp = None

    def value(self):
        self.critic.replay()
        return self.static_value

    def act(self):
        self.policy.replay()
        self.last_logp = self.static_logp
        return self.last_logp.argmax()


def rollout(value_first):
    agent = Agent()
    buffer = []
    for t in range(4):
        if value_first:
            value = agent.value()
            action = agent.act()
        else:
            action = agent.act()
            value = agent.value()  # the critic after the policy
        buffer.append((agent.last_logp[action], value.clone()))
    return buffer


for value_first in (False, True):
    recorder = fresh()
    rollout(value_first)
    if value_first:
        check("agent: the graphs replayed in capture order send nothing", not sent(recorder), sent(recorder))
    else:
        check("agent: an attribute holding the later graph's output, read after the earlier replay, is sent",
              sent(recorder) == [("agent.last_logp", line_of(HERE, "# the critic after the policy"))], sent(recorder))


# Clean: handles on the static outputs bound before the loop, read right after their own graph's replays (blind
# pool-order diffusion-preview-alias), and a dict of outputs filled as buckets are first captured and read right after
# each bucket's replay (lazy serving).
def handles():
    static_eps, static_x0 = torch.zeros(4), torch.zeros(4)
    denoise, step = pooled_graphs(static_eps, static_x0)
    preview = static_x0
    seen = []
    for t in range(4):
        step.replay()
        seen.append(preview.clone())
        denoise.replay()
        seen.append(static_eps.sum())
    return seen


def lazy_serving():
    outputs, graphs = {}, {}
    seen = []
    for size in (8, 4, 8, 16, 4, 16, 8):
        if size not in graphs:
            outputs[size] = torch.zeros(size)
            graphs[size] = pooled_graphs(outputs[size])[0]
            pool_order._pools[POOL] = [g for s in outputs for g in pool_order._pools[POOL] if g.graph() is graphs[s]]
        graphs[size].replay()
        out = outputs[size]
        seen.append(out.sum())
    return seen


# Clean, from a review of the probe: buckets replayed in capture order each tick into a results dict read at the
# tick's end (each output refreshed before the read); a decode loop after a prefill in its pool, whose last logits
# are read after the loop; a graphed callables' output stored into a dict entry each step.
def in_order_ticks():
    outputs = {size: torch.zeros(size) for size in (16, 8, 4)}
    graphs = dict(zip(outputs, pooled_graphs(*outputs.values())))
    results, seen = {}, []
    for tick in range(4):
        for size in (16, 8, 4):
            graphs[size].replay()
            results[size] = outputs[size]
        seen.append(sum(out.sum() for out in results.values()))
    return seen


def decode_after_prefill():
    static_state, static_logits = torch.zeros(4), torch.zeros(4)
    prefill, decode = pooled_graphs(static_state, static_logits)
    best = []
    for prompt in range(3):
        prefill.replay()
        for t in range(3):
            decode.replay()
            logits = static_logits
        best.append(logits.max())
    return best


for name, program in (("handles bound before the loop", handles), ("a lazily filled dict of outputs", lazy_serving),
                      ("buckets replayed in capture order into a dict read at the tick's end", in_order_ticks),
                      ("a decode loop's last logits read after it", decode_after_prefill)):
    recorder = fresh()
    program()
    check("clean: %s send nothing" % name, not sent(recorder), sent(recorder))

finish()
