"""A whole training step captured with torch.cuda.graph whose loss divides the logits by a temperature the program
anneals between replays, kept in a buffer filled in place; the learning rate is a CUDA tensor too.

Covers: the clean twin of host-value-frozen for a module attribute: a Python float temperature read by forward would
be baked into the graph; a buffer updated with fill_() is read at each replay. Adam(capturable=True) with a tensor lr
and a manual decay (mul_) the same way.

Why it is correct: every value the program changes after capture lives in a CUDA tensor updated in place, so every
replay reads the current one (the oracle compares the training with eager's).
"""
import math

import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "whole_step_temperature_buffer"
BATCH = 64
STEPS = 20


class Tempered(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.GELU(), torch.nn.Linear(256, 10))
        self.register_buffer("temperature", torch.ones(()))

    def forward(self, x):
        return self.net(x) / self.temperature


def main():
    torch.manual_seed(0)
    model = Tempered().cuda()
    lr = torch.tensor(3e-3, device="cuda")
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, capturable=True)
    batches = [(torch.randn(BATCH, 128, device="cuda"), torch.randint(0, 10, (BATCH,), device="cuda"))
               for _ in range(4)]
    static_x = torch.zeros(BATCH, 128, device="cuda")
    static_y = torch.zeros(BATCH, dtype=torch.long, device="cuda")
    static_x.copy_(batches[0][0])
    static_y.copy_(batches[0][1])

    def train_step():
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(static_x), static_y)
        loss.backward()
        optimizer.step()
        return loss

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            torch.cuda.nvtx.range_push("step")
            warm = train_step()
            torch.cuda.nvtx.range_pop()
    torch.cuda.current_stream().wait_stream(side)
    del warm
    oracle.start(model.parameters())
    if oracle.GRAPHS:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_loss = train_step()

    for step in range(STEPS):
        x, y = batches[step % len(batches)]
        torch.cuda.nvtx.range_push("step")
        model.temperature.fill_(1.0 + step / STEPS)  # annealed in place: the next replay reads it
        lr.mul_(0.95)
        static_x.copy_(x)
        static_y.copy_(y)
        if oracle.GRAPHS:
            graph.replay()
        else:
            static_loss = train_step()
        torch.cuda.nvtx.range_pop()

    torch.cuda.synchronize()
    final = static_loss.item()
    print(f"final loss {final:.4f} temperature {model.temperature.item():.3f} lr {lr.item():.3g}", flush=True)
    assert math.isfinite(final), final
    oracle.save(NAME, loss=final, parameters=model.parameters())
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
