"""The launch-bound steps of the recorder-overhead benchmark, timed in one process.

usage: overhead_steps.py STEP [--profiler] [--seconds S]
  STEP: chain  Linear(1024,1024) then 20 x relu(x*1.0001+0.001), batch 64 (63 kernels and a memset)
        mlp    a small MLP training step with Adam
Runs the step for S seconds after 20 warm-up steps, in CUDA-synchronized blocks of about 0.25 s, and prints
'us_per_step X' (all timed steps: a sampling recorder's windows are averaged in), 'us_per_step_steady X' (the blocks
that start after the first 2 s of timed steps: a recorder's first window is over by then), 'us_per_step_slowest_block
X' (a block inside a recording window, for a sampling recorder) and 'max_rss_kb X'. Over the steady blocks it also
prints the CPU time per step of the process's other threads and of its parent, as bench/thread_counters.h does for the
C++ step."""
import argparse
import os
import resource
import threading
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


def run_nanos(pid, skip_tid=None):
    """Nanoseconds the threads of `pid` have run on a CPU, without `skip_tid`; None when unreadable."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            if tid != str(skip_tid):
                with open(f"/proc/{pid}/task/{tid}/schedstat") as stat:
                    total += int(stat.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total


def beside_cpu():
    """(ns run by this process's other threads, ns run by its parent)."""
    return run_nanos(os.getpid(), threading.get_native_id()), run_nanos(os.getppid())


def time_blocks(step, seconds, block_seconds=0.25):
    """Returns {figure: value}: the mean us per step over all timed steps and of the slowest block; over the blocks
    that start after SETTLE_SECONDS of timed steps (absent when there are none), the mean us per step and the us per
    step the process's other threads and its parent ran."""
    for _ in range(20):
        step()
    torch.cuda.synchronize()
    block_steps = 50
    total_steps, total_s, steady_steps, steady_s, slowest = 0, 0.0, 0, 0.0, 0.0
    steady_start = None
    while total_s < seconds:
        if steady_start is None and total_s >= SETTLE_SECONDS:
            steady_start = beside_cpu()
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
    figures = {"us_per_step": total_s / total_steps * 1e6, "us_per_step_slowest_block": slowest}
    if steady_steps:
        figures["us_per_step_steady"] = steady_s / steady_steps * 1e6
        names = ("other_threads_cpu_us_per_step_steady", "parent_cpu_us_per_step_steady")
        for name, begin, end in zip(names, steady_start, beside_cpu()):
            if begin is not None and end is not None:
                figures[name] = (end - begin) / 1e3 / steady_steps
    return figures


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
            figures = time_blocks(step, args.seconds)
    else:
        figures = time_blocks(step, args.seconds)
    for name, value in figures.items():
        print(f"{name} {value:.2f}", flush=True)
    print(f"max_rss_kb {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}", flush=True)


if __name__ == "__main__":
    main()
