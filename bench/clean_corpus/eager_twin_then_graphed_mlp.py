"""The way many users check CUDA graphs: train an eager copy of the model for N steps, then the same initial model
through torch.cuda.make_graphed_callables on the same batches, and compare the two loss curves and the weights.

Covers: two training loops in one run, an eager loop (the twin, a copy.deepcopy of the model made before any step)
followed by a graphed loop (make_graphed_callables of the whole MLP, loss and SGD with Nesterov momentum eager). Both
loops call the same `train` function; only the forward they are given differs. The losses are kept as detached GPU
tensors and read once per loop with `.tolist()`, after it.

Why it is correct: the twin is copied before make_graphed_callables runs, so it never shares a parameter with the
graphed module; the sample input has the batches' shape and dtype; the batches are fed straight to the graphed
callable (make_graphed_callables copies them into its static inputs); zero_grad(set_to_none=True) before each
backward; no synchronization inside either loop. The program fails if the curves or the weights part.
"""
import copy
import math
import sys

import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "eager_twin_then_graphed_mlp"
BATCH = 128
STEPS = 25


def make_model():
    return torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.LayerNorm(256), torch.nn.SiLU(),
                               torch.nn.Linear(256, 256), torch.nn.SiLU(), torch.nn.Linear(256, 8))


def train(model, forward, batches):
    """STEPS steps of SGD on `model`, calling `forward` (the module itself, or its graphed version)."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    losses = []
    for step in range(STEPS):
        x, y = batches[step % len(batches)]
        torch.cuda.nvtx.range_push("step")
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(forward(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
        torch.cuda.nvtx.range_pop()
    return torch.stack(losses)


def main():
    torch.manual_seed(0)
    model = make_model().cuda().train()
    twin = copy.deepcopy(model)  # same initial weights, its own tensors
    batches = [(torch.randn(BATCH, 64, device="cuda"), torch.randint(0, 8, (BATCH,), device="cuda"))
               for _ in range(5)]
    # Before the twin trains: a planted run plants both loops alike, so the comparison below still holds and only
    # the oracle (against an unplanted eager run) can tell.
    oracle.start(model.parameters())

    twin_losses = train(twin, twin, batches).tolist()  # eager loop first

    graphed = oracle.make_graphed_callables(model, (torch.randn(BATCH, 64, device="cuda"),))
    graphed_losses = train(model, graphed, batches).tolist()  # then the graphed loop

    print("eager   " + " ".join(f"{v:.4f}" for v in twin_losses[::5]), flush=True)
    print("graphed " + " ".join(f"{v:.4f}" for v in graphed_losses[::5]), flush=True)
    if not all(math.isfinite(v) for v in twin_losses + graphed_losses):
        sys.exit(f"FAIL {NAME}: a loss is not finite")
    worst = max(abs(a - b) / max(abs(a), 1e-6) for a, b in zip(twin_losses, graphed_losses))
    if worst > 1e-3:
        sys.exit(f"FAIL {NAME}: graphed losses part from the eager twin's by {worst:.3g} (relative)")
    with torch.no_grad():
        apart = max(float((p - q).abs().max()) for p, q in zip(model.parameters(), twin.parameters()))
    if apart > 1e-3:
        sys.exit(f"FAIL {NAME}: graphed weights part from the eager twin's by {apart:.3g}")
    print(f"loss curves agree within {worst:.2g}, weights within {apart:.2g}", flush=True)
    oracle.save(NAME, loss=graphed_losses[-1], parameters=model.parameters())
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
