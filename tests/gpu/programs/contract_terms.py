"""Variants of the capture contract's terms that a probe watching a list of things missed (issue 57): each breaks a
term another way than tests/gpu/programs/contract_cases.py does, and has a clean twin. Every mode runs the same steps
with graphs and without (GRAPHS off: the step function called where the graph would replay), from the same seeds, and
prints `NAME vs eager: max difference D` over the losses and the trained parameters. Lines a finding is expected at
end in "# defect: MODE" (bench/contract_variants/run_variants.py counts them; TWINS pairs each defect with its twin).

  global-float        a module-level float the captured step reads, ramped by the loop between replays
  global-tensor       clean: the value in a CUDA tensor filled in place
  numpy-legacy        numpy.random.uniform() inside the captured step scales the loss
  numpy-generator     the same through a numpy.random.Generator object
  numpy-outside       clean: drawn on the host before each replay, copied into a static tensor
  optim-load          an optimizer checkpoint loaded with load_state_dict() after capture (new state tensors)
  optim-load-inplace  clean: the checkpoint copied into the state tensors in place
  unfreeze            a layer frozen at capture, unfrozen with requires_grad_(True) after it
  never-frozen        clean: every layer trains from the start
  bn-freeze           make_graphed_callables of a model with batch norm; the batch norms put in eval() after capture,
                      the model itself still training
  bn-freeze-before    clean: the batch norms put in eval() before make_graphed_callables
  pinned-rebound      a whole step whose capture copies a pinned host batch in; the loop binds the name to the next
                      pinned batch (the graph copies the first for ever)
  pinned-inplace      clean: the next batch copied into the captured pinned tensor
  function-alias      make_graphed_callables of a plain function whose weights are leaf tensors passed as inputs,
                      .grad None at the first backward (PyTorch #181723 outside modules)
  function-precreated clean: the weights' .grad made before graphing
"""
import copy
import sys

import numpy
import torch
import torch.nn.functional as F
from contract_cases import report, side_stream_warmup

STEPS = 8
GRAPHS = True
TEMPERATURE = 1.0
rng = None


def mlp(batch_norm=False):
    torch.manual_seed(0)
    norm = [torch.nn.BatchNorm1d(64)] if batch_norm else []
    return torch.nn.Sequential(torch.nn.Linear(32, 64), *norm, torch.nn.ReLU(), torch.nn.Linear(64, 4)).cuda()


def data():
    torch.manual_seed(1)
    return [(torch.randn(16, 32, device="cuda"), torch.randn(16, 4, device="cuda")) for _ in range(STEPS)]


def whole_step(model, loss_of, between=None, frozen=()):
    """A whole training step (forward, loss_of(output, target), backward, Adam capturable) captured once and replayed
    STEPS times (or run eagerly when GRAPHS is off); `between(i, optimizer)` runs before step i. Returns the losses and
    the parameters."""
    for layer in frozen:
        layer.requires_grad_(False)
    optimizer = torch.optim.Adam(model.parameters(), lr=torch.tensor(1e-2, device="cuda"), capturable=True)
    batches = data()
    static_x, static_y = batches[0][0].clone(), batches[0][1].clone()

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of(model(static_x), static_y)
        loss.backward()
        optimizer.step()
        return loss

    side_stream_warmup(step)
    if GRAPHS:
        graph = torch.cuda.CUDAGraph()
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            static_loss = step()
    losses = []
    for i, (x, y) in enumerate(batches):
        static_x.copy_(x)
        static_y.copy_(y)
        if between is not None:
            between(i, optimizer)
        torch.cuda.nvtx.range_push("step")
        if GRAPHS:
            graph.replay()
        else:
            static_loss = step()
        torch.cuda.nvtx.range_pop()
        losses.append(static_loss.detach().clone())
    return losses + [p.detach().clone() for p in model.parameters()]


def tempered(loss_of_global):
    def loss_of(out, y):
        return F.mse_loss(out / TEMPERATURE, y) if loss_of_global else F.mse_loss(out / temperature, y)

    temperature = torch.ones((), device="cuda")

    def anneal(i, optimizer):
        global TEMPERATURE
        if loss_of_global:
            TEMPERATURE = 1.0 + i  # defect: global-float
        else:
            temperature.fill_(1.0 + i)

    return whole_step(mlp(), loss_of, anneal)


def numpy_scaled(how):
    global rng
    numpy.random.seed(0)
    rng = numpy.random.default_rng(0)
    scale = torch.ones((), device="cuda")

    def loss_of(out, y):
        if how == "legacy":
            return F.mse_loss(out, y) * float(numpy.random.uniform(0.5, 1.5))  # defect: numpy-legacy
        if how == "generator":
            return F.mse_loss(out, y) * float(rng.uniform(0.5, 1.5))  # defect: numpy-generator
        return F.mse_loss(out, y) * scale

    def draw(i, optimizer):
        if how == "outside":
            scale.fill_(float(numpy.random.uniform(0.5, 1.5)))

    return whole_step(mlp(), lambda out, y: loss_of(out, y), draw)


def optimizer_checkpoint(in_place):
    saved = {}

    def restore(i, optimizer):
        if i == 1:
            saved.update(copy.deepcopy(optimizer.state_dict()))
        if i != 4:
            return
        if in_place:
            for index, parameter in enumerate(p for g in optimizer.param_groups for p in g["params"]):
                for key, value in optimizer.state[parameter].items():
                    value.copy_(saved["state"][index][key])
        else:
            optimizer.load_state_dict(saved)  # defect: optim-load

    return whole_step(mlp(), F.mse_loss, restore)


def unfreezing(frozen_first):
    model = mlp()

    def unfreeze(i, optimizer):
        if frozen_first and i == 2:
            model[0].requires_grad_(True)  # defect: unfreeze

    return whole_step(model, F.mse_loss, unfreeze, frozen=[model[0]] if frozen_first else [])


def batch_norm_frozen(after_capture):
    """make_graphed_callables of an MLP with batch norm, SGD outside; the eager twin starts from the graphed model's
    state after graphing (make_graphed_callables' warm-up moved the running statistics)."""
    model = mlp(batch_norm=True)
    batches = data()
    if not after_capture:
        model[1].eval()
    if GRAPHS:
        model = torch.cuda.make_graphed_callables(model, (batches[0][0].clone(),))
    state = copy.deepcopy(model.state_dict())
    if not GRAPHS:
        model = mlp(batch_norm=True)
        model.load_state_dict(state)
        if not after_capture:
            model[1].eval()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for i, (x, y) in enumerate(batches):
        if after_capture and i == 2:
            for layer in model.modules():
                if isinstance(layer, torch.nn.BatchNorm1d):
                    layer.eval()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.nvtx.range_push("step")
        out = model(x)  # defect: bn-freeze
        loss = F.mse_loss(out, y)
        loss.backward()
        optimizer.step()
        torch.cuda.nvtx.range_pop()
        losses.append(loss.detach().clone())
    return losses + [t.detach().clone() for t in model.state_dict().values()]


def pinned_batches(in_place):
    """Inference replays whose capture copies a pinned host batch into the device."""
    model = mlp().eval()
    torch.manual_seed(2)
    pinned = [torch.randn(16, 32).pin_memory() for _ in range(STEPS)]
    host_batch = torch.empty(16, 32).pin_memory()
    host_batch.copy_(pinned[0])
    static_x = torch.empty(16, 32, device="cuda")
    outputs = []
    with torch.no_grad():
        if GRAPHS:
            side_stream_warmup(lambda: model(static_x.copy_(host_batch, non_blocking=True)))
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_x.copy_(host_batch, non_blocking=True)
                static_out = model(static_x)
        for i in range(STEPS):
            torch.cuda.synchronize()  # the last replay's copy has read the pinned batch
            if in_place:
                host_batch.copy_(pinned[i])
            else:
                host_batch = pinned[i]  # defect: pinned-rebound
            torch.cuda.nvtx.range_push("step")
            if GRAPHS:
                graph.replay()
                outputs.append(static_out.clone())
            else:
                outputs.append(model(host_batch.cuda()))
            torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    return outputs


def linear_net(x, w1, w2):
    return torch.relu(x @ w1) @ w2


def graphed_function(precreate):
    """make_graphed_callables of linear_net with its weights passed as inputs; plain SGD by hand."""
    torch.manual_seed(0)
    w1 = (torch.randn(32, 64, device="cuda") * 0.1).requires_grad_()
    w2 = (torch.randn(64, 4, device="cuda") * 0.1).requires_grad_()
    batches = data()
    if precreate:
        w1.grad, w2.grad = torch.zeros_like(w1), torch.zeros_like(w2)
    net = linear_net
    if GRAPHS:
        net = torch.cuda.make_graphed_callables(linear_net, (batches[0][0].clone(), w1, w2))
    losses = []
    for x, y in batches:
        torch.cuda.nvtx.range_push("step")
        loss = F.mse_loss(net(x, w1, w2), y)
        loss.backward()  # defect: function-alias
        with torch.no_grad():
            for w in (w1, w2):
                w -= 0.05 * w.grad
                w.grad.zero_()
        torch.cuda.nvtx.range_pop()
        losses.append(loss.detach().clone())
    return losses + [w1.detach().clone(), w2.detach().clone()]


MODES = {
    "global-float": lambda: tempered(True),
    "global-tensor": lambda: tempered(False),
    "numpy-legacy": lambda: numpy_scaled("legacy"),
    "numpy-generator": lambda: numpy_scaled("generator"),
    "numpy-outside": lambda: numpy_scaled("outside"),
    "optim-load": lambda: optimizer_checkpoint(False),
    "optim-load-inplace": lambda: optimizer_checkpoint(True),
    "unfreeze": lambda: unfreezing(True),
    "never-frozen": lambda: unfreezing(False),
    "bn-freeze": lambda: batch_norm_frozen(True),
    "bn-freeze-before": lambda: batch_norm_frozen(False),
    "pinned-rebound": lambda: pinned_batches(False),
    "pinned-inplace": lambda: pinned_batches(True),
    "function-alias": lambda: graphed_function(False),
    "function-precreated": lambda: graphed_function(True),
}
TWINS = {"global-float": "global-tensor", "numpy-legacy": "numpy-outside", "numpy-generator": "numpy-outside",
         "optim-load": "optim-load-inplace", "unfreeze": "never-frozen", "bn-freeze": "bn-freeze-before",
         "pinned-rebound": "pinned-inplace", "function-alias": "function-precreated"}

if __name__ == "__main__":
    mode = sys.argv[1]
    torch.backends.cudnn.deterministic = True
    graphed = MODES[mode]()
    GRAPHS = False
    TEMPERATURE = 1.0
    eager = MODES[mode]()
    report(mode, graphed, eager)
