"""How close graphcheck's CUDA-graph forecast comes to what graphing really saves, over eager/graphed program pairs.

For each pair (PAIRS below: launch-bound inference and training steps, a transformer block, a convnet, a GPU-bound
step), every round runs two processes of this file's --child mode: the program unrecorded, and the program under
`graphcheck run --region step`, whose JSON report gives the forecast (launch.* metrics, the launch-bound finding).
Each process runs the eager step and then the graphed step (the whole step captured once with torch.cuda.graph, then
replayed): 20 untimed warm-up steps, then --steps steps each inside an NVTX range "step", timed with CUDA events. The
forecast is judged against the saving measured in its own process (host speed varies between processes on the GPU
machine by more than the forecast's error); the unrecorded process shows what the recorder and that variation do.

Run on a GPU machine after `source scripts/gpu-env.sh` (the graphcheck build: GRAPHCHECK_BUILD_DIR, else build/):
  python3 bench/forecast_accuracy.py --rounds 3 --save run.json
Prints Markdown tables and the raw samples. `--load A.json B.json` prints the tables over the rounds of earlier runs
(anywhere, no GPU or torch needed)."""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("GRAPHCHECK_BUILD_DIR", os.path.join(ROOT, "build"))
THIS_FILE = os.path.abspath(__file__)

WARMUP_STEPS = 20
DEFAULT_STEPS = 300
# Steps per process when --steps is not given: the GPU-bound pair takes tens of ms per step.
PAIR_STEPS = {"gpu-bound": 50}
CHILD_TIMEOUT_S = 120
STDERR_TAIL_LINES = 20

# The report's metrics this benchmark reads (analysis/launch_metrics.cc); any may be missing.
METRICS = ["launch.iteration_us", "launch.forecast_graphed_us", "launch.forecast_savings_us",
           "launch.forecast_savings_ratio", "launch.unperturbed_iterations", "launch.recorded_iteration_us",
           "launch.recorder_perturbation_ratio", "launch.gpu_busy_us", "launch.kernels_per_iteration"]
COUNTS = {"launch.unperturbed_iterations", "launch.kernels_per_iteration"}


# ---------------------------------------------------------------------------------------------------------------------
# The child: one program variant in its own process (imports torch; the parent never does).

def inference_step(torch, forward, x, variant):
    """forward(x) under no_grad; graphed: a static input, 3 warm-up calls on a side stream, one capture, replays."""
    if variant == "eager":
        def eager():
            with torch.no_grad():
                return forward(x)
        return eager
    static_in = x.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):
            forward(static_in)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        static_out = forward(static_in)

    def graphed():
        graph.replay()
        return static_out
    return graphed


def training_step(torch, optimizer, loss_of, inputs, variant):
    """One whole training iteration: zero_grad(set_to_none=False), loss_of(*inputs), backward, optimizer step.
    Graphed (the whole-network recipe of PyTorch's CUDA-graph docs): 11 warm-up iterations on a side stream, the
    iteration captured once on static inputs; each step copies the inputs into the static ones and replays."""
    def iteration(*tensors):
        optimizer.zero_grad(set_to_none=False)
        loss = loss_of(*tensors)
        loss.backward()
        optimizer.step()
        return loss
    if variant == "eager":
        return lambda: iteration(*inputs)
    static_inputs = [t.clone() for t in inputs]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(11):
            iteration(*static_inputs)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = iteration(*static_inputs)

    def graphed():
        for static, data in zip(static_inputs, inputs):
            static.copy_(data)
        graph.replay()
        return static_loss
    return graphed


def build_mlp_infer(torch, variant):
    layers = []
    for _ in range(12):
        layers += [torch.nn.Linear(128, 128), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).cuda().eval()
    x = torch.randn(16, 128, device="cuda")
    return inference_step(torch, model, x, variant)


def build_mlp_train(torch, variant):
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, capturable=True)
    x = torch.randn(64, 256, device="cuda")
    target = torch.randint(0, 10, (64,), device="cuda")
    return training_step(torch, optimizer, lambda x, t: torch.nn.functional.cross_entropy(model(x), t), [x, target],
                         variant)


def build_transformer_block(torch, variant):
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, dropout=0.0,
                                             batch_first=True).cuda()
    optimizer = torch.optim.SGD(layer.parameters(), lr=1e-3)
    x = torch.randn(8, 64, 256, device="cuda")
    return training_step(torch, optimizer, lambda x: layer(x).square().mean(), [x], variant)


def build_convnet(torch, variant):
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                          nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(32, 3, 32, 32, device="cuda")
    target = torch.randint(0, 10, (32,), device="cuda")
    return training_step(torch, optimizer, lambda x, t: torch.nn.functional.cross_entropy(model(x), t), [x, target],
                         variant)


def build_gpu_bound(torch, variant):
    torch.backends.cuda.matmul.allow_tf32 = False  # full FP32 GEMMs: tens of ms per step
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(8192, 8192, device="cuda"), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).eval()
    x = torch.randn(4096, 8192, device="cuda")
    return inference_step(torch, model, x, variant)


PAIRS = {
    "mlp-infer": build_mlp_infer,
    "mlp-train": build_mlp_train,
    "transformer-block": build_transformer_block,
    "convnet": build_convnet,
    "gpu-bound": build_gpu_bound,
}
VARIANTS = ("eager", "graphed", "both")


def time_steps(torch, step, steps):
    """WARMUP_STEPS untimed calls, then `steps` calls each in an NVTX range "step"; us per step by CUDA events."""
    import torch.cuda.nvtx as nvtx
    for _ in range(WARMUP_STEPS):
        step()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(steps):
        nvtx.range_push("step")
        step()
        nvtx.range_pop()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / steps


def run_child(pair, variant, steps):
    """Prints 'us_per_step X' (eager or graphed), or for 'both' the eager steps then the graphed steps of the same
    program in this one process: 'us_per_step_eager X' and 'us_per_step_graphed Y'. One process measures both
    because host speed differs from process to process on the GPU machine by far more than the forecast's error
    (H100, 2026-11-25: the same eager MLP step at 1305, 1683 and 1958 us in three processes)."""
    import torch
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    print(f"gpu {torch.cuda.get_device_name()}", flush=True)
    print(f"torch {torch.__version__}", flush=True)
    if variant != "both":
        print(f"us_per_step {time_steps(torch, PAIRS[pair](torch, variant), steps):.3f}", flush=True)
        return
    eager = time_steps(torch, PAIRS[pair](torch, "eager"), steps)
    graphed = time_steps(torch, PAIRS[pair](torch, "graphed"), steps)
    print(f"us_per_step_eager {eager:.3f}", flush=True)
    print(f"us_per_step_graphed {graphed:.3f}", flush=True)


# ---------------------------------------------------------------------------------------------------------------------
# The parent: runs the children, reads graphcheck's reports, prints the tables.

def child_command(pair, variant, steps):
    return [sys.executable, THIS_FILE, "--child", pair, variant, "--steps", str(steps)]


def run_process(command, timeout):
    """(returncode or None when it did not finish, stdout, stderr, seconds). The command runs in its own session so
    that a timeout ends it with everything it started (graphcheck's program included)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONHASHSEED="0")
    started = time.monotonic()
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                   start_new_session=True)
    except OSError as error:
        return None, "", f"cannot start {command[0]}: {error}", 0.0
    try:
        out, err = process.communicate(timeout=timeout)
        return process.returncode, out, err, time.monotonic() - started
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
        out, err = process.communicate()
        return None, out or "", (err or "") + f"\n(timed out after {timeout} s)", time.monotonic() - started


def parse_child_output(out):
    """{'gpu': str, 'torch': str, 'us_per_step': float} from what a child printed (keys it did not print left out)."""
    found = {}
    for line in out.splitlines():
        fields = line.strip().split(" ", 1)
        if len(fields) != 2:
            continue
        key, value = fields
        if key in ("gpu", "torch"):
            found.setdefault(key, value.strip())
        elif key in ("us_per_step", "us_per_step_eager", "us_per_step_graphed"):
            try:
                found[key] = float(value)
            except ValueError:
                pass
    return found


def show_failure(label, returncode, err):
    status = "did not start or did not finish" if returncode is None else f"exit status {returncode}"
    print(f"  {label} failed ({status}); last lines of its stderr:", file=sys.stderr)
    for line in (err or "").strip().splitlines()[-STDERR_TAIL_LINES:]:
        print(f"    {line}", file=sys.stderr)


def read_report(path):
    """(metrics {name: value} of METRICS and program.*, launch-bound: 'yes', 'no' or 'too few steps')."""
    with open(path) as saved:
        report = json.load(saved)
    metrics = {}
    for metric in report.get("metrics") or []:
        if isinstance(metric, dict) and isinstance(metric.get("name"), str) and metric["name"] not in metrics:
            if metric["name"] in METRICS or metric["name"].startswith("program."):
                metrics[metric["name"]] = metric.get("value")
    launch_bound = "no"
    for finding in report.get("findings") or []:
        if isinstance(finding, dict) and finding.get("check_id") == "launch-bound":
            # The same check reports "Too few steps to forecast ..." when it cannot forecast.
            if str(finding.get("title", "")).startswith("Too few steps"):
                launch_bound = "too few steps" if launch_bound == "no" else launch_bound
            else:
                launch_bound = "yes"
    return metrics, launch_bound


def measure_unrecorded(pair, steps, meta, timeout):
    """(eager, graphed) us per step of one unrecorded process running both, or (None, None)."""
    label = f"{pair} unrecorded"
    returncode, out, err, seconds = run_process(child_command(pair, "both", steps), timeout)
    found = parse_child_output(out)
    for key in ("gpu", "torch"):
        if key in found:
            meta.setdefault(key, found[key])
    if returncode != 0 or "us_per_step_eager" not in found or "us_per_step_graphed" not in found:
        show_failure(label, returncode, err)
        return None, None
    print(f"  {label}: eager {found['us_per_step_eager']:.2f}, graphed {found['us_per_step_graphed']:.2f} us/step "
          f"({seconds:.1f} s)", file=sys.stderr)
    return found["us_per_step_eager"], found["us_per_step_graphed"]


def measure_recorded(pair, steps, meta, timeout):
    """{'eager', 'graphed': the child's own timings under the recorder (eager steps, then graphed steps of the same
    program), 'metrics': {...}, 'launch_bound': ...} or None."""
    label = f"{pair} under graphcheck"
    graphcheck = os.path.join(BUILD, "graphcheck")
    with tempfile.TemporaryDirectory(prefix="forecast_accuracy_") as tmp:
        report_path = os.path.join(tmp, "report.json")
        trace_dir = os.path.join(tmp, "traces")
        command = [graphcheck, "run", "--format", "json", "-o", report_path, "--fail-on", "never",
                   "--trace-dir", trace_dir, "--region", "step", "--", *child_command(pair, "both", steps)]
        returncode, out, err, seconds = run_process(command, timeout)
        found = parse_child_output(out)
        for key in ("gpu", "torch"):
            if key in found:
                meta.setdefault(key, found[key])
        try:
            metrics, launch_bound = read_report(report_path)
        except (OSError, ValueError, AttributeError) as error:
            show_failure(label, returncode, f"{err}\n(no report: {error})")
            return None
    program_failed = (metrics.get("program.exit_code") or 0) != 0 or (metrics.get("program.signal") or 0) != 0
    if program_failed or "us_per_step_eager" not in found or "us_per_step_graphed" not in found:
        show_failure(label, returncode, err)
        return None
    if returncode != 0:
        print(f"  warning: graphcheck exited with status {returncode} but wrote its report", file=sys.stderr)
    print(f"  {label}: eager {found['us_per_step_eager']:.2f}, graphed {found['us_per_step_graphed']:.2f} us/step, "
          f"forecast saving {fmt(metrics.get('launch.forecast_savings_us'))} us ({seconds:.1f} s)", file=sys.stderr)
    return {"eager": found["us_per_step_eager"], "graphed": found["us_per_step_graphed"],
            "metrics": {k: v for k, v in metrics.items() if k in METRICS}, "launch_bound": launch_bound}


def steps_for(pair, args):
    return args.steps if args.steps is not None else PAIR_STEPS.get(pair, DEFAULT_STEPS)


def run_rounds(pairs, args):
    """The run as saved: meta (gpu, torch), steps per pair and {pair: [one sample per round]}."""
    run = {"schema": "forecast_accuracy/1", "gpu": None, "torch": None, "rounds": args.rounds,
           "steps": {pair: steps_for(pair, args) for pair in pairs}, "samples": {pair: [] for pair in pairs}}
    meta = {}
    if not os.path.exists(os.path.join(BUILD, "graphcheck")):
        print(f"warning: {os.path.join(BUILD, 'graphcheck')} does not exist: no forecasts (set GRAPHCHECK_BUILD_DIR)",
              file=sys.stderr)
    for pair in pairs:
        steps = steps_for(pair, args)
        for round_index in range(args.rounds):
            print(f"[{pair} round {round_index + 1}/{args.rounds}, {steps} steps]", file=sys.stderr)
            eager, graphed = measure_unrecorded(pair, steps, meta, args.timeout)
            sample = {"eager": eager, "graphed": graphed, "recorded": measure_recorded(pair, steps, meta, args.timeout)}
            run["samples"][pair].append(sample)
            run["gpu"], run["torch"] = meta.get("gpu"), meta.get("torch")
            if args.save:
                with open(args.save, "w") as out:
                    json.dump(run, out, indent=1)
    return run


def load_runs(paths):
    """The saved runs merged: rounds appended pair by pair; meta and steps as lists of what each run had."""
    merged = {"gpu": [], "torch": [], "steps": {}, "samples": {}}
    for path in paths:
        with open(path) as saved:
            run = json.load(saved)
        for key in ("gpu", "torch"):
            if run.get(key) and run[key] not in merged[key]:
                merged[key].append(run[key])
        for pair, samples in (run.get("samples") or {}).items():
            merged["samples"].setdefault(pair, []).extend(s if isinstance(s, dict) else {} for s in samples)
            steps = (run.get("steps") or {}).get(pair)
            if steps is not None and steps not in merged["steps"].setdefault(pair, []):
                merged["steps"][pair].append(steps)
    return merged


# ---------------------------------------------------------------------------------------------------------------------
# Tables.

def fmt(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


def fmt_percent(ratio):
    return "-" if ratio is None else f"{100 * ratio:+.1f}%"


def median(values):
    values = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return statistics.median(values) if values else None


def recorded_values(samples, key):
    """Per round: the recorded run's metric `key` (or its own 'eager' / 'graphed' timing), None where missing."""
    values = []
    for sample in samples:
        recorded = sample.get("recorded")
        if not isinstance(recorded, dict):
            values.append(None)
        elif key in ("eager", "graphed"):
            values.append(recorded.get(key))
        else:
            values.append((recorded.get("metrics") or {}).get(key))
    return values


def launch_bound_summary(samples):
    verdicts = [s["recorded"].get("launch_bound") for s in samples if isinstance(s.get("recorded"), dict)]
    if not verdicts:
        return "-"
    text = f"{verdicts.count('yes')}/{len(verdicts)}"
    too_few = verdicts.count("too few steps")
    return text + (f" ({too_few} too few steps)" if too_few else "")


def error_ratio(forecast, measured):
    return (forecast - measured) / measured if forecast is not None and measured is not None and measured > 0 else None


def print_tables(samples_by_pair, steps_by_pair):
    pairs = list(samples_by_pair)
    print("\n## Forecast against the saving measured in the same process\n")
    print("The recorded process runs the eager steps (graphcheck forecasts from them) and then the same program's "
          "graphed steps; both timed by the program with CUDA events. Medians over rounds; error % = (forecast saving "
          "- measured saving) / measured saving per round, median (- when the saving is not positive); launch-bound: "
          "rounds whose report has the finding.\n")
    print("| pair | steps | eager us | graphed us | measured saving us | forecast saving us | error % | "
          "error % of the eager step | forecast graphed us | launch-bound |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for pair in pairs:
        samples = samples_by_pair[pair]
        eager, graphed = recorded_values(samples, "eager"), recorded_values(samples, "graphed")
        forecast = recorded_values(samples, "launch.forecast_savings_us")
        savings = [e - g if e is not None and g is not None else None for e, g in zip(eager, graphed)]
        errors = [error_ratio(f, m) for f, m in zip(forecast, savings)]
        of_eager = [(f - m) / e if None not in (f, m, e) and e > 0 else None
                    for f, m, e in zip(forecast, savings, eager)]
        steps = "/".join(str(s) for s in steps_by_pair.get(pair, [])) or "-"
        print(f"| {pair} | {steps} | {fmt(median(eager))} | {fmt(median(graphed))} | {fmt(median(savings))} | "
              f"{fmt(median(forecast))} | {fmt_percent(median(errors))} | {fmt_percent(median(of_eager))} | "
              f"{fmt(median(recorded_values(samples, 'launch.forecast_graphed_us')))} | "
              f"{launch_bound_summary(samples)} |")

    print("\n## Unrecorded processes\n")
    print("The same program without any tool, one process per round. eager (recorded) / eager (unrecorded): how much "
          "slower the eager step ran under graphcheck, median of the per-round ratios; it includes the process-to-"
          "process variation of host speed, which the spread of the unrecorded eager steps shows.\n")
    print("| pair | eager us | graphed us | saving us | forecast error against it | unrecorded eager min-max us | "
          "eager recorded / unrecorded |")
    print("|---|---|---|---|---|---|---|")
    for pair in pairs:
        samples = samples_by_pair[pair]
        eager = [s.get("eager") for s in samples]
        graphed = [s.get("graphed") for s in samples]
        savings = [e - g if e is not None and g is not None else None for e, g in zip(eager, graphed)]
        forecast = recorded_values(samples, "launch.forecast_savings_us")
        recorded_eager = recorded_values(samples, "eager")
        ratios = [r / e if r is not None and e else None for r, e in zip(recorded_eager, eager)]
        present = [e for e in eager if e is not None]
        span = f"{min(present):.1f}-{max(present):.1f}" if present else "-"
        print(f"| {pair} | {fmt(median(eager))} | {fmt(median(graphed))} | {fmt(median(savings))} | "
              f"{fmt_percent(error_ratio(median(forecast), median(savings)))} | {span} | {fmt(median(ratios), 3)} |")

    print("\n## The recorder's view of the eager step\n")
    print("Medians over rounds. graphcheck's eager step: the step time the forecast uses (launch.iteration_us: steps "
          "outside launch recording when there are enough); recorded step: steps with launches recorded "
          "(launch.recorded_iteration_us); perturbation: launch.recorder_perturbation_ratio.\n")
    print("| pair | graphcheck's eager step us | program's own eager us | recorded step us | perturbation | "
          "unperturbed steps | kernels/step | GPU busy us |")
    print("|---|---|---|---|---|---|---|---|")
    for pair in pairs:
        samples = samples_by_pair[pair]
        print(f"| {pair} | {fmt(median(recorded_values(samples, 'launch.iteration_us')))} | "
              f"{fmt(median(recorded_values(samples, 'eager')))} | "
              f"{fmt(median(recorded_values(samples, 'launch.recorded_iteration_us')))} | "
              f"{fmt_percent(median(recorded_values(samples, 'launch.recorder_perturbation_ratio')))} | "
              f"{fmt(median(recorded_values(samples, 'launch.unperturbed_iterations')), 0)} | "
              f"{fmt(median(recorded_values(samples, 'launch.kernels_per_iteration')), 0)} | "
              f"{fmt(median(recorded_values(samples, 'launch.gpu_busy_us')))} |")

    print("\n## Raw samples\n")
    short = {name: name.removeprefix("launch.") for name in METRICS}
    for pair in pairs:
        for index, sample in enumerate(samples_by_pair[pair]):
            recorded = sample.get("recorded")
            line = f"  {pair} round {index + 1}: unrecorded eager {fmt(sample.get('eager'), 2)} / graphed " \
                   f"{fmt(sample.get('graphed'), 2)}"
            if isinstance(recorded, dict):
                metrics = recorded.get("metrics") or {}
                figures = [f"{short[name]} {fmt(metrics.get(name), 0 if name in COUNTS else 3)}" for name in METRICS]
                line += f"; recorded eager {fmt(recorded.get('eager'), 2)} / graphed {fmt(recorded.get('graphed'), 2)}" \
                        f", launch-bound {recorded.get('launch_bound', '-')}, " + ", ".join(figures)
            else:
                line += "; recorded -"
            print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", default=",".join(PAIRS),
                        help=f"comma list of pairs (default: all: {', '.join(PAIRS)})")
    parser.add_argument("--steps", type=int, help=f"timed steps per process (default {DEFAULT_STEPS}, "
                        + ", ".join(f"{p} {n}" for p, n in PAIR_STEPS.items()) + ")")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=CHILD_TIMEOUT_S, help="seconds each process may run")
    parser.add_argument("--save", help="write the samples to this JSON file (after every round)")
    parser.add_argument("--load", nargs="+", help="print the tables over these saved runs instead of measuring")
    parser.add_argument("--child", nargs=2, metavar=("PAIR", "VARIANT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.steps is not None and args.steps < 1:
        parser.error("--steps must be at least 1")
    if args.child:
        pair, variant = args.child
        if pair not in PAIRS or variant not in VARIANTS:
            parser.error(f"--child PAIR VARIANT: PAIR one of {', '.join(PAIRS)}; VARIANT one of {', '.join(VARIANTS)}")
        run_child(pair, variant, steps_for(pair, args))
        return
    if args.load:
        merged = load_runs(args.load)
        print(f"Rounds of {', '.join(args.load)}.\n")
        print(f"GPU: {', '.join(merged['gpu']) or '-'}; torch {', '.join(merged['torch']) or '-'}")
        print_tables(merged["samples"], merged["steps"])
        return
    pairs = [p for p in args.pairs.split(",") if p]
    unknown = [p for p in pairs if p not in PAIRS]
    if unknown or not pairs:
        parser.error(f"--pairs: unknown {', '.join(unknown) or '(none given)'}; pairs: {', '.join(PAIRS)}")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    started = time.monotonic()
    run = run_rounds(pairs, args)
    print(f"GPU: {run['gpu'] or '-'}; torch {run['torch'] or '-'}")
    print(f"{args.rounds} rounds of the program unrecorded and under graphcheck (each its own process, eager steps "
          f"then graphed steps; {WARMUP_STEPS} warm-up steps before each); took {time.monotonic() - started:.0f} s.")
    print_tables(run["samples"], {pair: [steps] for pair, steps in run["steps"].items()})


if __name__ == "__main__":
    main()
