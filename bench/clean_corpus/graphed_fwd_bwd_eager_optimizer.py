"""A small MLP whose forward, loss and backward are captured with torch.cuda.graph, while the optimizer (plain SGD with
momentum) steps eagerly after each replay.

Covers: partial capture of a training step. The grads are set to None right before the capture, so the captured
backward allocates the .grad tensors from the graph's pool and every replay writes fresh gradients into those same
tensors. Between replays the program calls optimizer.zero_grad(set_to_none=False), which zeroes the .grad tensors in
place and keeps them (set_to_none=True here would drop the tensors the graph writes into, and the optimizer would
stop seeing gradients).

Why it is correct: side-stream warmup before capture; static input/target refilled with copy_; the eager optimizer
reads the .grad tensors the graph wrote, after the replay, on the same stream; no synchronization in the loop.
"""
import math

import torch

import _oracle as oracle

NAME = "graphed_fwd_bwd_eager_optimizer"
BATCH = 64
STEPS = 30


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(128, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    batches = [(torch.randn(BATCH, 128, device="cuda"), torch.randint(0, 10, (BATCH,), device="cuda"))
               for _ in range(4)]

    static_x = torch.empty(BATCH, 128, device="cuda")
    static_y = torch.empty(BATCH, dtype=torch.long, device="cuda")
    static_x.copy_(batches[0][0])
    static_y.copy_(batches[0][1])

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            torch.cuda.nvtx.range_push("step")
            optimizer.zero_grad(set_to_none=True)
            warm_loss = loss_fn(model(static_x), static_y)
            warm_loss.backward()
            torch.cuda.nvtx.range_pop()
    torch.cuda.current_stream().wait_stream(s)
    # The last warmup loss keeps the warmup's autograd graph alive, and with it the AccumulateGrad nodes made on the
    # side stream: dropping it lets the capture make its own (else PyTorch warns of a stream mismatch).
    del warm_loss

    def forward_backward():
        loss = loss_fn(model(static_x), static_y)
        loss.backward()
        return loss

    oracle.start(model.parameters())
    optimizer.zero_grad(set_to_none=True)  # backward allocates the .grad tensors inside the graph
    if oracle.GRAPHS:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_loss = forward_backward()

    for step in range(STEPS):
        x, y = batches[step % len(batches)]
        torch.cuda.nvtx.range_push("step")
        static_x.copy_(x)
        static_y.copy_(y)
        if oracle.GRAPHS:
            g.replay()  # writes this batch's gradients into the .grad tensors
        else:
            static_loss = forward_backward()  # into the gradients zeroed in place, as the replay writes them
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)  # zero in place: keep the tensors the graph writes into
        torch.cuda.nvtx.range_pop()

    torch.cuda.synchronize()
    final = static_loss.item()
    print(f"final loss {final:.4f}", flush=True)
    assert math.isfinite(final), final
    assert all(p.grad is not None for p in model.parameters())
    oracle.save(NAME, loss=final, parameters=model.parameters())
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
