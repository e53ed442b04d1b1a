"""A launch-bound eager step: Linear(1024, 1024) then 20 x relu(x * 1.0001 + 0.001), batch 64 (63 kernels per step).
Each step is an NVTX range "step", so graphcheck can cut iterations and forecast what a CUDA graph would save."""
import sys

import torch
import torch.cuda.nvtx as nvtx

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
torch.manual_seed(0)
linear = torch.nn.Linear(1024, 1024).cuda()
x = torch.randn(64, 1024, device="cuda")


@torch.no_grad()
def step(x):
    y = linear(x)
    for _ in range(20):
        y = torch.relu(y * 1.0001 + 0.001)
    return y


for _ in range(5):
    step(x)
torch.cuda.synchronize()
for _ in range(steps):
    nvtx.range_push("step")
    step(x)
    nvtx.range_pop()
torch.cuda.synchronize()
