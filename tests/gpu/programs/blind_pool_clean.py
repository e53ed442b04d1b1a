"""PyTorch programs written blind (without reading how graphcheck detects anything) that share one CUDA-graph memory
pool between several graphs (pool=other_graph.pool(), torch.cuda.graph_pool_handle(), capture_begin(pool=...) or
make_graphed_callables with a tuple of callables) correctly. Graphs sharing a pool must be replayed in the order they
were captured, or each graph's outputs must be consumed (read or cloned) after its own latest replay and before any
replay of a graph captured earlier into the same pool. Every program here keeps to that, but in shapes that could look
suspicious: aliases of static outputs that outlive other replays without being read, outputs read in a helper, in a
generator, at the end of a tick, after a loop, or from module-level code. None has a defect, so TWINS is empty and
every mode is listed in CLEAN. One program per mode (argv[1]). Each program runs the same steps twice from the same
seeds, once through graphs and once eagerly, and prints "MODE vs eager: max difference D" over its outputs or trained
parameters. `python3 blind_pool_clean.py MODE --cpu-check` runs only the eager reference, on the CPU, as a dry run.

  bucket-dict-tick             batch-size bucket graphs captured smallest first into one graph_pool_handle(); each
                               tick replays every bucket in capture order, keeps results[bucket] = static output (a
                               persistent dict) and reads the whole dict at the end of the tick
  kv-prefill-decode            KV-cache language model: the prefill graph captured first into a handle, the decode
                               graph into prefill_graph.pool(); per request a prefill replay, a greedy decode loop, and
                               the last step's logits read after the loop (before the next request's prefill)
  helper-read-after-replay     detector and classifier graphs (capture_begin(pool=handle)); a helper replays a graph
                               and summarises its static output into new tensors before returning; the classifier
                               (captured second) is replayed before the detector each step
  object-last-alias            cascade ranking: the fine scorer's graph captured first, the coarse scorer's into its
                               pool; each scorer object sets self.last = static output right after its own replay and
                               its report() is read before any other replay (the stale alias is never read)
  generator-yield-clone        feature-extraction graph (captured second) behind a generator that replays it and yields
                               a clone; the classifier loop (graph captured first) prefetches the next item before
                               replaying the classifier on the current one
  encoder-decoder-clone-list   encoder graph captured first, decoder step graph into its pool reading the encoder's
                               static memory; each decoder step's log-probabilities are cloned into a list
  graphed-callables-microbatch make_graphed_callables((embed, trunk, head)) (one pool) called in order on each
                               microbatch; the loss and accuracy are read right after the forward, then backward and an
                               optimizer update per microbatch
  script-bucket-loop           module-level script (not in a function): bucket graphs captured in a top-level loop into
                               the first graph's pool, replayed largest first, each output cloned right after its replay
  while-break-decode           planner graph captured first, step graph into its pool; a while True loop replays the
                               step graph until every sequence emitted EOS (break), the last logits read after the loop
  running-sum-inplace          ensemble members captured into the first member's pool and replayed in reverse order;
                               each member's output is accumulated in place (total += out) right after its replay
"""
import math
import random
import runpy
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

DEVICE = "cuda"
CPU_CHECK = False
STEPS = 8  # replays (eager steps) of each program's main loop
WARMUP = 3  # side-stream warm-up iterations before each capture
BATCHES = WARMUP + STEPS


def deterministic():
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def reseed():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)


def gaussian(*shape, seed, n=BATCHES, scale=1.0, shift=0.0):
    """n batches of the given shape drawn from a generator of their own (the default generators untouched)."""
    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(seed)
    return torch.randn(n, *shape, device=DEVICE, generator=gen) * scale + shift


def classes(batch, num, seed, n=BATCHES, low=0):
    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(seed)
    return torch.randint(low, num, (n, batch), device=DEVICE, generator=gen)


def mlp(*sizes, seed=0, act=nn.ReLU):
    torch.manual_seed(seed)
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), act()]
    return nn.Sequential(*layers[:-1]).to(DEVICE)


def state(*modules):
    """Copies of the modules' parameters and buffers, as float."""
    tensors = []
    for m in modules:
        tensors += list(m.parameters()) + list(m.buffers())
    return [t.detach().float().clone() for t in tensors]


def synchronize():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def largest_gap(graphed, eager):
    """The largest elementwise difference; a NaN (a read of memory never written) counts as an infinite one."""
    gap = (graphed.float() - eager.float()).abs()
    return gap.nan_to_num(nan=math.inf, posinf=math.inf).max().item()


def compare(name, run):
    """Runs the program through graphs and eagerly (same seeds) and prints the largest difference."""
    if CPU_CHECK:
        eager = run(False)
        total = sum(t.double().abs().sum().item() for t in eager)
        print("%s eager only (cpu check): %d tensors, sum of magnitudes %.6g" % (name, len(eager), total), flush=True)
        return
    graphed = run(True)
    eager = run(False)
    if len(graphed) != len(eager) or any(g.shape != e.shape for g, e in zip(graphed, eager)):
        raise SystemExit("%s: graphed and eager runs returned different shapes" % name)
    difference = max(largest_gap(g, e) for g, e in zip(graphed, eager))
    print("%s vs eager: max difference %.4g" % (name, difference), flush=True)


def side_stream(fn, iterations=WARMUP):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(iterations):
            fn()
    torch.cuda.current_stream().wait_stream(s)


def capture(fn, pool=None):
    """Side-stream warm-up of fn, then a capture of it (into pool when given): returns the graph and fn's output."""
    side_stream(fn)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, pool=pool):
        out = fn()
    return graph, out


def capture_manual(fn, pool=None):
    """Side-stream warm-up of fn, then a capture of it with the low-level API (capture_begin(pool=pool) /
    capture_end on a side stream): returns the graph and fn's output."""
    side_stream(fn)
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        graph.capture_begin(pool=pool)
        out = fn()
        graph.capture_end()
    torch.cuda.current_stream().wait_stream(stream)
    return graph, out


# ----------------------------- bucket graphs replayed in capture order, a persistent dict read at the end of a tick


DICT_BUCKETS = (16, 32, 64)  # capture order
DICT_FEATURES = 64


def bucket_dict_tick(name):
    def run(graphed):
        reseed()
        model = mlp(DICT_FEATURES, 1024, 1024, 32, seed=0, act=nn.GELU).eval()
        loads = {b: gaussian(b, DICT_FEATURES, seed=130 + j, n=STEPS) for j, b in enumerate(DICT_BUCKETS)}
        results = {}  # bucket -> its latest output; lives across ticks
        log = []
        with torch.no_grad():
            if graphed:
                pool = torch.cuda.graph_pool_handle()
                static_in, graphs, static_out = {}, {}, {}
                for b in DICT_BUCKETS:  # smallest bucket first
                    static_in[b] = torch.zeros(b, DICT_FEATURES, device=DEVICE)
                    graphs[b], static_out[b] = capture(lambda x=static_in[b]: model(x).log_softmax(-1), pool)
            for tick in range(STEPS):
                for b in DICT_BUCKETS:  # the same order as captured
                    if graphed:
                        static_in[b].copy_(loads[b][tick])
                        graphs[b].replay()
                        results[b] = static_out[b]
                    else:
                        results[b] = model(loads[b][tick]).log_softmax(-1)
                # end of tick: every bucket's result is read
                log.append(torch.cat([results[b].max(-1).values for b in DICT_BUCKETS]))
                log.append(sum(results[b].exp().mean(0) for b in DICT_BUCKETS))
        synchronize()
        return log

    compare(name, run)


# ----------------------------- KV cache: prefill graph, then a decode graph in the same pool, last logits after loop


KV_BATCH = 8
KV_DIM = 256
KV_VOCAB = 512
KV_PROMPT = 16
KV_MAX = 48
KV_NEW = 12  # decode steps per request
KV_REQUESTS = 2


class TinyLM(nn.Module):
    """A one-block decoder-only language model with a preallocated key/value cache passed in by the caller."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(KV_VOCAB, KV_DIM)
        self.pos = nn.Embedding(KV_MAX, KV_DIM)
        self.norm1 = nn.LayerNorm(KV_DIM)
        self.norm2 = nn.LayerNorm(KV_DIM)
        self.qkv = nn.Linear(KV_DIM, 3 * KV_DIM)
        self.proj = nn.Linear(KV_DIM, KV_DIM)
        self.head = nn.Linear(KV_DIM, KV_VOCAB)
        self.ffn = mlp(KV_DIM, 1024, KV_DIM, seed=1, act=nn.GELU)
        self.to(DEVICE)

    def block(self, x, attn):
        h = x + self.proj(attn)
        return h + self.ffn(self.norm2(h))

    def prefill(self, tokens, k_cache, v_cache):
        """Runs the prompt, fills the cache's first positions, returns the last position's logits."""
        length = tokens.shape[1]
        x = self.embed(tokens) + self.pos.weight[:length]
        q, k, v = self.qkv(self.norm1(x)).chunk(3, -1)
        k_cache[:, :length].copy_(k)
        v_cache[:, :length].copy_(v)
        scores = q @ k.transpose(1, 2) / math.sqrt(KV_DIM)
        causal = torch.ones(length, length, dtype=torch.bool, device=tokens.device).tril()
        attn = scores.masked_fill(~causal, float("-inf")).softmax(-1) @ v
        return self.head(self.block(x, attn)[:, -1])

    def decode(self, token, pos, k_cache, v_cache):
        """One step: writes the new key/value at pos and attends over positions <= pos."""
        x = self.embed(token) + self.pos(pos)
        q, k, v = self.qkv(self.norm1(x)).chunk(3, -1)
        k_cache.index_copy_(1, pos, k[:, None])
        v_cache.index_copy_(1, pos, v[:, None])
        scores = (k_cache @ q[:, :, None]).squeeze(-1) / math.sqrt(KV_DIM)
        visible = torch.arange(KV_MAX, device=pos.device) <= pos
        weights = scores.masked_fill(~visible, float("-inf")).softmax(-1)
        attn = (weights[:, None, :] @ v_cache).squeeze(1)
        return self.head(self.block(x, attn))


def kv_prefill_decode(name):
    def run(graphed):
        reseed()
        lm = TinyLM().eval()
        prompts = classes(KV_BATCH * KV_PROMPT, KV_VOCAB, seed=141, n=KV_REQUESTS).view(KV_REQUESTS, KV_BATCH,
                                                                                          KV_PROMPT)
        k_cache = torch.zeros(KV_BATCH, KV_MAX, KV_DIM, device=DEVICE)
        v_cache = torch.zeros(KV_BATCH, KV_MAX, KV_DIM, device=DEVICE)
        static_prompt = prompts[0].clone()
        static_token = torch.zeros(KV_BATCH, dtype=torch.long, device=DEVICE)
        static_pos = torch.full((1,), KV_PROMPT, dtype=torch.long, device=DEVICE)
        outputs = []
        with torch.no_grad():
            if graphed:
                handle = torch.cuda.graph_pool_handle()
                prefill_graph, static_first = capture(lambda: lm.prefill(static_prompt, k_cache, v_cache), handle)
                decode_graph, static_logits = capture(lambda: lm.decode(static_token, static_pos, k_cache, v_cache),
                                                      pool=prefill_graph.pool())
            for r in range(KV_REQUESTS):
                static_prompt.copy_(prompts[r])
                if graphed:
                    prefill_graph.replay()
                    first = static_first
                else:
                    first = lm.prefill(static_prompt, k_cache, v_cache)
                static_token.copy_(first.argmax(-1))
                generated = [static_token.clone()]
                for t in range(KV_NEW):
                    static_pos.fill_(KV_PROMPT + t)
                    if graphed:
                        decode_graph.replay()
                        logits = static_logits
                    else:
                        logits = lm.decode(static_token, static_pos, k_cache, v_cache)
                    static_token.copy_(logits.argmax(-1))
                    generated.append(static_token.clone())
                # the last decode step's logits, read after the loop (the decode graph replayed last)
                outputs += [torch.stack(generated, 1), logits.log_softmax(-1), logits.clone()]
        synchronize()
        return outputs

    compare(name, run)


# ----------------------------- a helper that replays a graph and summarises its output before returning


DET_FEATURES = 128
DET_BATCH = 64


def summarize(logits):
    """New tensors only: the top probability, the predicted class and the entropy of each row."""
    probs = logits.softmax(-1)
    entropy = -(probs * probs.clamp_min(1e-12).log()).sum(-1)
    return [probs.max(-1).values, probs.argmax(-1).float(), entropy]


def replay_and_summarize(graph, static_in, batch, static_out):
    static_in.copy_(batch)
    graph.replay()
    return summarize(static_out)


def helper_read_after_replay(name):
    def run(graphed):
        reseed()
        detector = mlp(DET_FEATURES, 1024, 1024, 20, seed=0, act=nn.GELU).eval()
        classifier = mlp(DET_FEATURES, 512, 10, seed=1, act=nn.GELU).eval()
        frames = gaussian(DET_BATCH, DET_FEATURES, seed=151, n=STEPS)
        crops = gaussian(DET_BATCH, DET_FEATURES, seed=152, n=STEPS)
        records = []
        with torch.no_grad():
            if graphed:
                handle = torch.cuda.graph_pool_handle()
                det_in = torch.zeros(DET_BATCH, DET_FEATURES, device=DEVICE)
                cls_in = torch.zeros(DET_BATCH, DET_FEATURES, device=DEVICE)
                det_graph, det_out = capture_manual(lambda: detector(det_in), pool=handle)
                cls_graph, cls_out = capture_manual(lambda: classifier(cls_in), pool=handle)
            for i in range(STEPS):
                # the classifier (captured second) runs before the detector; each is summarised in the helper
                if graphed:
                    records += replay_and_summarize(cls_graph, cls_in, crops[i], cls_out)
                    records += replay_and_summarize(det_graph, det_in, frames[i], det_out)
                else:
                    records += summarize(classifier(crops[i]))
                    records += summarize(detector(frames[i]))
        synchronize()
        return records

    compare(name, run)


# ----------------------------- scorer objects caching self.last = static output, read before any other replay


CANDIDATES = 256
SHORTLIST = 64
ITEM_FEATURES = 64


class Scorer:
    """Scores a batch of candidates; keeps its latest scores in self.last."""

    def __init__(self, net, batch, graphed, pool=None):
        self.net, self.graphed = net, graphed
        self.static_in = torch.zeros(batch, ITEM_FEATURES, device=DEVICE)
        self.last = None
        if graphed:
            self.graph, self.static_out = capture_manual(self._score, pool=pool)

    def _score(self):
        return torch.sigmoid(self.net(self.static_in).squeeze(-1))

    def __call__(self, x):
        self.static_in.copy_(x)
        if self.graphed:
            self.graph.replay()
            self.last = self.static_out
        else:
            self.last = self._score()
        return self

    def report(self):
        return [self.last.mean().reshape(1), self.last.topk(8).values]


def object_last_alias(name):
    def run(graphed):
        reseed()
        fine_net = mlp(ITEM_FEATURES, 1024, 1024, 1, seed=0, act=nn.GELU).eval()
        coarse_net = mlp(ITEM_FEATURES, 256, 1, seed=1, act=nn.GELU).eval()
        queries = gaussian(CANDIDATES, ITEM_FEATURES, seed=161, n=STEPS)
        ranked = []
        with torch.no_grad():
            fine = Scorer(fine_net, SHORTLIST, graphed)  # the expensive model owns the pool
            coarse = Scorer(coarse_net, CANDIDATES, graphed, pool=fine.graph.pool() if graphed else None)
            for i in range(STEPS):
                candidates = queries[i]
                ranked += coarse(candidates).report()
                shortlist = coarse.last.topk(SHORTLIST).indices  # read before the fine scorer's replay
                ranked.append(shortlist.float())
                ranked += fine(candidates[shortlist]).report()
                order = fine.last.argsort(descending=True)
                ranked.append(shortlist[order].float())
        synchronize()
        return ranked

    compare(name, run)


# ----------------------------- a generator that replays the feature graph and yields a clone


RAW_FEATURES = 256
FEAT_BATCH = 64


def generator_yield_clone(name):
    def run(graphed):
        reseed()
        extractor = mlp(RAW_FEATURES, 512, 256, seed=0, act=nn.GELU).eval()
        classifier = mlp(256, 1024, 1024, 10, seed=1, act=nn.GELU).eval()
        raw = gaussian(FEAT_BATCH, RAW_FEATURES, seed=171, n=STEPS)
        results = []
        with torch.no_grad():
            static_raw = torch.zeros(FEAT_BATCH, RAW_FEATURES, device=DEVICE)
            static_feat_in = torch.zeros(FEAT_BATCH, 256, device=DEVICE)
            if graphed:
                handle = torch.cuda.graph_pool_handle()
                cls_graph, static_logits = capture_manual(lambda: classifier(static_feat_in), pool=handle)
                ext_graph, static_feat = capture_manual(lambda: F.layer_norm(extractor(static_raw), (256,)),
                                                        pool=handle)

            def features():
                for k in range(STEPS):
                    static_raw.copy_(raw[k])
                    if graphed:
                        ext_graph.replay()
                        yield static_feat.clone()
                    else:
                        yield F.layer_norm(extractor(static_raw), (256,))

            stream = features()
            current = next(stream)
            for i in range(STEPS):
                upcoming = next(stream) if i + 1 < STEPS else None  # prefetched before the classifier runs
                static_feat_in.copy_(current)
                if graphed:
                    cls_graph.replay()
                    logits = static_logits
                else:
                    logits = classifier(static_feat_in)
                results += [logits.softmax(-1), current[:, :8]]
                current = upcoming
        synchronize()
        return results

    compare(name, run)


# ----------------------------- encoder and decoder graphs in one pool, decoder outputs cloned into a list


SRC_LEN = 32
SRC_FEATURES = 128
ENC_DIM = 256
DEC_VOCAB = 256
DEC_STEPS = 6
SEQS = 16
SENTENCES = 3


class StepDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = mlp(ENC_DIM, 512, ENC_DIM, seed=11, act=nn.GELU)
        torch.manual_seed(12)
        self.mix = nn.Linear(2 * ENC_DIM, ENC_DIM).to(DEVICE)
        self.out = nn.Linear(ENC_DIM, DEC_VOCAB).to(DEVICE)

    def forward(self, memory, prev):
        q = self.query(prev)
        weights = ((memory @ q[:, :, None]).squeeze(-1) / math.sqrt(ENC_DIM)).softmax(-1)
        context = (weights[:, :, None] * memory).sum(1)
        h = torch.tanh(self.mix(torch.cat([q, context], -1)))
        return h, self.out(h).log_softmax(-1)


def encoder_decoder_clone_list(name):
    def run(graphed):
        reseed()
        encoder = mlp(SRC_FEATURES, 1024, ENC_DIM, seed=10, act=nn.GELU).eval()
        decoder = StepDecoder().eval()
        sources = gaussian(SEQS, SRC_LEN, SRC_FEATURES, seed=181, n=SENTENCES)
        steps_out = []
        with torch.no_grad():
            static_src = torch.zeros(SEQS, SRC_LEN, SRC_FEATURES, device=DEVICE)
            static_prev = torch.zeros(SEQS, ENC_DIM, device=DEVICE)
            if graphed:
                enc_graph, static_memory = capture(lambda: encoder(static_src))
                dec_graph, (static_h, static_logp) = capture(lambda: decoder(static_memory, static_prev),
                                                             pool=enc_graph.pool())
            for s in range(SENTENCES):
                static_src.copy_(sources[s])
                if graphed:
                    enc_graph.replay()
                else:
                    memory = encoder(static_src)
                static_prev.zero_()
                for t in range(DEC_STEPS):
                    if graphed:
                        dec_graph.replay()
                        h, logp = static_h, static_logp
                    else:
                        h, logp = decoder(memory, static_prev)
                    steps_out.append(logp.clone())
                    static_prev.copy_(h)
        synchronize()
        return steps_out + [torch.stack(steps_out).argmax(-1).float()]

    compare(name, run)


# ----------------------------- make_graphed_callables((embed, trunk, head)), loss read right after the forward


MICRO = 4  # microbatches per step
MICRO_BATCH = 32
IN_FEATURES = 256


def graphed_callables_microbatch(name):
    def run(graphed):
        reseed()
        torch.manual_seed(0)
        embed = nn.Sequential(nn.Linear(IN_FEATURES, 512), nn.LayerNorm(512)).to(DEVICE)
        trunk = nn.Sequential(nn.GELU(), nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 512), nn.GELU()).to(DEVICE)
        head = nn.Linear(512, 10).to(DEVICE)
        xs = gaussian(MICRO_BATCH, IN_FEATURES, seed=191, n=STEPS * MICRO)
        ys = classes(MICRO_BATCH, 10, seed=192, n=STEPS * MICRO)
        if graphed:  # one pool for all three; the tuple is in the order they run
            sample_x = torch.randn(MICRO_BATCH, IN_FEATURES, device=DEVICE)
            sample_h1 = torch.randn(MICRO_BATCH, 512, device=DEVICE, requires_grad=True)
            sample_h2 = torch.randn(MICRO_BATCH, 512, device=DEVICE, requires_grad=True)
            embed, trunk, head = torch.cuda.make_graphed_callables((embed, trunk, head),
                                                                   ((sample_x,), (sample_h1,), (sample_h2,)))
        params = list(embed.parameters()) + list(trunk.parameters()) + list(head.parameters())
        optimizer = torch.optim.SGD(params, lr=0.05, momentum=0.9)
        metrics = []
        for step in range(STEPS):
            for m in range(MICRO):
                k = step * MICRO + m
                logits = head(trunk(embed(xs[k])))
                loss = F.cross_entropy(logits, ys[k])
                accuracy = (logits.argmax(-1) == ys[k]).float().mean()
                metrics += [loss.detach().reshape(1), accuracy.reshape(1)]  # read right after the forward
                # each microbatch is its own update: the graphed backward hands out static gradient buffers, so the
                # gradients are not accumulated across backward replays
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
        synchronize()
        return state(embed, trunk, head) + metrics

    compare(name, run)


# ----------------------------- module-level script: see the end of this file


SCRIPT_BUCKETS = (8, 16, 32, 64)  # capture order
SCRIPT_FEATURES = 48
SCRIPT_ARRIVALS = ((5, 30, 60), (12, 64, 3), (17, 8, 40), (33, 2, 16))  # request sizes per tick


def script_bucket_loop(name):
    """This mode's program is module-level code (the end of this file); run the file as a script for it."""
    sys.argv[1:2] = [name]
    runpy.run_path(__file__, run_name="__main__")


# ----------------------------- a while loop with a break, the last logits read after it


WB_BATCH = 8
WB_QUERY = 64
WB_HIDDEN = 256
WB_VOCAB = 32
WB_EOS = 0
WB_PAD = -1
WB_MAX = 16
WB_REQUESTS = 3
WB_SHARPNESS = 20.0  # logit scale


class Planner(nn.Module):
    def __init__(self):
        super().__init__()
        self.encode = mlp(WB_QUERY, 1024, 1024, WB_HIDDEN, seed=20, act=nn.GELU)
        torch.manual_seed(21)
        self.head = nn.Linear(WB_HIDDEN, WB_VOCAB).to(DEVICE)

    def forward(self, query):
        h = torch.tanh(self.encode(query))
        return h, self.head(h) * WB_SHARPNESS


class Stepper(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(22)
        self.embed = nn.Embedding(WB_VOCAB, WB_HIDDEN).to(DEVICE)
        self.cell = mlp(2 * WB_HIDDEN, 512, WB_HIDDEN, seed=23, act=nn.GELU)
        torch.manual_seed(24)
        self.head = nn.Linear(WB_HIDDEN, WB_VOCAB).to(DEVICE)
        ramp = torch.zeros(WB_VOCAB)
        ramp[WB_EOS] = 0.8  # the end-of-sequence logit grows with the step count
        self.register_buffer("ramp", ramp.to(DEVICE))

    def forward(self, h, token, step):
        h_next = torch.tanh(self.cell(torch.cat([h, self.embed(token)], -1)))
        return h_next, self.head(h_next) * WB_SHARPNESS + self.ramp * step


def while_break_decode(name):
    def run(graphed):
        reseed()
        planner, stepper = Planner().eval(), Stepper().eval()
        queries = gaussian(WB_BATCH, WB_QUERY, seed=201, n=WB_REQUESTS)
        results = []
        with torch.no_grad():
            static_query = torch.zeros(WB_BATCH, WB_QUERY, device=DEVICE)
            static_h = torch.zeros(WB_BATCH, WB_HIDDEN, device=DEVICE)
            static_token = torch.zeros(WB_BATCH, dtype=torch.long, device=DEVICE)
            static_step = torch.zeros(1, device=DEVICE)
            if graphed:
                plan_graph, (static_h0, static_first) = capture(lambda: planner(static_query))
                step_graph, (static_h_next, static_logits) = capture(
                    lambda: stepper(static_h, static_token, static_step), pool=plan_graph.pool())
            for r in range(WB_REQUESTS):
                static_query.copy_(queries[r])
                if graphed:
                    plan_graph.replay()
                    h0, first = static_h0, static_first
                else:
                    h0, first = planner(static_query)
                static_h.copy_(h0)
                static_token.copy_(first[:, 1:].argmax(-1) + 1)  # the first token is never EOS
                done = torch.zeros(WB_BATCH, dtype=torch.bool, device=DEVICE)
                emitted = [static_token.clone()]
                t = 0
                while True:
                    static_step.fill_(float(t))
                    if graphed:
                        step_graph.replay()
                        h_next, logits = static_h_next, static_logits
                    else:
                        h_next, logits = stepper(static_h, static_token, static_step)
                    token = logits.argmax(-1)
                    emitted.append(torch.where(done, torch.full_like(token, WB_PAD), token))
                    done |= token == WB_EOS
                    static_token.copy_(token)
                    static_h.copy_(h_next)
                    t += 1
                    if bool(done.all()) or t == WB_MAX:
                        break
                # the step graph replayed last: its logits are read after the loop
                emitted += [torch.full_like(token, WB_PAD)] * (WB_MAX + 1 - len(emitted))  # a fixed width
                results += [torch.stack(emitted, 1).float(), logits.log_softmax(-1),
                            torch.tensor([float(t)], device=DEVICE)]
        synchronize()
        return results

    compare(name, run)


# ----------------------------- ensemble members, in-place running sum right after each replay


MEMBERS = 4
ENS_FEATURES = 128
ENS_BATCH = 64
ENS_CLASSES = 16


def running_sum_inplace(name):
    def run(graphed):
        reseed()
        members = [mlp(ENS_FEATURES, 512, 512, ENS_CLASSES, seed=30 + m, act=nn.GELU).eval() for m in range(MEMBERS)]
        xs = gaussian(ENS_BATCH, ENS_FEATURES, seed=211, n=STEPS)
        outputs = []
        with torch.no_grad():
            static_x = torch.zeros(ENS_BATCH, ENS_FEATURES, device=DEVICE)
            if graphed:
                graphs, static_probs = [], []
                for m, net in enumerate(members):  # member 0 first; the rest share its pool
                    pool = graphs[0].pool() if graphs else None
                    graph, probs = capture(lambda net=net: net(static_x).softmax(-1), pool)
                    graphs.append(graph)
                    static_probs.append(probs)
            total = torch.zeros(ENS_BATCH, ENS_CLASSES, device=DEVICE)
            total_sq = torch.zeros(ENS_BATCH, ENS_CLASSES, device=DEVICE)
            for i in range(STEPS):
                static_x.copy_(xs[i])
                total.zero_()
                total_sq.zero_()
                for m in reversed(range(MEMBERS)):  # last captured first
                    if graphed:
                        graphs[m].replay()
                        out = static_probs[m]
                    else:
                        out = members[m](static_x).softmax(-1)
                    total += out
                    total_sq += out * out
                mean = total / MEMBERS
                variance = total_sq / MEMBERS - mean * mean
                outputs += [mean.clone(), variance.sum(-1), mean.argmax(-1).float()]
        synchronize()
        return outputs

    compare(name, run)


MODES = {
    "bucket-dict-tick": bucket_dict_tick,
    "kv-prefill-decode": kv_prefill_decode,
    "helper-read-after-replay": helper_read_after_replay,
    "object-last-alias": object_last_alias,
    "generator-yield-clone": generator_yield_clone,
    "encoder-decoder-clone-list": encoder_decoder_clone_list,
    "graphed-callables-microbatch": graphed_callables_microbatch,
    "script-bucket-loop": script_bucket_loop,
    "while-break-decode": while_break_decode,
    "running-sum-inplace": running_sum_inplace,
}

# No defect modes here, so no twins.
TWINS = {}

TERMS = {}

# Clean programs: they share a pool and must not be flagged.
CLEAN = ("bucket-dict-tick", "kv-prefill-decode", "helper-read-after-replay", "object-last-alias",
         "generator-yield-clone", "encoder-decoder-clone-list", "graphed-callables-microbatch", "script-bucket-loop",
         "while-break-decode", "running-sum-inplace")

if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "--cpu-check":
        DEVICE = "cpu"
        CPU_CHECK = True
    deterministic()
    MODE = sys.argv[1]
    if MODE != "script-bucket-loop":
        MODES[MODE](MODE)
    else:
        # The script-bucket-loop program, as module-level code: bucket graphs captured in a top-level loop into the
        # first bucket's pool, requests padded to their bucket, buckets replayed largest first, each output cloned
        # right after its own replay.
        SCRIPT_RESULTS = {}
        for GRAPHED in ((False,) if CPU_CHECK else (True, False)):
            reseed()
            model = mlp(SCRIPT_FEATURES, 512, 512, 24, seed=0, act=nn.GELU).eval()
            torch.set_grad_enabled(False)
            bucket_in, bucket_graph, bucket_out = {}, {}, {}
            if GRAPHED:
                for bucket in SCRIPT_BUCKETS:
                    bucket_in[bucket] = torch.zeros(bucket, SCRIPT_FEATURES, device=DEVICE)
                    shared = bucket_graph[SCRIPT_BUCKETS[0]].pool() if bucket_graph else None
                    bucket_graph[bucket], bucket_out[bucket] = capture(
                        lambda x=bucket_in[bucket]: model(x).log_softmax(-1), pool=shared)
            collected = []
            for tick, sizes in enumerate(SCRIPT_ARRIVALS):
                requests = [gaussian(n, SCRIPT_FEATURES, seed=300 + 10 * tick + j, n=1)[0] for j, n in enumerate(sizes)]
                by_bucket = {}
                for request in requests:
                    by_bucket.setdefault(next(b for b in SCRIPT_BUCKETS if b >= request.shape[0]), []).append(request)
                for bucket in sorted(by_bucket, reverse=True):  # largest bucket first
                    for request in by_bucket[bucket]:
                        n = request.shape[0]
                        padded = F.pad(request, (0, 0, 0, bucket - n))
                        if GRAPHED:
                            bucket_in[bucket].copy_(padded)
                            bucket_graph[bucket].replay()
                            collected.append(bucket_out[bucket][:n].clone())
                        else:
                            collected.append(model(padded).log_softmax(-1)[:n].clone())
            synchronize()
            torch.set_grad_enabled(True)
            SCRIPT_RESULTS[GRAPHED] = collected
        compare(MODE, lambda graphed: SCRIPT_RESULTS[graphed])
