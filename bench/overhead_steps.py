"""The launch-bound steps of the recorder-overhead benchmark, timed in one process.

usage: overhead_steps.py STEP [--profiler] [--seconds S]
  STEP: chain  Linear(1024,1024) then 20 x relu(x*1.0001+0.001), batch 64 (42 kernels)
        mlp    a small MLP training step with Adam
Runs the step for S seconds after 20 warm-up steps, in CUDA-synchronized blocks of about 0.25 s, and prints
'us_per_step X' (all timed steps: a sampling recorder's windows are averaged in), 'us_per_step_steady X' (the blocks
that start after the first 2 s of timed steps: a recorder's first window is over by then), 'us_per_step_slowest_block
X' (a block inside a recording window, for a sampling recorder) and 'max_rss_kb X'."""
import argparse
import resource
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


SETTLE_SECONDS = 2  # bench/chain_step.h's kSettleSeconds


def time_blocks(step, seconds, block_seconds=0.25):
    """Returns the mean us per step over all timed steps, over the blocks that start after SETTLE_SECONDS of timed
    steps (None when there are none), and of the slowest block."""
    for _ in range(20):
        step()
    torch.cuda.synchronize()
    block_steps = 50
    total_steps, total_s, steady_steps, steady_s, slowest = 0, 0.0, 0, 0.0, 0.0
    while total_s < seconds:
        start = time.perf_counter()
        for _ in range(block_steps):
            step()
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        if total_s >= SETTLE_SECONDS:
            steady_steps += block_steps
            steady_s += elapsed
        total_steps += block_steps
        total_s += elapsed
        slowest = max(slowest, elapsed / block_steps * 1e6)
        block_steps = max(1, int(block_steps * block_seconds / max(elapsed, 1e-6)))
    steady = steady_s / steady_steps * 1e6 if steady_steps else None
    return total_s / total_steps * 1e6, steady, slowest


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("step", choices=["chain", "mlp"])
    parser.add_argument("--profiler", action="store_true", help="run under torch.profiler with CUDA activities")
    parser.add_argument("--seconds", type=float, default=20)
    args = parser.parse_args()
    torch.manual_seed(0)
    step = chain_step() if args.step == "chain" else mlp_step()
    if args.profiler:
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=activities):
            us, steady, slowest = time_blocks(step, args.seconds)
    else:
        us, steady, slowest = time_blocks(step, args.seconds)
    print(f"us_per_step {us:.2f}", flush=True)
    if steady is not None:
        print(f"us_per_step_steady {steady:.2f}", flush=True)
    print(f"us_per_step_slowest_block {slowest:.2f}", flush=True)
    print(f"max_rss_kb {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}", flush=True)


if __name__ == "__main__":
    main()
