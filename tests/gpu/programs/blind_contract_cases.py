"""PyTorch programs written blind (without reading how graphcheck detects anything) whose CUDA graphs capture fine and
then compute wrong because the program breaks a term of the capture contract after the capture, each with a clean twin
that does the same thing the right way. One program per mode (argv[1]). The line where each defect is introduced ends
in "# defect: MODE". Each program runs the same steps twice from the same seeds, once through graphs and once eagerly,
and prints "MODE vs eager: max difference D" over the outputs or the trained parameters; TERMS names the contract term
each defect mode breaks and TWINS its clean twin.

  closure-scale          inference: log-probs scaled by a temperature held in a closure cell that a setter rebinds
                         (nonlocal) between replays
  closure-tensor         clean: the closure holds a 0-d CUDA tensor the setter fills in place
  config-dataclass       whole training step: label smoothing read from a dataclass config whose float field the
                         program anneals between replays
  config-tensor          clean: the config field is a 0-d CUDA tensor filled in place
  dict-clip              whole training step with gradient-norm clipping: the threshold, an entry of a module-level
                         dict CFG["max_grad_norm"], is relaxed between replays
  dict-clip-tensor       clean: the dict entry is a 0-d CUDA tensor filled in place
  flag-tta               inference: a module-level bool switches flip test-time augmentation on half-way through
  flag-tta-recaptured    clean: the graph is captured again after the switch
  clock-shift            whole training step whose random time-shift augmentation takes its shift from
                         time.perf_counter_ns() inside the capture
  clock-shift-device     clean: the shift drawn with torch.randint on the GPU inside the capture
  cpu-generator-mask     whole training step with SpecAugment-style time masking whose start is drawn from a CPU
                         torch.Generator inside the capture
  cpu-generator-staged   clean: the start drawn from the same CPU generator before each step, outside the capture,
                         and filled into a static CUDA tensor
  urandom-crop           whole training step that crops a random window whose offset comes from os.urandom inside the
                         capture
  urandom-crop-device    clean: the offset drawn on the GPU inside the capture and applied with index_select
  autocast-disabled      inference graph captured under bf16 autocast, replayed inside an fp32 (autocast disabled)
                         evaluation phase
  autocast-recaptured    clean: the fp32 phase captures its own graph
  grad-mode-quantizer    inference graph of a quantizer that is soft when grad mode is on and hard under no-grad,
                         captured with grad enabled, replayed after torch.set_grad_enabled(False)
  grad-mode-recaptured   clean: the graph captured again after grad mode is switched off
  mc-dropout             inference graph captured in eval mode, then the Dropout submodules put back in train mode
                         for Monte-Carlo dropout sampling
  mc-dropout-captured    clean: the dropouts switched to train mode before the capture (CUDA RNG state restored after
                         the warm-up)
  dropout-p              whole training step; a submodule's nn.Dropout p is annealed between replays
  dropout-p-buffer       clean: a dropout whose p is a buffer filled in place
  loss-scale-growth      forward+backward graph scaled by a hand-rolled loss scaler's Python float, doubled every two
                         steps; the eager unscale divides by the new scale
  loss-scale-tensor      clean: the scale is a 0-d CUDA tensor multiplied in place
  head-setattr           inference: the classifier head's weight replaced with setattr(new nn.Parameter) after capture
  head-copy              clean: the new weight copied into the parameter in place
  prior-reregistered     inference with logit adjustment: the log-prior buffer re-registered (register_buffer with a
                         new tensor) as class counts come in
  prior-copied           clean: the log-prior buffer updated in place
  holder-rebind          whole training step reading its batch from a dataclass holder whose .x attribute is rebound to
                         each new batch
  holder-copy            clean: each batch copied into holder.x in place
  momentum-reset         whole training step with SGD momentum; a warm restart replaces each
                         optimizer.state[p]["momentum_buffer"] with a new zero tensor
  momentum-zeroed        clean: the momentum buffers zeroed in place
  freeze-after-capture   whole training step; the first layer frozen with p.requires_grad = False half-way through
  freeze-recaptured      clean: the step warmed up and captured again after the freeze
  grad-assign-alias      graph of torch.autograd.grad over a micro-batch; gradient accumulation assigns p.grad = the
                         graph's output tensor on the first micro-batch, then adds into it
  grad-assign-clone      clean: p.grad = a clone of the graph's output
  valid-length           inference with padded sequences pooled over a Python int number of valid frames held in the
                         batch holder, changed for each batch
  valid-length-mask      clean: the length is a 0-d CUDA tensor and the pooling masks
  layer-scales-list      whole training step of a residual stack whose branch scales live in a plain Python list on
                         the module, ramped between replays
  layer-scales-buffer    clean: the scales are a buffer filled in place
  sigma-property         whole training step of a denoiser whose noise level is a @property computed from an update
                         counter the program increments after each step
  sigma-buffer           clean: the property returns a buffer decayed in place
  weight-decay-schedule  whole training step with SGD whose param_groups' weight_decay follows a cosine schedule
  weight-decay-tensor    clean: the decay applied inside the step from a 0-d CUDA tensor filled in place
"""
import dataclasses
import math
import os
import random
import sys
import time

import torch
import torch.cuda.nvtx as nvtx
import torch.nn.functional as F
from torch import nn

STEPS = 8  # replays (eager steps) after the first capture
WARMUP = 3  # side-stream warm-up iterations before each manual capture
BATCHES = WARMUP + STEPS + WARMUP  # enough batches for one re-capture


def side_stream_warmup(fn, iterations=WARMUP):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(iterations):
            fn()
    torch.cuda.current_stream().wait_stream(s)


def report(name, graphed, eager):
    difference = max((g.float() - e.float()).abs().max().item() for g, e in zip(graphed, eager))
    print("%s vs eager: max difference %.4g" % (name, difference), flush=True)


def seed_everything():
    torch.manual_seed(0)
    random.seed(0)


def data(*shape, n=BATCHES, seed=1, scale=1.0):
    """n batches of the given shape, drawn on the GPU from a generator of their own (the default generators untouched)."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    return torch.randn(n, *shape, device="cuda", generator=gen) * scale


def labels(*shape, classes=8, n=BATCHES, seed=2):
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    return torch.randint(0, classes, (n, *shape), device="cuda", generator=gen)


def mlp(inputs=64, hidden=128, outputs=8):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(inputs, hidden), nn.ReLU(), nn.Linear(hidden, outputs)).cuda()


def parameters(model):
    return [p.detach().clone() for p in model.parameters()]


def capture(fn, keep_rng=False):
    """Side-stream warm-up of fn, then a capture of it; returns the graph and fn's static output. keep_rng puts the
    CUDA generator back where it was before the warm-up, so that replays draw what eager calls would."""
    rng = torch.cuda.get_rng_state() if keep_rng else None
    side_stream_warmup(fn)
    if keep_rng:
        torch.cuda.set_rng_state(rng)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn()
    return graph, out


def infer(forward, load, graphed, before=None, steps=STEPS):
    """Runs forward() on `steps` inputs: replays of a capture of it, or eager calls. before(i) runs ahead of step i;
    when it returns True the graphed run warms up and captures forward() again."""
    outputs = []
    graph = static_out = None
    if graphed:
        load(0)
        graph, static_out = capture(forward)
    for i in range(steps):
        if graphed:
            nvtx.range_push("step")
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
        if graphed:
            nvtx.range_pop()
    torch.cuda.synchronize()
    return outputs


def train(step, load, graphed, before=None, warm_load=None, steps=STEPS):
    """WARMUP real training steps (on a side stream when graphed), a capture of step(), then `steps` steps: replays, or
    eager calls. load(k) / warm_load(k) fill the static inputs with batch k. before(i) runs ahead of step i; when it
    returns True the graphed run does WARMUP more real steps and captures again (the eager run does the same steps)."""
    warm_load = warm_load or load
    batches = iter(range(BATCHES))

    def warm_step():
        warm_load(next(batches))
        step()

    def start():
        if not graphed:
            for _ in range(WARMUP):
                warm_step()
            return None
        side_stream_warmup(warm_step)
        new_graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(new_graph):
            step()
        return new_graph

    graph = start()
    for i in range(steps):
        if graphed:
            nvtx.range_push("step")
        if before is not None and before(i):
            graph = start()
        load(next(batches))
        if graphed:
            graph.replay()
        else:
            step()
        if graphed:
            nvtx.range_pop()
    torch.cuda.synchronize()


# ---------------------------------------------------------------------------------------------------------- closure


def make_calibration(scale, in_place):
    """Post-processing that closes over its temperature: returns (postprocess, set_scale)."""

    def postprocess(logits):
        return torch.log_softmax(logits * scale, dim=-1)

    def set_scale(value):
        nonlocal scale
        if in_place:
            scale.fill_(value)
        else:
            scale = value  # defect: closure-scale

    return postprocess, set_scale


def closure_calibration(name, in_place):
    def run(graphed):
        seed_everything()
        model = mlp()
        xs = data(32, 64, scale=2.0)
        static_x = torch.zeros(32, 64, device="cuda")
        postprocess, set_scale = make_calibration(torch.tensor(0.5, device="cuda") if in_place else 0.5, in_place)

        def forward():
            with torch.no_grad():
                return postprocess(model(static_x))

        def sweep(i):  # a temperature sweep for calibration
            set_scale(0.5 + 0.25 * (i + 1))

        return infer(forward, lambda i: static_x.copy_(xs[i]), graphed, before=sweep)

    report(name, run(True), run(False))


# ---------------------------------------------------------------------------------------------- dataclass config


@dataclasses.dataclass
class TrainConfig:
    lr: float = 0.1
    momentum: float = 0.9
    label_smoothing: object = 0.2  # a Python float, or a 0-d CUDA tensor


def smoothed_cross_entropy(logits, target, eps):
    logp = torch.log_softmax(logits, dim=-1)
    nll = -logp.gather(1, target[:, None]).mean()
    uniform = -logp.mean()
    return (1 - eps) * nll + eps * uniform


def config_smoothing(name, on_device):
    def run(graphed):
        seed_everything()
        cfg = TrainConfig()
        if on_device:
            cfg.label_smoothing = torch.tensor(0.2, device="cuda")
        model = mlp()
        optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum)
        xs, ys = data(32, 64), labels(32)
        static_x, static_y = xs[0].clone(), ys[0].clone()

        def step():
            optimizer.zero_grad(set_to_none=True)
            smoothed_cross_entropy(model(static_x), static_y, cfg.label_smoothing).backward()
            optimizer.step()

        def load(k):
            static_x.copy_(xs[k])
            static_y.copy_(ys[k])

        def anneal(i):
            value = 0.2 * (1 - (i + 1) / STEPS)
            if on_device:
                cfg.label_smoothing.fill_(value)
            else:
                cfg.label_smoothing = value  # defect: config-dataclass

        train(step, load, graphed, before=anneal)
        return parameters(model)

    report(name, run(True), run(False))


# -------------------------------------------------------------------------------------------------- dict entry

CFG = {"max_grad_norm": 0.05}


def clip_grad_norm(params, max_norm):
    grads = [p.grad for p in params]
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)


def dict_clip(name, on_device):
    def run(graphed):
        seed_everything()
        CFG["max_grad_norm"] = torch.tensor(0.05, device="cuda") if on_device else 0.05
        model = mlp()
        params = list(model.parameters())
        optimizer = torch.optim.SGD(params, lr=0.05, momentum=0.9)
        xs, ys = data(32, 64), data(32, 8, seed=2, scale=3.0)
        static_x, static_y = xs[0].clone(), ys[0].clone()

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.mse_loss(model(static_x), static_y).backward()
            clip_grad_norm(params, CFG["max_grad_norm"])
            optimizer.step()

        def load(k):
            static_x.copy_(xs[k])
            static_y.copy_(ys[k])

        def relax(i):  # the clipping threshold relaxed once training settles
            if on_device:
                CFG["max_grad_norm"].fill_(0.05 * (i + 2))
            else:
                CFG["max_grad_norm"] = 0.05 * (i + 2)  # defect: dict-clip

        train(step, load, graphed, before=relax)
        return parameters(model)

    report(name, run(True), run(False))


# -------------------------------------------------------------------------------------------------- global bool

TTA_FLIP = False


def set_tta(value):
    global TTA_FLIP
    TTA_FLIP = value


def tta_predict(model, x):
    out = model(x)
    if TTA_FLIP:
        out = 0.5 * (out + model(x.flip(-1)))
    return out


def flag_tta(name, recapture):
    def run(graphed):
        seed_everything()
        set_tta(False)
        model = mlp()
        model.eval()
        xs = data(32, 64)
        static_x = torch.zeros(32, 64, device="cuda")

        def forward():
            with torch.no_grad():
                return tta_predict(model, static_x)

        def switch(i):
            global TTA_FLIP
            if i != STEPS // 2:
                return False
            if recapture:
                TTA_FLIP = True
                return True
            TTA_FLIP = True  # defect: flag-tta
            return False

        outputs = infer(forward, lambda i: static_x.copy_(xs[i]), graphed, before=switch)
        set_tta(False)
        return outputs

    report(name, run(True), run(False))


# ------------------------------------------------------------------------------------------ host randomness


def clock_shift(x):
    """Random time-shift augmentation, its shift taken from the clock."""
    shift = (time.perf_counter_ns() // 1000) % 16  # defect: clock-shift
    return torch.roll(x, shift, dims=1)


def device_shift(x, positions):
    shift = torch.randint(0, 16, (), device="cuda")
    return x.index_select(1, (positions - shift) % x.shape[1])


def shifted_training(name, on_device):
    def run(graphed):
        seed_everything()
        model = mlp()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs, ys = data(32, 64), data(32, 8, seed=2)
        static_x, static_y = xs[0].clone(), ys[0].clone()
        positions = torch.arange(64, device="cuda")

        def step():
            optimizer.zero_grad(set_to_none=True)
            x = device_shift(static_x, positions) if on_device else clock_shift(static_x)
            F.mse_loss(model(x), static_y).backward()
            optimizer.step()

        def load(k):
            static_x.copy_(xs[k])
            static_y.copy_(ys[k])

        train(step, load, graphed)
        return parameters(model)

    report(name, run(True), run(False))


class TimeMasking:
    """SpecAugment-style time masking: WIDTH consecutive frames zeroed from a start drawn from a CPU torch.Generator."""

    WIDTH = 12

    def __init__(self, length, staged):
        self.gen = torch.Generator()
        self.gen.manual_seed(0)
        self.length = length
        self.staged = staged
        self.start = torch.zeros((), dtype=torch.long, device="cuda")
        self.positions = torch.arange(length, device="cuda")

    def stage(self):
        """Draws the start on the host, outside any capture, into the static start tensor."""
        self.start.fill_(int(torch.randint(0, self.length - self.WIDTH, (1,), generator=self.gen)))

    def __call__(self, x):
        if self.staged:
            keep = (self.positions < self.start) | (self.positions >= self.start + self.WIDTH)
            return x * keep
        start = int(torch.randint(0, self.length - self.WIDTH, (1,), generator=self.gen))  # defect: cpu-generator-mask
        x = x.clone()
        x[:, start:start + self.WIDTH] = 0.0
        return x


def masked_training(name, staged):
    def run(graphed):
        seed_everything()
        model = mlp()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        masking = TimeMasking(64, staged)
        xs, ys = data(32, 64), data(32, 8, seed=2)
        static_x, static_y = xs[0].clone(), ys[0].clone()

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.mse_loss(model(masking(static_x)), static_y).backward()
            optimizer.step()

        def load(k):
            static_x.copy_(xs[k])
            static_y.copy_(ys[k])
            if staged:
                masking.stage()

        train(step, load, graphed)
        return parameters(model)

    report(name, run(True), run(False))


def urandom_crop(x, width):
    offset = os.urandom(1)[0] % (x.shape[1] - width + 1)  # defect: urandom-crop
    return x[:, offset:offset + width]


def device_crop(x, width, positions):
    offset = torch.randint(0, x.shape[1] - width + 1, (), device="cuda")
    return x.index_select(1, positions + offset)


def cropped_training(name, on_device):
    def run(graphed):
        seed_everything()
        model = mlp()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs, ys = data(32, 80), data(32, 8, seed=2)
        static_x, static_y = xs[0].clone(), ys[0].clone()
        positions = torch.arange(64, device="cuda")

        def step():
            optimizer.zero_grad(set_to_none=True)
            x = device_crop(static_x, 64, positions) if on_device else urandom_crop(static_x, 64)
            F.mse_loss(model(x), static_y).backward()
            optimizer.step()

        def load(k):
            static_x.copy_(xs[k])
            static_y.copy_(ys[k])

        train(step, load, graphed)
        return parameters(model)

    report(name, run(True), run(False))


# --------------------------------------------------------------------------------------------------- autocast


def precision_switch(name, recapture):
    def run(graphed):
        seed_everything()
        model = mlp(hidden=256)
        model.eval()
        xs = data(32, 64, scale=2.0)
        static_x = torch.zeros(32, 64, device="cuda")
        graph = static_out = None

        def forward():
            with torch.no_grad():
                return model(static_x)

        def step(i):
            if graphed:
                nvtx.range_push("step")
            static_x.copy_(xs[i])
            if graphed:
                graph.replay()
                out = static_out
            else:
                out = forward()
            if graphed:
                nvtx.range_pop()
            return out.float().clone()

        outputs = []
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
            if graphed:
                static_x.copy_(xs[0])
                graph, static_out = capture(forward)
            outputs += [step(i) for i in range(STEPS // 2)]
        if recapture:
            with torch.autocast("cuda", enabled=False):
                if graphed:
                    graph, static_out = capture(forward)
                outputs += [step(i) for i in range(STEPS // 2, STEPS)]
        else:
            with torch.autocast("cuda", enabled=False):  # defect: autocast-disabled
                outputs += [step(i) for i in range(STEPS // 2, STEPS)]
        torch.cuda.synchronize()
        return outputs

    report(name, run(True), run(False))


# -------------------------------------------------------------------------------------------------- grad mode


class SoftQuantizer(nn.Module):
    """Vector quantizer: a differentiable soft assignment while gradients flow, the nearest code under no-grad."""

    def __init__(self, codes=16, dim=32):
        super().__init__()
        self.codebook = nn.Parameter(torch.randn(codes, dim))

    def forward(self, z):
        d = (z * z).sum(-1, keepdim=True) - 2 * z @ self.codebook.t() + (self.codebook ** 2).sum(-1)
        if torch.is_grad_enabled():
            return torch.softmax(-d / 0.5, dim=-1) @ self.codebook
        return self.codebook[d.argmin(dim=-1)]


def grad_mode_quantizer(name, recapture):
    def run(graphed):
        seed_everything()
        model = nn.Sequential(nn.Linear(64, 32), SoftQuantizer(), nn.Linear(32, 8)).cuda()
        xs = data(32, 64)
        static_x = torch.zeros(32, 64, device="cuda")

        def evaluate_from(i):
            if i != STEPS // 2:
                return False
            if recapture:
                torch.set_grad_enabled(False)
                return True
            torch.set_grad_enabled(False)  # defect: grad-mode-quantizer
            return False

        torch.set_grad_enabled(True)
        outputs = infer(lambda: model(static_x), lambda i: static_x.copy_(xs[i]), graphed, before=evaluate_from)
        torch.set_grad_enabled(True)
        return outputs

    report(name, run(True), run(False))


# ------------------------------------------------------------------------------------------ module modes


def mc_dropout(name, capture_after):
    def run(graphed):
        seed_everything()
        model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.25), nn.Linear(128, 128), nn.ReLU(),
                              nn.Dropout(0.25), nn.Linear(128, 8)).cuda()
        model.eval()
        dropouts = [m for m in model.modules() if isinstance(m, nn.Dropout)]
        xs = data(32, 64)
        static_x = xs[0].clone()

        def forward():
            with torch.no_grad():
                return model(static_x)

        graph = static_out = None
        if capture_after:
            for m in dropouts:
                m.train()
            if graphed:
                graph, static_out = capture(forward, keep_rng=True)
        else:
            if graphed:
                graph, static_out = capture(forward)
            for m in dropouts:
                m.train()  # defect: mc-dropout
        samples = []
        for i in range(STEPS):  # Monte-Carlo samples of the prediction
            static_x.copy_(xs[i])
            if graphed:
                nvtx.range_push("step")
                graph.replay()
                samples.append(static_out.clone())
                nvtx.range_pop()
            else:
                samples.append(forward())
        torch.cuda.synchronize()
        return samples

    report(name, run(True), run(False))


class TensorDropout(nn.Module):
    """Dropout whose probability is a buffer."""

    def __init__(self, p):
        super().__init__()
        self.register_buffer("p", torch.tensor(p))

    def forward(self, x):
        if not self.training:
            return x
        keep = torch.rand_like(x) >= self.p
        return x * keep / (1 - self.p)


def dropout_schedule(name, as_buffer):
    def run(graphed):
        seed_everything()
        model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), TensorDropout(0.3) if as_buffer else nn.Dropout(0.3),
                              nn.Linear(128, 8)).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs, ys = data(32, 64), data(32, 8, seed=2)
        static_x, static_y = xs[0].clone(), ys[0].clone()

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.mse_loss(model(static_x), static_y).backward()
            optimizer.step()

        def load(k):
            static_x.copy_(xs[k])
            static_y.copy_(ys[k])

        def anneal(i):  # "early dropout": regularize at the start only
            p = 0.3 * (1 - (i + 1) / STEPS)
            if as_buffer:
                model[2].p.fill_(p)
            else:
                model[2].p = p  # defect: dropout-p

        train(step, load, graphed, before=anneal)
        return parameters(model)

    report(name, run(True), run(False))


# ------------------------------------------------------------------------------------------------- loss scale


class LossScaler:
    """A hand-rolled dynamic loss scaler: loss * scale before backward, gradients / scale before the optimizer step,
    the scale doubled every GROWTH_INTERVAL steps."""

    GROWTH_INTERVAL = 2

    def __init__(self, on_device):
        self.on_device = on_device
        self.scale = torch.tensor(1024.0, device="cuda") if on_device else 1024.0

    def grow(self):
        if self.on_device:
            self.scale.mul_(2.0)
        else:
            self.scale = self.scale * 2.0  # defect: loss-scale-growth

    def unscale_(self, params):
        for p in params:
            p.grad.div_(self.scale)


def loss_scaling(name, on_device):
    def run(graphed):
        seed_everything()
        model = mlp()
        params = list(model.parameters())
        optimizer = torch.optim.SGD(params, lr=0.05, momentum=0.9)
        scaler = LossScaler(on_device)
        xs, ys = data(32, 64), data(32, 8, seed=2)
        static_x, static_y = xs[0].clone(), ys[0].clone()

        def forward_backward():
            loss = F.mse_loss(model(static_x), static_y)
            (loss * scaler.scale).backward()

        graph = None
        if graphed:
            side_stream_warmup(forward_backward)
            optimizer.zero_grad(set_to_none=True)  # backward in the capture creates .grad in the graph's pool
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                forward_backward()
        for i in range(STEPS):
            if graphed:
                nvtx.range_push("step")
            if i > 0 and i % LossScaler.GROWTH_INTERVAL == 0:
                scaler.grow()
            static_x.copy_(xs[i])
            static_y.copy_(ys[i])
            if graphed:
                graph.replay()
            else:
                optimizer.zero_grad(set_to_none=True)
                forward_backward()
            scaler.unscale_(params)
            optimizer.step()
            if graphed:
                nvtx.range_pop()
        torch.cuda.synchronize()
        return parameters(model)

    report(name, run(True), run(False))


# ----------------------------------------------------------------------------------------- replaced tensors


class PrototypeClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 128), nn.ReLU())
        self.head = nn.Linear(128, 8, bias=False)

    def forward(self, x):
        return self.head(self.body(x))


def head_swap(name, in_place):
    def run(graphed):
        seed_everything()
        model = PrototypeClassifier().cuda()
        model.eval()
        xs = data(32, 64)
        static_x = torch.zeros(32, 64, device="cuda")
        prototypes = F.normalize(data(8, 128, n=1, seed=7)[0], dim=-1) * 4.0  # class prototypes for a new task

        def forward():
            with torch.no_grad():
                return model(static_x)

        def new_task(i):
            if i != STEPS // 2:
                return False
            if in_place:
                with torch.no_grad():
                    model.head.weight.copy_(prototypes)
            else:
                model.head.weight = nn.Parameter(prototypes)  # defect: head-setattr
            return False

        return infer(forward, lambda i: static_x.copy_(xs[i]), graphed, before=new_task)

    report(name, run(True), run(False))


class LogitAdjusted(nn.Module):
    """Long-tail logit adjustment: logits minus the log class prior."""

    def __init__(self, counts):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 8))
        self.register_buffer("log_prior", torch.log(counts / counts.sum()))

    def forward(self, x):
        return self.body(x) - self.log_prior


def prior_update(name, in_place):
    def run(graphed):
        seed_everything()
        counts = torch.full((8,), 10.0, device="cuda")
        model = LogitAdjusted(counts).cuda()
        model.eval()
        xs = data(32, 64)
        observed = data(8, n=STEPS, seed=5).abs() * 40.0  # class counts seen in each new chunk of data
        static_x = torch.zeros(32, 64, device="cuda")

        def forward():
            with torch.no_grad():
                return model(static_x)

        def recount(i):
            counts.add_(observed[i])
            if in_place:
                model.log_prior.copy_(torch.log(counts / counts.sum()))
            else:
                model.register_buffer("log_prior", torch.log(counts / counts.sum()))  # defect: prior-reregistered
            return False

        return infer(forward, lambda i: static_x.copy_(xs[i]), graphed, before=recount)

    report(name, run(True), run(False))


@dataclasses.dataclass
class Batch:
    x: torch.Tensor
    y: torch.Tensor


def holder_batches(name, in_place):
    def run(graphed):
        seed_everything()
        model = mlp()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs, ys = data(32, 64), data(32, 8, seed=2)  # the data set, already on the GPU
        batch = Batch(x=xs[0].clone(), y=ys[0].clone())

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.mse_loss(model(batch.x), batch.y).backward()
            optimizer.step()

        def warm_load(k):
            batch.x.copy_(xs[k])
            batch.y.copy_(ys[k])

        def load(k):
            if in_place:
                batch.x.copy_(xs[k])
            else:
                batch.x = xs[k]  # defect: holder-rebind
            batch.y.copy_(ys[k])

        train(step, load, graphed, warm_load=warm_load)
        return parameters(model)

    report(name, run(True), run(False))


def momentum_restart(name, in_place):
    def run(graphed):
        seed_everything()
        model = mlp()
        params = list(model.parameters())
        optimizer = torch.optim.SGD(params, lr=0.05, momentum=0.9)
        xs, ys = data(32, 64), data(32, 8, seed=2)
        static_x, static_y = xs[0].clone(), ys[0].clone()

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.mse_loss(model(static_x), static_y).backward()
            optimizer.step()

        def load(k):
            static_x.copy_(xs[k])
            static_y.copy_(ys[k])

        def warm_restart(i):
            if i != STEPS // 2:
                return False
            if in_place:
                for p in params:
                    optimizer.state[p]["momentum_buffer"].zero_()
            else:
                for p in params:
                    optimizer.state[p]["momentum_buffer"] = torch.zeros_like(p)  # defect: momentum-reset
            return False

        train(step, load, graphed, before=warm_restart)
        return parameters(model)

    report(name, run(True), run(False))


# ----------------------------------------------------------------------------------------------- requires_grad


def progressive_freeze(name, recapture):
    def run(graphed):
        seed_everything()
        model = mlp()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs, ys = data(32, 64), data(32, 8, seed=2)
        static_x, static_y = xs[0].clone(), ys[0].clone()

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.mse_loss(model(static_x), static_y).backward()
            optimizer.step()

        def load(k):
            static_x.copy_(xs[k])
            static_y.copy_(ys[k])

        def freeze(i):  # the first layer frozen half-way through
            if i != STEPS // 2:
                return False
            if recapture:
                model[0].requires_grad_(False)
                return True
            for p in model[0].parameters():
                p.requires_grad = False  # defect: freeze-after-capture
            return False

        train(step, load, graphed, before=freeze)
        return parameters(model)

    report(name, run(True), run(False))


# ---------------------------------------------------------------------------------------------------- aliasing


def grad_accumulation(name, clone):
    accumulate = 4

    def run(graphed):
        seed_everything()
        model = mlp()
        params = list(model.parameters())
        optimizer = torch.optim.SGD(params, lr=0.05, momentum=0.9)
        xs, ys = data(32, 64, n=STEPS * accumulate), data(32, 8, n=STEPS * accumulate, seed=2)
        static_x, static_y = xs[0].clone(), ys[0].clone()

        def micro_grads():
            loss = F.mse_loss(model(static_x), static_y) / accumulate
            return torch.autograd.grad(loss, params)

        graph = static_grads = None
        if graphed:
            graph, static_grads = capture(micro_grads)
        for i in range(STEPS):
            if graphed:
                nvtx.range_push("step")
            for m in range(accumulate):
                static_x.copy_(xs[i * accumulate + m])
                static_y.copy_(ys[i * accumulate + m])
                if graphed:
                    graph.replay()
                    grads = static_grads
                else:
                    grads = micro_grads()
                for p, g in zip(params, grads):
                    if p.grad is not None:
                        p.grad.add_(g)
                    elif clone:
                        p.grad = g.clone()
                    else:
                        p.grad = g  # defect: grad-assign-alias
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if graphed:
                nvtx.range_pop()
        torch.cuda.synchronize()
        return parameters(model)

    report(name, run(True), run(False))


# ------------------------------------------------------------------------------------------ Python numbers


LENGTHS = [23, 9, 31, 16, 27, 12, 19, 5]


@dataclasses.dataclass
class PaddedBatch:
    frames: torch.Tensor  # (batch, time, features), zero-padded past n_valid
    n_valid: object  # number of valid frames: a Python int, or a 0-d CUDA tensor


class PooledClassifier(nn.Module):
    def __init__(self, length):
        super().__init__()
        self.frame = nn.Sequential(nn.Linear(32, 64), nn.ReLU())
        self.head = nn.Linear(64, 8)
        self.register_buffer("positions", torch.arange(length))

    def forward(self, batch):
        h = self.frame(batch.frames)
        if torch.is_tensor(batch.n_valid):
            mask = (self.positions < batch.n_valid).to(h.dtype)[None, :, None]
            pooled = (h * mask).sum(1) / batch.n_valid
        else:
            pooled = h[:, :batch.n_valid].mean(1)
        return self.head(pooled)


def padded_pooling(name, masked):
    def run(graphed):
        seed_everything()
        model = PooledClassifier(32).cuda()
        model.eval()
        xs = data(16, 32, 32)
        for i, length in enumerate(LENGTHS):  # batch i+1 holds LENGTHS[i] frames, zero-padded
            xs[i + 1, :, length:] = 0.0
        batch = PaddedBatch(frames=torch.zeros(16, 32, 32, device="cuda"),
                            n_valid=torch.tensor(32, device="cuda") if masked else 32)

        def forward():
            with torch.no_grad():
                return model(batch)

        def load(i):
            batch.frames.copy_(xs[i + 1])

        def next_lengths(i):
            if masked:
                batch.n_valid.fill_(LENGTHS[i])
            else:
                batch.n_valid = LENGTHS[i]  # defect: valid-length
            return False

        return infer(forward, load, graphed, before=next_lengths)

    report(name, run(True), run(False))


class ResidualStack(nn.Module):
    def __init__(self, scales_on_device, width=64, depth=3):
        super().__init__()
        self.inp = nn.Linear(64, width)
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(width, width), nn.Tanh()) for _ in range(depth))
        self.out = nn.Linear(width, 8)
        if scales_on_device:
            self.register_buffer("branch_scales", torch.full((depth,), 0.1))
        else:
            self.branch_scales = [0.1] * depth

    def forward(self, x):
        h = self.inp(x)
        for scale, block in zip(self.branch_scales, self.blocks):
            h = h + scale * block(h)
        return self.out(h)


def layer_scales(name, on_device):
    def run(graphed):
        seed_everything()
        model = ResidualStack(on_device).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs, ys = data(32, 64), data(32, 8, seed=2)
        static_x, static_y = xs[0].clone(), ys[0].clone()

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.mse_loss(model(static_x), static_y).backward()
            optimizer.step()

        def load(k):
            static_x.copy_(xs[k])
            static_y.copy_(ys[k])

        def ramp(i):  # branch scales ramped from 0.1 to 1
            value = min(1.0, 0.1 + 0.15 * (i + 1))
            if on_device:
                model.branch_scales.fill_(value)
            else:
                for k in range(len(model.branch_scales)):
                    model.branch_scales[k] = value  # defect: layer-scales-list

        train(step, load, graphed, before=ramp)
        return parameters(model)

    report(name, run(True), run(False))


SIGMA_MAX, SIGMA_DECAY = 1.0, 0.7


class Denoiser(nn.Module):
    """Denoising autoencoder whose noise level decays with the number of updates."""

    def __init__(self, on_device):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64))
        self.on_device = on_device
        self.num_updates = 0
        if on_device:
            self.register_buffer("sigma_now", torch.tensor(SIGMA_MAX))

    @property
    def sigma(self):
        if self.on_device:
            return self.sigma_now
        return SIGMA_MAX * SIGMA_DECAY ** self.num_updates

    def advance(self):
        if self.on_device:
            self.sigma_now.mul_(SIGMA_DECAY)
        else:
            self.num_updates += 1  # defect: sigma-property

    def forward(self, x, noise):
        return self.net(x + self.sigma * noise)


def denoiser_schedule(name, on_device):
    def run(graphed):
        seed_everything()
        model = Denoiser(on_device).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs, noises = data(32, 64), data(32, 64, seed=3)
        static_x, static_noise = xs[0].clone(), noises[0].clone()

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.mse_loss(model(static_x, static_noise), static_x).backward()
            optimizer.step()

        def load(k):
            static_x.copy_(xs[k])
            static_noise.copy_(noises[k])

        train(step, load, graphed, before=lambda i: model.advance())
        return parameters(model)

    report(name, run(True), run(False))


def wd_schedule(i):
    """Cosine weight-decay schedule from 0.05 up to 0.5, as in self-supervised ViT recipes."""
    return 0.05 + 0.45 * (1 - math.cos(math.pi * (i + 1) / STEPS)) / 2


def weight_decay(name, on_device):
    def run(graphed):
        seed_everything()
        model = mlp()
        params = list(model.parameters())
        optimizer = torch.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=0.0 if on_device else 0.05)
        decay = torch.tensor(0.05, device="cuda")
        xs, ys = data(32, 64), data(32, 8, seed=2)
        static_x, static_y = xs[0].clone(), ys[0].clone()

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.mse_loss(model(static_x), static_y).backward()
            if on_device:
                for p in params:
                    p.grad.add_(p.detach() * decay)
            optimizer.step()

        def load(k):
            static_x.copy_(xs[k])
            static_y.copy_(ys[k])

        def schedule(i):
            if on_device:
                decay.fill_(wd_schedule(i))
            else:
                for group in optimizer.param_groups:
                    group["weight_decay"] = wd_schedule(i)  # defect: weight-decay-schedule

        train(step, load, graphed, before=schedule)
        return parameters(model)

    report(name, run(True), run(False))


MODES = {
    "closure-scale": lambda name: closure_calibration(name, in_place=False),
    "closure-tensor": lambda name: closure_calibration(name, in_place=True),
    "config-dataclass": lambda name: config_smoothing(name, on_device=False),
    "config-tensor": lambda name: config_smoothing(name, on_device=True),
    "dict-clip": lambda name: dict_clip(name, on_device=False),
    "dict-clip-tensor": lambda name: dict_clip(name, on_device=True),
    "flag-tta": lambda name: flag_tta(name, recapture=False),
    "flag-tta-recaptured": lambda name: flag_tta(name, recapture=True),
    "clock-shift": lambda name: shifted_training(name, on_device=False),
    "clock-shift-device": lambda name: shifted_training(name, on_device=True),
    "cpu-generator-mask": lambda name: masked_training(name, staged=False),
    "cpu-generator-staged": lambda name: masked_training(name, staged=True),
    "urandom-crop": lambda name: cropped_training(name, on_device=False),
    "urandom-crop-device": lambda name: cropped_training(name, on_device=True),
    "autocast-disabled": lambda name: precision_switch(name, recapture=False),
    "autocast-recaptured": lambda name: precision_switch(name, recapture=True),
    "grad-mode-quantizer": lambda name: grad_mode_quantizer(name, recapture=False),
    "grad-mode-recaptured": lambda name: grad_mode_quantizer(name, recapture=True),
    "mc-dropout": lambda name: mc_dropout(name, capture_after=False),
    "mc-dropout-captured": lambda name: mc_dropout(name, capture_after=True),
    "dropout-p": lambda name: dropout_schedule(name, as_buffer=False),
    "dropout-p-buffer": lambda name: dropout_schedule(name, as_buffer=True),
    "loss-scale-growth": lambda name: loss_scaling(name, on_device=False),
    "loss-scale-tensor": lambda name: loss_scaling(name, on_device=True),
    "head-setattr": lambda name: head_swap(name, in_place=False),
    "head-copy": lambda name: head_swap(name, in_place=True),
    "prior-reregistered": lambda name: prior_update(name, in_place=False),
    "prior-copied": lambda name: prior_update(name, in_place=True),
    "holder-rebind": lambda name: holder_batches(name, in_place=False),
    "holder-copy": lambda name: holder_batches(name, in_place=True),
    "momentum-reset": lambda name: momentum_restart(name, in_place=False),
    "momentum-zeroed": lambda name: momentum_restart(name, in_place=True),
    "freeze-after-capture": lambda name: progressive_freeze(name, recapture=False),
    "freeze-recaptured": lambda name: progressive_freeze(name, recapture=True),
    "grad-assign-alias": lambda name: grad_accumulation(name, clone=False),
    "grad-assign-clone": lambda name: grad_accumulation(name, clone=True),
    "valid-length": lambda name: padded_pooling(name, masked=False),
    "valid-length-mask": lambda name: padded_pooling(name, masked=True),
    "layer-scales-list": lambda name: layer_scales(name, on_device=False),
    "layer-scales-buffer": lambda name: layer_scales(name, on_device=True),
    "sigma-property": lambda name: denoiser_schedule(name, on_device=False),
    "sigma-buffer": lambda name: denoiser_schedule(name, on_device=True),
    "weight-decay-schedule": lambda name: weight_decay(name, on_device=False),
    "weight-decay-tensor": lambda name: weight_decay(name, on_device=True),
}

# The contract term each defect mode breaks.
TERMS = {
    "closure-scale": "host-value",
    "config-dataclass": "host-value",
    "dict-clip": "host-value",
    "flag-tta": "host-value",
    "clock-shift": "host-random",
    "cpu-generator-mask": "host-random",
    "urandom-crop": "host-random",
    "autocast-disabled": "grad-mode",
    "grad-mode-quantizer": "grad-mode",
    "mc-dropout": "mode-flag",
    "dropout-p": "host-value",
    "loss-scale-growth": "host-value",
    "head-setattr": "memory",
    "prior-reregistered": "memory",
    "holder-rebind": "memory",
    "momentum-reset": "memory",
    "freeze-after-capture": "requires-grad",
    "grad-assign-alias": "aliasing",
    "valid-length": "host-value",
    "layer-scales-list": "host-value",
    "sigma-property": "host-value",
    "weight-decay-schedule": "host-value",
}

# Each defect mode's clean twin.
TWINS = {
    "closure-scale": "closure-tensor",
    "config-dataclass": "config-tensor",
    "dict-clip": "dict-clip-tensor",
    "flag-tta": "flag-tta-recaptured",
    "clock-shift": "clock-shift-device",
    "cpu-generator-mask": "cpu-generator-staged",
    "urandom-crop": "urandom-crop-device",
    "autocast-disabled": "autocast-recaptured",
    "grad-mode-quantizer": "grad-mode-recaptured",
    "mc-dropout": "mc-dropout-captured",
    "dropout-p": "dropout-p-buffer",
    "loss-scale-growth": "loss-scale-tensor",
    "head-setattr": "head-copy",
    "prior-reregistered": "prior-copied",
    "holder-rebind": "holder-copy",
    "momentum-reset": "momentum-zeroed",
    "freeze-after-capture": "freeze-recaptured",
    "grad-assign-alias": "grad-assign-clone",
    "valid-length": "valid-length-mask",
    "layer-scales-list": "layer-scales-buffer",
    "sigma-property": "sigma-buffer",
    "weight-decay-schedule": "weight-decay-tensor",
}

if __name__ == "__main__":
    MODES[sys.argv[1]](sys.argv[1])
