"""Recorder overhead on launch-bound steps, side by side in one run.

Each sample is one process running its step for --seconds (bench/overhead_steps.py for the Python steps,
build/bench/overhead_chain for the C++ one): unrecorded ("none"), under `graphcheck run` in its default (sampled
launches: the first window only; "no-probe": the same without the Python probe), with --launches all, with
--capture-only, under torch.profiler with CUDA activities
(Python steps only), unrecorded again ("again": a second unrecorded process, the A/A control that shows how much
identical processes differ), or, for cpp-chain only, a CUPTI set-up of the recorder's without the recorder
("cupti:MODE", build/bench/cupti_switch_costs MODE: cupti:idle is subscribed with nothing enabled; see that file).
Every round runs each variant once, in a shuffled order, and each variant's ratio is taken to the unrecorded process
of the same round; a table gives the median over rounds and the range.

Two figures per process, one table each: the mean over all timed steps ("whole run": the first window's one-time cost
is averaged into it, so it shrinks as runs get longer) and over the steps after the first 2 s ("steady": what the
recorder costs per step once its first window is over).

Run on a GPU machine after `source scripts/gpu-env.sh`:
  python3 bench/recorder_overhead.py --rounds 8 --seconds 6 --variants none,sampled,capture,again --save run.json
Prints Markdown tables and the raw samples. `--load A.json B.json` prints the tables over the rounds of earlier runs
(anywhere, no GPU needed).

Besides the wall clock, the steps print the CPU time per step of their other threads and of their parent
(bench/thread_counters.h): wall time between identical processes differed by up to 30% on the lent machines, and these
figures show the work a recorder adds off the launching thread through that noise."""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("GRAPHCHECK_BUILD_DIR", os.path.join(ROOT, "build"))
GRAPHCHECK_FLAGS = {"sampled": [], "all": ["--launches", "all"], "capture": ["--capture-only"],
                    "no-probe": ["--no-python-probe"], "all-no-probe": ["--launches", "all", "--no-python-probe"]}
VARIANT_TITLES = {"sampled": "graphcheck (default)", "all": "--launches all", "capture": "--capture-only",
                  "no-probe": "default without the Python probe",
                  "all-no-probe": "--launches all without the Python probe", "profiler": "torch.profiler",
                  "again": "unrecorded again (A/A)"}


def title(variant):
    return VARIANT_TITLES.get(variant, variant)


def measured_for(step, variant):
    """torch.profiler runs the Python steps only, cupti_switch_costs the C++ one."""
    return variant != "profiler" if step == "cpp-chain" else not variant.startswith("cupti:")


def step_command(step, seconds, variant):
    if step == "cpp-chain":
        if variant.startswith("cupti:"):
            return [os.path.join(BUILD, "bench", "cupti_switch_costs"), variant.removeprefix("cupti:"), str(seconds)]
        return [os.path.join(BUILD, "bench", "overhead_chain"), str(seconds)]
    command = [sys.executable, os.path.join(ROOT, "bench", "overhead_steps.py"), step.removeprefix("py-"),
               "--seconds", str(seconds)]
    return command + (["--profiler"] if variant == "profiler" else [])


def variant_command(step, variant, args):
    command = step_command(step, args.seconds, variant)
    if variant in GRAPHCHECK_FLAGS:
        report = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
        command = [os.path.join(BUILD, "graphcheck"), "run", *GRAPHCHECK_FLAGS[variant], "--fail-on", "never",
                   "--format", "json", "-o", report, "--", *command]
    if args.pin:
        command = ["taskset", "-c", args.pin] + command
    if args.no_aslr:
        command = ["setarch", os.uname().machine, "-R"] + command
    return command


FIGURES = {"us_per_step": "whole run", "us_per_step_steady": "steady (after the first 2 s)",
           "other_threads_cpu_us_per_step_steady": "steady, CPU us per step of the process's other threads",
           "parent_cpu_us_per_step_steady": "steady, CPU us per step of the parent (graphcheck run or this script)"}
# Figures near zero, shown as differences to the unrecorded process rather than ratios.
DIFFERENCE_FIGURES = {"other_threads_cpu_us_per_step_steady", "parent_cpu_us_per_step_steady"}


def measure(command):
    """{figure: us per step} of one process (FIGURES it printed; empty when none)."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    out = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env).stdout
    return {fields[0]: float(fields[1]) for fields in (line.split() for line in out.splitlines())
            if len(fields) == 2 and fields[0] in FIGURES}


def run_rounds(steps, variants, args):
    """(step, variant) -> [{figure: us per step} per round]; saved after every round when --save is given."""
    shuffle = random.Random(args.seed)
    samples = {}
    for _ in range(args.rounds):
        for step in steps:
            order = ["none"] + [v for v in variants if measured_for(step, v)]
            shuffle.shuffle(order)
            for variant in order:
                samples.setdefault((step, variant), []).append(measure(variant_command(step, variant, args)))
        if args.save:
            with open(args.save, "w") as out:
                json.dump({"seconds": args.seconds, "samples": {" ".join(k): v for k, v in samples.items()}}, out)
    return samples


def saved_figures(sample):
    """{figure: us per step} of a saved sample. Runs saved before the steady figure existed hold a plain number (the
    whole-run figure), or None for a process that printed none."""
    if isinstance(sample, dict):
        return sample
    return {} if sample is None else {"us_per_step": sample}


def load_runs(paths):
    """The samples of saved runs, round after round; a variant a run did not measure has empty samples there."""
    runs = []
    for path in paths:
        with open(path) as saved:
            runs.append({tuple(key.split(" ")): [saved_figures(v) for v in values]
                         for key, values in json.load(saved)["samples"].items()})
    keys = {key for run in runs for key in run}
    samples = {key: [] for key in keys}
    for run in runs:
        for key in keys:
            rounds = len(run.get((key[0], "none"), []))
            samples[key].extend(run.get(key, [{}] * rounds))
    return samples


def compare(figure, values, bases):
    """Round by round, each value against the base of its round: the ratio, or for DIFFERENCE_FIGURES the
    difference; rounds where either is missing are left out."""
    rounds = [(v, b) for v, b in zip(values, bases) if v is not None and b is not None]
    if figure in DIFFERENCE_FIGURES:
        return [v - b for v, b in rounds]
    return [v / b for v, b in rounds if b > 0]


def fmt_range(changes, digits):
    """'median [lowest, highest]', or '-' for none."""
    if not changes:
        return "-"
    return f"{statistics.median(changes):.{digits}f} [{min(changes):.{digits}f}, {max(changes):.{digits}f}]"


def print_table(steps, variants, samples, figure):
    print(f"\n{FIGURES[figure]}:\n")
    change = "difference" if figure in DIFFERENCE_FIGURES else "ratio"
    print("| step | none | " + " | ".join(f"{title(v)} | {change}" for v in variants) + " |")
    print("|---|---|" + "---|---|" * len(variants))
    for step in steps:
        none = [sample.get(figure) for sample in samples.get((step, "none"), [])]
        row = [step, fmt_median(none)]
        for variant in variants:
            values = [sample.get(figure) for sample in samples.get((step, variant), [])]
            row += [fmt_median(values), fmt_range(compare(figure, values, none), 3)]
        print("| " + " | ".join(row) + " |")


def print_pairs(step, pairs, samples):
    """Each pair's variant against its base, process by process within each round: this takes out the drift of the
    unrecorded processes, which the ratios of print_table carry."""
    print(f"\n{step}, paired within each round (variant against base: median [lowest, highest]):\n")
    print("| variant / base | " + " | ".join(FIGURES[f] for f in FIGURES) + " |")
    print("|---|" + "---|" * len(FIGURES))
    for variant, base in pairs:
        cells = []
        for figure in FIGURES:
            values = [sample.get(figure) for sample in samples.get((step, variant), [])]
            bases = [sample.get(figure) for sample in samples.get((step, base), [])]
            cells.append(fmt_range(compare(figure, values, bases), 4))
        print(f"| {title(variant)} / {title(base)} | " + " | ".join(cells) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="py-chain,py-mlp,cpp-chain")
    parser.add_argument("--variants", default="none,sampled,all,capture,profiler")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10, help="how long each process runs its step")
    parser.add_argument("--pin", help="a taskset CPU list every process runs on")
    parser.add_argument("--no-aslr", action="store_true", help="run every process with address randomization off")
    parser.add_argument("--seed", type=int, default=0, help="seed of the per-round shuffle")
    parser.add_argument("--save", help="write the samples to this JSON file")
    parser.add_argument("--load", nargs="+", help="report over the samples of these saved runs instead of measuring")
    parser.add_argument("--pairs", default="",
                        help="VARIANT=BASE,...: also compare each VARIANT with BASE within each round (for example "
                             "sampled=cupti:closed-window, the default after its window against CUPTI's floor)")
    args = parser.parse_args()
    pairs = [tuple(pair.split("=", 1)) for pair in args.pairs.split(",") if pair]
    if any(len(pair) != 2 for pair in pairs):
        parser.error("--pairs: VARIANT=BASE,...")
    steps = args.steps.split(",")
    variants = [v for v in args.variants.split(",") if v != "none"]
    if args.load:
        samples = load_runs(args.load)
        print(f"Rounds of {', '.join(args.load)}.\n")
    else:
        samples = run_rounds(steps, variants, args)
        print(f"Each process ran its step for {args.seconds:g} s{' on CPUs ' + args.pin if args.pin else ''}"
              f"{', address randomization off' if args.no_aslr else ''}; {args.rounds} rounds.\n")
    print("Variants shuffled per round. Figures per step: median over rounds; ratio: median over rounds of the ratio "
          "to the unrecorded process of the same round [lowest, highest] (for CPU us beside the launching thread: the "
          "difference).")
    for figure in FIGURES:
        if any(figure in sample for values in samples.values() for sample in values):
            print_table(steps, variants, samples, figure)
    if pairs:
        for step in steps:
            print_pairs(step, pairs, samples)
    print("\nraw samples (per round, " + " / ".join(FIGURES) + "):")
    for (step, variant), values in sorted(samples.items()):
        print(f"  {step} {variant}: " + " ".join("/".join(fmt(v.get(f)) for f in FIGURES) for v in values))


def fmt(value):
    return "-" if value is None else f"{value:.2f}"


def fmt_median(values):
    values = [v for v in values if v is not None]
    return f"{statistics.median(values):.2f}" if values else "-"


if __name__ == "__main__":
    main()
