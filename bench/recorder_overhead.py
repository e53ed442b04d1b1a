"""Recorder overhead on launch-bound steps, side by side in one run.

Each sample is one process running its step for --seconds (bench/overhead_steps.py for the Python steps,
build/bench/overhead_chain for the C++ one): unrecorded ("none"), under `graphcheck run` in its default (sampled
launches: the first window only), with --launches all, with --capture-only, under torch.profiler with CUDA activities
(Python steps only), or unrecorded again ("again": a second unrecorded process, the A/A control that shows how much
identical processes differ). Every round runs each variant once, in a shuffled order, and each variant's ratio is
taken to the unrecorded process of the same round; the table gives the median over rounds and the range.

Run on a GPU machine after `source scripts/gpu-env.sh`:
  python3 bench/recorder_overhead.py --rounds 8 --seconds 6 --variants none,sampled,capture,again
Prints a Markdown table and the raw samples."""
import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("GRAPHCHECK_BUILD_DIR", os.path.join(ROOT, "build"))
GRAPHCHECK_FLAGS = {"sampled": [], "all": ["--launches", "all"], "capture": ["--capture-only"]}
VARIANT_TITLES = {"sampled": "graphcheck (default)", "all": "--launches all", "capture": "--capture-only",
                  "profiler": "torch.profiler", "again": "unrecorded again (A/A)"}


def step_command(step, seconds, profiler):
    if step == "cpp-chain":
        return [os.path.join(BUILD, "bench", "overhead_chain"), str(seconds)]
    command = [sys.executable, os.path.join(ROOT, "bench", "overhead_steps.py"), step.removeprefix("py-"),
               "--seconds", str(seconds)]
    return command + (["--profiler"] if profiler else [])


def variant_command(step, variant, args):
    command = step_command(step, args.seconds, variant == "profiler")
    if variant in GRAPHCHECK_FLAGS:
        report = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
        command = [os.path.join(BUILD, "graphcheck"), "run", *GRAPHCHECK_FLAGS[variant], "--fail-on", "never",
                   "--format", "json", "-o", report, "--", *command]
    if args.pin:
        command = ["taskset", "-c", args.pin] + command
    if args.no_aslr:
        command = ["setarch", os.uname().machine, "-R"] + command
    return command


def measure(command):
    """Mean us per step of one process, or None when it printed none."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    out = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env).stdout
    values = [float(line.split()[1]) for line in out.splitlines() if line.startswith("us_per_step ")]
    return values[-1] if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="py-chain,py-mlp,cpp-chain")
    parser.add_argument("--variants", default="none,sampled,all,capture,profiler")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10, help="how long each process runs its step")
    parser.add_argument("--pin", help="a taskset CPU list every process runs on")
    parser.add_argument("--no-aslr", action="store_true", help="run every process with address randomization off")
    parser.add_argument("--seed", type=int, default=0, help="seed of the per-round shuffle")
    args = parser.parse_args()
    steps = args.steps.split(",")
    variants = [v for v in args.variants.split(",") if v != "none"]
    shuffle = random.Random(args.seed)
    samples = {}  # (step, variant) -> [us per step per round]
    for _ in range(args.rounds):
        for step in steps:
            order = ["none"] + [v for v in variants if not (v == "profiler" and step == "cpp-chain")]
            shuffle.shuffle(order)
            for variant in order:
                samples.setdefault((step, variant), []).append(measure(variant_command(step, variant, args)))

    print(f"Each process ran its step for {args.seconds:g} s{' on CPUs ' + args.pin if args.pin else ''}"
          f"{', address randomization off' if args.no_aslr else ''}; {args.rounds} rounds, variants shuffled per "
          "round. us per step: median over rounds; ratio: median over rounds of the ratio to the unrecorded process "
          "of the same round [lowest, highest].\n")
    print("| step | none | " + " | ".join(f"{VARIANT_TITLES[v]} | ratio" for v in variants) + " |")
    print("|---|---|" + "---|---|" * len(variants))
    for step in steps:
        none = samples[(step, "none")]
        row = [step, fmt_median(none)]
        for variant in variants:
            values = samples.get((step, variant))
            if values is None:
                row += ["-", "-"]
                continue
            ratios = [v / n for v, n in zip(values, none) if v is not None and n is not None]
            row += [fmt_median(values), f"{statistics.median(ratios):.3f} [{min(ratios):.3f}, {max(ratios):.3f}]"
                    if ratios else "-"]
        print("| " + " | ".join(row) + " |")
    print("\nraw samples (mean us/step per round):")
    for (step, variant), values in sorted(samples.items()):
        print(f"  {step} {variant}: " + " ".join("-" if v is None else f"{v:.2f}" for v in values))


def fmt_median(values):
    values = [v for v in values if v is not None]
    return f"{statistics.median(values):.2f}" if values else "-"


if __name__ == "__main__":
    main()
