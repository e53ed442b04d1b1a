"""PyTorch programs whose graphs capture fine and then compute wrong because the program breaks a term of the capture
contract, each with a clean twin, for the contract's GPU tests (tests/gpu/python_probe_gpu_test.cc), one per mode
(argv[1]). Lines the tests expect a finding at end in "# defect: MODE". Each program prints how far its result is
from eager's ("vs eager: max difference D"), so the effect of each defect is measured where it is planted.

  eval-baked         an inference graph captured in training mode (dropout on), replayed after model.eval()
  eval-captured      clean: model.eval() before the capture
  attr-baked         a whole training step whose forward divides by a Python float the program anneals each step
  attr-buffer        clean: the temperature is a buffer filled in place
  ema-swap           EMA weights swapped in with p.data = ema (the training weights kept aside), then replayed
  ema-copy           clean: the EMA weights copied in place (p.data.copy_)
  buffer-regrown     a registered buffer the graph reads regrown with torch.cat after capture
  buffer-inplace     clean: the buffer updated in place
  host-random        stochastic depth decided with random.random() inside a whole-step capture
  cuda-random        clean: the decision drawn on the GPU
  grad-alias         make_graphed_callables, SGD, zero_grad(set_to_none=False): .grad aliases the graph's output
  grad-alias-accum   the same with gradient accumulation over 4 micro-batches (zero_grad(set_to_none=True) per step)
  grad-alias-ckpt    Hugging Face GPT-2 with gradient checkpointing through make_graphed_callables,
                     zero_grad(set_to_none=False)
  grad-precreated    clean: grad-alias with p.grad = zeros before make_graphed_callables
  grad-accum-precreated  clean: grad-alias-accum with the grads created before graphing
  grad-ckpt-precreated   clean: grad-alias-ckpt with the grads created before graphing
  grad-set-to-none   clean: make_graphed_callables with zero_grad(set_to_none=True) before each backward
  state-replaced     a whole training step whose forward replaces a running-mean buffer (self.center = ...) inside
                     the capture: each replay starts again from the value before the capture
  state-in-place     clean: the buffer updated in place
  optim-state-in-capture  a whole training step whose warm-up did not step the optimizer: Adam's state is created
                     inside the capture, and each replay resets it
  optim-state-warmed clean: the warm-up steps the optimizer too
  grad-scale-global  make_graphed_callables of a model with a gradient-reversal layer whose backward multiplies by a
                     module-level coefficient the program anneals each step: the backward graph keeps the value it
                     had at capture (only --shadow sees it: the forward is the identity)
  grad-scale-fixed   clean: the same with the coefficient left alone
"""
import copy
import random
import sys

import torch
import torch.cuda.nvtx as nvtx

STEPS = 8


def side_stream_warmup(fn, iterations=3):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(iterations):
            fn()
    torch.cuda.current_stream().wait_stream(s)


def report(name, graphed, eager):
    difference = max((g.float() - e.float()).abs().max().item() for g, e in zip(graphed, eager))
    print("%s vs eager: max difference %.4g" % (name, difference), flush=True)


def mlp(dropout=0.0):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Dropout(dropout),
                               torch.nn.Linear(256, 8)).cuda()


def inference(eval_first):
    """An inference graph of a model with dropout; the program evaluates in eval mode."""
    model = mlp(dropout=0.5)
    if eval_first:
        model.eval()
    static_x = torch.randn(32, 64, device="cuda")
    with torch.no_grad():
        side_stream_warmup(lambda: model(static_x))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = model(static_x)
    model.eval()  # defect: eval-baked
    outputs, expected = [], []
    for _ in range(STEPS):
        nvtx.range_push("step")
        static_x.copy_(torch.randn(32, 64, device="cuda"))
        if eval_first:
            graph.replay()
        else:
            graph.replay()
        outputs.append(static_out.clone())
        with torch.no_grad():
            expected.append(model(static_x))
        nvtx.range_pop()
    report("eval replays", outputs, expected)


class Tempered(torch.nn.Module):
    """Logits divided by a temperature the forward reads: a Python float, or a buffer."""

    def __init__(self, as_buffer):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
        if as_buffer:
            self.register_buffer("temperature", torch.ones(()))
        else:
            self.temperature = 1.0

    def forward(self, x):
        return self.body(x) / self.temperature


def whole_step(model, forward, steps=STEPS, between=None, warm_optimizer=True, eager=False):
    """A whole training step (forward, loss, backward, Adam) captured and replayed; `between(step)` runs before each
    replay. `warm_optimizer`: the warm-up steps the optimizer too; `eager`: the same steps run without a graph.
    Returns the losses."""
    optimizer = torch.optim.Adam(model.parameters(), lr=torch.tensor(1e-3, device="cuda"), capturable=True)
    static_x = torch.randn(32, 64, device="cuda")
    static_y = torch.randn(32, 8, device="cuda")

    def step(update=True):
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(forward(static_x), static_y)
        loss.backward()
        if update:
            optimizer.step()  # defect: optim-state-in-capture
        return loss

    side_stream_warmup(lambda: step(update=warm_optimizer))
    if eager:
        losses = []
        for i in range(steps):
            static_x.copy_(torch.randn(32, 64, device="cuda"))
            if between is not None:
                between(i)
            losses.append(step().detach().clone())
        return losses
    graph = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = step()
    losses = []
    for i in range(steps):
        nvtx.range_push("step")
        static_x.copy_(torch.randn(32, 64, device="cuda"))
        if between is not None:
            between(i)
        graph.replay()
        losses.append(static_loss.clone())
        nvtx.range_pop()
    return losses


def tempered(as_buffer):
    torch.manual_seed(0)
    model = Tempered(as_buffer).cuda()

    def anneal(i):
        if as_buffer:
            model.temperature.fill_(1.0 / (i + 1))
        else:
            model.temperature = 1.0 / (i + 1)  # defect: attr-baked

    losses = whole_step(model, model, between=anneal)
    print("temperature now", float(model.temperature), "losses", [round(float(l), 4) for l in losses], flush=True)


def ema(in_place):
    """An inference graph over the training weights; EMA weights are swapped in for evaluation."""
    model = mlp().eval()
    averaged = [p.detach().clone() * 0.5 for p in model.parameters()]  # stand-in EMA weights
    static_x = torch.randn(32, 64, device="cuda")
    with torch.no_grad():
        side_stream_warmup(lambda: model(static_x))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = model(static_x)
        kept = []
        for p, e in zip(model.parameters(), averaged):
            kept.append(p.data.clone() if in_place else p.data)
            if in_place:
                p.data.copy_(e)
            else:
                p.data = e
        outputs, expected = [], []
        for _ in range(STEPS):
            nvtx.range_push("step")
            static_x.copy_(torch.randn(32, 64, device="cuda"))
            if in_place:
                graph.replay()
            else:
                graph.replay()  # defect: ema-swap
            outputs.append(static_out.clone())
            expected.append(model(static_x))
            nvtx.range_pop()
    report("EMA replays", outputs, expected)


class Window(torch.nn.Module):
    """Adds the mean of a window of recent features (a registered buffer) to its input."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(64, 64)
        self.register_buffer("window", torch.zeros(16, 64))

    def forward(self, x):
        return self.lin(x) + self.window.mean(0)


def window(in_place):
    torch.manual_seed(0)
    model = Window().cuda().eval()
    static_x = torch.randn(32, 64, device="cuda")
    with torch.no_grad():
        side_stream_warmup(lambda: model(static_x))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = model(static_x)
        outputs, expected = [], []
        for _ in range(STEPS):
            nvtx.range_push("step")
            feature = torch.randn(1, 64, device="cuda")
            if in_place:
                model.window.copy_(torch.cat([model.window[1:], feature]))
            else:
                model.window = torch.cat([model.window, feature])[1:]  # defect: buffer-regrown
            static_x.copy_(torch.randn(32, 64, device="cuda"))
            graph.replay()
            outputs.append(static_out.clone())
            expected.append(model(static_x))
            nvtx.range_pop()
    report("window replays", outputs, expected)


class Centered(torch.nn.Module):
    """An MLP on its inputs centred by a running mean of the batches it saw (a registered buffer)."""

    def __init__(self, in_place):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
        self.register_buffer("center", torch.zeros(64))
        self.in_place = in_place

    def forward(self, x):
        mean = x.detach().mean(0)
        if self.in_place:
            self.center.mul_(0.9).add_(mean, alpha=0.1)
        else:
            self.center = self.center * 0.9 + mean * 0.1  # defect: state-replaced
        return self.body(x - self.center)


def kept_state(make_model, **options):
    """A whole step of make_model()'s graphed, and the same steps run eagerly from the same seeds: the losses and the
    state the model keeps compared."""
    runs = []
    for eager in (False, True):
        torch.manual_seed(0)
        model = make_model().cuda()
        losses = whole_step(model, model, eager=eager, **options)
        runs.append(losses + [t.detach().clone() for t in model.state_dict().values()])
    report("kept state", runs[0], runs[1])


def small_mlp():
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 8))


class StochasticDepth(torch.nn.Module):
    """A residual block skipped with probability p in training."""

    def __init__(self, on_gpu, p=0.5):
        super().__init__()
        self.block = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU())
        self.head = torch.nn.Linear(64, 8)
        self.on_gpu = on_gpu
        self.p = p

    def forward(self, x):
        if self.on_gpu:
            keep = (torch.rand((), device=x.device) >= self.p).to(x.dtype)
            x = x + keep * self.block(x)
        elif random.random() >= self.p:  # defect: host-random
            x = x + self.block(x)
        return self.head(x)


def stochastic_depth(on_gpu):
    random.seed(0)
    torch.manual_seed(0)
    model = StochasticDepth(on_gpu).cuda()
    losses = whole_step(model, model)
    print("losses", [round(float(l), 4) for l in losses], flush=True)


def graphed_mlp_training(precreate, accumulate=1, set_to_none=False, steps=4):
    """make_graphed_callables of an MLP, SGD eager; against the same model trained eagerly. Returns (graphed grad
    norms, eager grad norms) after each step."""
    model = mlp()
    eager = copy.deepcopy(model)
    if precreate:
        for p in model.parameters():
            p.grad = torch.zeros_like(p)
    torch.manual_seed(1)
    batches = [(torch.randn(32, 64, device="cuda"), torch.randn(32, 8, device="cuda"))
               for _ in range(steps * accumulate)]
    graphed = torch.cuda.make_graphed_callables(model, (batches[0][0].clone(),))
    norms = {}
    for name, net, call in (("graphed", model, graphed), ("eager", eager, eager)):
        optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
        norms[name] = []
        for s in range(steps):
            nvtx.range_push("step")
            optimizer.zero_grad(set_to_none=set_to_none)
            for m in range(accumulate):
                x, y = batches[s * accumulate + m]
                loss = torch.nn.functional.mse_loss(call(x), y) / accumulate
                if name == "eager":
                    loss.backward()
                elif accumulate > 1:
                    loss.backward()  # defect: grad-alias-accum
                else:
                    loss.backward()  # defect: grad-alias
            norms[name].append(torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in net.parameters()])))
            optimizer.step()
            nvtx.range_pop()
    print("grad norms graphed", [round(float(n), 4) for n in norms["graphed"]], "eager",
          [round(float(n), 4) for n in norms["eager"]], flush=True)
    report("grad norms", norms["graphed"], norms["eager"])


class Logits(torch.nn.Module):
    """input_ids -> logits, so that make_graphed_callables sees one tensor in and one out."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(input_ids=ids).logits


def gpt2_checkpointed(precreate, steps=4):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_head=4, n_embd=128, vocab_size=512, n_positions=64)
    model = GPT2LMHeadModel(config)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model = Logits(model).cuda().train()
    if precreate:
        for p in model.parameters():
            p.grad = torch.zeros_like(p)
    ids = torch.randint(0, 512, (4, 64), device="cuda")
    graphed = torch.cuda.make_graphed_callables(model, (ids.clone(),))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(steps):
        nvtx.range_push("step")
        optimizer.zero_grad(set_to_none=False)
        logits = graphed(ids)
        loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 512), ids[:, 1:].reshape(-1))
        if precreate:
            loss.backward()
        else:
            loss.backward()  # defect: grad-alias-ckpt
        optimizer.step()
        losses.append(float(loss))
        nvtx.range_pop()
    print("GPT-2 checkpointed losses", [round(l, 4) for l in losses], flush=True)


GRADIENT_SCALE = [1.0]  # the reversal's coefficient, read on the host in backward


class ReverseGradient(torch.autograd.Function):
    """Identity forward; the backward multiplies by -GRADIENT_SCALE[0] (domain-adversarial training's layer)."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return -GRADIENT_SCALE[0] * grad


class Adversarial(torch.nn.Module):
    """A feature extractor and a domain head behind a gradient-reversal layer."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.features = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU())
        self.domain = torch.nn.Linear(128, 2)

    def forward(self, x):
        return self.domain(ReverseGradient.apply(self.features(x)))


def gradient_reversal(anneal, steps=4):
    """make_graphed_callables of Adversarial; the program sets the coefficient before each step (1/(1+step) when
    annealing), and trains an eager twin on the same batches with the same schedule."""
    model = Adversarial().cuda()
    eager = copy.deepcopy(model)
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    torch.manual_seed(1)
    batches = [(torch.randn(32, 64, device="cuda"), torch.randint(0, 2, (32,), device="cuda")) for _ in range(steps)]
    graphed = torch.cuda.make_graphed_callables(model, (batches[0][0].clone(),))
    grads = {}
    for name, net, call in (("graphed", model, graphed), ("eager", eager, eager)):
        optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
        grads[name] = []
        for step, (x, y) in enumerate(batches):
            GRADIENT_SCALE[0] = 1.0 / (1 + step) if anneal else 1.0
            nvtx.range_push("step")
            optimizer.zero_grad(set_to_none=False)
            loss = torch.nn.functional.cross_entropy(call(x), y)
            if name == "eager":
                loss.backward()
            else:
                loss.backward()  # defect: grad-scale-global
            grads[name].append(net.features[0].weight.grad.clone())
            optimizer.step()
            nvtx.range_pop()
    report("feature gradients", grads["graphed"], grads["eager"])


MODES = {
    "eval-baked": lambda: inference(eval_first=False),
    "eval-captured": lambda: inference(eval_first=True),
    "attr-baked": lambda: tempered(as_buffer=False),
    "attr-buffer": lambda: tempered(as_buffer=True),
    "ema-swap": lambda: ema(in_place=False),
    "ema-copy": lambda: ema(in_place=True),
    "buffer-regrown": lambda: window(in_place=False),
    "buffer-inplace": lambda: window(in_place=True),
    "host-random": lambda: stochastic_depth(on_gpu=False),
    "cuda-random": lambda: stochastic_depth(on_gpu=True),
    "grad-alias": lambda: graphed_mlp_training(precreate=False),
    "grad-alias-accum": lambda: graphed_mlp_training(precreate=False, accumulate=4, set_to_none=True),
    "grad-alias-ckpt": lambda: gpt2_checkpointed(precreate=False),
    "grad-precreated": lambda: graphed_mlp_training(precreate=True),
    "grad-accum-precreated": lambda: graphed_mlp_training(precreate=True, accumulate=4),
    "grad-ckpt-precreated": lambda: gpt2_checkpointed(precreate=True),
    "grad-set-to-none": lambda: graphed_mlp_training(precreate=False, set_to_none=True),
    "state-replaced": lambda: kept_state(lambda: Centered(in_place=False)),
    "state-in-place": lambda: kept_state(lambda: Centered(in_place=True)),
    "optim-state-in-capture": lambda: kept_state(small_mlp, warm_optimizer=False),
    "optim-state-warmed": lambda: kept_state(small_mlp),
    "grad-scale-global": lambda: gradient_reversal(anneal=True),
    "grad-scale-fixed": lambda: gradient_reversal(anneal=False),
}

if __name__ == "__main__":
    MODES[sys.argv[1]]()
