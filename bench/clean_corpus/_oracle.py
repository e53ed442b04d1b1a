"""The clean corpus's oracle: a clean program computes what it would without CUDA graphs.

Every program of the corpus runs with its graphs (under `graphcheck run`) and again with them removed
(CORPUS_GRAPHS=0, without graphcheck), from the same seeds and the same data:
- make_graphed_callables returns the callables as they are, after making the warmup calls that
  torch.cuda.make_graphed_callables makes before it captures (`_warm_up`);
- a program's own capture runs its step function eagerly wherever it would replay the graph (`GRAPHS` tells the
  program which);
- torch.compile runs without CUDA graphs (`compile_mode`).
Each run saves what it computed (`save`: the last loss and the parameters before and after training, or an inference
program's outputs) under CORPUS_ORACLE_DIR, named by CORPUS_ORACLE_VARIANT, and run_corpus.py holds the graphed run to
the eager one within eager's own spread: a second eager run from the same seeds (kernels that add with atomics differ
from run to run).

Random numbers are compared draw for draw. A captured kernel that draws from the CUDA generator reads, at each
replay, the generator's seed and its offset at that moment plus the offset the capture counted up to that kernel, and
the replay then moves the generator's offset on by what the whole capture counted (CUDAGeneratorState's
capture_prologue / replay_prologue and philox_cuda_state in PyTorch's aten/src/ATen/cuda/CUDAGeneratorImpl.cpp); a
capture itself leaves the offset where it was. So a replay draws exactly what the same code run eagerly would draw
from the same generator state, and moves the generator as far. The one place where a graphed run draws what its eager
twin does not is make_graphed_callables' warmup (num_warmup_iters forward calls and their backward, dropout drawing
in each): `_warm_up` makes the same calls in the eager twin, so both enter training with the same generator state
(and the same batch-norm running statistics). A program whose eager twin could not draw what the graphed run draws
would be listed in run_corpus.py's RNG_OTHER_STREAM: its spread run draws from another stream of the generator
(CORPUS_RNG_STREAM=1, `start`) and it is held to eager's spread over streams; none is listed.

Every run, graphed or not, uses cuDNN's deterministic algorithms (set when this module is imported, before any model
is made): with them eager's own spread is what other atomics leave, so the graphed run is held close to eager. Without
them a ResNet's convolutions' backward differs from run to run by enough that 30 steps apart, two eager runs' last
losses differed by 1.2% and the graphed run's by 4.1% (H200, session 16): one spread sample cannot tell those apart.

Planted wrong runs (CORPUS_PLANT, graphed runs only; run_corpus.py --plant), to show that the oracle fails when the
graphed run is wrong: `frozen` steps every optimizer with no parameters from start() on (its parameters never move;
a captured optimizer step then captures nothing), `double-grad` doubles every gradient right before each optimizer
step (captured with the step in a whole-step capture). Both work through PyTorch's global optimizer step hooks, so
every program that trains takes them without a change of its own.
"""
import contextlib
import os

import torch

torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False

GRAPHS = os.environ.get("CORPUS_GRAPHS", "1") != "0"
if os.environ.get("CORPUS_NO_NVTX") == "1":  # run_corpus.py --no-nvtx: a program that marks no steps
    torch.cuda.nvtx.range_push = lambda *args, **kwargs: 0
    torch.cuda.nvtx.range_pop = lambda *args, **kwargs: 0
    torch.cuda.nvtx.range = lambda *args, **kwargs: contextlib.nullcontext()
PLANTS = ("frozen", "double-grad")
PLANT = os.environ.get("CORPUS_PLANT", "") if GRAPHS else ""  # never in an eager twin
_initial = None
_planted_steps = 0  # optimizer steps the plant's hooks ran in (a whole-step capture: once, at the capture)


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False, **kwargs):
    """torch.cuda.make_graphed_callables, or the callables unchanged with the graphs removed (after its warmup)."""
    if GRAPHS:
        return torch.cuda.make_graphed_callables(callables, sample_args, num_warmup_iters=num_warmup_iters,
                                                 allow_unused_input=allow_unused_input, **kwargs)
    _warm_up(callables, sample_args, num_warmup_iters, allow_unused_input)
    return callables


def _warm_up(callables, sample_args, iters, allow_unused_input):
    """What torch.cuda.make_graphed_callables runs before its captures (torch/cuda/graphs.py): on a side stream, for
    each callable in turn, `iters` calls on its sample args, each followed by torch.autograd.grad of the outputs that
    require grad with respect to the sample args and module parameters that require grad (thrown away: nothing is
    accumulated into .grad). In the graphed run these calls draw from the CUDA generator (dropout) and update module
    state (batch norm's running statistics); the eager twin makes them too. The gradients' seeds (empty_like there,
    zeros here) do not matter: no backward draws random numbers or keeps state."""
    single = not isinstance(callables, tuple)
    funcs = (callables,) if single else callables
    per_args = (sample_args,) if single else sample_args
    torch.cuda.synchronize()
    with torch.cuda.stream(torch.cuda.Stream()):
        for func, args in zip(funcs, per_args):
            surface = tuple(torch.utils._pytree.arg_tree_leaves(*args))
            if isinstance(func, torch.nn.Module):
                surface += tuple(func.parameters())
            for _ in range(iters):
                outputs = tuple(o for o in torch.utils._pytree.tree_leaves(func(*args)) if o.requires_grad)
                if outputs:
                    torch.autograd.grad(outputs=outputs, inputs=tuple(i for i in surface if i.requires_grad),
                                        grad_outputs=tuple(torch.zeros_like(o) for o in outputs),
                                        only_inputs=True, allow_unused=allow_unused_input)
    torch.cuda.synchronize()


def compile_mode(mode):
    """torch.compile's mode: the program's, or without CUDA graphs ("reduce-overhead" minus the graphs)."""
    return mode if GRAPHS else "default"


def _flat(tensors):
    return torch.cat([t.detach().float().flatten().cpu() for t in tensors])


def _plant(kind):
    """Installs the planted error `kind` (see the module's docstring) for every optimizer step from now on."""
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    if kind not in PLANTS:
        raise SystemExit(f"CORPUS_PLANT={kind!r}: expected one of {', '.join(PLANTS)}")
    held = {}

    def count(optimizer, args, kwargs):
        global _planted_steps
        _planted_steps += 1

    def hide(optimizer, args, kwargs):  # frozen: the step sees no parameters
        held[id(optimizer)] = [group["params"] for group in optimizer.param_groups]
        for group in optimizer.param_groups:
            group["params"] = []

    def give_back(optimizer, args, kwargs):
        for group, params in zip(optimizer.param_groups, held.pop(id(optimizer), [])):
            group["params"] = params

    def double(optimizer, args, kwargs):  # double-grad
        with torch.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad.mul_(2)

    register_optimizer_step_pre_hook(count)
    if kind == "frozen":
        register_optimizer_step_pre_hook(hide)
        register_optimizer_step_post_hook(give_back)
    else:
        register_optimizer_step_pre_hook(double)
    print(f"PLANTED {kind}: graphed run made wrong on purpose (CORPUS_PLANT)", flush=True)


def start(parameters=()):
    """Right before training (the model and the data made): remembers the parameters; in a planted graphed run
    installs the plant; in a spread run of an RNG_OTHER_STREAM program moves the CUDA generator to another stream."""
    global _initial
    _initial = _flat(list(parameters)) if parameters else None
    if PLANT:
        _plant(PLANT)
    stream = int(os.environ.get("CORPUS_RNG_STREAM", "0"))
    if stream:
        torch.cuda.manual_seed(1000003 * stream)


def save(name, loss=None, parameters=(), outputs=None):
    """What the run computed, for run_corpus.py: the last loss, the parameters at start() and now, the outputs, and
    the plant (if any) with the number of optimizer steps it ran in."""
    folder = os.environ.get("CORPUS_ORACLE_DIR")
    if not folder:
        return
    record = {
        "graphs": GRAPHS,
        "plant": PLANT,
        "planted_steps": _planted_steps,
        "loss": None if loss is None else float(loss),
        "initial": _initial,
        "final": _flat(list(parameters)) if parameters else None,
        "outputs": None if outputs is None else _flat(outputs if isinstance(outputs, (list, tuple)) else [outputs]),
    }
    variant = "graphed" if GRAPHS else os.environ.get("CORPUS_ORACLE_VARIANT", "eager")
    os.makedirs(folder, exist_ok=True)
    torch.save(record, os.path.join(folder, "%s.%s.pt" % (name, variant)))
