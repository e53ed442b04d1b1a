"""An MLP with dropout trained through torch.cuda.make_graphed_callables under float16 autocast, plain SGD eager, no
GradScaler.

Covers: make_graphed_callables under fp16 autocast (cache off), dropout masks drawn on the GPU from the default
generator inside the graphs (fresh per replay), an fp16 output whose loss is computed in float32 outside the graph.

Why it is correct: the same autocast at capture and at every call; loss and optimizer eager outside the graphed
module; new batches copied into the static input by the graphed forward; no host synchronization in the loop. No
GradScaler is needed for this small, well-scaled model (a GradScaler's inf check would be eager work outside the
graph anyway).
"""
import math

import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "graphed_amp_fp16_dropout_mlp"
BATCH = 64
STEPS = 30


def fp16_autocast():
    return torch.autocast("cuda", dtype=torch.float16, cache_enabled=False)


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                                torch.nn.Linear(512, 10)).cuda().train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    batches = [(torch.randn(BATCH, 256, device="cuda"), torch.randint(0, 10, (BATCH,), device="cuda"))
               for _ in range(4)]

    sample_x = torch.randn(BATCH, 256, device="cuda")
    oracle.start(model.parameters())
    with fp16_autocast():
        graphed = oracle.make_graphed_callables(model, (sample_x,))

    for step in range(STEPS):
        x, y = batches[step % len(batches)]
        torch.cuda.nvtx.range_push("step")
        optimizer.zero_grad(set_to_none=True)
        with fp16_autocast():
            logits = graphed(x)
        loss = F.cross_entropy(logits.float(), y)
        loss.backward()
        optimizer.step()
        torch.cuda.nvtx.range_pop()

    torch.cuda.synchronize()
    final = loss.item()
    print(f"final loss {final:.4f}", flush=True)
    assert math.isfinite(final), final
    oracle.save(NAME, loss=final, parameters=model.parameters())
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
