"""A fourth set of PyTorch programs written blind (without reading how graphcheck detects anything): each defect mode
captures CUDA graphs that capture fine and then compute something other than eager would, because the program breaks
a term of the capture contract after (or during) the capture, through code paths the first three sets do not use;
each has a clean twin that does the same computation the right way. One program per mode (argv[1]). The line where
each defect is introduced ends in "# defect: MODE". Each program runs the same steps twice from the same seeds, once
through graphs and once eagerly, and prints "MODE vs eager: max difference D" over its outputs or trained parameters
(and buffers); TERMS names the contract term each defect mode breaks and TWINS its clean twin.
`python3 blind_contract_cases_4.py MODE --cpu-check` runs only the eager reference, on the CPU, as a dry run.

  hook-features-pool           embedding service: a small convnet captured per thumbnail resolution into one shared
                               pool by a helper that returns only the graph; the embedding is read from the dict a
                               forward hook filled, which holds the last capture's tensor (hooks do not run on replay)
  hook-features-kept           clean: the hook's tensor of each capture is kept per resolution, read after its replay
  layer-graphs-probe-last      one graph per residual block, captured in a loop into one shared pool (`h = block(h)`);
                               an eager logit-lens probe after each block's replay reads `h`, the last block's output
  layer-graphs-probe-each      clean: every block's output kept in a list and probed after that block's replay
  grid-key-batch-only          (batch, frames) bucket graphs in one shared pool; the static outputs are kept in a dict
                               keyed by the batch size only ("the logits' shape only depends on it"), so the two frame
                               buckets of a batch size share the later capture's output
  grid-key-full                clean: the static outputs keyed by (batch, frames)
  ensemble-late-binding        ensemble members captured into one pool (pool=first_graph.pool()); each member's runner
                               is a closure binding its graph as a default argument but looking `out` up late, so every
                               runner returns the last member's output
  ensemble-bound-default       clean: the runner binds out=out as a default argument too
  enum-phase-weight            semi-supervised step whose consistency weight is the .value of an Enum member; the
                               schedule moves trainer.phase to later members between replays
  enum-phase-tensor            clean: entering a phase also fills a 0-d CUDA tensor that the step reads
  cpu-scalar-weight            deep-supervision step whose auxiliary-loss weight is a 0-d tensor filled in place by
                               the schedule, but created without a device (on the CPU, so capture bakes its value in)
  cuda-scalar-weight           clean: the same tensor created on the GPU
  deque-loss-balance           two-task step dividing each loss by the mean of a collections.deque of its recent
                               values, which the loop appends to after every replay
  deque-loss-balance-tensor    clean: the deque means are copied into a CUDA tensor the step reads
  contextvar-guidance          classifier-free-guidance sampler graph reading the guidance scale from a
                               contextvars.ContextVar that each request sets with a context manager
  contextvar-guidance-tensor   clean: the context manager also fills a 0-d CUDA tensor that the sampler reads
  validate-train-unfreezes-bn  fine-tuning step captured with the backbone's BatchNorm layers frozen (eval); the
                               periodic validation ends with model.train(), which unfreezes them
  validate-restores-modes      clean: validation restores each module's own training flag
  bitfit-switch                whole training step; half-way a loop over named_parameters sets
                               p.requires_grad = name.endswith("bias") (BitFit) and the graph replays on
  bitfit-recaptured            clean: the step is warmed up and captured again after the switch
  shared-step-no-grad          one run_batch() for training and validation that updates only when
                               torch.is_grad_enabled(); the graphed training step is replayed on the validation
                               batches inside a @torch.no_grad() validate()
  shared-step-eval-graph       clean: validation replays a second graph captured under torch.no_grad()
  double-buffer-swap           training step reading a device double buffer's `current` batch; the loader fills
                               `spare` and swaps them with a tuple assignment
  double-buffer-copy           clean: the loader copies the ready batch into `current`
  tensor-lr-rebound            capturable Adam with a tensor lr; a warm-up/cosine scheduler writes
                               group["lr"] = base * factor (a new tensor) between replays
  tensor-lr-inplace            clean: the scheduler copies base * factor into group["lr"]
  lru-mask-rebound             sliding-window attention encoder whose additive mask comes from an lru_cache'd
                               builder; set_window rebinds model.attn_bias to another cached tensor half-way
  lru-mask-copy                clean: the model owns a copy of the mask and set_window copies into it
  randaugment-choices          training step applying two augmentations picked with random.choices inside the capture
  randaugment-staged           clean: the picks drawn before each step into a one-hot CUDA tensor weighting all ops
  jigsaw-permutation           jigsaw pretext step: the tile permutation (and its class label) drawn with a numpy
                               Generator's permutation inside the capture
  jigsaw-permutation-staged    clean: the permutation drawn before each step into a CUDA index tensor and label
"""
import collections
import contextlib
import contextvars
import enum
import functools
import itertools
import math
import random
import statistics
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

DEVICE = "cuda"
CPU_CHECK = False
STEPS = 8  # replays (eager steps) after the first capture
WARMUP = 3  # side-stream warm-up iterations before each capture
BATCHES = WARMUP + STEPS + WARMUP  # enough batches for one re-capture


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


def classes(batch, num, seed, n=BATCHES):
    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(seed)
    return torch.randint(0, num, (n, batch), device=DEVICE, generator=gen)


def mlp(*sizes, seed=0, act=nn.ReLU):
    torch.manual_seed(seed)
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), act()]
    return nn.Sequential(*layers[:-1]).to(DEVICE)


def state(*modules):
    """Copies of the modules' parameters and buffers, as float."""
    tensors = itertools.chain.from_iterable(itertools.chain(m.parameters(), m.buffers()) for m in modules)
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


def train(step, load, graphed, before=None, after=None):
    """WARMUP real training steps (on a side stream when graphed), a capture of step(), then STEPS steps: replays or
    eager calls. load(k) fills the static inputs with batch k. before(i) runs ahead of step i; when it returns True,
    both runs do WARMUP more real steps and the graphed run captures again. after(out) gets each step's output (the
    static output when graphed)."""
    feed = iter(range(BATCHES))

    def warm_step():
        load(next(feed))
        step()

    def start():
        if not graphed:
            for _ in range(WARMUP):
                warm_step()
            return None, None
        side_stream(warm_step)
        new_graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(new_graph):
            static_out = step()
        return new_graph, static_out

    graph, static_out = start()
    for i in range(STEPS):
        if before is not None and before(i):
            graph, static_out = start()
        load(next(feed))
        if graphed:
            graph.replay()
            out = static_out
        else:
            out = step()
        if after is not None:
            after(out)
    synchronize()


def infer(forward, load, graphed, before=None):
    """Runs forward() on STEPS inputs: replays of a capture of it, or eager calls; returns copies of the outputs.
    before(i) runs ahead of step i; when it returns True the graphed run captures forward() again."""
    outputs = []
    graph = static_out = None
    if graphed:
        load(0)
        graph, static_out = capture(forward)
    for i in range(STEPS):
        recapture = before(i) if before is not None else False
        load(i)
        if graphed:
            if recapture:
                graph, static_out = capture(forward)
            graph.replay()
            out = static_out
        else:
            out = forward()
        outputs.append(out.detach().float().clone())
    synchronize()
    return outputs


def classifier_data(features=32, num=10, batch=16, shift=0.0):
    return gaussian(batch, features, seed=1, shift=shift), classes(batch, num, seed=2)


def statics(*series):
    """Static input tensors (copies of each series' first batch) and a load(k) that copies batch k into them."""
    tensors = [s[0].clone() for s in series]

    def load(k):
        for static, s in zip(tensors, series):
            static.copy_(s[k])

    return (*tensors, load)


def sgd_step(model, optimizer, static_x, static_y):
    """The usual whole-step closure: zero_grad, cross-entropy, backward, optimizer step."""

    def step():
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(static_x), static_y).backward()
        optimizer.step()

    return step


# ------------------------------------------------- shared pool: the output read through a forward hook's dict


THUMB_SIZES = (16, 24, 32)  # thumbnail resolutions served, captured in this order
THUMB_REQUESTS = [24, 16, 32, 24, 16, 24, 32, 16]


class ThumbNet(nn.Module):
    """A small convnet: two conv blocks, global average pooling to a 32-d embedding, a linear head."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU())
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        return self.head(self.pool(self.features(x)))


def capture_resolution(model, static_x, pool):
    """Warms the model up on one resolution's static input and captures its forward into the shared pool."""

    def forward():
        with torch.no_grad():
            return model(static_x)

    graph, _ = capture(forward, pool)
    return graph


def hook_features(name, keep):
    batch = 8

    def run(graphed):
        reseed()
        model = ThumbNet().to(DEVICE).eval()
        features = {}

        def keep_embedding(module, inputs, output):
            features["embedding"] = output

        model.pool.register_forward_hook(keep_embedding)
        requests = [gaussian(batch, 3, size, size, seed=40 + k, n=1)[0] for k, size in enumerate(THUMB_REQUESTS)]
        embeddings = []
        if not graphed:
            with torch.no_grad():
                for x in requests:
                    model(x)
                    embeddings.append(features["embedding"].clone())
            synchronize()
            return embeddings
        pool = torch.cuda.graph_pool_handle()
        static_in, graphs, kept = {}, {}, {}
        for size in THUMB_SIZES:
            static_in[size] = torch.zeros(batch, 3, size, size, device=DEVICE)
            graphs[size] = capture_resolution(model, static_in[size], pool)
            if keep:
                kept[size] = features["embedding"]  # the tensor the hook saw during this capture
        for x in requests:
            size = x.shape[-1]
            static_in[size].copy_(x)
            graphs[size].replay()
            if keep:
                embedding = kept[size]
            else:
                embedding = features["embedding"]  # defect: hook-features-pool
            embeddings.append(embedding.clone())
        synchronize()
        return embeddings

    compare(name, run)


# ------------------------------------------------------ shared pool: per-block graphs captured in a loop


class Block(nn.Module):
    """Pre-norm residual MLP block."""

    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 4 * width)
        self.fc2 = nn.Linear(4 * width, width)

    def forward(self, h):
        return h + self.fc2(F.gelu(self.fc1(self.norm(h))))


class DeepTagger(nn.Module):
    def __init__(self, width=64, depth=4, tags=12):
        super().__init__()
        torch.manual_seed(0)
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.norm = nn.LayerNorm(width)
        self.unembed = nn.Linear(width, tags)

    def readout(self, h):
        """The logit lens: the final norm and unembedding applied to any block's hidden state."""
        return self.unembed(self.norm(h)).log_softmax(-1)


def layer_probe(name, keep):
    def run(graphed):
        reseed()
        model = DeepTagger().to(DEVICE).eval()
        requests = gaussian(32, 64, seed=50, n=STEPS)
        lens = []
        with torch.no_grad():
            if not graphed:
                for x in requests:
                    h = x
                    for block in model.blocks:
                        h = block(h)
                        lens.append(model.readout(h))
                synchronize()
                return lens
            static_in = torch.zeros(32, 64, device=DEVICE)
            pool = torch.cuda.graph_pool_handle()
            graphs, hidden = [], []
            h = static_in
            for block in model.blocks:  # one graph per block, so that the probe can run between blocks
                side_stream(lambda: block(h))
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph, pool=pool):
                    h = block(h)
                graphs.append(graph)
                if keep:
                    hidden.append(h)
            for x in requests:
                static_in.copy_(x)
                for k, graph in enumerate(graphs):
                    graph.replay()
                    if keep:
                        current = hidden[k]
                    else:
                        current = h  # defect: layer-graphs-probe-last
                    lens.append(model.readout(current))
        synchronize()
        return lens

    compare(name, run)


# --------------------------------------------------- shared pool: outputs keyed by part of the bucket key


GRID_ROWS = (4, 8)
GRID_FRAMES = (16, 32)
GRID_REQUESTS = [(8, 16), (4, 32), (8, 32), (4, 16), (8, 16), (4, 16), (8, 32), (4, 32)]


class PooledFrameNet(nn.Module):
    """(batch, frames, 24) -> (batch, 6): per-frame MLP, mean over frames, linear head."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.frame = nn.Sequential(nn.Linear(24, 64), nn.GELU(), nn.Linear(64, 64))
        self.head = nn.Linear(64, 6)

    def forward(self, x):
        return self.head(self.frame(x).mean(1))


def grid_buckets(name, full_key):
    def run(graphed):
        reseed()
        model = PooledFrameNet().to(DEVICE).eval()
        requests = [gaussian(rows, frames, 24, seed=60 + k, n=1)[0] for k, (rows, frames) in enumerate(GRID_REQUESTS)]
        results = []
        with torch.no_grad():
            if not graphed:
                results = [model(x).clone() for x in requests]
                synchronize()
                return results
            pool = torch.cuda.graph_pool_handle()
            static_in, graphs, static_out = {}, {}, {}
            for rows in GRID_ROWS:
                for frames in GRID_FRAMES:
                    key = (rows, frames)
                    static_in[key] = torch.zeros(rows, frames, 24, device=DEVICE)
                    graphs[key], out = capture(lambda: model(static_in[key]), pool)
                    if full_key:
                        static_out[key] = out
                    else:  # the logits' shape only depends on the batch size
                        static_out[rows] = out  # defect: grid-key-batch-only
            for x in requests:
                rows, frames = x.shape[:2]
                static_in[(rows, frames)].copy_(x)
                graphs[(rows, frames)].replay()
                logits = static_out[(rows, frames)] if full_key else static_out[rows]
                results.append(logits.clone())
        synchronize()
        return results

    compare(name, run)


# ------------------------------------------------- shared pool: late-binding closures over the captures


def ensemble(name, bind):
    def run(graphed):
        reseed()
        members = [mlp(32, 96, 10, seed=seed).eval() for seed in (11, 12, 13)]
        requests = gaussian(16, 32, seed=70, n=STEPS)
        results = []
        with torch.no_grad():
            if not graphed:
                for x in requests:
                    results.append(torch.stack([m(x).softmax(-1) for m in members]).mean(0))
                synchronize()
                return results
            static_x = torch.zeros(16, 32, device=DEVICE)
            runners, pool = [], None
            for member in members:
                graph, out = capture(lambda: member(static_x), pool)
                pool = graph.pool()  # the other members share the first member's pool
                if bind:
                    def run_member(graph=graph, out=out):
                        graph.replay()
                        return out
                else:
                    def run_member(graph=graph):
                        graph.replay()
                        return out  # defect: ensemble-late-binding
                runners.append(run_member)
            for x in requests:
                static_x.copy_(x)
                results.append(torch.stack([runner().softmax(-1) for runner in runners]).mean(0))
        synchronize()
        return results

    compare(name, run)


# ------------------------------------------------------------------------ host value: an Enum member's value


class Phase(enum.Enum):
    """Phases of the semi-supervised schedule; each value is the weight of the consistency loss."""
    SUPERVISED = 0.0
    RAMP_UP = 0.5
    FULL = 2.0


PHASE_STARTS = {2: Phase.RAMP_UP, 5: Phase.FULL}  # step -> phase entered


class SemiSupervised:
    def __init__(self, on_device):
        self.phase = Phase.SUPERVISED
        self.weight = torch.tensor(self.phase.value, device=DEVICE) if on_device else None


def consistency_training(name, on_device):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs, ys = classifier_data()
        unlabeled, noise = gaussian(32, 32, seed=3), gaussian(32, 32, seed=4, scale=0.3)
        static_x, static_y, static_u, static_noise, load = statics(xs, ys, unlabeled, noise)
        trainer = SemiSupervised(on_device)

        def step():
            optimizer.zero_grad(set_to_none=True)
            supervised = F.cross_entropy(model(static_x), static_y)
            target = model(static_u).softmax(-1).detach()
            consistency = F.kl_div(model(static_u + static_noise).log_softmax(-1), target, reduction="batchmean")
            weight = trainer.weight if on_device else trainer.phase.value
            (supervised + weight * consistency).backward()
            optimizer.step()

        def advance(i):
            if i in PHASE_STARTS:
                if on_device:
                    trainer.phase = PHASE_STARTS[i]
                    trainer.weight.fill_(trainer.phase.value)
                else:
                    trainer.phase = PHASE_STARTS[i]  # defect: enum-phase-weight
            return False

        train(step, load, graphed, before=advance)
        return state(model)

    compare(name, run)


# ------------------------------------------------------ host value: a 0-d tensor that lives on the CPU


class DeeplySupervised(nn.Module):
    """A classifier with an auxiliary head on its first hidden layer."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.stem = nn.Sequential(nn.Linear(32, 64), nn.ReLU())
        self.body = nn.Sequential(nn.Linear(64, 64), nn.ReLU())
        self.aux_head = nn.Linear(64, 10)
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        h = self.stem(x)
        return self.head(self.body(h)), self.aux_head(h)


def deep_supervision(name, on_device):
    def run(graphed):
        reseed()
        model = DeeplySupervised().to(DEVICE)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        static_x, static_y, load = statics(*classifier_data())
        # a tensor, so that the schedule can update it in place
        aux_weight = torch.tensor(0.8, device=DEVICE) if on_device else torch.tensor(0.8)

        def step():
            optimizer.zero_grad(set_to_none=True)
            logits, aux_logits = model(static_x)
            loss = F.cross_entropy(logits, static_y) + aux_weight * F.cross_entropy(aux_logits, static_y)
            loss.backward()
            optimizer.step()

        def decay(i):  # the auxiliary head's weight halves every step
            value = 0.8 * 0.5 ** (i + 1)
            if on_device:
                aux_weight.fill_(value)
            else:
                aux_weight.fill_(value)  # defect: cpu-scalar-weight
            return False

        train(step, load, graphed, before=decay)
        return state(model)

    compare(name, run)


# ---------------------------------------------------- host value: running means in a collections.deque


TASKS = ("regress", "classify")


class TwoTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.trunk = nn.Sequential(nn.Linear(32, 64), nn.ReLU())
        self.regress = nn.Linear(64, 4)
        self.classify = nn.Linear(64, 10)


def loss_balance(name, on_device):
    def run(graphed):
        reseed()
        model = TwoTaskNet().to(DEVICE)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs, ys = classifier_data()
        static_x, static_y, static_t, load = statics(xs, ys, gaussian(16, 4, seed=5, scale=3.0))
        history = {task: collections.deque([1.0], maxlen=4) for task in TASKS}  # each task's recent loss values
        scales = torch.ones(2, device=DEVICE)

        def step():
            optimizer.zero_grad(set_to_none=True)
            h = model.trunk(static_x)
            regress = F.mse_loss(model.regress(h), static_t)
            classify = F.cross_entropy(model.classify(h), static_y)
            if on_device:
                loss = regress / scales[0] + classify / scales[1]
            else:  # each loss normalised by its recent mean, so that neither task dominates
                means = [statistics.fmean(history[task]) for task in TASKS]  # defect: deque-loss-balance
                loss = regress / means[0] + classify / means[1]
            loss.backward()
            optimizer.step()
            return torch.stack([regress.detach(), classify.detach()])

        def record(losses):
            for task, value in zip(TASKS, losses.tolist()):
                history[task].append(value)
            if on_device:
                scales.copy_(torch.tensor([statistics.fmean(history[task]) for task in TASKS]))

        train(step, load, graphed, after=record)
        return state(model)

    compare(name, run)


# ----------------------------------------------------------------------- host value: a contextvars.ContextVar


GUIDANCE = contextvars.ContextVar("guidance_scale", default=1.0)
GUIDED_REQUESTS = [3.0, 1.0, 7.5, 5.0, 2.0, 7.5, 1.0, 4.0]  # each request's guidance scale
SAMPLING_STEPS = 4


@contextlib.contextmanager
def guidance(scale, device_scale=None):
    """Sets the classifier-free guidance scale for the requests sampled inside the block."""
    token = GUIDANCE.set(scale)
    if device_scale is not None:
        device_scale.fill_(scale)
    try:
        yield
    finally:
        GUIDANCE.reset(token)
        if device_scale is not None:
            device_scale.fill_(GUIDANCE.get())


def guided_sampling(name, on_device):
    def run(graphed):
        reseed()
        denoiser = mlp(16 + 8, 128, 16, seed=5, act=nn.SiLU).eval()
        noise, conds = gaussian(8, 16, seed=80, n=STEPS), gaussian(8, 8, seed=81, n=STEPS)
        static_x = torch.zeros(8, 16, device=DEVICE)
        static_cond = torch.zeros(8, 8, device=DEVICE)
        device_scale = torch.tensor(GUIDANCE.get(), device=DEVICE) if on_device else None

        def denoise_step():
            with torch.no_grad():
                eps_cond = denoiser(torch.cat([static_x, static_cond], -1))
                eps_uncond = denoiser(torch.cat([static_x, torch.zeros_like(static_cond)], -1))
                scale = device_scale if on_device else GUIDANCE.get()
                static_x.sub_(0.1 * (eps_uncond + scale * (eps_cond - eps_uncond)))

        graph = None
        if graphed:
            graph, _ = capture(denoise_step)

        def sample(k):
            static_x.copy_(noise[k])
            static_cond.copy_(conds[k])
            for _ in range(SAMPLING_STEPS):
                if graphed:
                    graph.replay()
                else:
                    denoise_step()
            return static_x.clone()

        samples = []
        for k, scale in enumerate(GUIDED_REQUESTS):
            if on_device:
                with guidance(scale, device_scale):
                    samples.append(sample(k))
            else:
                with guidance(scale):  # defect: contextvar-guidance
                    samples.append(sample(k))
        synchronize()
        return samples

    compare(name, run)


# ------------------------------------------------ module mode: validation's model.train() undoes a BN freeze


class PretrainedNet(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.backbone = nn.Sequential(
            nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU())
        self.head = nn.Linear(64, 10)
        with torch.no_grad():  # statistics from pretraining
            for m in self.backbone:
                if isinstance(m, nn.BatchNorm1d):
                    m.running_mean.normal_(0.0, 0.3)
                    m.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return self.head(self.backbone(x))


def freeze_norm_statistics(module):
    if isinstance(module, nn.modules.batchnorm._BatchNorm):
        module.eval()


def periodic_validation(name, restore):
    def run(graphed):
        reseed()
        model = PretrainedNet().to(DEVICE).train()
        model.apply(freeze_norm_statistics)  # fine-tuning keeps the pretrained BatchNorm statistics
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        static_x, static_y, load = statics(*classifier_data(shift=0.5))
        step = sgd_step(model, optimizer, static_x, static_y)
        val_x, val_y = gaussian(64, 32, seed=9, n=1, shift=0.5)[0], classes(64, 10, seed=10, n=1)[0]
        val_losses = []

        def validate():
            modes = {m: m.training for m in model.modules()} if restore else None
            model.eval()
            with torch.no_grad():
                val_losses.append(F.cross_entropy(model(val_x), val_y))
            if restore:
                for m, mode in modes.items():
                    m.training = mode
            else:
                model.train()  # defect: validate-train-unfreezes-bn

        def every_third(i):
            if i % 3 == 2:
                validate()
            return False

        train(step, load, graphed, before=every_third)
        return state(model) + val_losses

    compare(name, run)


# ------------------------------------------------- requires_grad: a BitFit switch over named_parameters


def bitfit(name, recapture):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 64, 10, act=nn.GELU)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        static_x, static_y, load = statics(*classifier_data())
        step = sgd_step(model, optimizer, static_x, static_y)

        def to_bitfit(i):  # after a short full fine-tune, only the biases keep training
            if i != STEPS // 2:
                return False
            if recapture:
                for param_name, p in model.named_parameters():
                    p.requires_grad = param_name.endswith("bias")
                return True
            for param_name, p in model.named_parameters():
                p.requires_grad = param_name.endswith("bias")  # defect: bitfit-switch
            return False

        train(step, load, graphed, before=to_bitfit)
        return state(model)

    compare(name, run)


# -------------------------------------- grad mode: one run_batch() for training and validation, by grad mode


def shared_batch_step(name, eval_graph):
    val_batches = 3

    def run(graphed):
        reseed()
        model = mlp(32, 64, 10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        xs, ys = classifier_data()
        val_x, val_y = gaussian(16, 32, seed=11, n=val_batches), classes(16, 10, seed=12, n=val_batches)
        static_x, static_y = xs[0].clone(), ys[0].clone()

        def run_batch():
            """The loss on the staged batch and, when gradients are enabled, the update (training and validation
            share this function: validation runs it under no_grad)."""
            loss = F.cross_entropy(model(static_x), static_y)
            if torch.is_grad_enabled():
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
            return loss.detach()

        def runner(graph=None, static_loss=None):
            def call(x, y):
                static_x.copy_(x)
                static_y.copy_(y)
                if graph is None:
                    return run_batch()
                graph.replay()
                return static_loss

            return call

        feed = iter(range(BATCHES))

        def warm_step():
            k = next(feed)
            runner()(xs[k], ys[k])

        if graphed:
            side_stream(warm_step)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_loss = run_batch()
            train_batch = eval_batch = runner(graph, static_loss)
            if eval_graph:
                with torch.no_grad():
                    eval_batch = runner(*capture(run_batch))
        else:
            for _ in range(WARMUP):
                warm_step()
            train_batch = eval_batch = runner()

        @torch.no_grad()
        def validate(batch_fn):
            return torch.stack([batch_fn(val_x[k], val_y[k]).clone() for k in range(val_batches)]).mean()

        val_losses = []
        for i in range(STEPS):
            k = next(feed)
            train_batch(xs[k], ys[k])
            if i % 3 == 2:
                if eval_graph:
                    val_losses.append(validate(eval_batch))
                else:
                    val_losses.append(validate(train_batch))  # defect: shared-step-no-grad
        synchronize()
        return state(model) + val_losses

    compare(name, run)


# ------------------------------------------------- memory rebound: a device double buffer swapped by names


class DoubleBuffer:
    """Device-side double buffering of a loader's batches: the step reads `current`; the next batch is written into
    `spare`, which then becomes current."""

    def __init__(self, *first, swap):
        self.current = [t.clone() for t in first]
        self.spare = [t.clone() for t in first]
        self.swap = swap

    def put(self, *batch):
        for buffer, t in zip(self.spare, batch):
            buffer.copy_(t, non_blocking=True)
        if self.swap:
            self.current, self.spare = self.spare, self.current  # defect: double-buffer-swap
        else:
            for buffer, ready in zip(self.current, self.spare):
                buffer.copy_(ready)


def double_buffered(name, swap):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        xs, ys = classifier_data()
        buffers = DoubleBuffer(xs[0], ys[0], swap=swap)

        def step():
            x, y = buffers.current
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(x), y).backward()
            optimizer.step()

        train(step, lambda k: buffers.put(xs[k], ys[k]), graphed)
        return state(model)

    compare(name, run)


# -------------------------------------------------- memory rebound: a tensor lr replaced by the scheduler


class WarmupCosine:
    """Linear warm-up then cosine decay of each param group's lr, a tensor (as capturable Adam wants)."""

    def __init__(self, optimizer, warmup, total, in_place):
        self.optimizer = optimizer
        self.warmup = warmup
        self.total = total
        self.in_place = in_place
        if in_place:
            self.base_lrs = [group["lr"].clone() for group in optimizer.param_groups]
        else:
            self.base_lrs = [group["lr"] for group in optimizer.param_groups]

    def factor(self, t):
        if t < self.warmup:
            return (t + 1) / self.warmup
        return 0.5 * (1.0 + math.cos(math.pi * (t - self.warmup) / (self.total - self.warmup)))

    def step(self, t):
        f = self.factor(t)
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            if self.in_place:
                group["lr"].copy_(base * f)
            else:
                group["lr"] = base * f  # defect: tensor-lr-rebound


def tensor_lr_schedule(name, in_place):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 10)
        optimizer = torch.optim.Adam(model.parameters(), lr=torch.tensor(3e-3, device=DEVICE),
                                     capturable=DEVICE == "cuda", foreach=False)
        scheduler = WarmupCosine(optimizer, warmup=3, total=STEPS, in_place=in_place)
        static_x, static_y, load = statics(*classifier_data())
        step = sgd_step(model, optimizer, static_x, static_y)

        def schedule(i):
            scheduler.step(i)
            return False

        train(step, load, graphed, before=schedule)
        return state(model)

    compare(name, run)


# ----------------------------------------- memory rebound: an lru_cache'd attention mask swapped in by name


@functools.lru_cache(maxsize=None)
def band_bias(length, window, device):
    """Additive attention bias of sliding-window causal attention: 0 for the last `window` positions, -inf elsewhere."""
    i = torch.arange(length, device=device)
    distance = i[:, None] - i[None, :]
    allowed = (distance >= 0) & (distance < window)
    return torch.zeros(length, length, device=device).masked_fill(~allowed, float("-inf"))


class WindowedEncoder(nn.Module):
    """One sliding-window self-attention block and an MLP over (batch, length, 32), mean-pooled to 5 classes."""

    def __init__(self, length, window, in_place, width=32):
        super().__init__()
        torch.manual_seed(0)
        self.length = length
        self.in_place = in_place
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 64), nn.GELU(), nn.Linear(64, width))
        self.head = nn.Linear(width, 5)
        bias = band_bias(length, window, DEVICE)
        self.attn_bias = bias.clone() if in_place else bias  # the twin owns its copy, updated in place

    def set_window(self, window):
        if self.in_place:
            self.attn_bias.copy_(band_bias(self.length, window, DEVICE))
        else:
            self.attn_bias = band_bias(self.length, window, DEVICE)  # defect: lru-mask-rebound

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, -1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + self.attn_bias
        h = x + self.proj(scores.softmax(-1) @ v)
        h = h + self.mlp(self.norm(h))
        return self.head(h.mean(1))


def windowed_attention(name, in_place):
    length = 24

    def run(graphed):
        reseed()
        model = WindowedEncoder(length, window=4, in_place=in_place).to(DEVICE).eval()
        xs = gaussian(8, length, 32, seed=90, n=STEPS)
        static_x = torch.zeros(8, length, 32, device=DEVICE)

        def forward():
            with torch.no_grad():
                return model(static_x)

        def long_context(i):  # the second half of the requests is served with a wider window
            if i == STEPS // 2:
                model.set_window(12)
            return False

        return infer(forward, lambda i: static_x.copy_(xs[i]), graphed, before=long_context)

    compare(name, run)


# ----------------------------------------------------------- host randomness: random.choices (RandAugment)


def hflip(x):
    return x.flip(-1)


def vflip(x):
    return x.flip(-2)


def transpose(x):
    return x.transpose(-1, -2)


def translate(x):
    return x.roll(2, -1)


def contrast(x):
    mean = x.mean((-2, -1), keepdim=True)
    return (x - mean) * 1.5 + mean


def brightness(x):
    return x + 0.5


AUGMENTATIONS = (hflip, vflip, transpose, translate, contrast, brightness)


def rand_augment(name, staged):
    ops_per_batch = 2

    def run(graphed):
        reseed()
        model = mlp(64, 128, 10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        static_x, static_y, load_batch = statics(gaussian(32, 1, 8, 8, seed=13), classes(32, 10, seed=14))
        one_hot = torch.eye(len(AUGMENTATIONS), device=DEVICE)
        choice = torch.zeros(ops_per_batch, len(AUGMENTATIONS), device=DEVICE)

        def load(k):
            load_batch(k)
            if staged:  # the picks drawn on the host, outside the capture
                for slot, j in enumerate(random.choices(range(len(AUGMENTATIONS)), k=ops_per_batch)):
                    choice[slot].copy_(one_hot[j])

        def augment(x):
            if staged:
                for slot in range(ops_per_batch):
                    x = sum(choice[slot, j] * op(x) for j, op in enumerate(AUGMENTATIONS))
                return x
            for op in random.choices(AUGMENTATIONS, k=ops_per_batch):  # defect: randaugment-choices
                x = op(x)
            return x

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(augment(static_x).flatten(1)), static_y).backward()
            optimizer.step()

        train(step, load, graphed)
        return state(model)

    compare(name, run)


# ---------------------------------------------- host randomness: numpy Generator.permutation (jigsaw puzzles)


PERMUTATIONS = list(itertools.permutations(range(4)))  # the 24 tile orders are the pretext task's classes


def quadrants(x):
    top, bottom = x.chunk(2, -2)
    return [*top.chunk(2, -1), *bottom.chunk(2, -1)]


def assemble(tiles):
    return torch.cat([torch.cat(tiles[:2], -1), torch.cat(tiles[2:], -1)], -2)


def jigsaw(name, staged):
    def run(graphed):
        reseed()
        rng = np.random.default_rng(2024)
        model = mlp(64, 128, len(PERMUTATIONS))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        images = gaussian(32, 1, 8, 8, seed=15)
        static_x = images[0].clone()
        order = torch.arange(4, device=DEVICE)
        target = torch.zeros(32, dtype=torch.long, device=DEVICE)

        def load(k):
            static_x.copy_(images[k])
            if staged:  # the permutation drawn on the host, outside the capture
                perm = rng.permutation(4)
                order.copy_(torch.from_numpy(perm))
                target.fill_(PERMUTATIONS.index(tuple(perm.tolist())))

        def shuffled_tiles():
            if staged:
                tiles = torch.stack(quadrants(static_x), 1).index_select(1, order).unbind(1)
                return assemble(list(tiles)), target
            perm = rng.permutation(4)  # defect: jigsaw-permutation
            tiles = quadrants(static_x)
            label = torch.full((static_x.shape[0],), PERMUTATIONS.index(tuple(perm.tolist())), device=DEVICE)
            return assemble([tiles[j] for j in perm]), label

        def step():
            optimizer.zero_grad(set_to_none=True)
            x, y = shuffled_tiles()
            F.cross_entropy(model(x.flatten(1)), y).backward()
            optimizer.step()

        train(step, load, graphed)
        return state(model)

    compare(name, run)


MODES = {
    "hook-features-pool": lambda name: hook_features(name, keep=False),
    "hook-features-kept": lambda name: hook_features(name, keep=True),
    "layer-graphs-probe-last": lambda name: layer_probe(name, keep=False),
    "layer-graphs-probe-each": lambda name: layer_probe(name, keep=True),
    "grid-key-batch-only": lambda name: grid_buckets(name, full_key=False),
    "grid-key-full": lambda name: grid_buckets(name, full_key=True),
    "ensemble-late-binding": lambda name: ensemble(name, bind=False),
    "ensemble-bound-default": lambda name: ensemble(name, bind=True),
    "enum-phase-weight": lambda name: consistency_training(name, on_device=False),
    "enum-phase-tensor": lambda name: consistency_training(name, on_device=True),
    "cpu-scalar-weight": lambda name: deep_supervision(name, on_device=False),
    "cuda-scalar-weight": lambda name: deep_supervision(name, on_device=True),
    "deque-loss-balance": lambda name: loss_balance(name, on_device=False),
    "deque-loss-balance-tensor": lambda name: loss_balance(name, on_device=True),
    "contextvar-guidance": lambda name: guided_sampling(name, on_device=False),
    "contextvar-guidance-tensor": lambda name: guided_sampling(name, on_device=True),
    "validate-train-unfreezes-bn": lambda name: periodic_validation(name, restore=False),
    "validate-restores-modes": lambda name: periodic_validation(name, restore=True),
    "bitfit-switch": lambda name: bitfit(name, recapture=False),
    "bitfit-recaptured": lambda name: bitfit(name, recapture=True),
    "shared-step-no-grad": lambda name: shared_batch_step(name, eval_graph=False),
    "shared-step-eval-graph": lambda name: shared_batch_step(name, eval_graph=True),
    "double-buffer-swap": lambda name: double_buffered(name, swap=True),
    "double-buffer-copy": lambda name: double_buffered(name, swap=False),
    "tensor-lr-rebound": lambda name: tensor_lr_schedule(name, in_place=False),
    "tensor-lr-inplace": lambda name: tensor_lr_schedule(name, in_place=True),
    "lru-mask-rebound": lambda name: windowed_attention(name, in_place=False),
    "lru-mask-copy": lambda name: windowed_attention(name, in_place=True),
    "randaugment-choices": lambda name: rand_augment(name, staged=False),
    "randaugment-staged": lambda name: rand_augment(name, staged=True),
    "jigsaw-permutation": lambda name: jigsaw(name, staged=False),
    "jigsaw-permutation-staged": lambda name: jigsaw(name, staged=True),
}

# The contract term each defect mode breaks.
TERMS = {
    "hook-features-pool": "pool-output",
    "layer-graphs-probe-last": "pool-output",
    "grid-key-batch-only": "pool-output",
    "ensemble-late-binding": "pool-output",
    "enum-phase-weight": "host-value",
    "cpu-scalar-weight": "host-value",
    "deque-loss-balance": "host-value",
    "contextvar-guidance": "host-value",
    "validate-train-unfreezes-bn": "module-mode",
    "bitfit-switch": "requires-grad",
    "shared-step-no-grad": "grad-mode",
    "double-buffer-swap": "memory-rebound",
    "tensor-lr-rebound": "memory-rebound",
    "lru-mask-rebound": "memory-rebound",
    "randaugment-choices": "host-random",
    "jigsaw-permutation": "host-random",
}

# Each defect mode's clean twin.
TWINS = {
    "hook-features-pool": "hook-features-kept",
    "layer-graphs-probe-last": "layer-graphs-probe-each",
    "grid-key-batch-only": "grid-key-full",
    "ensemble-late-binding": "ensemble-bound-default",
    "enum-phase-weight": "enum-phase-tensor",
    "cpu-scalar-weight": "cuda-scalar-weight",
    "deque-loss-balance": "deque-loss-balance-tensor",
    "contextvar-guidance": "contextvar-guidance-tensor",
    "validate-train-unfreezes-bn": "validate-restores-modes",
    "bitfit-switch": "bitfit-recaptured",
    "shared-step-no-grad": "shared-step-eval-graph",
    "double-buffer-swap": "double-buffer-copy",
    "tensor-lr-rebound": "tensor-lr-inplace",
    "lru-mask-rebound": "lru-mask-copy",
    "randaugment-choices": "randaugment-staged",
    "jigsaw-permutation": "jigsaw-permutation-staged",
}

if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "--cpu-check":
        DEVICE = "cpu"
        CPU_CHECK = True
    deterministic()
    MODES[sys.argv[1]](sys.argv[1])
