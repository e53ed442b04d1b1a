"""A residual MLP with stochastic depth trained through a whole-step capture, each block's keep decision drawn on the
GPU inside the graph.

Covers: the clean twin of rng-host-draw: a decision drawn with random.random() would be baked into the graph; drawn
with torch.rand on the CUDA generator, each replay draws afresh (a capture registers the generator's offsets).

Why it is correct: the graph reads the CUDA generator's seed and offset at each replay, so every step drops a new set
of blocks, the very blocks eager drops from the same generator state (the oracle compares the training with
eager's draw for draw).
"""
import math

import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "whole_step_gpu_stochastic_depth"
BATCH = 64
STEPS = 20


class Residual(torch.nn.Module):
    def __init__(self, p=0.3):
        super().__init__()
        self.block = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU())
        self.p = p

    def forward(self, x):
        if not self.training:
            return x + self.block(x)
        keep = (torch.rand((), device=x.device) >= self.p).to(x.dtype) / (1 - self.p)
        return x + keep * self.block(x)


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(128, 256), *[Residual() for _ in range(4)],
                                torch.nn.Linear(256, 10)).cuda().train()
    optimizer = torch.optim.Adam(model.parameters(), lr=torch.tensor(1e-3, device="cuda"), capturable=True)
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
        static_x.copy_(x)
        static_y.copy_(y)
        if oracle.GRAPHS:
            graph.replay()
        else:
            static_loss = train_step()
        torch.cuda.nvtx.range_pop()

    torch.cuda.synchronize()
    final = static_loss.item()
    print(f"final loss {final:.4f}", flush=True)
    assert math.isfinite(final), final
    oracle.save(NAME, loss=final, parameters=model.parameters())
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
