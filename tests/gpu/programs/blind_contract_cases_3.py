"""A third set of PyTorch programs written blind (without reading how graphcheck detects anything): each defect mode
captures CUDA graphs that capture fine and then compute something other than eager would, because the program breaks a
term of the capture contract after (or during) the capture, through code paths the first two sets do not use; each
has a clean twin that does the same computation the right way. One program per mode (argv[1]). The line where each
defect is introduced ends in "# defect: MODE". Each program runs the same steps twice from the same seeds, once through
graphs and once eagerly, and prints "MODE vs eager: max difference D" over its outputs or trained parameters (and
buffers); TERMS names the contract term each defect mode breaks and TWINS its clean twin.
`python3 blind_contract_cases_3.py MODE --cpu-check` runs only the eager reference, on the CPU, as a dry run.

  set-mode-stage               whole training step of a fine-tuning net whose custom set_mode("warmup") keeps the
                               nested backbone in eval mode (stored BatchNorm statistics); set_mode("full") half-way
                               puts it back in train mode while the graph replays on
  set-mode-recaptured          clean: the step is warmed up and captured again after set_mode("full")
  bn-recalibration-context     inference graph captured in eval mode; a hand-written context manager re-estimates
                               BatchNorm statistics on a shifted domain (resets them, flips the norms' .training to
                               True) and the program replays the eval graph inside it
  bn-recalibration-eager       clean: the recalibration forwards run eagerly inside the context manager; only the
                               evaluation goes through the graph
  qat-observer-freeze          quantization-aware training step with fake-quant modules whose range observers run in
                               training mode; the observers are frozen half-way by writing m.training = False directly
  qat-observer-recaptured      clean: the step is warmed up and captured again after the observers are frozen
  logger-attr-output           eager training with a graphed probe-set forward; a ChurnLogger object keeps the graph's
                               output as self.prev and compares it with the next probe's output (same memory)
  logger-attr-clone            clean: the logger keeps self.prev = logits.clone()
  generator-yield-output       graphed evaluation through a generator that yields (index, static output); a dict
                               comprehension keeps every yielded tensor, so every entry is the last batch's logits
  generator-yield-clone        clean: the dict comprehension keeps logits.clone()
  grad-zero-helper             forward+backward graph accumulating into .grad, optimizer step eager; a helper
                               fresh_grads() resets the gradients with p.grad = torch.zeros_like(p)
  grad-zero-inplace            clean: fresh_grads() zeroes them with p.grad.zero_()
  vector-to-params             whole training step; a rollback restores a flat snapshot with
                               torch.nn.utils.vector_to_parameters, which rebinds each p.data
  vector-copy-params           clean: the snapshot is copied into the parameters in place
  load-state-assign            inference graph; a newer checkpoint is hot-swapped with
                               model.load_state_dict(sd, assign=True), which replaces the Parameters
  load-state-copy              clean: model.load_state_dict(sd) copies into the existing parameters
  argparse-setattr             soft-margin triplet training step reading args.margin from an argparse Namespace; a
                               margin schedule applies itself with setattr(args, key, value) between replays
  argparse-tensor              clean: args.margin is a 0-d CUDA tensor the schedule fills in place
  partial-keywords             regression step whose criterion is functools.partial(F.smooth_l1_loss, beta=2.0); the
                               schedule tightens beta through criterion.keywords["beta"] half-way
  partial-recaptured           clean: the step is warmed up and captured again after the keyword changes
  environ-noise                training step with input-noise augmentation whose std is read from
                               os.environ["AUG_NOISE_STD"]; the curriculum raises it by writing os.environ
  environ-noise-tensor         clean: the curriculum also fills a 0-d CUDA tensor that the step reads
  autocast-dtype-switch        inference graph captured under a bf16 autocast precision policy; the second phase
                               switches the policy to fp16 autocast and keeps replaying
  autocast-dtype-recaptured    clean: the fp16 phase captures its own graph under fp16 autocast
  bucket-pool-view             sequence-length bucket graphs captured largest first into one shared pool
                               (graph_pool_handle); only `out.view(...)` of the last capture is kept after the loop
                               and read for every bucket (the other outputs were freed back into the pool)
  bucket-pool-dict             clean: every bucket's static output kept alive in a dict and read after its own replay
  bucket-pool-largest-slice    batch-size bucket graphs sharing one pool (pool=first_graph.pool()); only the largest
                               bucket's output is kept, and smaller buckets read a slice of it
  bucket-pool-own-slice        clean: every bucket's output kept in a dict; each request slices its own bucket's output
  rng-instance-gain            training step with random-gain augmentation drawn from a random.Random instance (its
                               own seeded stream) inside the capture
  rng-instance-staged          clean: the gain drawn from the same stream before each step, filled into a CUDA tensor
  cycle-task-order             round-robin multi-task step: next(itertools.cycle(...)) inside the step picks which
                               task head is trained
  cycle-task-mask              clean: the cycle advanced outside the step into a one-hot CUDA mask weighting all heads
  param-group-added            whole training step of a base net with a low-rank side adapter; half-way the adapter's
                               parameters join the optimizer with optimizer.add_param_group
  param-group-recaptured       clean: the step is warmed up and captured again after add_param_group
"""
import argparse
import contextlib
import functools
import itertools
import os
import random
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parameters_to_vector, vector_to_parameters

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
    difference = max((g.float() - e.float()).abs().max().item() for g, e in zip(graphed, eager))
    print("%s vs eager: max difference %.4g" % (name, difference), flush=True)


def side_stream(fn, iterations=WARMUP):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(iterations):
            fn()
    torch.cuda.current_stream().wait_stream(s)


def capture(fn):
    """Side-stream warm-up of fn, then a capture of it: returns the graph and fn's static output."""
    side_stream(fn)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn()
    return graph, out


def train(step, load, graphed, before=None):
    """WARMUP real training steps (on a side stream when graphed), a capture of step(), then STEPS steps: replays or
    eager calls. load(k) fills the static inputs with batch k. before(i) runs ahead of step i; when it returns True,
    both runs do WARMUP more real steps and the graphed run captures again."""
    feed = iter(range(BATCHES))

    def warm_step():
        load(next(feed))
        step()

    def start():
        if not graphed:
            for _ in range(WARMUP):
                warm_step()
            return None
        side_stream(warm_step)
        new_graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(new_graph):
            step()
        return new_graph

    graph = start()
    for i in range(STEPS):
        if before is not None and before(i):
            graph = start()
        load(next(feed))
        if graphed:
            graph.replay()
        else:
            step()
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


def loader(xs, ys):
    """Static input tensors and a load(k) that copies batch k into them."""
    static_x, static_y = xs[0].clone(), ys[0].clone()

    def load(k):
        static_x.copy_(xs[k])
        static_y.copy_(ys[k])

    return static_x, static_y, load


def sgd_step(model, optimizer, static_x, static_y):
    """The usual whole-step closure: zero_grad, cross-entropy, backward, optimizer step."""

    def step():
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(static_x), static_y).backward()
        optimizer.step()

    return step


# ------------------------------------------------------------------------- module mode: a custom set_mode() method


class StagedNet(nn.Module):
    """A fine-tuning net: a nested backbone with BatchNorm and a new head."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.backbone = nn.Sequential(
            nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(),
            nn.Sequential(nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU()))
        self.head = nn.Linear(64, 10)
        self.stage = None

    def set_mode(self, stage):
        """'warmup': the new head trains while the backbone runs in inference mode (its BatchNorm layers normalise
        with their stored statistics and leave them alone); 'full': every layer in training mode."""
        self.stage = stage
        self.train()
        if stage == "warmup":
            self.backbone.eval()
        return self

    def forward(self, x):
        return self.head(self.backbone(x))


def staged_finetune(name, recapture):
    def run(graphed):
        reseed()
        model = StagedNet().to(DEVICE).set_mode("warmup")
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        static_x, static_y, load = loader(*classifier_data(shift=0.5))
        step = sgd_step(model, optimizer, static_x, static_y)

        def next_stage(i):
            if i != STEPS // 2:
                return False
            if recapture:
                model.set_mode("full")
                return True
            model.set_mode("full")  # defect: set-mode-stage
            return False

        train(step, load, graphed, before=next_stage)
        return state(model)

    compare(name, run)


# ------------------------------------------------------------- module mode: a context manager flips .training


@contextlib.contextmanager
def bn_recalibration(model, momentum=0.5):
    """Re-estimates BatchNorm statistics (as after weight averaging, or for a new domain): the model in eval mode
    except its BatchNorm layers, whose statistics are reset and then updated by the batches forwarded in the block."""
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    was_training = model.training
    saved = [m.momentum for m in norms]
    model.eval()
    for m in norms:
        m.reset_running_stats()
        m.momentum = momentum
        m.training = True
    try:
        yield norms
    finally:
        for m, value in zip(norms, saved):
            m.momentum = value
        model.train(was_training)


def recalibration(name, recalibrate_eagerly):
    calibration_batches = 4

    def run(graphed):
        reseed()
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 64),
                              nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 10)).to(DEVICE).eval()
        source = gaussian(32, 32, seed=1)
        target = gaussian(32, 32, seed=3, scale=2.0, shift=1.5)  # the shifted deployment domain
        static_x = torch.zeros(32, 32, device=DEVICE)

        def forward():
            with torch.no_grad():
                return model(static_x)

        graph = static_out = None
        if graphed:
            static_x.copy_(source[0])
            graph, static_out = capture(forward)

        def predict(x):
            static_x.copy_(x)
            if graphed:
                graph.replay()
                return static_out
            return forward()

        outputs = [predict(source[i]).clone() for i in range(2)]
        if recalibrate_eagerly:
            with bn_recalibration(model), torch.no_grad():
                for k in range(calibration_batches):
                    model(target[k])
        else:
            with bn_recalibration(model):  # defect: bn-recalibration-context
                for k in range(calibration_batches):
                    predict(target[k])
        outputs += [predict(target[calibration_batches + i]).clone() for i in range(4)]
        synchronize()
        return outputs + state(model)

    compare(name, run)


# ------------------------------------------------------------ module mode: .training written directly (QAT)


class FakeQuant(nn.Module):
    """8-bit fake quantisation of activations (straight-through estimator). In training mode its observer follows
    an exponential moving average of the activation range; in eval mode the range is frozen."""

    def __init__(self, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("lo", torch.tensor(0.0))
        self.register_buffer("hi", torch.tensor(1.0))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.lo.lerp_(x.detach().min(), self.momentum)
                self.hi.lerp_(x.detach().max(), self.momentum)
        scale = (self.hi - self.lo).clamp_min(1e-6) / 255.0
        q = torch.round((x - self.lo) / scale).clamp(0, 255) * scale + self.lo
        return x + (q - x).detach()


def qat_training(name, recapture):
    def run(graphed):
        reseed()
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), FakeQuant(), nn.Linear(64, 64), nn.ReLU(), FakeQuant(),
                              nn.Linear(64, 10)).to(DEVICE)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        static_x, static_y, load = loader(*classifier_data())
        step = sgd_step(model, optimizer, static_x, static_y)

        def freeze_observers(i):  # the usual QAT recipe: observers frozen once the ranges have settled
            if i != STEPS // 2:
                return False
            if recapture:
                for m in model.modules():
                    if isinstance(m, FakeQuant):
                        m.training = False
                return True
            for m in model.modules():
                if isinstance(m, FakeQuant):
                    m.training = False  # defect: qat-observer-freeze
            return False

        train(step, load, graphed, before=freeze_observers)
        return state(model)

    compare(name, run)


# ---------------------------------------------------------------- held output: an attribute of a logger object


class ChurnLogger:
    """Tracks how the predictions on a fixed probe batch move from one optimizer step to the next."""

    def __init__(self, clone):
        self.clone = clone
        self.prev = None
        self.rows = []

    def log(self, logits):
        if self.prev is not None:
            kl = F.kl_div(F.log_softmax(logits, -1), F.log_softmax(self.prev, -1), log_target=True,
                          reduction="batchmean")
            churn = (logits.argmax(-1) != self.prev.argmax(-1)).float().mean()
            self.rows.append(torch.stack([kl, churn]))
        if self.clone:
            self.prev = logits.clone()
        else:
            self.prev = logits  # defect: logger-attr-output


def probe_churn(name, clone):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
        xs, ys = classifier_data()
        probe = gaussian(64, 32, seed=5, n=1)[0].clone()  # a fixed probe batch
        logger = ChurnLogger(clone)

        def probe_forward():
            with torch.no_grad():
                return model(probe)

        if graphed:
            probe_graph, probe_out = capture(probe_forward)

            def probe_logits():
                probe_graph.replay()
                return probe_out
        else:
            probe_logits = probe_forward
        for i in range(STEPS):
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(xs[i]), ys[i]).backward()
            optimizer.step()
            logger.log(probe_logits())
        synchronize()
        return [torch.stack(logger.rows)] + state(model)

    compare(name, run)


# ---------------------------------------------------------------------- held output: yielded by a generator


def generator_evaluation(name, clone):
    def run(graphed):
        reseed()
        model = mlp(32, 128, 10, seed=3).eval()
        xs, ys = classifier_data()
        static_x = torch.zeros(16, 32, device=DEVICE)

        def forward():
            with torch.no_grad():
                return model(static_x)

        graph = static_out = None
        if graphed:
            static_x.copy_(xs[0])
            graph, static_out = capture(forward)

        def predictions(batches):
            """Yields (index, logits) for each batch."""
            for i, x in enumerate(batches):
                static_x.copy_(x)
                if graphed:
                    graph.replay()
                    yield i, static_out
                else:
                    yield i, forward()

        if clone:
            by_batch = {i: logits.clone() for i, logits in predictions(xs[:STEPS])}
        else:
            by_batch = {i: logits for i, logits in predictions(xs[:STEPS])}  # defect: generator-yield-output
        nll = torch.stack([F.cross_entropy(by_batch[i], ys[i]) for i in range(STEPS)])
        accuracy = torch.stack([(by_batch[i].argmax(-1) == ys[i]).float().mean() for i in range(STEPS)])
        synchronize()
        return [nll, accuracy] + [by_batch[i].clone() for i in range(STEPS)]

    compare(name, run)


# -------------------------------------------------------------- .grad rebound by a helper between replays


def fresh_grads(params, in_place):
    """Clears the gradients that the next backward accumulates into."""
    for p in params:
        if in_place:
            p.grad.zero_()
        else:
            p.grad = torch.zeros_like(p)  # defect: grad-zero-helper


def manual_zero(name, in_place):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 10)
        params = list(model.parameters())
        optimizer = torch.optim.SGD(params, lr=0.1, momentum=0.9)
        static_x, static_y, load = loader(*classifier_data())

        def forward_backward():
            F.cross_entropy(model(static_x), static_y).backward()

        for p in params:  # the .grad tensors the backward accumulates into
            p.grad = torch.zeros_like(p)
        load(0)
        if graphed:
            side_stream(forward_backward)
            for p in params:
                p.grad.zero_()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                forward_backward()
            micro_step = graph.replay
        else:
            for _ in range(WARMUP):
                forward_backward()
            for p in params:
                p.grad.zero_()
            micro_step = forward_backward
        for i in range(STEPS):
            load(i + 1)
            micro_step()
            optimizer.step()
            fresh_grads(params, in_place)
        synchronize()
        return state(model)

    compare(name, run)


# ------------------------------------------------- p.data rebound inside torch.nn.utils.vector_to_parameters


def flat_rollback(name, in_place):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        static_x, static_y, load = loader(*classifier_data())
        step = sgd_step(model, optimizer, static_x, static_y)
        snapshot = {}

        def guard(i):
            if i == 2:  # a snapshot of the weights, as one flat vector
                with torch.no_grad():
                    snapshot["flat"] = parameters_to_vector(model.parameters())
            if i == 5:  # a loss spike: back to the snapshot
                if in_place:
                    with torch.no_grad():
                        offset = 0
                        for p in model.parameters():
                            p.copy_(snapshot["flat"][offset:offset + p.numel()].view_as(p))
                            offset += p.numel()
                else:
                    vector_to_parameters(snapshot["flat"], model.parameters())  # defect: vector-to-params
            return False

        train(step, load, graphed, before=guard)
        return state(model)

    compare(name, run)


# ---------------------------------------------------- Parameters replaced by load_state_dict(assign=True)


def serving_net(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(32, 64), nn.LayerNorm(64), nn.GELU(), nn.Linear(64, 10)).to(DEVICE)


def hot_swap(name, in_place):
    def run(graphed):
        reseed()
        model = serving_net(0).eval()
        newer = {k: v.detach().clone() for k, v in serving_net(1).state_dict().items()}  # a newer checkpoint
        xs = gaussian(16, 32, seed=1)
        static_x = torch.zeros(16, 32, device=DEVICE)

        def forward():
            with torch.no_grad():
                return model(static_x)

        def swap(i):
            if i != STEPS // 2:
                return False
            if in_place:
                model.load_state_dict(newer)
            else:
                model.load_state_dict(newer, assign=True)  # defect: load-state-assign
            return False

        return infer(forward, lambda i: static_x.copy_(xs[i]), graphed, before=swap)

    compare(name, run)


# --------------------------------------------------------------------- host value: an argparse Namespace


def parse_options(argv):
    parser = argparse.ArgumentParser(description="metric learning with a soft-margin triplet loss")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--margin", type=float, default=0.2)
    return parser.parse_args(argv)


MARGIN_SCHEDULE = {2: {"margin": 0.6}, 5: {"margin": 1.2}}  # step -> options to change


def triplet_training(name, on_device):
    def run(graphed):
        reseed()
        args = parse_options([])
        if on_device:
            args.margin = torch.tensor(args.margin, device=DEVICE)
        model = mlp(32, 64, 16)
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
        static_x, static_noise, load = loader(gaussian(32, 32, seed=1), gaussian(32, 32, seed=4, scale=0.5))

        def step():
            optimizer.zero_grad(set_to_none=True)
            anchor = F.normalize(model(static_x), dim=-1)
            positive = F.normalize(model(static_x + static_noise), dim=-1)
            negative = positive.roll(1, 0)
            d_pos = (anchor - positive).pow(2).sum(-1)
            d_neg = (anchor - negative).pow(2).sum(-1)
            F.softplus(d_pos - d_neg + args.margin).mean().backward()
            optimizer.step()

        def schedule(i):
            for key, value in MARGIN_SCHEDULE.get(i, {}).items():
                if on_device:
                    getattr(args, key).fill_(value)
                else:
                    setattr(args, key, value)  # defect: argparse-setattr
            return False

        train(step, load, graphed, before=schedule)
        return state(model)

    compare(name, run)


# ------------------------------------------------------------- host value: a functools.partial keyword


def huber_schedule(name, recapture):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 4)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        static_x, static_y, load = loader(gaussian(16, 32, seed=1), gaussian(16, 4, seed=2, scale=3.0))
        criterion = functools.partial(F.smooth_l1_loss, beta=2.0)

        def step():
            optimizer.zero_grad(set_to_none=True)
            criterion(model(static_x), static_y).backward()
            optimizer.step()

        def tighten(i):  # the Huber transition tightened half-way
            if i != STEPS // 2:
                return False
            if recapture:
                criterion.keywords["beta"] = 0.25
                return True
            criterion.keywords["beta"] = 0.25  # defect: partial-keywords
            return False

        train(step, load, graphed, before=tighten)
        return state(model)

    compare(name, run)


# -------------------------------------------------------------------------- host value: an environment variable


def noise_curriculum(name, on_device):
    def run(graphed):
        reseed()
        os.environ["AUG_NOISE_STD"] = "0.1"
        noise_std = torch.tensor(0.1, device=DEVICE)
        model = mlp(32, 64, 10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        xs, ys = classifier_data()
        noises = gaussian(16, 32, seed=6)
        static_x, static_y, static_noise = xs[0].clone(), ys[0].clone(), noises[0].clone()

        def load(k):
            static_x.copy_(xs[k])
            static_y.copy_(ys[k])
            static_noise.copy_(noises[k])

        def step():
            optimizer.zero_grad(set_to_none=True)
            std = noise_std if on_device else float(os.environ["AUG_NOISE_STD"])
            F.cross_entropy(model(static_x + std * static_noise), static_y).backward()
            optimizer.step()

        def ramp(i):  # the curriculum publishes the noise level in the environment (data-loader workers read it too)
            value = "%.2f" % (0.1 + 0.2 * (i + 1))
            if on_device:
                os.environ["AUG_NOISE_STD"] = value
                noise_std.fill_(float(value))
            else:
                os.environ["AUG_NOISE_STD"] = value  # defect: environ-noise
            return False

        train(step, load, graphed, before=ramp)
        return state(model)

    compare(name, run)


# ------------------------------------------------------------------------------- autocast: a dtype switch


def precision(policy):
    """The autocast context of a precision policy."""
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[policy]
    return torch.autocast(DEVICE, dtype=dtype, cache_enabled=False)


def precision_policy(name, recapture):
    def run(graphed):
        reseed()
        model = mlp(64, 256, 256, 10).eval()
        xs = gaussian(32, 64, seed=1)
        static_x = torch.zeros(32, 64, device=DEVICE)
        graph = static_out = None

        def forward():
            with torch.no_grad():
                return model(static_x)

        def predict(x):
            static_x.copy_(x)
            if graphed:
                graph.replay()
                return static_out
            return forward()

        half = STEPS // 2
        outputs = []
        with precision("bf16"):
            if graphed:
                static_x.copy_(xs[0])
                graph, static_out = capture(forward)
            outputs += [predict(xs[i]).float().clone() for i in range(half)]
        if recapture:
            with precision("fp16"):
                if graphed:
                    graph, static_out = capture(forward)
                outputs += [predict(xs[i]).float().clone() for i in range(half, STEPS)]
        else:
            with precision("fp16"):  # defect: autocast-dtype-switch
                outputs += [predict(xs[i]).float().clone() for i in range(half, STEPS)]
        synchronize()
        return outputs

    compare(name, run)


# ---------------------------------------------------- bucket graphs in one pool: sequence-length buckets


LENGTH_BUCKETS = (16, 32, 48, 64)
REQUEST_LENGTHS = [40, 12, 64, 25, 7, 33, 50, 18]


class FrameClassifier(nn.Module):
    """(batch, frames, 24) zero-padded -> (batch, 1, 6): per-frame MLP, mean over frames, linear head."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.frame = nn.Sequential(nn.Linear(24, 64), nn.GELU(), nn.Linear(64, 64))
        self.head = nn.Linear(64, 6)

    def forward(self, x):
        return self.head(self.frame(x).mean(1, keepdim=True))


def length_bucket(length):
    return next(b for b in LENGTH_BUCKETS if b >= length)


def length_buckets(name, keep_all):
    batch = 8

    def run(graphed):
        reseed()
        model = FrameClassifier().to(DEVICE).eval()
        requests = [gaussian(batch, n, 24, seed=10 + k, n=1)[0] for k, n in enumerate(REQUEST_LENGTHS)]
        outputs = []
        with torch.no_grad():
            if not graphed:
                for x in requests:
                    padded = F.pad(x, (0, 0, 0, length_bucket(x.shape[1]) - x.shape[1]))
                    outputs.append(model(padded).view(batch, -1).clone())
                synchronize()
                return outputs
            pool = torch.cuda.graph_pool_handle()
            static_in, graphs, static_outs = {}, {}, {}
            for length in sorted(LENGTH_BUCKETS, reverse=True):  # largest bucket first, all in one pool
                static_in[length] = torch.zeros(batch, length, 24, device=DEVICE)
                side_stream(lambda: model(static_in[length]))
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph, pool=pool):
                    out = model(static_in[length])
                graphs[length] = graph
                if keep_all:
                    static_outs[length] = out.view(batch, -1)
            if not keep_all:
                static_logits = out.view(batch, -1)  # defect: bucket-pool-view
            for x in requests:
                length = length_bucket(x.shape[1])
                static_in[length].zero_()
                static_in[length][:, :x.shape[1]].copy_(x)
                graphs[length].replay()
                logits = static_outs[length] if keep_all else static_logits
                outputs.append(logits.clone())
        synchronize()
        return outputs

    compare(name, run)


# ---------------------------------------------------------- bucket graphs in one pool: batch-size buckets


BATCH_BUCKETS = (8, 16, 32)
REQUEST_ROWS = [5, 32, 12, 3, 20, 16, 9, 27]


def batch_bucket(rows):
    return next(b for b in BATCH_BUCKETS if b >= rows)


def batch_buckets(name, keep_all):
    def run(graphed):
        reseed()
        model = mlp(32, 128, 10, seed=4).eval()
        requests = [gaussian(n, 32, seed=30 + k, n=1)[0] for k, n in enumerate(REQUEST_ROWS)]
        outputs = []
        with torch.no_grad():
            if not graphed:
                for x in requests:
                    padded = F.pad(x, (0, 0, 0, batch_bucket(x.shape[0]) - x.shape[0]))
                    outputs.append(model(padded)[:x.shape[0]].clone())
                synchronize()
                return outputs
            static_x = torch.zeros(max(BATCH_BUCKETS), 32, device=DEVICE)
            graphs, static_outs = {}, {}
            static_out = None
            pool = None
            for rows in sorted(BATCH_BUCKETS, reverse=True):  # largest first; the others share its pool
                side_stream(lambda: model(static_x[:rows]))
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph, pool=pool):
                    out = model(static_x[:rows])
                if pool is None:
                    pool = graph.pool()
                graphs[rows] = graph
                if keep_all:
                    static_outs[rows] = out
                elif static_out is None:
                    static_out = out  # defect: bucket-pool-largest-slice
            for x in requests:
                n = x.shape[0]
                rows = batch_bucket(n)
                static_x[:n].copy_(x)
                static_x[n:rows].zero_()
                graphs[rows].replay()
                result = static_outs[rows] if keep_all else static_out
                outputs.append(result[:n].clone())
        synchronize()
        return outputs

    compare(name, run)


# --------------------------------------------------------------- host randomness: a random.Random instance


class RandomGain:
    """Random-gain augmentation: each batch scaled by a factor from the augmentation's own seeded stream."""

    def __init__(self, seed, staged):
        self.rng = random.Random(seed)
        self.staged = staged
        self.gain = torch.ones((), device=DEVICE)

    def stage(self):
        """Draws the next gain on the host, outside any capture, into the static gain tensor."""
        self.gain.fill_(self.rng.uniform(0.5, 2.0))

    def __call__(self, x):
        if self.staged:
            return x * self.gain
        return x * self.rng.uniform(0.5, 2.0)  # defect: rng-instance-gain


def gain_training(name, staged):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        augment = RandomGain(1234, staged)
        xs, ys = classifier_data()
        static_x, static_y = xs[0].clone(), ys[0].clone()

        def load(k):
            static_x.copy_(xs[k])
            static_y.copy_(ys[k])
            if staged:
                augment.stage()

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(augment(static_x)), static_y).backward()
            optimizer.step()

        train(step, load, graphed)
        return state(model)

    compare(name, run)


# ----------------------------------------------------------------- host iterator state: itertools.cycle


TASK_CLASSES = (3, 5, 7)


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.trunk = nn.Sequential(nn.Linear(32, 64), nn.ReLU())
        self.heads = nn.ModuleList(nn.Linear(64, c) for c in TASK_CLASSES)


def round_robin(name, masked):
    def run(graphed):
        reseed()
        model = MultiTaskNet().to(DEVICE)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # plain SGD: a head without a gradient stays put
        xs = gaussian(16, 32, seed=1)
        labels = [classes(16, c, seed=20 + t) for t, c in enumerate(TASK_CLASSES)]
        static_x = xs[0].clone()
        static_ys = [y[0].clone() for y in labels]
        order = itertools.cycle(range(len(TASK_CLASSES)))
        one_hot = torch.eye(len(TASK_CLASSES), device=DEVICE)
        task_mask = torch.zeros(len(TASK_CLASSES), device=DEVICE)

        def load(k):
            static_x.copy_(xs[k])
            for static, y in zip(static_ys, labels):
                static.copy_(y[k])
            if masked:
                task_mask.copy_(one_hot[next(order)])

        def step():
            optimizer.zero_grad(set_to_none=True)
            h = model.trunk(static_x)
            if masked:
                loss = sum(task_mask[t] * F.cross_entropy(head(h), y)
                           for t, (head, y) in enumerate(zip(model.heads, static_ys)))
            else:
                task = next(order)  # defect: cycle-task-order
                loss = F.cross_entropy(model.heads[task](h), static_ys[task])
            loss.backward()
            optimizer.step()

        train(step, load, graphed)
        return state(model)

    compare(name, run)


# ------------------------------------------------------------------- optimizer: a param group added later


class AdapterNet(nn.Module):
    """A base net plus a low-rank side adapter whose training starts later."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.base = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
        self.adapter = nn.Sequential(nn.Linear(32, 8, bias=False), nn.Linear(8, 10, bias=False))

    def forward(self, x):
        return self.base(x) + self.adapter(x)


def adapter_training(name, recapture):
    def run(graphed):
        reseed()
        model = AdapterNet().to(DEVICE)
        optimizer = torch.optim.SGD(model.base.parameters(), lr=0.05, momentum=0.9)
        static_x, static_y, load = loader(*classifier_data())
        step = sgd_step(model, optimizer, static_x, static_y)

        def start_adapter(i):
            if i != STEPS // 2:
                return False
            group = {"params": list(model.adapter.parameters()), "lr": 0.1}
            if recapture:
                optimizer.add_param_group(group)
                return True
            optimizer.add_param_group(group)  # defect: param-group-added
            return False

        train(step, load, graphed, before=start_adapter)
        return state(model)

    compare(name, run)


MODES = {
    "set-mode-stage": lambda name: staged_finetune(name, recapture=False),
    "set-mode-recaptured": lambda name: staged_finetune(name, recapture=True),
    "bn-recalibration-context": lambda name: recalibration(name, recalibrate_eagerly=False),
    "bn-recalibration-eager": lambda name: recalibration(name, recalibrate_eagerly=True),
    "qat-observer-freeze": lambda name: qat_training(name, recapture=False),
    "qat-observer-recaptured": lambda name: qat_training(name, recapture=True),
    "logger-attr-output": lambda name: probe_churn(name, clone=False),
    "logger-attr-clone": lambda name: probe_churn(name, clone=True),
    "generator-yield-output": lambda name: generator_evaluation(name, clone=False),
    "generator-yield-clone": lambda name: generator_evaluation(name, clone=True),
    "grad-zero-helper": lambda name: manual_zero(name, in_place=False),
    "grad-zero-inplace": lambda name: manual_zero(name, in_place=True),
    "vector-to-params": lambda name: flat_rollback(name, in_place=False),
    "vector-copy-params": lambda name: flat_rollback(name, in_place=True),
    "load-state-assign": lambda name: hot_swap(name, in_place=False),
    "load-state-copy": lambda name: hot_swap(name, in_place=True),
    "argparse-setattr": lambda name: triplet_training(name, on_device=False),
    "argparse-tensor": lambda name: triplet_training(name, on_device=True),
    "partial-keywords": lambda name: huber_schedule(name, recapture=False),
    "partial-recaptured": lambda name: huber_schedule(name, recapture=True),
    "environ-noise": lambda name: noise_curriculum(name, on_device=False),
    "environ-noise-tensor": lambda name: noise_curriculum(name, on_device=True),
    "autocast-dtype-switch": lambda name: precision_policy(name, recapture=False),
    "autocast-dtype-recaptured": lambda name: precision_policy(name, recapture=True),
    "bucket-pool-view": lambda name: length_buckets(name, keep_all=False),
    "bucket-pool-dict": lambda name: length_buckets(name, keep_all=True),
    "bucket-pool-largest-slice": lambda name: batch_buckets(name, keep_all=False),
    "bucket-pool-own-slice": lambda name: batch_buckets(name, keep_all=True),
    "rng-instance-gain": lambda name: gain_training(name, staged=False),
    "rng-instance-staged": lambda name: gain_training(name, staged=True),
    "cycle-task-order": lambda name: round_robin(name, masked=False),
    "cycle-task-mask": lambda name: round_robin(name, masked=True),
    "param-group-added": lambda name: adapter_training(name, recapture=False),
    "param-group-recaptured": lambda name: adapter_training(name, recapture=True),
}

# The contract term each defect mode breaks.
TERMS = {
    "set-mode-stage": "module-mode",
    "bn-recalibration-context": "module-mode",
    "qat-observer-freeze": "module-mode",
    "logger-attr-output": "held-output",
    "generator-yield-output": "held-output",
    "grad-zero-helper": "memory-rebound",
    "vector-to-params": "memory-rebound",
    "load-state-assign": "memory-rebound",
    "argparse-setattr": "host-value",
    "partial-keywords": "host-value",
    "environ-noise": "host-value",
    "autocast-dtype-switch": "autocast",
    "bucket-pool-view": "pool-output",
    "bucket-pool-largest-slice": "pool-output",
    "rng-instance-gain": "host-random",
    "cycle-task-order": "host-random",
    "param-group-added": "optimizer-state",
}

# Each defect mode's clean twin.
TWINS = {
    "set-mode-stage": "set-mode-recaptured",
    "bn-recalibration-context": "bn-recalibration-eager",
    "qat-observer-freeze": "qat-observer-recaptured",
    "logger-attr-output": "logger-attr-clone",
    "generator-yield-output": "generator-yield-clone",
    "grad-zero-helper": "grad-zero-inplace",
    "vector-to-params": "vector-copy-params",
    "load-state-assign": "load-state-copy",
    "argparse-setattr": "argparse-tensor",
    "partial-keywords": "partial-recaptured",
    "environ-noise": "environ-noise-tensor",
    "autocast-dtype-switch": "autocast-dtype-recaptured",
    "bucket-pool-view": "bucket-pool-dict",
    "bucket-pool-largest-slice": "bucket-pool-own-slice",
    "rng-instance-gain": "rng-instance-staged",
    "cycle-task-order": "cycle-task-mask",
    "param-group-added": "param-group-recaptured",
}

if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "--cpu-check":
        DEVICE = "cpu"
        CPU_CHECK = True
    deterministic()
    MODES[sys.argv[1]](sys.argv[1])
