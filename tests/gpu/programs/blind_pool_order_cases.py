"""PyTorch programs written blind (without reading how graphcheck detects anything) about one term of the contract of
CUDA graphs that share a memory pool (pool=other_graph.pool(), torch.cuda.graph_pool_handle(), capture_begin(pool=...)
or make_graphed_callables with several callables): graphs sharing a pool must be replayed in the order they were
captured, because a later capture may place its outputs in memory the earlier graph only used for temporaries, which
the earlier graph's replay writes again. Each defect mode captures an earlier graph with wide temporaries (GELU MLPs,
widths >= 512), then a later graph into the same pool, and reads an output of the later graph after replaying the
earlier one, so it reads the earlier graph's temporaries. Each has a clean twin that does the same computation the
right way (a clone right after the replay, replays in capture order, or a pool of its own), and three more clean
programs share a pool in ways that are correct but could look suspicious. One program per mode (argv[1]). The line
where each defect is introduced ends in "# defect: MODE". Each program runs the same steps twice from the same seeds,
once through graphs and once eagerly, and prints "MODE vs eager: max difference D" over its outputs or trained
parameters; TERMS names the contract term each defect mode breaks, TWINS its clean twin and CLEAN the extra clean
programs. `python3 blind_pool_order_cases.py MODE --cpu-check` runs only the eager reference, on the CPU, as a dry run.

  spec-decode-draft-probs        speculative decoding: the target model's graph is captured first and the draft
                                 model's into target_graph.pool(); each round keeps the draft distribution in a
                                 Proposal dataclass, replays the target, then runs the acceptance test on proposal.q
  spec-decode-draft-probs-clone  clean: the Proposal holds static_q.clone()
  ppo-act-then-value             PPO rollout with an Agent whose critic graph is captured first (capture_begin /
                                 capture_end) and whose policy graph goes into the critic's pool; act() keeps the
                                 log-probabilities in agent.last_logp, value() replays the critic, and the rollout
                                 buffer reads agent.last_logp after value()
  ppo-value-then-act             clean: the rollout calls value() before act() (capture order) and reads the critic's
                                 static value after the policy's replay
  distill-teacher-prefetch       knowledge distillation through make_graphed_callables((teacher, student)) (one pool,
                                 teacher's forward captured first); the soft targets of the next batch are prefetched
                                 through the graphed teacher between the student's forward and its loss/backward
  distill-teacher-after-step     clean: the next batch's soft targets are computed after the optimizer step
  serve-admit-before-emit        continuous-batching server: prefill graph captured first into a graph_pool_handle(),
                                 decode graph second; each tick's decode outputs are kept in a dict keyed by request
                                 id, a newly arrived request is prefilled, then the tick's responses are emitted
  serve-emit-before-admit        clean: the tick's responses are emitted before the new request is prefilled
  two-tower-user-closure         two-tower retrieval: the item tower's graph is captured first, the user tower's into
                                 its pool; a scorer closure bound to the user embeddings scores item shards, each
                                 embedded by a replay of the item tower
  two-tower-user-closure-clone   clean: the closure is bound to a clone of the user embeddings
  trainer-eval-shared-pool       whole training-step graph, then an evaluation graph captured into the training
                                 graph's pool; evaluate() returns the eval graph's outputs as a tuple, which is kept
                                 and logged at the next log step, after more training replays
  trainer-eval-own-pool          clean: the evaluation graph gets a pool of its own
  augment-stream-prefetch        GPU augmentation graph (captured second, capture_begin(pool=handle)) behind a
                                 generator that yields its static output; the training loop prefetches the next
                                 augmented batch from the generator before replaying the training step (captured
                                 first into the same handle), and copies it into the step's input on the next iteration
  augment-stream-prefetch-after-step  clean: the next batch is pulled from the generator after the training replay
  selfplay-kl-history            two-player self-play: the black policy's graph is captured first, the white policy's
                                 into its pool; each ply's distribution is appended to a deque(maxlen=2) and the KL
                                 between the last two plies is computed after each ply
  selfplay-kl-history-clone      clean: the deque holds clones
  lazy-bucket-read-own           clean: batch-size bucket graphs captured lazily on first arrival (capture_begin
                                 into one graph_pool_handle()), replayed in arrival order; each response is sliced
                                 and cloned right after its own replay
  diffusion-preview-alias        clean: denoiser graph captured first, scheduler-step graph into its pool; an alias of
                                 the step's x0 prediction is bound once before the sampling loop and read (cloned for
                                 the preview) only right after the step graph's replay
  moe-experts-clone-list         clean: expert graphs captured in expert order into one pool and replayed busiest
                                 first each step; the list of expert outputs is rebuilt each step from clones

Answer key (line numbers of the "# defect:" markers in this file):
  spec-decode-draft-probs   line 257: the Proposal keeps the draft graph's static distribution, and the target
                            graph (captured earlier into the same pool) is replayed before proposal.q is read, writing
                            its temporaries over it.
  ppo-act-then-value        line 326: the critic graph, captured before the policy graph into the same pool, is
                            replayed while agent.last_logp still aliases the policy graph's static output, which the
                            buffer then reads.
  distill-teacher-prefetch  line 363: the graphed teacher's forward (captured first in the shared pool) is replayed
                            between the student's forward and the use of its output and saved activations (loss and
                            backward), overwriting them.
  serve-admit-before-emit   line 470: the prefill graph (captured first) is replayed while the dict still holds views
                            of the decode graph's static probabilities, which are emitted afterwards.
  two-tower-user-closure    line 529: the closure holds the user tower's static embeddings, and each item shard's
                            replay of the item tower (captured earlier into the same pool) overwrites them before the
                            closure reads them.
  trainer-eval-shared-pool  line 596: the eval graph is captured into the training graph's pool, and its outputs,
                            kept by the caller, are read after later training replays that write their temporaries
                            there.
  augment-stream-prefetch   line 688: the prefetched batch is the augmentation graph's static output, and the training
                            graph (captured first into the same handle) is replayed before it is copied into the
                            step's input.
  selfplay-kl-history       line 740: the deque keeps the white graph's static distribution, and the black graph
                            (captured earlier into the same pool) is replayed on the next ply before the KL reads it.
"""
import math
import random
import sys
from collections import deque
from dataclasses import dataclass

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


# ------------------------------------------ speculative decoding: the draft's distribution kept in a dataclass


VOCAB = 512
DECODE_BATCH = 64
CONTEXT = 64


@dataclass
class Proposal:
    """A round's draft: the proposed token of each sequence and the draft distribution it was drawn from."""
    tokens: torch.Tensor
    q: torch.Tensor


def acceptance(proposal, p, u):
    """The speculative-sampling test: accept the draft token with probability min(1, p/q); on rejection the token is
    resampled from the normalised residual max(p - q, 0)."""
    index = proposal.tokens[:, None]
    q_token = proposal.q.gather(1, index).squeeze(1)
    p_token = p.gather(1, index).squeeze(1)
    ratio = (p_token / q_token).clamp(max=1.0)
    accepted = (u < ratio).float()
    residual = (p - proposal.q).clamp(min=0.0)
    residual = residual / (residual.sum(-1, keepdim=True) + 1e-6)
    return [ratio, accepted, residual]


def speculative_decoding(name, clone_q):
    def run(graphed):
        reseed()
        target = mlp(CONTEXT, 1024, 1024, 1024, VOCAB, seed=0, act=nn.GELU).eval()
        draft = mlp(CONTEXT, 256, VOCAB, seed=1, act=nn.GELU).eval()
        contexts = gaussian(DECODE_BATCH, CONTEXT, seed=21, n=STEPS)
        uniforms = torch.sigmoid(gaussian(DECODE_BATCH, seed=22, n=STEPS))
        results = []
        with torch.no_grad():
            if not graphed:
                for i in range(STEPS):
                    q = draft(contexts[i]).softmax(-1)
                    proposal = Proposal(tokens=q.argmax(-1), q=q)
                    p = target(contexts[i]).softmax(-1)
                    results += acceptance(proposal, p, uniforms[i])
                synchronize()
                return results
            static_ctx = contexts[0].clone()
            # the target model is the one served; its graph is captured first, the draft shares its memory pool
            target_graph, static_p = capture(lambda: target(static_ctx).softmax(-1))
            draft_graph, static_q = capture(lambda: draft(static_ctx).softmax(-1), pool=target_graph.pool())
            for i in range(STEPS):
                static_ctx.copy_(contexts[i])
                draft_graph.replay()
                if clone_q:
                    proposal = Proposal(tokens=static_q.argmax(-1), q=static_q.clone())
                else:
                    proposal = Proposal(tokens=static_q.argmax(-1), q=static_q)  # defect: spec-decode-draft-probs
                target_graph.replay()  # the target scores the same positions
                results += acceptance(proposal, static_p, uniforms[i])
        synchronize()
        return results

    compare(name, run)


# ------------------------------------------------ actor-critic rollout: log-probabilities kept on the agent


ENVS, OBS, ACTIONS = 64, 48, 16


class Agent:
    """Actor-critic agent. When graphed, its networks run as CUDA graphs captured with capture_begin/capture_end: the
    critic first, then the policy into the critic's pool (the two are never needed at the same time)."""

    def __init__(self, graphed):
        self.critic = mlp(OBS, 1024, 1024, 1024, 1, seed=0, act=nn.GELU).eval()
        self.policy = mlp(OBS, 256, 256, ACTIONS, seed=1, act=nn.GELU).eval()
        self.obs = torch.zeros(ENVS, OBS, device=DEVICE)
        self.graphed = graphed
        self.last_logp = None
        if graphed:
            self.value_graph, self.static_value = capture_manual(self._value)
            self.policy_graph, self.static_logp = capture_manual(self._logp, pool=self.value_graph.pool())

    def _value(self):
        return self.critic(self.obs).squeeze(-1)

    def _logp(self):
        return F.log_softmax(self.policy(self.obs), -1)

    def observe(self, obs):
        self.obs.copy_(obs)

    def value(self):
        if self.graphed:
            self.value_graph.replay()
            return self.static_value
        return self._value()

    def act(self, perturbation):
        """Samples an action per environment (Gumbel-max with a staged perturbation); keeps the log-probabilities."""
        if self.graphed:
            self.policy_graph.replay()
            self.last_logp = self.static_logp
        else:
            self.last_logp = self._logp()
        return (self.last_logp + perturbation).argmax(-1)


def ppo_rollout(name, value_first):
    def run(graphed):
        reseed()
        observations = gaussian(ENVS, OBS, seed=31, n=STEPS)
        perturbations = gaussian(ENVS, ACTIONS, seed=32, n=STEPS)
        buffer = []
        with torch.no_grad():
            agent = Agent(graphed)
            for t in range(STEPS):
                agent.observe(observations[t])
                if value_first:
                    value = agent.value()
                    action = agent.act(perturbations[t])
                else:
                    action = agent.act(perturbations[t])
                    value = agent.value()  # defect: ppo-act-then-value
                logp = agent.last_logp
                buffer.append(logp.gather(1, action[:, None]).squeeze(1))  # log pi(a|s) for the PPO ratio
                buffer.append(-(logp.exp() * logp).sum(-1))  # entropy bonus
                buffer.append(value.clone())
        synchronize()
        return buffer

    compare(name, run)


# ------------------------------- distillation: make_graphed_callables((teacher, student)) and a teacher prefetch


TEMPERATURE = 2.0


def distillation(name, prefetch):
    def run(graphed):
        reseed()
        teacher = mlp(256, 1024, 1024, 10, seed=0, act=nn.GELU).eval().requires_grad_(False)
        student = mlp(256, 512, 10, seed=1, act=nn.GELU)
        xs = gaussian(64, 256, seed=41, n=STEPS + 1)
        ys = classes(64, 10, seed=42, n=STEPS)
        if graphed:  # one pool; the teacher runs first in the live workload, so it comes first in the tuple
            teacher, student = torch.cuda.make_graphed_callables((teacher, student), ((xs[0] + 0,), (xs[0] + 0,)))
        optimizer = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)

        def soft_targets(k):
            with torch.no_grad():
                return (teacher(xs[k]) / TEMPERATURE).softmax(-1)

        losses = []
        t_probs = soft_targets(0)
        for i in range(STEPS):
            s_logits = student(xs[i])
            if prefetch:
                t_next = soft_targets(i + 1)  # defect: distill-teacher-prefetch
            loss = (F.kl_div(F.log_softmax(s_logits / TEMPERATURE, -1), t_probs, reduction="batchmean")
                    * TEMPERATURE ** 2 + 0.5 * F.cross_entropy(s_logits, ys[i]))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
            if not prefetch:
                t_next = soft_targets(i + 1)
            t_probs = t_next
        synchronize()
        return state(student) + losses

    compare(name, run)


# --------------------------------------- continuous batching: decode outputs kept in a dict keyed by request id


SLOTS = 8
PROMPT_LEN = 64
STATE = 64
ARRIVALS = {0: 0, 1: 1, 2: 2, 4: 3, 5: 4, 7: 5}  # tick -> id of the request arriving then
LIFETIME = 4  # decode ticks each request runs for
TICKS = 10


class Prefill(nn.Module):
    """Encodes a prompt (PROMPT_LEN token features) into a request's initial decoder state by attention pooling."""

    def __init__(self):
        super().__init__()
        self.tokens = mlp(STATE, 1024, 1024, STATE, seed=0, act=nn.GELU)
        torch.manual_seed(1)
        self.query = nn.Parameter(torch.randn(STATE, device=DEVICE) / 8)

    def forward(self, prompt):
        h = self.tokens(prompt)
        weights = (h @ self.query).softmax(0)
        return torch.tanh((weights[:, None] * h).sum(0))


class Decoder(nn.Module):
    """One decode step for all slots: the next-token distribution and the next state."""

    def __init__(self):
        super().__init__()
        self.head = mlp(STATE, 512, VOCAB, seed=2, act=nn.GELU)
        torch.manual_seed(3)
        self.update = nn.Linear(STATE + VOCAB, STATE).to(DEVICE)

    def forward(self, state_):
        probs = self.head(state_).softmax(-1)
        return probs, torch.tanh(self.update(torch.cat([state_, probs], -1)))


def continuous_batching(name, emit_first):
    def run(graphed):
        reseed()
        prefill, decoder = Prefill().eval(), Decoder().eval()
        prompts = gaussian(PROMPT_LEN, STATE, seed=51, n=len(ARRIVALS))
        slot_state = torch.zeros(SLOTS, STATE, device=DEVICE)  # the decode graph's static input when graphed
        static_prompt = torch.zeros(PROMPT_LEN, STATE, device=DEVICE)
        active, remaining, free = {}, {}, list(range(SLOTS))
        responses = []
        with torch.no_grad():
            if graphed:
                pool = torch.cuda.graph_pool_handle()
                prefill_graph, static_init = capture(lambda: prefill(static_prompt), pool)
                decode_graph, (static_probs, static_next) = capture(lambda: decoder(slot_state), pool)

            def admit(tick):
                rid = ARRIVALS.get(tick)
                if rid is None:
                    return
                slot = free.pop(0)
                if graphed:
                    static_prompt.copy_(prompts[rid])
                    prefill_graph.replay()
                    init = static_init
                else:
                    init = prefill(prompts[rid])
                slot_state[slot].copy_(init)
                active[rid], remaining[rid] = slot, LIFETIME

            def emit(outputs):
                for rid in sorted(outputs):
                    probs = outputs[rid]
                    responses.append(probs.clone())
                    responses.append(probs.max(-1).values.reshape(1))

            for tick in range(TICKS):
                outputs = {}
                decoded = list(active)
                if decoded:
                    if graphed:
                        decode_graph.replay()
                        probs, next_state = static_probs, static_next
                    else:
                        probs, next_state = decoder(slot_state)
                    for rid in decoded:
                        outputs[rid] = probs[active[rid]]
                    slot_state.copy_(next_state)
                if emit_first:
                    emit(outputs)
                    admit(tick)
                else:
                    admit(tick)  # defect: serve-admit-before-emit
                    emit(outputs)
                for rid in decoded:  # retire finished requests
                    remaining[rid] -= 1
                    if remaining[rid] == 0:
                        slot = active.pop(rid)
                        slot_state[slot].zero_()
                        free.append(slot)
        synchronize()
        return responses

    compare(name, run)


# ------------------------------------------ two-tower retrieval: a scorer closure over the user embeddings


SHARD = 128
SHARDS = 4
USERS = 16
USER_BATCHES = 3


def make_scorer(user_emb, temperature=0.05):
    def score(item_emb):
        return user_emb @ item_emb.T / temperature

    return score


def two_tower(name, clone_user):
    def run(graphed):
        reseed()
        item_tower = mlp(96, 1024, 1024, 64, seed=0, act=nn.GELU).eval()
        user_tower = mlp(32, 512, 512, 64, seed=1, act=nn.GELU).eval()
        items = gaussian(SHARD, 96, seed=61, n=SHARDS)
        users = gaussian(USERS, 32, seed=62, n=USER_BATCHES)

        def embed_items(x):
            return F.normalize(item_tower(x), dim=-1)

        def embed_users(u):
            return F.normalize(user_tower(u), dim=-1)

        results = []
        with torch.no_grad():
            if graphed:
                static_items, static_users = items[0].clone(), users[0].clone()
                item_graph, static_item_emb = capture(lambda: embed_items(static_items))
                user_graph, static_user_emb = capture(lambda: embed_users(static_users), pool=item_graph.pool())
            for b in range(USER_BATCHES):
                if not graphed:
                    scorer = make_scorer(embed_users(users[b]))
                else:
                    static_users.copy_(users[b])
                    user_graph.replay()
                    if clone_user:
                        scorer = make_scorer(static_user_emb.clone())
                    else:
                        scorer = make_scorer(static_user_emb)  # defect: two-tower-user-closure
                shard_scores = []
                for s in range(SHARDS):  # the candidate items are embedded shard by shard
                    if graphed:
                        static_items.copy_(items[s])
                        item_graph.replay()
                        item_emb = static_item_emb
                    else:
                        item_emb = embed_items(items[s])
                    shard_scores.append(scorer(item_emb))
                scores = torch.cat(shard_scores, 1)
                results += [scores, scores.topk(10, dim=1).values]
        synchronize()
        return results

    compare(name, run)


# ---------------------------------------- whole training step plus an evaluation graph, results logged lazily


EVAL_AT = (1, 4)  # steps after which the model is evaluated
LOG_AT = (2, 3, 6)  # steps after which the latest evaluation is logged


def trainer_eval(name, own_pool):
    def run(graphed):
        reseed()
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(128, 1024), nn.GELU(), nn.LayerNorm(1024), nn.Linear(1024, 1024), nn.GELU(),
                              nn.Linear(1024, 10)).to(DEVICE)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs, ys = gaussian(64, 128, seed=71), classes(64, 10, seed=72)
        static_x, static_y = xs[0].clone(), ys[0].clone()
        val_x, val_y = gaussian(128, 128, seed=73, n=1)[0], classes(128, 10, seed=74, n=1)[0]
        feed = iter(range(BATCHES))

        def load():
            k = next(feed)
            static_x.copy_(xs[k])
            static_y.copy_(ys[k])

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(static_x), static_y).backward()
            optimizer.step()

        def warm_step():
            load()
            step()

        def evaluate_fn():
            with torch.no_grad():
                logits = model(val_x)
                loss = F.cross_entropy(logits, val_y)
                accuracy = (logits.argmax(-1) == val_y).float().mean()
                class_mass = logits.softmax(-1).mean(0)
            return loss, accuracy, class_mass

        if graphed:
            side_stream(warm_step)
            train_graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(train_graph):
                step()
            if own_pool:
                eval_graph, eval_out = capture(evaluate_fn)
            else:
                eval_graph, eval_out = capture(evaluate_fn, pool=train_graph.pool())  # defect: trainer-eval-shared-pool
        else:
            for _ in range(WARMUP):
                warm_step()

        def evaluate():
            """The evaluation metrics as a tuple (loss, accuracy, mean class probabilities)."""
            if graphed:
                eval_graph.replay()
                return eval_out
            return evaluate_fn()

        log = []
        last_eval = None
        for i in range(STEPS):
            load()
            if graphed:
                train_graph.replay()
            else:
                step()
            if i in EVAL_AT:
                last_eval = evaluate()
            if i in LOG_AT:
                log.append(torch.cat([t.reshape(-1) for t in last_eval]))
        synchronize()
        return state(model) + log

    compare(name, run)


# ------------------------------------- GPU augmentation behind a generator, prefetched one batch ahead


def augment(raw, jitter):
    """Contrast/brightness jitter, a horizontal flip and per-image standardisation, flattened for the MLP."""
    contrast = 1.0 + 0.2 * jitter[:, 0].view(-1, 1, 1, 1)
    brightness = 0.1 * jitter[:, 1].view(-1, 1, 1, 1)
    x = raw * contrast + brightness
    x = torch.where(jitter[:, 2].view(-1, 1, 1, 1) > 0, x.flip(-1), x)
    mean = x.mean(dim=(2, 3), keepdim=True)
    std = x.std(dim=(2, 3), keepdim=True)
    return ((x - mean) / (std + 1e-5)).flatten(1)


def augment_stream(name, prefetch_before_step):
    def run(graphed):
        reseed()
        model = mlp(768, 1024, 1024, 10, seed=0, act=nn.GELU)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        raw = gaussian(64, 3, 16, 16, seed=81, n=STEPS)
        jitter = gaussian(64, 3, seed=82, n=STEPS)
        ys = classes(64, 10, seed=83, n=STEPS)
        static_x = augment(gaussian(64, 3, 16, 16, seed=84, n=1)[0], gaussian(64, 3, seed=85, n=1)[0])
        static_y = classes(64, 10, seed=86, n=1)[0]
        static_raw, static_jitter = raw[0].clone(), jitter[0].clone()

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(static_x), static_y).backward()
            optimizer.step()

        if graphed:  # warm-up: WARMUP real steps on the warm batch, then the captures
            handle = torch.cuda.graph_pool_handle()
            train_graph, _ = capture_manual(step, pool=handle)
            aug_graph, static_aug = capture_manual(lambda: augment(static_raw, static_jitter), pool=handle)
        else:
            for _ in range(WARMUP):
                step()

        def batches():
            for k in range(STEPS):
                static_raw.copy_(raw[k])
                static_jitter.copy_(jitter[k])
                if graphed:
                    aug_graph.replay()
                    yield static_aug
                else:
                    yield augment(static_raw, static_jitter)

        def train_step():
            if graphed:
                train_graph.replay()
            else:
                step()

        stream = batches()
        upcoming = next(stream)
        for i in range(STEPS):
            static_x.copy_(upcoming)
            static_y.copy_(ys[i])
            if prefetch_before_step:
                if i + 1 < STEPS:
                    upcoming = next(stream)  # defect: augment-stream-prefetch
                train_step()
            else:
                train_step()
                if i + 1 < STEPS:
                    upcoming = next(stream)
        synchronize()
        return state(model)

    compare(name, run)


# ------------------------------------------ self-play: a deque of the last two plies' distributions


CELLS = 81
GAMES = 64


def self_play(name, clone_history):
    def run(graphed):
        reseed()
        black = mlp(CELLS, 1024, 1024, CELLS, seed=0, act=nn.GELU).eval()
        white = mlp(CELLS, 256, CELLS, seed=1, act=nn.GELU).eval()
        noise = gaussian(GAMES, CELLS, seed=91, n=STEPS, scale=0.1)
        board = torch.zeros(GAMES, CELLS, device=DEVICE)

        def policy(net, sign):
            def probs():
                own_view = board * sign  # each player sees its own stones as +1
                return net(own_view).masked_fill(board != 0, float("-inf")).softmax(-1)

            return probs

        players = [policy(black, 1.0), policy(white, -1.0)]
        history = deque(maxlen=2)
        records = []
        with torch.no_grad():
            if graphed:  # black (the stronger, larger net) first; white shares its pool
                black_graph, black_probs = capture(players[0])
                white_graph, white_probs = capture(players[1], pool=black_graph.pool())
                turns = [(black_graph, black_probs), (white_graph, white_probs)]
            for ply in range(STEPS):
                color = 1.0 if ply % 2 == 0 else -1.0
                if graphed:
                    graph, probs = turns[ply % 2]
                    graph.replay()
                else:
                    probs = players[ply % 2]()
                if clone_history:
                    history.append(probs.clone())
                else:
                    history.append(probs)  # defect: selfplay-kl-history
                move = (probs.log() + noise[ply]).argmax(-1)
                board.scatter_(1, move[:, None], color)
                records.append(probs.max(-1).values)
                if len(history) == 2:  # how much the reply's distribution departs from the previous ply's
                    previous, current = history
                    records.append((current * ((current + 1e-8).log() - (previous + 1e-8).log())).sum(-1))
        synchronize()
        return records + [board.clone()]

    compare(name, run)


# ------------------------------ clean: lazily captured bucket graphs, each output read right after its replay


LAZY_BUCKETS = (8, 16, 32)
ARRIVING = (5, 30, 8, 12, 27, 3, 16, 9, 31, 14)  # request sizes in arrival order


def lazy_buckets(name):
    def run(graphed):
        reseed()
        model = mlp(32, 512, 512, 10, seed=0, act=nn.GELU).eval()
        requests = [gaussian(n, 32, seed=100 + k, n=1)[0] for k, n in enumerate(ARRIVING)]
        pool = torch.cuda.graph_pool_handle() if graphed else None
        graphs = {}
        results = []
        with torch.no_grad():
            for request in requests:
                n = request.shape[0]
                bucket = next(b for b in LAZY_BUCKETS if b >= n)
                padded = F.pad(request, (0, 0, 0, bucket - n))
                if not graphed:
                    results.append(model(padded).softmax(-1)[:n].clone())
                    continue
                if bucket not in graphs:  # captured on the bucket's first arrival, into the shared pool
                    static_in = torch.zeros(bucket, 32, device=DEVICE)
                    graph, static_out = capture_manual(lambda x=static_in: model(x).softmax(-1), pool=pool)
                    graphs[bucket] = (static_in, graph, static_out)
                static_in, graph, static_out = graphs[bucket]
                static_in.copy_(padded)
                graph.replay()
                results.append(static_out[:n].clone())
        synchronize()
        return results

    compare(name, run)


# --------------------------- clean: diffusion sampler, the x0 preview alias read only right after its replay


SAMPLER_STEPS = 8
TIME_FEATURES = 16


def time_embedding(t):
    freqs = torch.exp(-math.log(1000.0) * torch.arange(TIME_FEATURES // 2, dtype=torch.float32) / (TIME_FEATURES // 2))
    return torch.cat([torch.sin(t * freqs), torch.cos(t * freqs)]).to(DEVICE)


def diffusion_preview(name):
    def run(graphed):
        reseed()
        denoiser = mlp(64 + TIME_FEATURES, 1024, 1024, 64, seed=0, act=nn.GELU).eval()
        x_start = gaussian(32, 64, seed=111, n=1)[0]
        noises = gaussian(32, 64, seed=112, n=SAMPLER_STEPS, scale=0.5)
        betas = torch.linspace(1e-3, 0.05, SAMPLER_STEPS, dtype=torch.float64)
        alpha_bar = torch.cumprod(1 - betas, 0)
        static_x = x_start.clone()
        static_temb = torch.zeros(TIME_FEATURES, device=DEVICE)
        static_coef = torch.zeros(5, device=DEVICE)  # 1/sqrt(a), b/sqrt(1-ab), sigma, sqrt(1-ab), sqrt(ab)
        static_noise = torch.zeros(32, 64, device=DEVICE)

        def predict_noise():
            return denoiser(torch.cat([static_x, static_temb.expand(static_x.shape[0], -1)], -1))

        def scheduler_step(eps):
            c = static_coef
            x0 = ((static_x - c[3] * eps) / c[4]).clamp(-4, 4)
            x_prev = c[0] * (static_x - c[1] * eps) + c[2] * static_noise
            return x_prev, x0

        previews = []
        with torch.no_grad():
            if graphed:
                denoise_graph, static_eps = capture(predict_noise)
                step_graph, (static_x_prev, static_x0) = capture(lambda: scheduler_step(static_eps),
                                                                 pool=denoise_graph.pool())
                preview = static_x0  # bound once; read only right after the step graph's replay
            for k, t in enumerate(reversed(range(SAMPLER_STEPS))):
                a, ab = 1 - betas[t].item(), alpha_bar[t].item()
                sigma = math.sqrt(betas[t].item()) if t > 0 else 0.0
                static_temb.copy_(time_embedding(float(t)))
                static_coef.copy_(torch.tensor([1 / math.sqrt(a), (1 - a) / math.sqrt(1 - ab), sigma,
                                                math.sqrt(1 - ab), math.sqrt(ab)], device=DEVICE))
                static_noise.copy_(noises[k])
                if graphed:
                    denoise_graph.replay()
                    step_graph.replay()
                    x_prev = static_x_prev
                    if k % 2 == 1:
                        previews.append(preview.clone())
                else:
                    x_prev, x0 = scheduler_step(predict_noise())
                    if k % 2 == 1:
                        previews.append(x0.clone())
                static_x.copy_(x_prev)
        synchronize()
        return previews + [static_x.clone()]

    compare(name, run)


# ----------------------------- clean: expert graphs replayed busiest first, the output list rebuilt from clones


EXPERTS = 4
CAPACITY = 64
TOKENS = 128
MODEL_DIM = 64


def moe_experts(name):
    def run(graphed):
        reseed()
        experts = [mlp(MODEL_DIM, 512, MODEL_DIM, seed=10 + e, act=nn.GELU).eval() for e in range(EXPERTS)]
        torch.manual_seed(20)
        router = nn.Linear(MODEL_DIM, EXPERTS).to(DEVICE)
        xs = gaussian(TOKENS, MODEL_DIM, seed=121, n=STEPS)
        results = []
        with torch.no_grad():
            if graphed:
                pool = torch.cuda.graph_pool_handle()
                static_in, graphs, static_out = [], [], []
                for e in range(EXPERTS):  # captured in expert order
                    static_in.append(torch.zeros(CAPACITY, MODEL_DIM, device=DEVICE))
                    graph, out = capture(lambda x=static_in[e], m=experts[e]: m(x), pool)
                    graphs.append(graph)
                    static_out.append(out)
            for i in range(STEPS):
                x = xs[i]
                gate, assign = router(x).softmax(-1).max(-1)
                counts = torch.bincount(assign, minlength=EXPERTS).tolist()
                order = sorted(range(EXPERTS), key=lambda e: -counts[e])  # busiest expert first
                expert_outputs = []  # rebuilt every step
                for e in order:
                    index = (assign == e).nonzero().squeeze(1)[:CAPACITY]
                    padded = torch.zeros(CAPACITY, MODEL_DIM, device=DEVICE)
                    padded[:index.numel()] = x[index]
                    if graphed:
                        static_in[e].copy_(padded)
                        graphs[e].replay()
                        expert_outputs.append((index, static_out[e].clone()))
                    else:
                        expert_outputs.append((index, experts[e](padded)))
                y = x.clone()  # residual
                for index, out in expert_outputs:
                    y.index_add_(0, index, gate[index, None] * out[:index.numel()])
                results.append(y)
        synchronize()
        return results

    compare(name, run)


MODES = {
    "spec-decode-draft-probs": lambda name: speculative_decoding(name, clone_q=False),
    "spec-decode-draft-probs-clone": lambda name: speculative_decoding(name, clone_q=True),
    "ppo-act-then-value": lambda name: ppo_rollout(name, value_first=False),
    "ppo-value-then-act": lambda name: ppo_rollout(name, value_first=True),
    "distill-teacher-prefetch": lambda name: distillation(name, prefetch=True),
    "distill-teacher-after-step": lambda name: distillation(name, prefetch=False),
    "serve-admit-before-emit": lambda name: continuous_batching(name, emit_first=False),
    "serve-emit-before-admit": lambda name: continuous_batching(name, emit_first=True),
    "two-tower-user-closure": lambda name: two_tower(name, clone_user=False),
    "two-tower-user-closure-clone": lambda name: two_tower(name, clone_user=True),
    "trainer-eval-shared-pool": lambda name: trainer_eval(name, own_pool=False),
    "trainer-eval-own-pool": lambda name: trainer_eval(name, own_pool=True),
    "augment-stream-prefetch": lambda name: augment_stream(name, prefetch_before_step=True),
    "augment-stream-prefetch-after-step": lambda name: augment_stream(name, prefetch_before_step=False),
    "selfplay-kl-history": lambda name: self_play(name, clone_history=False),
    "selfplay-kl-history-clone": lambda name: self_play(name, clone_history=True),
    "lazy-bucket-read-own": lazy_buckets,
    "diffusion-preview-alias": diffusion_preview,
    "moe-experts-clone-list": moe_experts,
}

# Each defect mode's clean twin.
TWINS = {
    "spec-decode-draft-probs": "spec-decode-draft-probs-clone",
    "ppo-act-then-value": "ppo-value-then-act",
    "distill-teacher-prefetch": "distill-teacher-after-step",
    "serve-admit-before-emit": "serve-emit-before-admit",
    "two-tower-user-closure": "two-tower-user-closure-clone",
    "trainer-eval-shared-pool": "trainer-eval-own-pool",
    "augment-stream-prefetch": "augment-stream-prefetch-after-step",
    "selfplay-kl-history": "selfplay-kl-history-clone",
}

# The contract term each defect mode breaks.
TERMS = {mode: "pool-output" for mode in TWINS}

# Clean programs without a defect twin: they share a pool and must not be flagged.
CLEAN = ("lazy-bucket-read-own", "diffusion-preview-alias", "moe-experts-clone-list")

if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "--cpu-check":
        DEVICE = "cpu"
        CPU_CHECK = True
    deterministic()
    MODES[sys.argv[1]](sys.argv[1])
