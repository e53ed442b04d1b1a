"""Clean PyTorch training programs written blind (without reading how graphcheck works), one per mode (argv[1]), that
train small models on synthetic data on "cuda" in many different loop shapes. They are all correct; what they test is
where a tool finds the training steps (one training step = one optimizer update). EXPECTED_LOOPS at the bottom is the
answer key: for each mode, in the order they run, the loops whose passes are training steps taken by an eager
optimizer step (outside any graph capture), as (line of the loop's for/while statement, number of updates made in
that run of the loop). Modes that use CUDA graphs also run the same training eagerly from the same seeds, print
"MODE vs eager: max difference D" over the final parameters, and exit with status 1 if D > 1e-3; the others print their
final loss.

  epoch-fn-eval            train_one_epoch(model, opt, loader) called from an epoch loop (DataLoader batches), with a
                           no-grad evaluation pass between epochs
  gan-two-opts             a small GAN: discriminator step then generator step (two optimizers) in each pass of a loop
  accum-modulo-tail        gradient accumulation with `if (i + 1) % k == 0: opt.step()` in the batch loop, and a step
                           for the leftover micro-batches after the batch loop, inside an epoch loop
  accum-inner-micro        gradient accumulation as an inner micro-batch loop (groups made with zip(*[iter(..)] * k));
                           the step and an LR scheduler step after the inner loop
  while-early-exit         `while True` over next(iterator) with a manual counter, StopIteration exit and an early
                           break at a step budget
  trainer-class            a home-made Trainer (fit / training_step / optimizer_step / callbacks with a validation
                           callback); fit() runs once eagerly and once with the model passed through
                           make_graphed_callables
  generator-islice-zip     batches from an endless generator function: an enumerate(itertools.islice(...)) loop, then
                           a zip(generator, learning_rates) loop that sets the LR per pass
  amp-scaler-sched         fp16 autocast with GradScaler (scaler.step(opt), scaler.update()) and a OneCycleLR scheduler
                           stepping each pass
  twin-shared-train        one train(model, forward, opt, batches) function run for an eager twin and then for the
                           same model passed through make_graphed_callables
  twin-separate-loops      an eager loop, then a separate loop that replays a manually captured forward+backward graph
                           (torch.cuda.graph, warmup on a side stream) with the eager optimizer stepping after replay
  whole-step-graph         an eager reference loop, then fwd+bwd+Adam(capturable=True).step() captured in one graph:
                           three eager warmup steps on a side stream, then the graph replayed for the remaining batches
  partial-graphed-callables  encoder submodule through make_graphed_callables, eager head and optimizer, epoch loop
                           with an eval pass; graphed run first, then the eager reference through the same function
  closure-listcomp-continue  the step in a closure made by a factory: called from a list comprehension, then through a
                           lambda in a loop with continue/break, then optimizer.step(closure) in a loop
  nested-helpers-try       nested helper functions (the step three calls deep) in a loop over
                           islice(cycle(batches)), with a try/except that skips flagged batches
"""
import itertools
import sys

import torch
import torch.nn.functional as F
from torch import nn

DEVICE = "cuda"
D_IN, HIDDEN, CLASSES, BATCH = 16, 32, 4, 32


def deterministic():
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def make_batches(n, seed, batch=BATCH, d_in=D_IN, classes=CLASSES):
    """n (input, label) batches of a synthetic classification task, from a generator of their own."""
    gen = torch.Generator().manual_seed(seed)
    w = torch.randn(d_in, classes, generator=gen)
    batches = []
    for _ in range(n):
        x = torch.randn(batch, d_in, generator=gen)
        y = (x @ w).argmax(-1)
        batches.append((x.to(DEVICE), y.to(DEVICE)))
    return batches


def mlp(d_in=D_IN, hidden=HIDDEN, d_out=CLASSES):
    return nn.Sequential(nn.Linear(d_in, hidden), nn.Tanh(), nn.Linear(hidden, d_out)).to(DEVICE)


def params(*modules):
    return [p.detach().float().clone() for m in modules for p in m.parameters()]


def report(mode, graphed, eager):
    difference = max((g - e).abs().max().item() for g, e in zip(graphed, eager))
    print("%s vs eager: max difference %.4g" % (mode, difference), flush=True)
    if difference > 1e-3:
        print("%s: FAIL" % mode, flush=True)
        sys.exit(1)


# ---------------------------------------------------------------------------------------------------------------- modes


def train_one_epoch(model, opt, loader):
    model.train()
    total = 0.0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        total += loss.item()
    return total / len(loader)


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = count = 0
    for x, y in loader:
        pred = model(x.to(DEVICE)).argmax(-1)
        correct += (pred == y.to(DEVICE)).sum().item()
        count += y.numel()
    return correct / count


def epoch_fn_eval():
    torch.manual_seed(0)
    data = make_batches(8, seed=1)
    xs = torch.cat([x for x, _ in data]).cpu()
    ys = torch.cat([y for _, y in data]).cpu()
    dataset = torch.utils.data.TensorDataset(xs, ys)
    train_loader = torch.utils.data.DataLoader(dataset, batch_size=BATCH, shuffle=True, drop_last=True,
                                               generator=torch.Generator().manual_seed(2))
    val_loader = torch.utils.data.DataLoader(dataset, batch_size=64)
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(3):
        loss = train_one_epoch(model, opt, train_loader)
        acc = evaluate(model, val_loader)
        print("epoch %d: train loss %.4f, accuracy %.3f" % (epoch, loss, acc))
    print("epoch-fn-eval: final loss %.4f" % loss)


def gan_two_opts():
    torch.manual_seed(0)
    z_dim, x_dim = 8, 16
    gen = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, x_dim)).to(DEVICE)
    disc = nn.Sequential(nn.Linear(x_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1)).to(DEVICE)
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-3, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(disc.parameters(), lr=2e-3, betas=(0.5, 0.999))
    center = torch.linspace(-1, 1, x_dim, device=DEVICE)
    ones = torch.ones(BATCH, 1, device=DEVICE)
    zeros = torch.zeros(BATCH, 1, device=DEVICE)
    for i in range(20):
        real = center + 0.1 * torch.randn(BATCH, x_dim, device=DEVICE)
        z = torch.randn(BATCH, z_dim, device=DEVICE)
        fake = gen(z)
        # discriminator
        opt_d.zero_grad()
        d_loss = (F.binary_cross_entropy_with_logits(disc(real), ones)
                  + F.binary_cross_entropy_with_logits(disc(fake.detach()), zeros))
        d_loss.backward()
        opt_d.step()
        # generator
        opt_g.zero_grad()
        g_loss = F.binary_cross_entropy_with_logits(disc(fake), ones)
        g_loss.backward()
        opt_g.step()
    print("gan-two-opts: final losses d %.4f g %.4f" % (d_loss.item(), g_loss.item()))


def accum_modulo_tail():
    torch.manual_seed(0)
    accum = 4
    micro = make_batches(18, seed=3, batch=16)
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(3):
        opt.zero_grad()
        pending = 0
        for i, (x, y) in enumerate(micro):
            loss = F.cross_entropy(model(x), y) / accum
            loss.backward()
            pending += 1
            if (i + 1) % accum == 0:
                opt.step()
                opt.zero_grad()
                pending = 0
        if pending:
            # the leftover micro-batches of the epoch make one more (smaller) update
            for p in model.parameters():
                p.grad.mul_(accum / pending)
            opt.step()
            opt.zero_grad()
        print("epoch %d: last micro-batch loss %.4f" % (epoch, loss.item() * accum))
    print("accum-modulo-tail: final loss %.4f" % (loss.item() * accum))


def accum_inner_micro():
    torch.manual_seed(0)
    accum = 4
    micro = make_batches(40, seed=4, batch=16)
    model = mlp()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
    for step, group in enumerate(zip(*[iter(micro)] * accum)):
        opt.zero_grad(set_to_none=True)
        step_loss = 0.0
        for x, y in group:
            loss = F.cross_entropy(model(x), y) / len(group)
            loss.backward()
            step_loss += loss.item()
        opt.step()
        sched.step()
    print("accum-inner-micro: %d steps, final loss %.4f" % (step + 1, step_loss))


def while_early_exit():
    torch.manual_seed(0)
    batches = make_batches(30, seed=5)
    model = mlp()
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    max_steps = 22
    it = iter(batches)
    step = 0
    while True:
        try:
            x, y = next(it)
        except StopIteration:
            break
        loss = F.cross_entropy(model(x), y)
        if not torch.isfinite(loss).item():
            print("non-finite loss, stopping")
            break
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step == max_steps:
            break
    print("while-early-exit: %d steps, final loss %.4f" % (step, loss.item()))


class Callback:
    def on_epoch_start(self, trainer, epoch):
        pass

    def on_step_end(self, trainer, batch_idx, loss):
        pass

    def on_epoch_end(self, trainer, epoch):
        pass


class LossHistory(Callback):
    def __init__(self):
        self.losses = []

    def on_step_end(self, trainer, batch_idx, loss):
        self.losses.append(loss.detach())


class Validation(Callback):
    def __init__(self, batches):
        self.batches = batches

    def on_epoch_end(self, trainer, epoch):
        trainer.model.eval()
        with torch.no_grad():
            losses = [F.cross_entropy(trainer.model(x), y).item() for x, y in self.batches]
        trainer.model.train()
        trainer.val_loss = sum(losses) / len(losses)


class Trainer:
    def __init__(self, model, opt, train_batches, epochs, callbacks=(), graphed=False):
        self.model = model
        self.opt = opt
        self.train_batches = train_batches
        self.epochs = epochs
        self.callbacks = list(callbacks)
        self.graphed = graphed
        self.forward = model
        self.global_step = 0
        self.val_loss = None

    def _call(self, hook, *args):
        for cb in self.callbacks:
            getattr(cb, hook)(self, *args)

    def training_step(self, batch):
        x, y = batch
        return F.cross_entropy(self.forward(x), y)

    def optimizer_step(self, loss):
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.global_step += 1

    def fit(self):
        self.model.train()
        if self.graphed:
            sample = self.train_batches[0][0].clone()
            self.forward = torch.cuda.make_graphed_callables(self.model, (sample,))
        for epoch in range(self.epochs):
            self._call("on_epoch_start", epoch)
            for batch_idx, batch in enumerate(self.train_batches):
                loss = self.training_step(batch)
                self.optimizer_step(loss)
                self._call("on_step_end", batch_idx, loss)
            self._call("on_epoch_end", epoch)
        return self


def trainer_class():
    deterministic()
    train_batches = make_batches(6, seed=6)
    val_batches = make_batches(2, seed=7)
    results = {}
    for graphed in (False, True):
        torch.manual_seed(0)
        model = mlp()
        opt = torch.optim.Adam(model.parameters(), lr=3e-3)
        history = LossHistory()
        trainer = Trainer(model, opt, train_batches, epochs=2, callbacks=[history, Validation(val_batches)],
                          graphed=graphed).fit()
        print("trainer (graphed=%s): %d steps, last loss %.4f, val loss %.4f"
              % (graphed, trainer.global_step, history.losses[-1].item(), trainer.val_loss))
        results[graphed] = params(model)
    report("trainer-class", results[True], results[False])


def batch_stream(seed, batch=BATCH):
    gen = torch.Generator().manual_seed(seed)
    w = torch.randn(D_IN, CLASSES, generator=gen)
    while True:
        x = torch.randn(batch, D_IN, generator=gen)
        yield x.to(DEVICE), (x @ w).argmax(-1).to(DEVICE)


def generator_islice_zip():
    torch.manual_seed(0)
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, nesterov=True, momentum=0.9)
    for i, (x, y) in enumerate(itertools.islice(batch_stream(8), 14)):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    print("phase 1: %d steps, loss %.4f" % (i + 1, loss.item()))
    lrs = [0.05 * 0.8 ** k for k in range(10)]
    for (x, y), lr in zip(batch_stream(9), lrs):
        for group in opt.param_groups:
            group["lr"] = lr
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    print("generator-islice-zip: final loss %.4f" % loss.item())


def amp_scaler_sched():
    torch.manual_seed(0)
    batches = make_batches(20, seed=10, batch=64)
    model = nn.Sequential(nn.Linear(D_IN, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(),
                          nn.Linear(64, CLASSES)).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=len(batches))
    scaler = torch.amp.GradScaler("cuda", init_scale=256.0)
    for x, y in batches:
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        sched.step()
    print("amp-scaler-sched: final loss %.4f, scale %.1f" % (loss.item(), scaler.get_scale()))


def train(model, forward, opt, batches):
    model.train()
    losses = []
    for x, y in batches:
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(forward(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack(losses)


def twin_shared_train():
    deterministic()
    batches = make_batches(15, seed=11)
    torch.manual_seed(0)
    twin = mlp()
    opt = torch.optim.Adam(twin.parameters(), lr=3e-3)
    eager_losses = train(twin, twin, opt, batches)
    torch.manual_seed(0)
    model = mlp()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    graphed = torch.cuda.make_graphed_callables(model, (batches[0][0].clone(),))
    graphed_losses = train(model, graphed, opt, batches)
    print("twin-shared-train: final loss eager %.4f graphed %.4f" % (eager_losses[-1].item(), graphed_losses[-1].item()))
    report("twin-shared-train", params(model) + [graphed_losses], params(twin) + [eager_losses])


def twin_separate_loops():
    deterministic()
    batches = make_batches(12, seed=12)
    # eager twin
    torch.manual_seed(0)
    twin = mlp()
    twin_opt = torch.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
    for x, y in batches:
        twin_opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(twin(x), y)
        loss.backward()
        twin_opt.step()
    # graphed forward+backward, eager optimizer
    torch.manual_seed(0)
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    static_x = batches[0][0].clone()
    static_y = batches[0][1].clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(static_x), static_y).backward()
    torch.cuda.current_stream().wait_stream(side)
    opt.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = F.cross_entropy(model(static_x), static_y)
        static_loss.backward()
    for step, (x, y) in enumerate(batches):
        static_x.copy_(x)
        static_y.copy_(y)
        graph.replay()
        opt.step()
    torch.cuda.synchronize()
    print("twin-separate-loops: final loss eager %.4f graphed %.4f" % (loss.item(), static_loss.item()))
    report("twin-separate-loops", params(model), params(twin))


def whole_step_graph():
    deterministic()
    batches = make_batches(16, seed=13)
    warmup = 3
    # eager reference
    torch.manual_seed(0)
    ref = mlp()
    ref_opt = torch.optim.Adam(ref.parameters(), lr=3e-3)
    for x, y in batches:
        ref_opt.zero_grad(set_to_none=True)
        ref_loss = F.cross_entropy(ref(x), y)
        ref_loss.backward()
        ref_opt.step()
    # whole step in one graph
    torch.manual_seed(0)
    model = mlp()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3, capturable=True)
    static_x = torch.zeros_like(batches[0][0])
    static_y = torch.zeros_like(batches[0][1])
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for x, y in batches[:warmup]:
            static_x.copy_(x)
            static_y.copy_(y)
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(static_x), static_y)
            loss.backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = F.cross_entropy(model(static_x), static_y)
        static_loss.backward()
        opt.step()
    for x, y in batches[warmup:]:
        static_x.copy_(x)
        static_y.copy_(y)
        graph.replay()
    torch.cuda.synchronize()
    print("whole-step-graph: final loss eager %.4f graphed %.4f" % (ref_loss.item(), static_loss.item()))
    report("whole-step-graph", params(model), params(ref))


class EncoderHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(D_IN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN), nn.ReLU())
        self.head = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x):
        return self.head(self.encoder(x))


def run_partial(graphed, batches, val):
    torch.manual_seed(0)
    model = EncoderHead().to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2 * len(batches))
    if graphed:
        model.encoder = torch.cuda.make_graphed_callables(model.encoder, (batches[0][0].clone(),))
    for epoch in range(2):
        model.train()
        for x, y in batches:
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            sched.step()
        model.eval()
        with torch.no_grad():
            val_loss = sum(F.cross_entropy(model(x), y).item() for x, y in val) / len(val)
        print("graphed=%s epoch %d: train loss %.4f, val loss %.4f" % (graphed, epoch, loss.item(), val_loss))
    return params(model)


def partial_graphed_callables():
    deterministic()
    batches = make_batches(8, seed=14)
    val = make_batches(2, seed=15)
    graphed = run_partial(True, batches, val)
    eager = run_partial(False, batches, val)
    report("partial-graphed-callables", graphed, eager)


def make_step(model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def closure_listcomp_continue():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(16)
    w = torch.randn(D_IN, 2, generator=gen)
    batches = []
    for _ in range(30):
        x = torch.randn(BATCH, D_IN, generator=gen)
        batches.append((x.to(DEVICE), torch.sin(x @ w).to(DEVICE)))
    model = mlp(d_out=2)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    step = make_step(model, opt)
    losses = [step(x, y) for x, y in batches[:10]]
    apply = lambda batch: step(*batch)  # noqa: E731
    for i, batch in enumerate(batches[10:24]):
        if i % 4 == 3:
            continue
        if i >= 12:
            break
        losses.append(apply(batch))
    for x, y in batches[24:]:
        def closure():
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            return loss
        losses.append(opt.step(closure).item())
    print("closure-listcomp-continue: %d steps, final loss %.4f" % (len(losses), losses[-1]))


class SkipBatch(Exception):
    pass


def nested_helpers_try():
    torch.manual_seed(0)
    batches = make_batches(8, seed=17)
    model = mlp()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    flagged = {5, 11, 17}

    def check(i, x):
        if i in flagged:
            raise SkipBatch(i)
        return x

    def compute_loss(x, y):
        return F.cross_entropy(model(x), y, label_smoothing=0.05)

    def update(loss):
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        opt.step()

    def one_step(i, x, y):
        loss = compute_loss(check(i, x), y)
        update(loss)
        return loss.item()

    skipped = steps = 0
    last = float("nan")
    for i, (x, y) in enumerate(itertools.islice(itertools.cycle(batches), 24)):
        try:
            last = one_step(i, x, y)
        except SkipBatch:
            skipped += 1
            continue
        steps += 1
    print("nested-helpers-try: %d steps, %d skipped, final loss %.4f" % (steps, skipped, last))


MODES = {
    "epoch-fn-eval": epoch_fn_eval,
    "gan-two-opts": gan_two_opts,
    "accum-modulo-tail": accum_modulo_tail,
    "accum-inner-micro": accum_inner_micro,
    "while-early-exit": while_early_exit,
    "trainer-class": trainer_class,
    "generator-islice-zip": generator_islice_zip,
    "amp-scaler-sched": amp_scaler_sched,
    "twin-shared-train": twin_shared_train,
    "twin-separate-loops": twin_separate_loops,
    "whole-step-graph": whole_step_graph,
    "partial-graphed-callables": partial_graphed_callables,
    "closure-listcomp-continue": closure_listcomp_continue,
    "nested-helpers-try": nested_helpers_try,
}

EXPECTED_LOOPS = {
    "epoch-fn-eval": [(91, 8), (91, 8), (91, 8)],
    "gan-two-opts": [(140, 20)],
    "accum-modulo-tail": [(167, 4), (164, 1), (167, 4), (164, 1), (167, 4), (164, 1)],
    "accum-inner-micro": [(192, 10)],
    "while-early-exit": [(212, 22)],
    "trainer-class": [(294, 6), (294, 6), (294, 6), (294, 6)],
    "generator-islice-zip": [(332, 14), (339, 10)],
    "amp-scaler-sched": [(357, 20)],
    "twin-shared-train": [(373, 15), (373, 15)],
    "twin-separate-loops": [(405, 12), (428, 12)],
    "whole-step-graph": [(446, 16), (460, 3)],
    "partial-graphed-callables": [(502, 8), (502, 8), (502, 8), (502, 8)],
    "closure-listcomp-continue": [(545, 10), (547, 9), (553, 6)],
    "nested-helpers-try": [(595, 21)],
}

if __name__ == "__main__":
    MODES[sys.argv[1]]()
