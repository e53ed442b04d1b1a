"""A small MLP (with its loss) trained through torch.compile(mode="reduce-overhead"), Adam eager.

Covers: torch.compile's CUDA graphs (cudagraph trees) in training: inductor compiles the forward and the backward,
cudagraph trees run the first call eagerly (warmup), record the forward and backward graphs on the next, and replay
them afterwards. The batch shape is static, so one graph pair serves every step.

Why it is correct: torch.compiler.cudagraph_mark_step_begin() starts each iteration, so the previous step's outputs
(the loss, the gradients that AccumulateGrad took from the backward graph) are known to be dead before the graphs
run again; zero_grad(set_to_none=True) drops the old gradients; the optimizer updates the parameters in place (same
addresses, which cudagraph trees treat as static inputs); no output is kept across steps; the loss is read once,
after the last step.
"""
import math

import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "compile_reduce_overhead_train"
BATCH = 64
STEPS = 30


class MLPWithLoss(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.GELU(), torch.nn.Linear(256, 256),
                                       torch.nn.GELU(), torch.nn.Linear(256, 10))

    def forward(self, x, y):
        return F.cross_entropy(self.net(x), y)


def main():
    torch.manual_seed(0)
    model = MLPWithLoss().cuda().train()
    compiled = torch.compile(model, mode=oracle.compile_mode("reduce-overhead"))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = [(torch.randn(BATCH, 128, device="cuda"), torch.randint(0, 10, (BATCH,), device="cuda"))
               for _ in range(4)]
    oracle.start(model.parameters())

    for step in range(STEPS):
        x, y = batches[step % len(batches)]
        torch.cuda.nvtx.range_push("step")
        torch.compiler.cudagraph_mark_step_begin()
        optimizer.zero_grad(set_to_none=True)
        loss = compiled(x, y)
        loss.backward()
        optimizer.step()
        torch.cuda.nvtx.range_pop()

    torch.cuda.synchronize()
    final = loss.item()  # the last step's output: no run came after it
    print(f"final loss {final:.4f}", flush=True)
    assert math.isfinite(final), final
    oracle.save(NAME, loss=final, parameters=model.parameters())
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
