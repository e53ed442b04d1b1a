"""The clean corpus's oracle: a clean program computes what it would without CUDA graphs.

Every program of the corpus runs with its graphs (under `graphcheck run`) and again with them removed
(CORPUS_GRAPHS=0, without graphcheck), from the same seeds and the same data:
- make_graphed_callables returns the callables as they are;
- a program's own capture runs its step function eagerly wherever it would replay the graph (`GRAPHS` tells the
  program which);
- torch.compile runs without CUDA graphs (`compile_mode`).
Each run saves what it computed (`save`: the last loss and the parameters before and after training, or an inference
program's outputs) under CORPUS_ORACLE_DIR, named by CORPUS_ORACLE_VARIANT, and run_corpus.py holds the graphed run to
the eager one within eager's own spread: a second eager run, from the same seeds (kernels that add with atomics differ
from run to run), or for programs whose graphed code draws random numbers (dropout) with the CUDA generator moved to
another stream once the model and data are made (CORPUS_RNG_STREAM=1, `start`): the graphed run draws other masks
than eager, so it is held to eager's spread over mask streams, not to eager itself.

Every run, graphed or not, uses cuDNN's deterministic algorithms (set when this module is imported, before any model
is made): with them eager's own spread is what other atomics leave, so the graphed run is held close to eager. Without
them a ResNet's convolutions' backward differs from run to run by enough that 30 steps apart, two eager runs' last
losses differed by 1.2% and the graphed run's by 4.1% (H200, session 16): one spread sample cannot tell those apart.
"""
import os

import torch

torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False

GRAPHS = os.environ.get("CORPUS_GRAPHS", "1") != "0"
_initial = None


def make_graphed_callables(callables, sample_args, **kwargs):
    """torch.cuda.make_graphed_callables, or the callables unchanged with the graphs removed."""
    if GRAPHS:
        return torch.cuda.make_graphed_callables(callables, sample_args, **kwargs)
    return callables


def compile_mode(mode):
    """torch.compile's mode: the program's, or without CUDA graphs ("reduce-overhead" minus the graphs)."""
    return mode if GRAPHS else "default"


def _flat(tensors):
    return torch.cat([t.detach().float().flatten().cpu() for t in tensors])


def start(parameters=()):
    """Right before training (the model and the data made): remembers the parameters, and in the spread run moves the
    CUDA generator to another stream."""
    global _initial
    _initial = _flat(list(parameters)) if parameters else None
    stream = int(os.environ.get("CORPUS_RNG_STREAM", "0"))
    if stream:
        torch.cuda.manual_seed(1000003 * stream)


def save(name, loss=None, parameters=(), outputs=None):
    """What the run computed, for run_corpus.py: the last loss, the parameters at start() and now, the outputs."""
    folder = os.environ.get("CORPUS_ORACLE_DIR")
    if not folder:
        return
    record = {
        "graphs": GRAPHS,
        "loss": None if loss is None else float(loss),
        "initial": _initial,
        "final": _flat(list(parameters)) if parameters else None,
        "outputs": None if outputs is None else _flat(outputs if isinstance(outputs, (list, tuple)) else [outputs]),
    }
    variant = "graphed" if GRAPHS else os.environ.get("CORPUS_ORACLE_VARIANT", "eager")
    os.makedirs(folder, exist_ok=True)
    torch.save(record, os.path.join(folder, "%s.%s.pt" % (name, variant)))
