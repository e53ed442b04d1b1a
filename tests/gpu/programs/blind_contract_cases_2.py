"""A second set of PyTorch programs written blind (without reading how graphcheck detects anything): each defect mode
captures a CUDA graph that captures fine and then computes something other than eager would, because the program
breaks a term of the capture contract after (or during) the capture, written the way a training script might write it
rather than through the APIs a checker would expect; each has a clean twin that does the same thing the right way.
One program per mode (argv[1]). The line where each defect is introduced ends in "# defect: MODE". Each program runs
the same steps twice from the same seeds, once through graphs and once eagerly, and prints
"MODE vs eager: max difference D" over the outputs or the trained parameters (and buffers, optimizer-side state or
EMA weights where the defect lives there); TERMS names the contract term each defect mode breaks and TWINS its clean
twin. `python3 blind_contract_cases_2.py MODE --cpu-check` runs only the eager reference, on the CPU, as a dry run of
the program's logic.

  ema-decay-classattr          whole training step with an in-step weight EMA whose decay is a class attribute
                               (WeightEMA.decay) that a classmethod warm-up schedule rebinds between replays
  ema-decay-tensor             clean: the EMA instance holds its decay as a 0-d CUDA tensor filled in place
  numpy-array-lr               whole training step with a hand-written SGD update reading float(LR), LR a module-level
                               0-d numpy array that the cosine schedule writes in place with ndarray.fill
  numpy-array-lr-staged        clean: after each LR.fill the value is also filled into a 0-d CUDA tensor the update reads
  zip-task-weights             multi-task training step summing w * loss over zip(task_weights, losses); the Python
                               list is slice-assigned (task_weights[:] = ...) as the curriculum shifts weight
  task-weights-tensor          clean: task_weights is a CUDA tensor whose elements are filled in place (same zip code)
  lambda-default-slope         training step whose activation is a lambda with a default slope argument; annealing
                               leaky-relu towards relu rebinds model.act to a new lambda with a new default
  slope-buffer-default         clean: the lambda's default is a registered buffer filled in place
  augment-list-attr            training step applying a list of augmentation objects; a curriculum ramps each
                               object's float .strength attribute between replays
  augment-list-tensor          clean: each .strength is a 0-d CUDA tensor filled in place
  kd-temperature-method        knowledge-distillation step whose temperature comes from a Distiller.temperature()
                               method computed from an epoch counter that set_epoch changes between replays
  kd-temperature-buffer        clean: temperature() returns a 0-d CUDA tensor that set_epoch fills
  target-stats-tuple           regression step normalising targets with (mean, std) unpacked from a tuple attribute,
                               rebound to a new tuple of .item() floats as statistics accumulate
  target-stats-tensor          clean: the stats are a 2-element CUDA tensor updated with copy_ (same unpacking code)
  curriculum-branch            training step with `if curriculum.use_aux:` adding an auxiliary loss; the bool is
                               switched on half-way, but the branch was baked in at capture
  curriculum-weight            clean: the auxiliary loss is always computed and weighted by a 0-d CUDA tensor, 0 then 0.5
  py-random-flip               training step with a flip augmentation decided by random.random() inside the capture
  device-random-flip           clean: a per-sample flip mask drawn with torch.rand on the GPU inside the capture
  numpy-mixup                  mixup training step whose lambda is drawn from a numpy Generator (beta) inside the capture
  numpy-mixup-staged           clean: lambda drawn from the same Generator before each step and filled into a CUDA tensor
  unfreeze-backbone            fine-tuning step captured with the backbone frozen; gradual unfreezing calls
                               backbone.requires_grad_(True) half-way and keeps replaying
  unfreeze-recaptured          clean: the step is warmed up and captured again after the unfreeze
  bn-freeze-eval               training step with BatchNorm; model.apply(freeze_bn) puts the BN layers in eval mode
                               half-way (frozen statistics for fine-tuning) and replays continue
  bn-freeze-recaptured         clean: captured again after the BN layers are frozen
  autocast-decorator           inference graph captured in fp32, then replayed inside a function decorated with
                               @torch.autocast(bfloat16) for the fast-evaluation phase
  autocast-decorator-recaptured clean: the fast phase replays a graph captured under the same autocast
  optim-load-state             Adam(capturable) training step; a loss-spike rollback restores the checkpoint with
                               model.load_state_dict and optimizer.load_state_dict, which swaps the state tensors
  optim-state-copied           clean: the optimizer state restored by copying into the existing state tensors
  lookahead-data-assign        SGD step captured; a Lookahead wrapper resets the fast weights every 2 steps with
                               p.data = slow.clone()
  lookahead-copy               clean: the fast weights reset with p.copy_(slow) under no_grad
  loop-rebind                  training step reading static_x/static_y from the enclosing scope; the batch loop is
                               `for static_x, static_y in zip(xs, ys):`, rebinding the names instead of filling them
  loop-copy                    clean: each batch copied into static_x/static_y
  pinned-rebind                training step whose graph copies the batch from a pinned host staging buffer
                               (stage["x"]) inside the capture; the loader rebinds stage["x"] to each pinned batch
  pinned-refill                clean: each batch copied into the one pinned staging buffer (after a sync)
  grad-average-rebind          forward+backward graph accumulating into .grad over 2 micro-batches; the average is
                               taken with p.grad = p.grad / ACCUM, so the graph keeps accumulating into the old tensor
  grad-average-inplace         clean: p.grad.div_(ACCUM)
  loss-history-alias           training step returning its loss; the loop keeps history.append(loss) of the graph's
                               static output, so every entry is the last step's loss
  loss-history-clone           clean: history.append(loss.clone())
  graphed-two-views            make_graphed_callables on a plain teacher function called on a weak and a strong view;
                               the weak view's output is kept across the second call, which overwrites it
  graphed-two-views-clone      clean: the weak view's output cloned before the second call
"""
import copy
import itertools
import math
import random
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
ACCUM = 2  # micro-batches per optimizer step in the gradient-accumulation program


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


def train(step, load, graphed, before=None, after=None):
    """WARMUP real training steps (on a side stream when graphed), a capture of step(), then STEPS steps: replays or
    eager calls. load(k) fills the static inputs with batch k. before(i) runs ahead of step i; when it returns True,
    both runs do WARMUP more real steps and the graphed run captures again. after(i, out) sees step i's output (the
    graph's static output when graphed)."""
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
            out = step()
        return new_graph, out

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
            after(i, out)
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


def classifier_data(features=32, num=10, batch=16):
    return gaussian(batch, features, seed=1), classes(batch, num, seed=2)


def loader(xs, ys):
    """Static input tensors and a load(k) that copies batch k into them."""
    static_x, static_y = xs[0].clone(), ys[0].clone()

    def load(k):
        static_x.copy_(xs[k])
        static_y.copy_(ys[k])

    return static_x, static_y, load


# ------------------------------------------------------------------------------------ class attribute: EMA decay


class WeightEMA:
    """Exponential moving average of a model's weights (mean teacher / Polyak averaging), updated inside the step."""

    decay = 0.1  # shared by every EMA of the run; the warm-up schedule sets it through set_decay

    def __init__(self, model, decay_tensor=None):
        self.params = list(model.parameters())
        self.shadow = [p.detach().clone() for p in self.params]
        self.decay_tensor = decay_tensor

    @classmethod
    def set_decay(cls, value):
        cls.decay = value  # defect: ema-decay-classattr

    def update(self):
        with torch.no_grad():
            weight = 1.0 - (self.decay_tensor if self.decay_tensor is not None else self.decay)
            for shadow, p in zip(self.shadow, self.params):
                shadow.lerp_(p, weight)


def ema_decay_warmup(n):
    """The usual EMA warm-up: a small decay early on, growing towards 0.999."""
    return min(0.999, (1.0 + n) / (10.0 + n))


def ema_warmup(name, on_device):
    def run(graphed):
        reseed()
        WeightEMA.decay = ema_decay_warmup(0)
        model = mlp(32, 64, 10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        decay = torch.tensor(ema_decay_warmup(0), device=DEVICE) if on_device else None
        ema = WeightEMA(model, decay)
        static_x, static_y, load = loader(*classifier_data())

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(static_x), static_y).backward()
            optimizer.step()
            ema.update()

        def schedule(i):
            if on_device:
                ema.decay_tensor.fill_(ema_decay_warmup(i + 1))
            else:
                WeightEMA.set_decay(ema_decay_warmup(i + 1))

        train(step, load, graphed, before=schedule)
        return state(model) + [s.clone() for s in ema.shadow]

    compare(name, run)


# ---------------------------------------------------------------------------------- numpy 0-d array learning rate

LR = np.array(0.0)  # the current learning rate, a 0-d numpy array the schedule writes in place


def cosine_lr(i, base=0.2, floor=0.01):
    return floor + (base - floor) * 0.5 * (1 + math.cos(math.pi * i / STEPS))


def manual_sgd(params, lr):
    with torch.no_grad():
        for p in params:
            if isinstance(lr, torch.Tensor):
                p.sub_(p.grad * lr)
            else:
                p.add_(p.grad, alpha=-lr)


def numpy_lr(name, staged):
    def run(graphed):
        reseed()
        LR.fill(cosine_lr(0))
        lr_tensor = torch.tensor(float(LR), device=DEVICE)
        model = mlp(32, 64, 10)
        params = list(model.parameters())
        static_x, static_y, load = loader(*classifier_data())

        def step():
            for p in params:
                p.grad = None
            F.cross_entropy(model(static_x), static_y).backward()
            manual_sgd(params, lr_tensor if staged else float(LR))

        def schedule(i):
            if staged:
                LR.fill(cosine_lr(i + 1))
                lr_tensor.fill_(float(LR))
            else:
                LR.fill(cosine_lr(i + 1))  # defect: numpy-array-lr

        train(step, load, graphed, before=schedule)
        return state(model)

    compare(name, run)


# ------------------------------------------------------------------------------ list of floats through zip: task weights


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.trunk = nn.Sequential(nn.Linear(32, 64), nn.ReLU())
        self.regress = nn.Linear(64, 1)
        self.classify = nn.Linear(64, 5)

    def forward(self, x):
        h = self.trunk(x)
        return self.regress(h), self.classify(h)


def task_weighting(name, on_device):
    def run(graphed):
        reseed()
        model = MultiTaskNet().to(DEVICE)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs, targets, labels = gaussian(16, 32, seed=1), gaussian(16, 1, seed=3), classes(16, 5, seed=2)
        static_x, static_t, static_y = xs[0].clone(), targets[0].clone(), labels[0].clone()
        task_weights = torch.tensor([1.0, 0.0], device=DEVICE) if on_device else [1.0, 0.0]

        def step():
            optimizer.zero_grad(set_to_none=True)
            value, logits = model(static_x)
            losses = [F.mse_loss(value, static_t), F.cross_entropy(logits, static_y)]
            total = sum(w * loss for w, loss in zip(task_weights, losses))
            total.backward()
            optimizer.step()

        def load(k):
            static_x.copy_(xs[k])
            static_t.copy_(targets[k])
            static_y.copy_(labels[k])

        def shift(i):  # curriculum: weight moves from the regression task to the classification task
            a = 0.8 * (i + 1) / STEPS
            if on_device:
                task_weights[0].fill_(1.0 - a)
                task_weights[1].fill_(a)
            else:
                task_weights[:] = [1.0 - a, a]  # defect: zip-task-weights

        train(step, load, graphed, before=shift)
        return state(model)

    compare(name, run)


# ------------------------------------------------------------------------------------- lambda default argument


class LeakyNet(nn.Module):
    def __init__(self, slope_buffer):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 64)
        self.out = nn.Linear(64, 10)
        self.slope_buffer = slope_buffer
        if slope_buffer:
            self.register_buffer("slope", torch.tensor(0.3))

    def build_activation(self):
        """Called once the module is on its device (a buffer moved by .to() is a new tensor)."""
        if self.slope_buffer:
            self.act = lambda x, slope=self.slope: torch.where(x >= 0, x, x * slope)
        else:
            self.act = lambda x, slope=0.3: F.leaky_relu(x, slope)
        return self

    def forward(self, x):
        return self.out(self.act(self.fc2(self.act(self.fc1(x)))))


def slope_annealing(name, slope_buffer):
    def run(graphed):
        reseed()
        model = LeakyNet(slope_buffer).to(DEVICE).build_activation()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        static_x, static_y, load = loader(*classifier_data())

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(static_x), static_y).backward()
            optimizer.step()

        def anneal(i):  # leaky-relu annealed towards relu
            s = 0.3 * (1.0 - (i + 1) / STEPS)
            if slope_buffer:
                model.slope.fill_(s)
            else:
                model.act = lambda x, slope=s: F.leaky_relu(x, slope)  # defect: lambda-default-slope

        train(step, load, graphed, before=anneal)
        return state(model)

    compare(name, run)


# --------------------------------------------------------------------- attribute of an object held in a list


class Contrast:
    def __init__(self, strength):
        self.strength = strength

    def __call__(self, x):
        mean = x.mean(dim=1, keepdim=True)
        return (x - mean) * (1.0 + self.strength) + mean


class Brightness:
    def __init__(self, strength):
        self.strength = strength

    def __call__(self, x):
        return x + self.strength


def augmentation_curriculum(name, on_device):
    def run(graphed):
        reseed()
        zero = (lambda: torch.tensor(0.0, device=DEVICE)) if on_device else (lambda: 0.0)
        pipeline = [Contrast(zero()), Brightness(zero())]
        model = mlp(32, 64, 10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        static_x, static_y, load = loader(*classifier_data())

        def step():
            optimizer.zero_grad(set_to_none=True)
            x = static_x
            for augment in pipeline:
                x = augment(x)
            F.cross_entropy(model(x), static_y).backward()
            optimizer.step()

        def ramp(i):  # augmentation strength grows with training progress
            progress = (i + 1) / STEPS
            for augment, top in zip(pipeline, (0.5, 0.8)):
                if on_device:
                    augment.strength.fill_(top * progress)
                else:
                    augment.strength = top * progress  # defect: augment-list-attr

        train(step, load, graphed, before=ramp)
        return state(model)

    compare(name, run)


# ------------------------------------------------------------------------ value returned by a method: KD temperature


class Distiller:
    """Knowledge distillation with a temperature annealed from `start` to `end` over the epochs."""

    def __init__(self, teacher, start=4.0, end=1.0, epochs=STEPS, on_device=False):
        self.teacher = teacher
        self.start, self.end, self.epochs = start, end, epochs
        self.epoch = 0
        self.device_temperature = torch.tensor(self._value(), device=DEVICE) if on_device else None

    def _value(self):
        return self.start + (self.end - self.start) * min(self.epoch, self.epochs) / self.epochs

    def temperature(self):
        return self.device_temperature if self.device_temperature is not None else self._value()

    def set_epoch(self, epoch):
        if self.device_temperature is not None:
            self.epoch = epoch
            self.device_temperature.fill_(self._value())
        else:
            self.epoch = epoch  # defect: kd-temperature-method

    def loss(self, student_logits, x):
        with torch.no_grad():
            teacher_logits = self.teacher(x)
        t = self.temperature()
        soft = F.kl_div(F.log_softmax(student_logits / t, dim=-1), F.softmax(teacher_logits / t, dim=-1),
                        reduction="batchmean")
        return soft * t * t


def distillation(name, on_device):
    def run(graphed):
        reseed()
        teacher = mlp(32, 128, 10, seed=1).eval()
        teacher.requires_grad_(False)
        student = mlp(32, 32, 10)
        distiller = Distiller(teacher, on_device=on_device)
        optimizer = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)
        static_x, static_y, load = loader(*classifier_data())

        def step():
            optimizer.zero_grad(set_to_none=True)
            logits = student(static_x)
            loss = 0.5 * F.cross_entropy(logits, static_y) + 0.5 * distiller.loss(logits, static_x)
            loss.backward()
            optimizer.step()

        train(step, load, graphed, before=lambda i: distiller.set_epoch(i + 1))
        return state(student)

    compare(name, run)


# -------------------------------------------------------------------------- tuple attribute: target normalisation


class TargetNormalizer:
    def __init__(self, stats):
        self.stats = stats  # (mean, std)

    def loss(self, prediction, target):
        mean, std = self.stats
        return F.mse_loss(prediction, (target - mean) / std)


def target_normalisation(name, on_device):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs, ys = gaussian(16, 32, seed=1), gaussian(16, 1, seed=2, scale=5.0, shift=3.0)
        static_x, static_y, load = loader(xs, ys)
        first = ys[:1]
        if on_device:
            normalizer = TargetNormalizer(torch.stack([first.mean(), first.std()]))
        else:
            normalizer = TargetNormalizer((first.mean().item(), first.std().item()))

        def step():
            optimizer.zero_grad(set_to_none=True)
            normalizer.loss(model(static_x), static_y).backward()
            optimizer.step()

        def update_stats(i):  # statistics over every target seen so far
            seen = ys[:WARMUP + i + 1]
            if on_device:
                normalizer.stats.copy_(torch.stack([seen.mean(), seen.std()]))
            else:
                normalizer.stats = (seen.mean().item(), seen.std().item())  # defect: target-stats-tuple

        train(step, load, graphed, before=update_stats)
        return state(model)

    compare(name, run)


# ------------------------------------------------------------------------------ `if` on a host bool: curriculum


class Curriculum:
    def __init__(self, aux_weight=None):
        self.use_aux = False
        self.aux_weight = aux_weight  # a 0-d CUDA tensor, or None


def curriculum_stage(name, on_device):
    def run(graphed):
        reseed()
        curriculum = Curriculum(torch.tensor(0.0, device=DEVICE) if on_device else None)
        model = mlp(32, 64, 10, act=nn.Tanh)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        static_x, static_y, load = loader(*classifier_data())

        def step():
            optimizer.zero_grad(set_to_none=True)
            hidden = model[1](model[0](static_x))
            loss = F.cross_entropy(model[2](hidden), static_y)
            if curriculum.aux_weight is not None:
                loss = loss + curriculum.aux_weight * hidden.abs().mean()
            elif curriculum.use_aux:
                loss = loss + 0.5 * hidden.abs().mean()
            loss.backward()
            optimizer.step()

        def stage(i):  # the second stage of the curriculum adds an activation-sparsity loss
            if i != STEPS // 2:
                return
            if on_device:
                curriculum.aux_weight.fill_(0.5)
            else:
                curriculum.use_aux = True  # defect: curriculum-branch

        train(step, load, graphed, before=stage)
        return state(model)

    compare(name, run)


# ------------------------------------------------------------------------------------ host randomness in the capture


def random_flip(x, on_device):
    if on_device:
        flip = torch.rand(x.shape[0], 1, device=x.device) < 0.5
        return torch.where(flip, x.flip(-1), x)
    if random.random() < 0.5:  # defect: py-random-flip
        return x.flip(-1)
    return x


def flip_augmented(name, on_device):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        static_x, static_y, load = loader(*classifier_data())

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(random_flip(static_x, on_device)), static_y).backward()
            optimizer.step()

        train(step, load, graphed)
        return state(model)

    compare(name, run)


def mixup(name, staged):
    def run(graphed):
        reseed()
        rng = np.random.default_rng(0)
        model = mlp(32, 64, 10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        xs, ys = classifier_data()
        onehots = F.one_hot(ys, 10).float()
        static_x, static_t = xs[0].clone(), onehots[0].clone()
        lam_tensor = torch.tensor(0.5, device=DEVICE)

        def step():
            optimizer.zero_grad(set_to_none=True)
            if staged:
                lam = lam_tensor
            else:
                lam = float(rng.beta(0.4, 0.4))  # defect: numpy-mixup
            x = lam * static_x + (1 - lam) * static_x.roll(1, 0)
            target = lam * static_t + (1 - lam) * static_t.roll(1, 0)
            loss = torch.sum(-target * F.log_softmax(model(x), dim=-1), dim=-1).mean()
            loss.backward()
            optimizer.step()

        def load(k):
            static_x.copy_(xs[k])
            static_t.copy_(onehots[k])
            if staged:
                lam_tensor.fill_(float(rng.beta(0.4, 0.4)))

        train(step, load, graphed)
        return state(model)

    compare(name, run)


# -------------------------------------------------------------------------------- requires_grad_: gradual unfreezing


class FineTuneNet(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.backbone = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.backbone(x))


def gradual_unfreeze(name, recapture):
    def run(graphed):
        reseed()
        model = FineTuneNet().to(DEVICE)
        model.backbone.requires_grad_(False)  # stage 1: train the new head only
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        static_x, static_y, load = loader(*classifier_data())

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(static_x), static_y).backward()
            optimizer.step()

        def unfreeze(i):
            if i != STEPS // 2:
                return False
            if recapture:
                model.backbone.requires_grad_(True)
                return True
            model.backbone.requires_grad_(True)  # defect: unfreeze-backbone
            return False

        train(step, load, graphed, before=unfreeze)
        return state(model)

    compare(name, run)


# -------------------------------------------------------------------------------- module mode: BatchNorm frozen


def freeze_bn(module):
    if isinstance(module, nn.modules.batchnorm._BatchNorm):
        module.eval()


def bn_freeze(name, recapture):
    def run(graphed):
        reseed()
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 64),
                              nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 10)).to(DEVICE)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        static_x, static_y, load = loader(*classifier_data())

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(static_x), static_y).backward()
            optimizer.step()

        def freeze(i):  # fine-tuning: BatchNorm statistics frozen from half-way on
            if i != STEPS // 2:
                return False
            if recapture:
                model.apply(freeze_bn)
                return True
            model.apply(freeze_bn)  # defect: bn-freeze-eval
            return False

        train(step, load, graphed, before=freeze)
        return state(model)

    compare(name, run)


# ------------------------------------------------------------------------------------ autocast at replay: decorator


@torch.autocast(device_type="cuda", dtype=torch.bfloat16, cache_enabled=False)
def bf16_eval(predict, x):
    """The fast phase of evaluation: everything inside runs under bf16 autocast."""
    return predict(x)


def autocast_phase(name, recapture):
    def run(graphed):
        reseed()
        model = mlp(64, 256, 256, 10).eval()
        xs = gaussian(32, 64, seed=1)
        static_x = torch.zeros(32, 64, device=DEVICE)

        def forward():
            with torch.no_grad():
                return model(static_x)

        def replayer(graph, out):
            def predict(x):
                static_x.copy_(x)
                graph.replay()
                return out

            return predict

        def eager_predict(x):
            static_x.copy_(x)
            return forward()

        predict = replayer(*capture(forward)) if graphed else eager_predict
        outputs = [predict(xs[i]).float().clone() for i in range(STEPS // 2)]
        for i in range(STEPS // 2, STEPS):
            if recapture:
                if graphed and i == STEPS // 2:
                    with torch.autocast(device_type="cuda", dtype=torch.bfloat16, cache_enabled=False):
                        predict = replayer(*capture(forward))
                out = bf16_eval(predict, xs[i])
            else:
                out = bf16_eval(predict, xs[i])  # defect: autocast-decorator
            outputs.append(out.float().clone())
        synchronize()
        return outputs

    compare(name, run)


# ------------------------------------------------------------------------ optimizer.load_state_dict: rollback


def rollback(name, in_place):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 10)
        params = list(model.parameters())
        optimizer = torch.optim.Adam(params, lr=0.01, capturable=DEVICE == "cuda")
        static_x, static_y, load = loader(*classifier_data())
        checkpoint = {}

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(static_x), static_y).backward()
            optimizer.step()

        def guard(i):
            if i == 2:  # a checkpoint
                checkpoint["model"] = copy.deepcopy(model.state_dict())
                checkpoint["optimizer"] = copy.deepcopy(optimizer.state_dict())
            if i == 5:  # a loss spike: back to the checkpoint
                model.load_state_dict(checkpoint["model"])
                if in_place:
                    saved = checkpoint["optimizer"]["state"]
                    for index, p in enumerate(params):
                        for key, value in optimizer.state[p].items():
                            value.copy_(saved[index][key])
                else:
                    optimizer.load_state_dict(checkpoint["optimizer"])  # defect: optim-load-state

        train(step, load, graphed, before=guard)
        moments = [optimizer.state[p]["exp_avg"].clone() for p in params]
        return state(model) + moments

    compare(name, run)


# -------------------------------------------------------------------------------------- p.data =: Lookahead


class Lookahead:
    """Lookahead (Zhang et al. 2019): slow weights pulled towards the fast ones every k steps, fast weights reset."""

    def __init__(self, params, alpha=0.5, in_place=True):
        self.params = list(params)
        self.slow = [p.detach().clone() for p in self.params]
        self.alpha = alpha
        self.in_place = in_place

    def sync(self):
        with torch.no_grad():
            for p, slow in zip(self.params, self.slow):
                slow.lerp_(p, self.alpha)
                if self.in_place:
                    p.copy_(slow)
                else:
                    p.data = slow.clone()  # defect: lookahead-data-assign


def lookahead(name, in_place):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        wrapper = Lookahead(model.parameters(), in_place=in_place)
        static_x, static_y, load = loader(*classifier_data())

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(static_x), static_y).backward()
            optimizer.step()

        def every_two(i):
            if i > 0 and i % 2 == 0:
                wrapper.sync()

        train(step, load, graphed, before=every_two)
        return state(model) + [s.clone() for s in wrapper.slow]

    compare(name, run)


# ------------------------------------------------------------------------------ static inputs rebound by a for loop


def loop_batches(name, rebind):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs, ys = gaussian(16, 32, seed=1), gaussian(16, 1, seed=2)
        static_x, static_y = xs[0].clone(), ys[0].clone()

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.mse_loss(model(static_x), static_y).backward()
            optimizer.step()

        if graphed:
            graph, _ = capture(step)
            run_step = graph.replay
        else:
            for _ in range(WARMUP):
                step()
            run_step = step
        if rebind:
            for static_x, static_y in zip(xs[1:STEPS + 1], ys[1:STEPS + 1]):  # defect: loop-rebind
                run_step()
        else:
            for x, y in zip(xs[1:STEPS + 1], ys[1:STEPS + 1]):
                static_x.copy_(x)
                static_y.copy_(y)
                run_step()
        synchronize()
        return state(model)

    compare(name, run)


# ---------------------------------------------------------------------------- pinned host staging buffer rebound


def pinned_staging(name, refill):
    def run(graphed):
        reseed()
        on_gpu = DEVICE == "cuda"
        gen = torch.Generator()
        gen.manual_seed(1)
        host = torch.randn(BATCHES, 16, 32, generator=gen)
        pinned = [h.pin_memory() if on_gpu else h.clone() for h in host]  # a dataset kept pinned in host memory
        staging = torch.empty(16, 32)
        stage = {"x": staging.pin_memory() if on_gpu else staging}
        ys = classes(16, 10, seed=2)
        static_x = torch.zeros(16, 32, device=DEVICE)
        static_y = ys[0].clone()
        model = mlp(32, 64, 10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step():
            static_x.copy_(stage["x"], non_blocking=True)  # host-to-device inside the step
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(model(static_x), static_y).backward()
            optimizer.step()

        def load(k):
            if on_gpu:
                torch.cuda.current_stream().synchronize()  # the last step has read the staging buffer
            static_y.copy_(ys[k])
            if refill:
                stage["x"].copy_(pinned[k])
            else:
                stage["x"] = pinned[k]  # defect: pinned-rebind

        train(step, load, graphed)
        return state(model)

    compare(name, run)


# ---------------------------------------------------------------- p.grad = ...: gradient accumulation averaged


def grad_accumulation(name, in_place):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 10)
        params = list(model.parameters())
        optimizer = torch.optim.SGD(params, lr=0.1, momentum=0.9)
        static_x, static_y, load = loader(*classifier_data())

        def forward_backward():
            F.cross_entropy(model(static_x), static_y).backward()

        load(0)
        if graphed:  # warm-up allocates the .grad tensors; the graph accumulates into them
            side_stream(forward_backward)
            optimizer.zero_grad(set_to_none=False)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                forward_backward()
            micro_step = graph.replay
        else:
            for _ in range(WARMUP):
                forward_backward()
            optimizer.zero_grad(set_to_none=False)
            micro_step = forward_backward
        batch = 1
        for _ in range(STEPS // ACCUM):
            for _ in range(ACCUM):
                load(batch)
                batch += 1
                micro_step()
            for p in params:
                if in_place:
                    p.grad.div_(ACCUM)
                else:
                    p.grad = p.grad / ACCUM  # defect: grad-average-rebind
            optimizer.step()
            optimizer.zero_grad(set_to_none=False)
        synchronize()
        return state(model)

    compare(name, run)


# -------------------------------------------------------------------------- graph output kept: loss history


def loss_history(name, clone):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        static_x, static_y, load = loader(gaussian(16, 32, seed=1), gaussian(16, 1, seed=2))
        history = []

        def step():
            optimizer.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(static_x), static_y)
            loss.backward()
            optimizer.step()
            return loss.detach()

        def record(i, loss):
            if clone:
                history.append(loss.clone())
            else:
                history.append(loss)  # defect: loss-history-alias

        train(step, load, graphed, after=record)
        smoothed = torch.stack(history).cumsum(0) / torch.arange(1, len(history) + 1, device=DEVICE)
        return [torch.stack(history), smoothed] + state(model)

    compare(name, run)


# ------------------------------------------------------------ make_graphed_callables on a function: two views


def two_views(name, clone):
    def run(graphed):
        reseed()
        teacher = mlp(32, 128, 10).eval()
        teacher.requires_grad_(False)
        xs = gaussian(16, 32, seed=1)

        def teacher_logits(x):
            return teacher(x) / 2.0  # a temperature-sharpened teacher

        def weak(x):
            return 0.9 * x

        def strong(x):
            return 0.5 * (x + x.flip(-1))

        if graphed:
            predict = torch.cuda.make_graphed_callables(teacher_logits, (xs[0].clone(),))
        else:
            predict = teacher_logits
        outputs = []
        for i in range(STEPS):
            x = xs[i]
            if clone:
                p_weak = predict(weak(x)).clone()
            else:
                p_weak = predict(weak(x))  # defect: graphed-two-views
            p_strong = predict(strong(x))
            agreement = (F.softmax(p_weak, dim=-1) * F.log_softmax(p_strong, dim=-1)).sum(-1)
            outputs += [agreement.clone(), p_weak.clone()]
        synchronize()
        return outputs

    compare(name, run)


MODES = {
    "ema-decay-classattr": lambda name: ema_warmup(name, on_device=False),
    "ema-decay-tensor": lambda name: ema_warmup(name, on_device=True),
    "numpy-array-lr": lambda name: numpy_lr(name, staged=False),
    "numpy-array-lr-staged": lambda name: numpy_lr(name, staged=True),
    "zip-task-weights": lambda name: task_weighting(name, on_device=False),
    "task-weights-tensor": lambda name: task_weighting(name, on_device=True),
    "lambda-default-slope": lambda name: slope_annealing(name, slope_buffer=False),
    "slope-buffer-default": lambda name: slope_annealing(name, slope_buffer=True),
    "augment-list-attr": lambda name: augmentation_curriculum(name, on_device=False),
    "augment-list-tensor": lambda name: augmentation_curriculum(name, on_device=True),
    "kd-temperature-method": lambda name: distillation(name, on_device=False),
    "kd-temperature-buffer": lambda name: distillation(name, on_device=True),
    "target-stats-tuple": lambda name: target_normalisation(name, on_device=False),
    "target-stats-tensor": lambda name: target_normalisation(name, on_device=True),
    "curriculum-branch": lambda name: curriculum_stage(name, on_device=False),
    "curriculum-weight": lambda name: curriculum_stage(name, on_device=True),
    "py-random-flip": lambda name: flip_augmented(name, on_device=False),
    "device-random-flip": lambda name: flip_augmented(name, on_device=True),
    "numpy-mixup": lambda name: mixup(name, staged=False),
    "numpy-mixup-staged": lambda name: mixup(name, staged=True),
    "unfreeze-backbone": lambda name: gradual_unfreeze(name, recapture=False),
    "unfreeze-recaptured": lambda name: gradual_unfreeze(name, recapture=True),
    "bn-freeze-eval": lambda name: bn_freeze(name, recapture=False),
    "bn-freeze-recaptured": lambda name: bn_freeze(name, recapture=True),
    "autocast-decorator": lambda name: autocast_phase(name, recapture=False),
    "autocast-decorator-recaptured": lambda name: autocast_phase(name, recapture=True),
    "optim-load-state": lambda name: rollback(name, in_place=False),
    "optim-state-copied": lambda name: rollback(name, in_place=True),
    "lookahead-data-assign": lambda name: lookahead(name, in_place=False),
    "lookahead-copy": lambda name: lookahead(name, in_place=True),
    "loop-rebind": lambda name: loop_batches(name, rebind=True),
    "loop-copy": lambda name: loop_batches(name, rebind=False),
    "pinned-rebind": lambda name: pinned_staging(name, refill=False),
    "pinned-refill": lambda name: pinned_staging(name, refill=True),
    "grad-average-rebind": lambda name: grad_accumulation(name, in_place=False),
    "grad-average-inplace": lambda name: grad_accumulation(name, in_place=True),
    "loss-history-alias": lambda name: loss_history(name, clone=False),
    "loss-history-clone": lambda name: loss_history(name, clone=True),
    "graphed-two-views": lambda name: two_views(name, clone=False),
    "graphed-two-views-clone": lambda name: two_views(name, clone=True),
}

# The contract term each defect mode breaks.
TERMS = {
    "ema-decay-classattr": "host-value",
    "numpy-array-lr": "host-value",
    "zip-task-weights": "host-value",
    "lambda-default-slope": "host-value",
    "augment-list-attr": "host-value",
    "kd-temperature-method": "host-value",
    "target-stats-tuple": "host-value",
    "curriculum-branch": "host-value",
    "py-random-flip": "host-random",
    "numpy-mixup": "host-random",
    "unfreeze-backbone": "requires-grad",
    "bn-freeze-eval": "mode-flag",
    "autocast-decorator": "grad-mode",
    "optim-load-state": "memory",
    "lookahead-data-assign": "memory",
    "loop-rebind": "memory",
    "pinned-rebind": "memory",
    "grad-average-rebind": "memory",
    "loss-history-alias": "aliasing",
    "graphed-two-views": "aliasing",
}

# Each defect mode's clean twin.
TWINS = {
    "ema-decay-classattr": "ema-decay-tensor",
    "numpy-array-lr": "numpy-array-lr-staged",
    "zip-task-weights": "task-weights-tensor",
    "lambda-default-slope": "slope-buffer-default",
    "augment-list-attr": "augment-list-tensor",
    "kd-temperature-method": "kd-temperature-buffer",
    "target-stats-tuple": "target-stats-tensor",
    "curriculum-branch": "curriculum-weight",
    "py-random-flip": "device-random-flip",
    "numpy-mixup": "numpy-mixup-staged",
    "unfreeze-backbone": "unfreeze-recaptured",
    "bn-freeze-eval": "bn-freeze-recaptured",
    "autocast-decorator": "autocast-decorator-recaptured",
    "optim-load-state": "optim-state-copied",
    "lookahead-data-assign": "lookahead-copy",
    "loop-rebind": "loop-copy",
    "pinned-rebind": "pinned-refill",
    "grad-average-rebind": "grad-average-inplace",
    "loss-history-alias": "loss-history-clone",
    "graphed-two-views": "graphed-two-views-clone",
}

if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "--cpu-check":
        DEVICE = "cpu"
        CPU_CHECK = True
    deterministic()
    MODES[sys.argv[1]](sys.argv[1])
