"""A small MLP whose whole training step is captured with torch.cuda.graph, with a learning-rate schedule that the
replays follow.

Covers: Adam(capturable=True) with the learning rate given as a 0-dim CUDA tensor, and
torch.optim.lr_scheduler.StepLR(step_size=5, gamma=0.5) stepped between replays. Because the lr is a tensor, the
scheduler writes the new value into it in place (`param_group["lr"].fill_(...)`), and the captured Adam kernels read
it from device memory at every replay: the schedule takes effect although the optimizer step is inside the graph.
(With a float lr the graph would keep the value it had at capture: that is the defect this program avoids.)

Why it is correct: the documented whole-step recipe (side-stream warmup, grads set to None before capture, static
tensors refilled with copy_); the scheduler is created before the warmup, so its wrapped optimizer.step() has run by
the time the first scheduler.step() comes; the program checks at the end that the lr followed the schedule.
"""
import math

import torch

import _oracle as oracle

NAME = "whole_step_tensor_lr_scheduler"
BATCH = 64
STEPS = 30


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(128, 512), torch.nn.GELU(), torch.nn.Linear(512, 512),
                                torch.nn.GELU(), torch.nn.Linear(512, 10)).cuda()
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=torch.tensor(0.01, device="cuda"), capturable=True)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
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
            optimizer.step()
            torch.cuda.nvtx.range_pop()
    torch.cuda.current_stream().wait_stream(s)
    # The last warmup loss keeps the warmup's autograd graph alive, and with it the AccumulateGrad nodes made on the
    # side stream: dropping it lets the capture make its own (else PyTorch warns of a stream mismatch).
    del warm_loss

    def train_step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(static_x), static_y)
        loss.backward()
        optimizer.step()
        return loss

    oracle.start(model.parameters())
    if oracle.GRAPHS:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_loss = train_step()

    for step in range(STEPS):
        x, y = batches[step % len(batches)]
        torch.cuda.nvtx.range_push("step")
        static_x.copy_(x)
        static_y.copy_(y)
        if oracle.GRAPHS:
            g.replay()
        else:
            static_loss = train_step()
        scheduler.step()  # updates the lr tensor in place: the next replay uses the new value
        torch.cuda.nvtx.range_pop()

    torch.cuda.synchronize()
    final = static_loss.item()
    lr = float(optimizer.param_groups[0]["lr"])
    expected = 0.01 * 0.5 ** (STEPS // 5)
    print(f"final loss {final:.4f} lr {lr:.6g} (expected {expected:.6g})", flush=True)
    assert math.isfinite(final), final
    assert abs(lr - expected) <= 1e-6 * expected, (lr, expected)
    oracle.save(NAME, loss=final, parameters=model.parameters())
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
