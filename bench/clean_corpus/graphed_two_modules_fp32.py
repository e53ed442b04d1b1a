"""Two modules (a backbone and a head) graphed by one torch.cuda.make_graphed_callables call, float32, SGD eager.

Covers: make_graphed_callables with a tuple of callables, which captures their graphs into one shared memory pool
(forwards in the given order, then backwards in reverse). The head's sample input requires grad, as the real one
(the backbone's output) does, so the head's backward graph produces the gradient that flows into the backbone's
backward graph. No dropout, so `--shadow N` compares both modules' outputs with their eager forwards.

Why it is correct: PyTorch allows the tuple form when the callables always run in the given order and never
concurrently, which the loop does (backbone forward, head forward, then autograd runs head backward, backbone
backward: the capture order); sample inputs match the real inputs' shapes, dtypes and requires_grad; loss and
optimizer run eagerly outside the graphs; no host synchronization in the loop.
"""
import math

import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "graphed_two_modules_fp32"
BATCH = 64
HIDDEN = 512
STEPS = 30


def main():
    torch.manual_seed(0)
    backbone = torch.nn.Sequential(torch.nn.Linear(128, HIDDEN), torch.nn.LayerNorm(HIDDEN), torch.nn.GELU(),
                                   torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.GELU()).cuda().train()
    head = torch.nn.Sequential(torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.Tanh(),
                               torch.nn.Linear(HIDDEN, 10)).cuda().train()
    params = list(backbone.parameters()) + list(head.parameters())
    optimizer = torch.optim.SGD(params, lr=0.05, momentum=0.9)
    batches = [(torch.randn(BATCH, 128, device="cuda"), torch.randint(0, 10, (BATCH,), device="cuda"))
               for _ in range(4)]

    sample_x = torch.randn(BATCH, 128, device="cuda")
    sample_h = torch.randn(BATCH, HIDDEN, device="cuda", requires_grad=True)
    oracle.start(params)
    backbone, head = oracle.make_graphed_callables((backbone, head), ((sample_x,), (sample_h,)))

    for step in range(STEPS):
        x, y = batches[step % len(batches)]
        torch.cuda.nvtx.range_push("step")
        optimizer.zero_grad(set_to_none=True)
        logits = head(backbone(x))
        loss = F.cross_entropy(logits, y)
        loss.backward()
        optimizer.step()
        torch.cuda.nvtx.range_pop()

    torch.cuda.synchronize()
    final = loss.item()
    print(f"final loss {final:.4f}", flush=True)
    assert math.isfinite(final), final
    assert all(p.grad is not None for p in params)
    oracle.save(NAME, loss=final, parameters=params)
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
