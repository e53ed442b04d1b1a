"""An MLP regressor trained with gradient accumulation: the forward, loss and backward of one full micro-batch are
captured with torch.cuda.graph and replayed ACCUM times per optimizer step, adding into the .grad tensors, with the
SGD step eager every ACCUM replays; the epoch's last, smaller batch (the data set does not divide by the batch size)
runs eagerly and takes its own step.

Covers: a captured backward that accumulates into gradients that exist before the capture (so each replay adds into
the program's own .grad tensors, in place, rather than writing a fresh gradient); graphed steps and an eager step of
another shape in the same epoch loop, on the same parameters and the same .grad tensors;
zero_grad(set_to_none=False) after every step.

Why it is correct: the gradients are created (zeros) before the side-stream warmup and zeroed in place after it, so
the capture records `grad += new` into tensors outside the graph's pool and the eager tail batch's backward adds into
the same tensors (the program checks that no .grad tensor was replaced); the static input and target are refilled
with copy_; the loss is divided by ACCUM inside the captured step, as eager accumulation would.
"""
import math
import sys

import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "grad_accum_captured_eager_tail_batch"
BATCH = 64
ACCUM = 2
DATASET = 10 * BATCH + 40  # ten full batches, then 40 rows
EPOCHS = 3


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 256), torch.nn.Tanh(), torch.nn.Linear(256, 256), torch.nn.Tanh(),
                                torch.nn.Linear(256, 1)).cuda().train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    inputs = torch.randn(DATASET, 32, device="cuda")
    targets = (inputs[:, :4].sum(1, keepdim=True) + 0.1 * torch.randn(DATASET, 1, device="cuda")).contiguous()
    static_x = inputs[:BATCH].clone()
    static_y = targets[:BATCH].clone()
    for p in model.parameters():
        p.grad = torch.zeros_like(p)

    def micro_step():
        loss = F.mse_loss(model(static_x), static_y) / ACCUM
        loss.backward()
        return loss.detach()

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            micro_step()
    torch.cuda.current_stream().wait_stream(side)
    optimizer.zero_grad(set_to_none=False)  # the warmup's gradients out, the tensors kept
    grad_ptrs = [p.grad.data_ptr() for p in model.parameters()]
    oracle.start(model.parameters())
    if oracle.GRAPHS:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_loss = micro_step()

    full = DATASET // BATCH
    for epoch in range(EPOCHS):
        for first in range(0, full, ACCUM):
            torch.cuda.nvtx.range_push("step")
            for b in range(first, first + ACCUM):
                static_x.copy_(inputs[b * BATCH:(b + 1) * BATCH])
                static_y.copy_(targets[b * BATCH:(b + 1) * BATCH])
                if oracle.GRAPHS:
                    graph.replay()
                else:
                    static_loss = micro_step()
            optimizer.step()
            optimizer.zero_grad(set_to_none=False)
            torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("step")  # the tail: another shape, eager
        tail_loss = F.mse_loss(model(inputs[full * BATCH:]), targets[full * BATCH:])
        tail_loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
        torch.cuda.nvtx.range_pop()
        print(f"epoch {epoch}: last full-batch loss {static_loss.item() * ACCUM:.4f} tail loss {tail_loss.item():.4f}",
              flush=True)

    if [p.grad.data_ptr() for p in model.parameters()] != grad_ptrs:
        sys.exit(f"FAIL {NAME}: a .grad tensor was replaced: the graph would accumulate into a dead tensor")
    final = tail_loss.item()
    if not math.isfinite(final):
        sys.exit(f"FAIL {NAME}: tail loss {final}")
    oracle.save(NAME, loss=final, parameters=model.parameters())
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
