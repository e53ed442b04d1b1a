"""A fifth set of PyTorch programs written blind (without reading how graphcheck detects anything): each defect mode
captures CUDA graphs (torch.cuda.graph, CUDAGraph.capture_begin/capture_end or torch.cuda.make_graphed_callables) that
capture fine and then compute something other than eager would, because the program breaks a term of the capture
contract after (or during) the capture, through code paths the first four sets do not use; each has a clean twin that
does the same computation the right way. One program per mode (argv[1]). The line where each defect is introduced ends
in "# defect: MODE". Each program runs the same steps twice from the same seeds, once through graphs and once eagerly,
and prints "MODE vs eager: max difference D" over its outputs or trained parameters (and buffers); TERMS names the
contract term each defect mode breaks and TWINS its clean twin.
`python3 blind_contract_cases_5.py MODE --cpu-check` runs only the eager reference, on the CPU, as a dry run.

  loss-weights-getattr           detection-style step (class, box, objectness losses) summing
                                 getattr(weights, term + "_weight") * loss over the terms; the schedule rewrites the
                                 plain weights object with vars(weights).update(...) between replays (manual
                                 capture_begin/capture_end)
  loss-weights-getattr-tensor    clean: the weights are 0-d CUDA tensors the schedule fills in place
  recipe-nested-gamma            focal-loss step reading gamma from a nested recipe dict,
                                 RECIPE[trainer.stage]["loss"]["gamma"]; the trainer moves to later stages
  recipe-nested-gamma-tensor     clean: entering a stage fills a 0-d CUDA gamma tensor that the step reads
  autoclip-minmax                AutoClip-style step: the gradient-norm limit is max(floor, factor * min(last, mean))
                                 of a tracker's two floats, which the loop updates from each step's norm
  autoclip-minmax-tensor         clean: the tracker also fills a 0-d CUDA limit tensor that the step reads
  weakref-trainer-kl             VAE step whose KL weight is read through the module's weakref to its trainer
                                 (self.trainer.kl_weight); the trainer's batch-end hook anneals the float
  weakref-trainer-kl-tensor      clean: the trainer's kl_weight is a 0-d CUDA tensor the hook fills in place
  mlm-random-sample              masked-token step choosing the masked positions with random.sample inside the capture
  mlm-random-sample-staged       clean: the positions drawn before each step into a CUDA index tensor
  cutout-randomstate             batch Cutout whose patch corner comes from a legacy np.random.RandomState held by the
                                 augmentation object, drawn inside the capture (manual capture_begin/capture_end)
  cutout-randomstate-staged      clean: the corner drawn before each step into a CUDA tensor; the patch is a device mask
  graphed-policy-submodule-eval  behaviour cloning through make_graphed_callables(policy); the observation normalisers
                                 are frozen half-way with `for m in policy.modules(): ... m.eval()`, while the policy
                                 itself stays in train mode (the graphed forward only checks the top module's flag)
  graphed-policy-regraphed       clean: the policy is graphed again after its normalisers are frozen
  graphed-trunk-stem-unfrozen    make_graphed_callables(trunk) graphed with a sample input that does not require grad
                                 (the pretrained stem frozen); half-way stem.requires_grad_(True) and training goes on
  graphed-trunk-regraphed        clean: the trunk is graphed again with a sample input that requires grad
  lpft-probe-graph-under-grad    linear probing then fine-tuning: the backbone's feature graph, captured under no_grad
                                 for the probing phase, is replayed inside torch.set_grad_enabled(True) to fine-tune
  lpft-graphed-backbone          clean: the fine-tuning phase runs make_graphed_callables(backbone)
  ema-functional-call-rebound    eager training with an EMA evaluation graph of torch.func.functional_call(model, ema);
                                 the EMA update rebinds ema[name] = ema[name].mul(d).add(...)
  ema-functional-call-inplace    clean: the EMA update is ema[name].mul_(d).add_(...)
  continual-head-replaced        whole training step; at the task switch a new nn.Linear head is assigned to model.head
                                 and optimizer.param_groups[1]["params"] pointed at it
  continual-head-reset           clean: the head is reset in place (reset_parameters, momentum zeroed in place)
  channels-last-midrun           whole training step of a convnet; the periodic evaluation converts the model with
                                 model.to(memory_format=torch.channels_last), which rebinds the conv weights' .data
  channels-last-before-capture   clean: the model is converted to channels_last before the capture
  pipeline-pool-out-of-order     encoder and scorer graphs sharing a pool (pool=encoder_graph.pool()); the pipelined
                                 loop replays the encoder for the next query before reading the scorer's output, so
                                 the encoder's replay (captured first) overwrites it
  pipeline-pool-clone-first      clean: the scores are cloned right after the scorer's replay
  bucket-tick-gather             batch-size bucket graphs captured smallest first into one graph_pool_handle(); each
                                 serving tick replays the buckets in arrival order and gathers the static outputs
                                 after the tick, when earlier-captured buckets have overwritten later ones
  bucket-tick-clone              clean: each bucket's output is cloned right after its replay
"""
import math
import random
import sys
import weakref

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

DEVICE = "cuda"
CPU_CHECK = False
STEPS = 8  # replays (eager steps) after the first capture
WARMUP = 3  # side-stream warm-up iterations before each capture
BATCHES = WARMUP + STEPS + WARMUP  # enough batches for one re-capture
GRAPHED_WARMUP = 3  # make_graphed_callables' default num_warmup_iters


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


def capture_manual(fn):
    """A capture of fn with the low-level API: capture_begin/capture_end on a side stream."""
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        graph.capture_begin()
        out = fn()
        graph.capture_end()
    torch.cuda.current_stream().wait_stream(stream)
    return graph, out


def train(step, load, graphed, before=None, after=None, manual=False):
    """WARMUP real training steps (on a side stream when graphed), a capture of step() (with torch.cuda.graph, or
    capture_begin/capture_end when manual), then STEPS steps: replays or eager calls. load(k) fills the static inputs
    with batch k. before(i) runs ahead of step i; when it returns True, both runs do WARMUP more real steps and the
    graphed run captures again. after(out) gets each step's output (the static output when graphed)."""
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
        if manual:
            return capture_manual(step)
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


def graph_module(module, sample, graphed):
    """make_graphed_callables(module, (sample,)) for the graphed run (a previous graphing's forward removed first). The
    eager run repeats what its warm-up does to the module's buffers: GRAPHED_WARMUP forwards on the sample."""
    if graphed:
        module.__dict__.pop("forward", None)  # undo an earlier graphing of this module
        return torch.cuda.make_graphed_callables(module, (sample,))
    for _ in range(GRAPHED_WARMUP):
        module(sample)
    return module


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


class Block(nn.Module):
    """Pre-norm residual MLP block."""

    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 4 * width)
        self.fc2 = nn.Linear(4 * width, width)

    def forward(self, h):
        return h + self.fc2(F.gelu(self.fc1(self.norm(h))))


# --------------------------------------------------- host value: loss weights looked up by name with getattr


LOSS_TERMS = ("cls", "box", "obj")
WEIGHT_SCHEDULE = {2: {"box_weight": 2.0}, 4: {"cls_weight": 0.5, "obj_weight": 0.25}, 6: {"box_weight": 5.0}}


class DetectionHeads(nn.Module):
    """A shared trunk with a class head, a 4-d box regression head and an objectness logit."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.trunk = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.cls = nn.Linear(64, 10)
        self.box = nn.Linear(64, 4)
        self.obj = nn.Linear(64, 1)

    def forward(self, x):
        h = self.trunk(x)
        return {"cls": self.cls(h), "box": self.box(h), "obj": self.obj(h).squeeze(-1)}


class LossWeights:
    """Per-term loss weights as attributes named TERM_weight."""

    def __init__(self, on_device, **weights):
        for key, value in weights.items():
            setattr(self, key, torch.tensor(value, device=DEVICE) if on_device else value)


def loss_terms(name, on_device):
    def run(graphed):
        reseed()
        model = DetectionHeads().to(DEVICE)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs, ys = classifier_data()
        boxes, objectness = gaussian(16, 4, seed=6), (gaussian(16, seed=7) > 0).float()
        static_x, static_y, static_box, static_obj, load = statics(xs, ys, boxes, objectness)
        weights = LossWeights(on_device, cls_weight=1.0, box_weight=0.5, obj_weight=1.0)

        def step():
            optimizer.zero_grad(set_to_none=True)
            out = model(static_x)
            losses = {"cls": F.cross_entropy(out["cls"], static_y),
                      "box": F.smooth_l1_loss(out["box"], static_box),
                      "obj": F.binary_cross_entropy_with_logits(out["obj"], static_obj)}
            total = sum(getattr(weights, term + "_weight") * losses[term] for term in LOSS_TERMS)
            total.backward()
            optimizer.step()

        def reweight(i):
            if i in WEIGHT_SCHEDULE:
                if on_device:
                    for key, value in WEIGHT_SCHEDULE[i].items():
                        getattr(weights, key).fill_(value)
                else:
                    vars(weights).update(WEIGHT_SCHEDULE[i])  # defect: loss-weights-getattr
            return False

        train(step, load, graphed, before=reweight, manual=True)
        return state(model)

    compare(name, run)


# ---------------------------------------------------- host value: a nested dict of dicts indexed by the stage


RECIPE = {
    "warmup": {"loss": {"gamma": 0.0}, "data": {"batch": 16}},
    "focal": {"loss": {"gamma": 2.0}, "data": {"batch": 16}},
    "hard-mining": {"loss": {"gamma": 4.0}, "data": {"batch": 16}},
}
STAGE_STARTS = {2: "focal", 5: "hard-mining"}  # step -> stage entered


class StagedTrainer:
    def __init__(self, on_device):
        self.stage = "warmup"
        self.gamma = torch.tensor(RECIPE[self.stage]["loss"]["gamma"], device=DEVICE) if on_device else None


def focal_loss(logits, target, gamma):
    log_pt = logits.log_softmax(-1).gather(1, target[:, None]).squeeze(1)
    modulating = (1.0 - log_pt.exp()).clamp_min(1e-6) ** gamma
    return -(modulating * log_pt).mean()


def focal_recipe(name, on_device):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 64, 10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        static_x, static_y, load = statics(*classifier_data())
        trainer = StagedTrainer(on_device)

        def step():
            optimizer.zero_grad(set_to_none=True)
            if on_device:
                gamma = trainer.gamma
            else:
                gamma = RECIPE[trainer.stage]["loss"]["gamma"]  # defect: recipe-nested-gamma
            focal_loss(model(static_x), static_y, gamma).backward()
            optimizer.step()

        def advance(i):
            if i in STAGE_STARTS:
                trainer.stage = STAGE_STARTS[i]
                if on_device:
                    trainer.gamma.fill_(RECIPE[trainer.stage]["loss"]["gamma"])
            return False

        train(step, load, graphed, before=advance)
        return state(model)

    compare(name, run)


# ---------------------------------------------- host value: min/max of two floats an AutoClip tracker updates


CLIP_FLOOR = 0.05
CLIP_FACTOR = 0.5


class NormTracker:
    """Statistics of the gradient norm for adaptive clipping: the last value and the running mean (from a prior)."""

    def __init__(self, on_device, prior=0.2):
        self.last = prior
        self.mean = prior
        self.count = 1
        self.device_limit = torch.tensor(self.limit(), device=DEVICE) if on_device else None

    def limit(self):
        return max(CLIP_FLOOR, CLIP_FACTOR * min(self.last, self.mean))

    def update(self, norm):
        self.last = norm
        self.count += 1
        self.mean += (norm - self.mean) / self.count
        if self.device_limit is not None:
            self.device_limit.fill_(self.limit())


def autoclip(name, on_device):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 64, 10, act=nn.GELU)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
        static_x, static_y, load = statics(*classifier_data())
        tracker = NormTracker(on_device)

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(static_x), static_y).backward()
            grads = [p.grad for p in model.parameters()]
            norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
            if on_device:
                limit = tracker.device_limit
            else:
                limit = tracker.limit()  # defect: autoclip-minmax
            coef = (limit / (norm + 1e-6)).clamp(max=1.0)
            for g in grads:
                g.mul_(coef)
            optimizer.step()
            return norm.detach()

        train(step, load, graphed, after=lambda norm: tracker.update(norm.item()))
        return state(model)

    compare(name, run)


# ---------------------------------------------------- host value: the KL weight read through a weakref'd trainer


class VAE(nn.Module):
    """A small VAE whose training loss reads the KL weight from the trainer it is attached to (by a weak reference,
    as Lightning-style modules hold their trainer)."""

    def __init__(self, latent=8):
        super().__init__()
        torch.manual_seed(0)
        self.encoder = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2 * latent))
        self.decoder = nn.Sequential(nn.Linear(latent, 64), nn.ReLU(), nn.Linear(64, 32))
        self._trainer_ref = None

    def attach(self, trainer):
        self._trainer_ref = weakref.ref(trainer)

    @property
    def trainer(self):
        return self._trainer_ref()

    def training_loss(self, x, eps):
        mu, logvar = self.encoder(x).chunk(2, -1)
        z = mu + (0.5 * logvar).exp() * eps
        recon = F.mse_loss(self.decoder(z), x)
        kl = -0.5 * (1.0 + logvar - mu.pow(2) - logvar.exp()).sum(-1).mean()
        return recon + self.trainer.kl_weight * kl


class AnnealingTrainer:
    """Linear KL annealing over anneal_steps optimizer steps, advanced by the batch-end hook."""

    def __init__(self, on_device, anneal_steps=6):
        self.on_device = on_device
        self.anneal_steps = anneal_steps
        self.global_step = 0
        self.kl_weight = torch.tensor(0.0, device=DEVICE) if on_device else 0.0

    def on_train_batch_end(self):
        self.global_step += 1
        value = min(1.0, self.global_step / self.anneal_steps)
        if self.on_device:
            self.kl_weight.fill_(value)
        else:
            self.kl_weight = value  # defect: weakref-trainer-kl


def kl_annealing(name, on_device):
    def run(graphed):
        reseed()
        model = VAE().to(DEVICE)
        trainer = AnnealingTrainer(on_device)
        model.attach(trainer)
        optimizer = torch.optim.Adam(model.parameters(), lr=3e-3, capturable=DEVICE == "cuda")
        static_x, static_eps, load = statics(gaussian(16, 32, seed=8, scale=1.5), gaussian(16, 8, seed=9))

        def step():
            optimizer.zero_grad(set_to_none=True)
            loss = model.training_loss(static_x, static_eps)
            loss.backward()
            optimizer.step()
            return loss.detach()

        train(step, load, graphed, after=lambda loss: trainer.on_train_batch_end())
        return state(model)

    compare(name, run)


# ----------------------------------------------------- host randomness: random.sample picks the masked tokens


VOCAB, MASK_ID, SEQ, MASKED = 40, 0, 16, 4


class TinyMixerLM(nn.Module):
    """Token embedding, one MLP-Mixer block (token mixing, then channel mixing) and a vocabulary head."""

    def __init__(self, width=32):
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(VOCAB, width)
        self.pos = nn.Parameter(0.1 * torch.randn(SEQ, width))
        self.token_norm = nn.LayerNorm(width)
        self.token_mix = nn.Sequential(nn.Linear(SEQ, 32), nn.GELU(), nn.Linear(32, SEQ))
        self.channel_mix = nn.Sequential(nn.LayerNorm(width), nn.Linear(width, 64), nn.GELU(), nn.Linear(64, width))
        self.out = nn.Linear(width, VOCAB)

    def forward(self, ids):
        h = self.embed(ids) + self.pos
        h = h + self.token_mix(self.token_norm(h).transpose(1, 2)).transpose(1, 2)
        h = h + self.channel_mix(h)
        return self.out(h)


def masked_lm(name, staged):
    def run(graphed):
        reseed()
        model = TinyMixerLM().to(DEVICE)
        optimizer = torch.optim.Adam(model.parameters(), lr=3e-3, capturable=DEVICE == "cuda")
        ids = classes(8 * SEQ, VOCAB, seed=20, low=1).view(BATCHES, 8, SEQ)  # token ids, never the mask id
        static_ids = ids[0].clone()
        positions = torch.zeros(MASKED, dtype=torch.long, device=DEVICE)

        def load(k):
            static_ids.copy_(ids[k])
            if staged:  # the masked positions drawn on the host, outside the capture
                positions.copy_(torch.tensor(random.sample(range(SEQ), MASKED)))

        def step():
            optimizer.zero_grad(set_to_none=True)
            if staged:
                logits = model(static_ids.index_fill(1, positions, MASK_ID))
                masked_logits = logits.index_select(1, positions)
                targets = static_ids.index_select(1, positions)
            else:
                picked = random.sample(range(SEQ), MASKED)  # defect: mlm-random-sample
                corrupted = static_ids.clone()
                for p in picked:
                    corrupted[:, p] = MASK_ID
                logits = model(corrupted)
                masked_logits = torch.stack([logits[:, p] for p in picked], 1)
                targets = torch.stack([static_ids[:, p] for p in picked], 1)
            F.cross_entropy(masked_logits.flatten(0, 1), targets.flatten()).backward()
            optimizer.step()

        train(step, load, graphed)
        return state(model)

    compare(name, run)


# --------------------------------------- host randomness: a legacy numpy RandomState held by an augmentation


class BatchCutout:
    """Cutout applied per batch: one size x size patch zeroed, its corner drawn from the object's RandomState."""

    def __init__(self, size, seed):
        self.size = size
        self.rs = np.random.RandomState(seed)

    def corner(self, height, width):
        return self.rs.randint(0, height - self.size + 1), self.rs.randint(0, width - self.size + 1)

    def __call__(self, x):
        top, left = self.corner(*x.shape[-2:])  # defect: cutout-randomstate
        x = x.clone()
        x[..., top:top + self.size, left:left + self.size] = 0.0
        return x


class CornerConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU())
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(32 * 6 * 6, 10))

    def forward(self, x):
        return self.head(self.features(x))


def cutout_training(name, staged):
    size, side = 5, 12

    def run(graphed):
        reseed()
        model = CornerConvNet().to(DEVICE)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        static_x, static_y, load_batch = statics(gaussian(16, 3, side, side, seed=10), classes(16, 10, seed=11))
        cutout = BatchCutout(size, seed=1234)
        corner = torch.zeros(2, dtype=torch.long, device=DEVICE)
        grid = torch.arange(side, device=DEVICE)

        def load(k):
            load_batch(k)
            if staged:  # the corner drawn on the host, outside the capture
                corner.copy_(torch.tensor(cutout.corner(side, side)))

        def augment(x):
            if not staged:
                return cutout(x)
            rows = (grid >= corner[0]) & (grid < corner[0] + size)
            cols = (grid >= corner[1]) & (grid < corner[1] + size)
            return x.masked_fill(rows[:, None] & cols[None, :], 0.0)

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(augment(static_x)), static_y).backward()
            optimizer.step()

        train(step, load, graphed, manual=True)
        return state(model)

    compare(name, run)


# ------------------------- module mode: make_graphed_callables checks only the top module's training flag


class RunningNorm(nn.Module):
    """Observation normaliser of RL / behaviour-cloning code: in training mode it updates running statistics from each
    batch; it always normalises with the running statistics."""

    def __init__(self, dim, momentum=0.3):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("var", torch.ones(dim))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.mean.lerp_(x.mean(0), self.momentum)
                self.var.lerp_(x.var(0, unbiased=False), self.momentum)
        return (x - self.mean) / (self.var + 1e-5).sqrt()


class Policy(nn.Module):
    def __init__(self, obs=16, act=4):
        super().__init__()
        torch.manual_seed(0)
        self.obs_norm = RunningNorm(obs)
        self.net = nn.Sequential(nn.Linear(obs, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, act))

    def forward(self, obs):
        return self.net(self.obs_norm(obs))


def behaviour_cloning(name, regraph):
    def run(graphed):
        reseed()
        policy = Policy().to(DEVICE).train()
        optimizer = torch.optim.Adam(policy.parameters(), lr=3e-3)
        drift = torch.linspace(0.0, 4.0, STEPS, device=DEVICE).view(-1, 1, 1)  # the observations drift over time
        obs = gaussian(64, 16, seed=12, n=STEPS, scale=2.0) + drift
        expert = gaussian(16, 4, seed=13, n=1)[0] * 0.3
        actions = torch.tanh(obs @ expert)
        sample = obs[0].clone()
        policy_fn = graph_module(policy, sample, graphed)
        for i in range(STEPS):
            if i == STEPS // 2:  # the statistics are frozen for the second half of training
                for m in policy.modules():
                    if isinstance(m, RunningNorm):
                        if regraph:
                            m.eval()
                        else:
                            m.eval()  # defect: graphed-policy-submodule-eval
                if regraph:
                    policy_fn = graph_module(policy, sample, graphed)
            optimizer.zero_grad(set_to_none=True)
            F.mse_loss(policy_fn(obs[i]), actions[i]).backward()
            optimizer.step()
        synchronize()
        return state(policy)

    compare(name, run)


# ---------------------------- requires_grad: a graphed trunk whose input starts requiring grad (stem unfrozen)


def stem_unfreezing(name, regraph):
    def run(graphed):
        reseed()
        torch.manual_seed(0)
        stem = nn.Sequential(nn.Linear(32, 64), nn.GELU()).to(DEVICE)  # pretrained, frozen at first
        trunk = nn.Sequential(Block(64), Block(64), nn.LayerNorm(64), nn.Linear(64, 10)).to(DEVICE)
        stem.requires_grad_(False)
        optimizer = torch.optim.SGD([*stem.parameters(), *trunk.parameters()], lr=0.05, momentum=0.9)
        xs, ys = classifier_data()
        graphed_trunk = graph_module(trunk, torch.zeros(16, 64, device=DEVICE), graphed)
        for i in range(STEPS):
            if i == STEPS // 2:  # gradual unfreezing: the stem joins the fine-tuning
                if regraph:
                    stem.requires_grad_(True)
                    sample = torch.zeros(16, 64, device=DEVICE, requires_grad=True)  # the stem's output now needs grad
                    graphed_trunk = graph_module(trunk, sample, graphed)
                else:
                    stem.requires_grad_(True)  # defect: graphed-trunk-stem-unfrozen
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(graphed_trunk(stem(xs[i])), ys[i]).backward()
            optimizer.step()
        synchronize()
        return state(stem, trunk)

    compare(name, run)


# ----------------------------- grad mode: a feature graph captured under no_grad, replayed to fine-tune (LP-FT)


def linear_probe_then_finetune(name, regraph):
    def run(graphed):
        reseed()
        backbone = mlp(32, 128, 64, act=nn.GELU)  # pretrained
        torch.manual_seed(1)
        head = nn.Linear(64, 10).to(DEVICE)
        optimizer = torch.optim.SGD([{"params": backbone.parameters(), "lr": 0.05}, {"params": head.parameters()}],
                                    lr=0.1, momentum=0.9)
        xs, ys = classifier_data()
        static_x = xs[0].clone()
        probe_graph = static_feats = tuned = None
        if graphed:
            def probe_features():
                with torch.no_grad():
                    return backbone(static_x)

            probe_graph, static_feats = capture(probe_features)
        for i in range(STEPS):
            finetune = i >= STEPS // 2  # linear probing first, then full fine-tuning
            if graphed and finetune and regraph and tuned is None:
                tuned = torch.cuda.make_graphed_callables(backbone, (static_x,))
            static_x.copy_(xs[i])
            with torch.set_grad_enabled(finetune):
                if not graphed:
                    feats = backbone(static_x)
                elif not finetune:
                    probe_graph.replay()
                    feats = static_feats
                elif regraph:
                    feats = tuned(static_x)
                else:
                    probe_graph.replay()  # defect: lpft-probe-graph-under-grad
                    feats = static_feats
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(head(feats), ys[i]).backward()
            optimizer.step()
        synchronize()
        return state(backbone, head)

    compare(name, run)


# ------------------------------- memory rebound: an EMA state dict for torch.func.functional_call, rebound


def ema_functional_eval(name, in_place):
    decay = 0.6

    def run(graphed):
        reseed()
        model = mlp(32, 128, 10, act=nn.GELU)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
        xs, ys = classifier_data()
        probe = gaussian(64, 32, seed=14, n=1)[0]
        ema = {key: p.detach().clone() for key, p in model.named_parameters()}

        def evaluate():
            with torch.no_grad():
                return torch.func.functional_call(model, ema, (probe,)).softmax(-1)

        def update_ema():
            with torch.no_grad():
                for key, p in model.named_parameters():
                    if in_place:
                        ema[key].mul_(decay).add_(p, alpha=1.0 - decay)
                    else:
                        ema[key] = ema[key].mul(decay).add(p, alpha=1.0 - decay)  # defect: ema-functional-call-rebound

        graph = static_probs = None
        if graphed:
            graph, static_probs = capture(evaluate)
        outputs = []
        for i in range(STEPS):
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(xs[i]), ys[i]).backward()
            optimizer.step()
            update_ema()
            if graphed:
                graph.replay()
                probs = static_probs
            else:
                probs = evaluate()
            outputs.append(probs.clone())
        synchronize()
        return outputs + state(model)

    compare(name, run)


# ------------------------------- memory rebound: a new head module for the next task (continual learning)


class ContinualNet(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.body(x))


def continual_tasks(name, reset):
    def run(graphed):
        reseed()
        model = ContinualNet().to(DEVICE)
        optimizer = torch.optim.SGD([{"params": model.body.parameters()}, {"params": model.head.parameters()}],
                                    lr=0.05, momentum=0.9)
        xs, ys = classifier_data()
        static_x, static_y = xs[0].clone(), ys[0].clone()
        task = {"relabel": 0}  # the second task permutes the classes

        def load(k):
            static_x.copy_(xs[k])
            static_y.copy_((ys[k] + task["relabel"]) % 10)

        step = sgd_step(model, optimizer, static_x, static_y)

        def next_task(i):
            if i != STEPS // 2:
                return False
            task["relabel"] = 3
            torch.manual_seed(7)
            if reset:
                model.head.reset_parameters()
                for p in model.head.parameters():
                    optimizer.state[p]["momentum_buffer"].zero_()
            else:
                model.head = nn.Linear(64, 10).to(DEVICE)  # defect: continual-head-replaced
                optimizer.param_groups[1]["params"] = list(model.head.parameters())
            return False

        train(step, load, graphed, before=next_task)
        return state(model)

    compare(name, run)


# ----------------------------- memory rebound: model.to(memory_format=channels_last) during training


class SmallConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.GELU(), nn.Conv2d(16, 32, 3, stride=2, padding=1),
            nn.GroupNorm(4, 32), nn.GELU())
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))

    def forward(self, x):
        return self.head(self.features(x))


def channels_last_switch(name, before_capture):
    def run(graphed):
        reseed()
        model = SmallConvNet().to(DEVICE)
        if before_capture:
            model.to(memory_format=torch.channels_last)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        static_x, static_y, load = statics(gaussian(16, 3, 12, 12, seed=15), classes(16, 10, seed=16))
        step = sgd_step(model, optimizer, static_x, static_y)
        val_x = gaussian(32, 3, 12, 12, seed=17, n=1)[0].to(memory_format=torch.channels_last)
        val_y = classes(32, 10, seed=18, n=1)[0]
        val_losses = []

        def evaluate(i):  # periodic validation, in channels_last (faster convolutions for inference)
            if i % 3 != 2:
                return False
            if not before_capture:
                model.to(memory_format=torch.channels_last)  # defect: channels-last-midrun
            with torch.no_grad():
                val_losses.append(F.cross_entropy(model(val_x), val_y))
            return False

        train(step, load, graphed, before=evaluate)
        return state(model) + val_losses

    compare(name, run)


# ---------------------------------- shared pool: a pipelined loop replays the graphs out of capture order


def retrieval_pipeline(name, clone_first):
    def run(graphed):
        reseed()
        encoder = mlp(32, 512, 512, 64, seed=0, act=nn.GELU).eval()
        scorer = mlp(64, 256, 10, seed=1, act=nn.GELU).eval()
        queries = gaussian(64, 32, seed=19, n=STEPS)
        results = []
        with torch.no_grad():
            if not graphed:
                emb = encoder(queries[0])
                for i in range(STEPS):
                    scores = scorer(emb).softmax(-1)
                    if i + 1 < STEPS:
                        emb = encoder(queries[i + 1])
                    results.append(scores.clone())
                synchronize()
                return results
            static_q = queries[0].clone()
            encode_graph, static_emb = capture(lambda: encoder(static_q))
            score_graph, static_scores = capture(lambda: scorer(static_emb).softmax(-1), pool=encode_graph.pool())
            encode_graph.replay()
            for i in range(STEPS):
                score_graph.replay()
                if clone_first:
                    scores = static_scores.clone()
                else:
                    scores = static_scores  # defect: pipeline-pool-out-of-order
                if i + 1 < STEPS:  # the next query is embedded before the host post-processes these scores
                    static_q.copy_(queries[i + 1])
                    encode_graph.replay()
                results.append(scores.clone())
        synchronize()
        return results

    compare(name, run)


# ------------------------------ shared pool: bucket graphs replayed in arrival order, outputs gathered later


TICK_BUCKETS = (4, 8, 16)  # batch-size buckets, captured in this order
TICKS = [(16, 8, 4), (8, 4, 16), (4, 16, 8), (16, 4, 8)]  # each serving tick's arrival order of the buckets


def bucket_ticks(name, clone_each):
    def run(graphed):
        reseed()
        model = mlp(32, 512, 512, 10, act=nn.GELU).eval()
        requests = [{size: gaussian(size, 32, seed=200 + 10 * t + k, n=1)[0] for k, size in enumerate(order)}
                    for t, order in enumerate(TICKS)]
        results = []
        with torch.no_grad():
            if not graphed:
                for t, order in enumerate(TICKS):
                    for size in order:
                        results.append(model(requests[t][size]).softmax(-1))
                synchronize()
                return results
            pool = torch.cuda.graph_pool_handle()
            static_in, graphs, static_out = {}, {}, {}
            for size in TICK_BUCKETS:
                static_in[size] = torch.zeros(size, 32, device=DEVICE)
                graphs[size], static_out[size] = capture(lambda: model(static_in[size]).softmax(-1), pool)
            for t, order in enumerate(TICKS):
                pending = []
                for size in order:
                    static_in[size].copy_(requests[t][size])
                    graphs[size].replay()
                    if clone_each:
                        pending.append(static_out[size].clone())
                    else:
                        pending.append(static_out[size])  # defect: bucket-tick-gather
                results.extend(out.clone() for out in pending)  # the tick's responses are sent together
        synchronize()
        return results

    compare(name, run)


MODES = {
    "loss-weights-getattr": lambda name: loss_terms(name, on_device=False),
    "loss-weights-getattr-tensor": lambda name: loss_terms(name, on_device=True),
    "recipe-nested-gamma": lambda name: focal_recipe(name, on_device=False),
    "recipe-nested-gamma-tensor": lambda name: focal_recipe(name, on_device=True),
    "autoclip-minmax": lambda name: autoclip(name, on_device=False),
    "autoclip-minmax-tensor": lambda name: autoclip(name, on_device=True),
    "weakref-trainer-kl": lambda name: kl_annealing(name, on_device=False),
    "weakref-trainer-kl-tensor": lambda name: kl_annealing(name, on_device=True),
    "mlm-random-sample": lambda name: masked_lm(name, staged=False),
    "mlm-random-sample-staged": lambda name: masked_lm(name, staged=True),
    "cutout-randomstate": lambda name: cutout_training(name, staged=False),
    "cutout-randomstate-staged": lambda name: cutout_training(name, staged=True),
    "graphed-policy-submodule-eval": lambda name: behaviour_cloning(name, regraph=False),
    "graphed-policy-regraphed": lambda name: behaviour_cloning(name, regraph=True),
    "graphed-trunk-stem-unfrozen": lambda name: stem_unfreezing(name, regraph=False),
    "graphed-trunk-regraphed": lambda name: stem_unfreezing(name, regraph=True),
    "lpft-probe-graph-under-grad": lambda name: linear_probe_then_finetune(name, regraph=False),
    "lpft-graphed-backbone": lambda name: linear_probe_then_finetune(name, regraph=True),
    "ema-functional-call-rebound": lambda name: ema_functional_eval(name, in_place=False),
    "ema-functional-call-inplace": lambda name: ema_functional_eval(name, in_place=True),
    "continual-head-replaced": lambda name: continual_tasks(name, reset=False),
    "continual-head-reset": lambda name: continual_tasks(name, reset=True),
    "channels-last-midrun": lambda name: channels_last_switch(name, before_capture=False),
    "channels-last-before-capture": lambda name: channels_last_switch(name, before_capture=True),
    "pipeline-pool-out-of-order": lambda name: retrieval_pipeline(name, clone_first=False),
    "pipeline-pool-clone-first": lambda name: retrieval_pipeline(name, clone_first=True),
    "bucket-tick-gather": lambda name: bucket_ticks(name, clone_each=False),
    "bucket-tick-clone": lambda name: bucket_ticks(name, clone_each=True),
}

# The contract term each defect mode breaks.
TERMS = {
    "loss-weights-getattr": "host-value",
    "recipe-nested-gamma": "host-value",
    "autoclip-minmax": "host-value",
    "weakref-trainer-kl": "host-value",
    "mlm-random-sample": "host-random",
    "cutout-randomstate": "host-random",
    "graphed-policy-submodule-eval": "module-mode",
    "graphed-trunk-stem-unfrozen": "requires-grad",
    "lpft-probe-graph-under-grad": "grad-mode",
    "ema-functional-call-rebound": "memory-rebound",
    "continual-head-replaced": "memory-rebound",
    "channels-last-midrun": "memory-rebound",
    "pipeline-pool-out-of-order": "pool-output",
    "bucket-tick-gather": "pool-output",
}

# Each defect mode's clean twin.
TWINS = {
    "loss-weights-getattr": "loss-weights-getattr-tensor",
    "recipe-nested-gamma": "recipe-nested-gamma-tensor",
    "autoclip-minmax": "autoclip-minmax-tensor",
    "weakref-trainer-kl": "weakref-trainer-kl-tensor",
    "mlm-random-sample": "mlm-random-sample-staged",
    "cutout-randomstate": "cutout-randomstate-staged",
    "graphed-policy-submodule-eval": "graphed-policy-regraphed",
    "graphed-trunk-stem-unfrozen": "graphed-trunk-regraphed",
    "lpft-probe-graph-under-grad": "lpft-graphed-backbone",
    "ema-functional-call-rebound": "ema-functional-call-inplace",
    "continual-head-replaced": "continual-head-reset",
    "channels-last-midrun": "channels-last-before-capture",
    "pipeline-pool-out-of-order": "pipeline-pool-clone-first",
    "bucket-tick-gather": "bucket-tick-clone",
}

if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "--cpu-check":
        DEVICE = "cpu"
        CPU_CHECK = True
    deterministic()
    MODES[sys.argv[1]](sys.argv[1])
