"""An MLP trained through torch.cuda.make_graphed_callables with gradients accumulated over two micro-batches and
zeroed in place, its parameters given gradients of their own before graphing.

Covers: the clean twin of grad-aliases-graph (PyTorch #181723). Without gradients of their own, the first backward
would make each .grad the graph's static gradient output, and zero_grad(set_to_none=False) plus accumulation would
double it. Here `p.grad = torch.zeros_like(p)` before make_graphed_callables gives AccumulateGrad a tensor to add
into, outside the graphs' pool.

Why it is correct: every backward adds the graph's gradient into the program's own .grad; zero_grad zeroes it in
place between steps; the optimizer reads what eager would have accumulated (the oracle checks it).
"""
import math

import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "graphed_grads_precreated"
BATCH = 64
MICRO = 2
STEPS = 20


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(128, 512), torch.nn.GELU(), torch.nn.Linear(512, 512),
                                torch.nn.GELU(), torch.nn.Linear(512, 10)).cuda().train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    batches = [(torch.randn(BATCH, 128, device="cuda"), torch.randint(0, 10, (BATCH,), device="cuda"))
               for _ in range(4)]
    sample_x = torch.randn(BATCH, 128, device="cuda")
    for p in model.parameters():
        p.grad = torch.zeros_like(p)  # the program's own gradients, before the graphs exist
    oracle.start(model.parameters())
    graphed = oracle.make_graphed_callables(model, (sample_x,))

    for step in range(STEPS):
        torch.cuda.nvtx.range_push("step")
        optimizer.zero_grad(set_to_none=False)
        for micro in range(MICRO):
            x, y = batches[(step * MICRO + micro) % len(batches)]
            loss = F.cross_entropy(graphed(x), y) / MICRO
            loss.backward()
        optimizer.step()
        torch.cuda.nvtx.range_pop()

    torch.cuda.synchronize()
    final = loss.item() * MICRO
    print(f"final loss {final:.4f}", flush=True)
    assert math.isfinite(final), final
    oracle.save(NAME, loss=final, parameters=model.parameters())
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
