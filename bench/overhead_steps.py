"""The launch-bound steps of the recorder-overhead benchmark, timed in one process.

usage: overhead_steps.py STEP [--profiler] [--steps N]
  STEP: chain  Linear(1024,1024) then 20 x relu(x*1.0001+0.001), batch 64 (42 kernels)
        mlp    a small MLP training step with Adam
Prints 'us_per_step X' (median of 7 timed blocks of N steps, CUDA-synchronized wall time) and 'max_rss_kb X'."""
import argparse
import resource
import statistics
import time

import torch


def chain_step():
    linear = torch.nn.Linear(1024, 1024).cuda()
    x = torch.randn(64, 1024, device="cuda")

    @torch.no_grad()
    def step():
        y = linear(x)
        for _ in range(20):
            y = torch.relu(y * 1.0001 + 0.001)
        return y
    return step


def mlp_step():
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(64, 256, device="cuda")
    target = torch.randint(0, 10, (64,), device="cuda")

    def step():
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), target).backward()
        optimizer.step()
    return step


def time_blocks(step, steps, blocks=7):
    for _ in range(20):
        step()
    torch.cuda.synchronize()
    per_step = []
    for _ in range(blocks):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        per_step.append((time.perf_counter() - start) / steps * 1e6)
    return statistics.median(per_step)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("step", choices=["chain", "mlp"])
    parser.add_argument("--profiler", action="store_true", help="run under torch.profiler with CUDA activities")
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    torch.manual_seed(0)
    step = chain_step() if args.step == "chain" else mlp_step()
    if args.profiler:
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=activities):
            us = time_blocks(step, args.steps)
    else:
        us = time_blocks(step, args.steps)
    print(f"us_per_step {us:.2f}", flush=True)
    print(f"max_rss_kb {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}", flush=True)


if __name__ == "__main__":
    main()
