"""The detection matrix: every planted-defect and clean program of programs.py run under `graphcheck run`, the
check ids each report carries, and whether each defect was flagged with its check id and no clean program got an
error. Then the forecast accuracy: launch-bound programs with an eager and a graphed phase, run once plainly (the
measured saving) and once recorded (graphcheck's forecast from the eager steps).

usage (GPU machine, after `source scripts/gpu-env.sh`): python3 bench/defects/matrix.py > matrix.md
With MATRIX_TRACE_DIR=DIR the traces of every program are kept in DIR/<program>/."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs.py")
GRAPHCHECK = os.path.join(os.environ["GRAPHCHECK_BUILD_DIR"], "graphcheck")

# (program mode, expected check id or None for a clean program, extra environment)
CASES = [
    ("item_in_capture", "sync-in-capture", {}),
    # PyTorch refuses .cpu() in capture itself: a device-to-host copy into pageable memory (pinned would be legal).
    ("cpu_in_capture", "pageable-memcpy", {}),
    ("pageable_copy", "pageable-memcpy", {}),
    ("pageable_to_cuda", "pageable-memcpy", {}),
    ("unjoined_one", "unjoined-stream", {}),
    ("unjoined_two", "unjoined-stream", {}),
    ("watchdog_query", "unsafe-api-in-capture", {}),
    ("watchdog_synchronize", "unsafe-api-in-capture", {}),
    ("raw_malloc_in_capture", "alloc-in-capture", {}),
    ("raw_free_in_capture", "alloc-in-capture", {}),
    ("legacy_stream_work", "legacy-stream-in-capture", {}),
    ("legacy_stream_memset", "legacy-stream-in-capture", {}),
    ("empty_other_stream", "empty-graph", {}),
    ("empty_nothing", "empty-graph", {}),
    ("recapture_loop", "recapture-churn", {}),
    ("recapture_per_shape", "recapture-churn", {}),
    ("end_on_other_stream", "capture-error", {}),
    ("end_on_other_thread", "capture-error", {}),
    ("sync_item_in_step", "sync-in-region", {}),
    ("sync_nonzero_in_step", "sync-in-region", {}),
    ("dynamic_batch", "dynamic-shape", {}),
    ("dynamic_sequence", "dynamic-shape", {}),
    ("branch_every_fifth", "dynamic-control-flow", {}),
    ("branch_on_data", "dynamic-control-flow", {}),
    ("launch_bound_chain", "launch-bound", {}),
    ("launch_bound_mlp_train", "launch-bound", {}),
    ("cublas_first_in_capture", "warmup-insufficient", {}),
    ("cudnn_first_in_capture", "warmup-insufficient", {}),
    ("cusolver_first_in_capture", "warmup-insufficient", {}),
    # torch.profiler started under graphcheck: Kineto cannot subscribe to CUPTI (the recorder holds it).
    ("profiler_holds_cupti", "cupti-busy", {}),
    ("no_speedup_matmul", "no-speedup", {}),
    ("no_speedup_conv", "no-speedup", {}),
    ("clean_eager_step", "env-launch-blocking", {"CUDA_LAUNCH_BLOCKING": "1"}),
    ("clean_capture", "env-launch-blocking", {"CUDA_LAUNCH_BLOCKING": "1"}),
    ("clean_eager_step", "env-no-caching-allocator", {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}),
    ("clean_capture", "env-no-caching-allocator", {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}),
    ("clean_capture", "env-expandable-segments-nccl-register",
     {"PYTORCH_CUDA_ALLOC_CONF": "garbage_collection_threshold:0.6,expandable_segments:True"}),
    ("clean_eager_step", "env-expandable-segments-nccl-register", {"PYTORCH_ALLOC_CONF": "expandable_segments:True"}),
    ("clean_capture", None, {}),
    ("clean_pinned_copy", None, {}),
    ("clean_joined_streams", None, {}),
    ("clean_eager_step", None, {}),
    ("gpu_bound_matmul", None, {}),
    ("speedup_chain", None, {}),
]
# The C++ programs of the GPU tests (tests/gpu/programs/capture_cases.cu), by mode.
CPP_PROGRAM = os.path.join(os.environ["GRAPHCHECK_BUILD_DIR"], "tests", "gpu", "gpu_capture_cases")
# A program that subscribes to CUPTI itself before its first CUDA call (tests/gpu/programs/cupti_client.cc).
CUPTI_CLIENT = os.path.join(os.environ["GRAPHCHECK_BUILD_DIR"], "tests", "gpu", "gpu_cupti_client")
CPP_CASES = [
    ("sync-in-capture", "sync-in-capture"),
    ("pageable-h2d", "pageable-memcpy"),
    ("unjoined-stream", "unjoined-stream"),
    ("other-thread-query", "unsafe-api-in-capture"),
    ("malloc-in-capture", "alloc-in-capture"),
    ("legacy-stream-in-capture", "legacy-stream-in-capture"),
    ("eager-loop", "launch-bound"),
    ("cublas-create-in-capture", "warmup-insufficient"),
    ("module-load-in-capture", None),  # CUDA 13 loads a module during a capture: not a defect
    ("clean", None),
    ("segfault-after-capture", None),
]
FORECAST = ["speedup_chain", "speedup_mlp", "speedup_transformer"]
CLEAN_ENV = ["CUDA_LAUNCH_BLOCKING", "PYTORCH_NO_CUDA_MEMORY_CACHING", "PYTORCH_CUDA_ALLOC_CONF",
             "PYTORCH_ALLOC_CONF"]


def environment(extra):
    env = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV}
    env.update(extra)
    return env


def recorded(mode, extra, program=None, label=None):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as report_file:
        report_path = report_file.name
    command = program or [sys.executable, PROGRAMS]
    keep = []
    if os.environ.get("MATRIX_TRACE_DIR"):
        name = "".join(c if c.isalnum() or c in "-_" else "_" for c in (label or mode))
        keep = ["--trace-dir", os.path.join(os.environ["MATRIX_TRACE_DIR"], name)]
    run = subprocess.run([GRAPHCHECK, "run", *keep, "--fail-on", "never", "--format", "json", "-o", report_path,
                          "--", *command, mode], env=environment(extra), capture_output=True, text=True, timeout=300)
    try:
        with open(report_path) as f:
            return json.load(f), run
    except (OSError, json.JSONDecodeError):
        return None, run


RANK = {"note": 0, "warning": 1, "error": 2}


def default_severities():
    listing = subprocess.run([GRAPHCHECK, "list-checks", "--format", "json"], capture_output=True, text=True,
                             check=True)
    return {c["id"]: c["severity"] for c in json.loads(listing.stdout)}


def metric(report, name):
    for m in report["metrics"]:
        if m["name"] == name:
            return m["value"]
    return None


def main():
    print("## Detection matrix\n")
    print("A defect counts as flagged when its check reports it at warning or above (at note for checks whose "
          "default is note).\n")
    print("| program | environment | expected | flagged (severity) | result |")
    print("|---|---|---|---|---|")
    hits = misses = clean_ok = clean_bad = 0
    defaults = default_severities()
    cases = [(mode, expected, extra, None) for mode, expected, extra in CASES]
    cases += [(f"C++ {mode}", expected, {}, [CPP_PROGRAM]) for mode, expected in CPP_CASES]
    cases.append(("C++ cupti-client", "cupti-busy", {}, [CUPTI_CLIENT]))
    for label, expected, extra, program in cases:
        mode = label.split()[-1]
        report, run = recorded(mode, extra, program, label=f"{label} {' '.join(extra)}")
        if report is None:
            print(f"| {label} | {extra or ''} | {expected or 'clean'} | no report (graphcheck exit {run.returncode}: "
                  f"{run.stderr.strip().splitlines()[-1] if run.stderr.strip() else ''}) | FAIL |")
            misses += 1
            continue
        flagged = {}
        for f in report["findings"]:  # the most severe finding of each check
            if RANK[f["severity"]] >= RANK[flagged.get(f["check_id"], "note")]:
                flagged[f["check_id"]] = f["severity"]
        cells = ", ".join(f"{k} ({v})" for k, v in sorted(flagged.items()))
        if expected:
            # Flagged at warning at least, or at the check's default where that is a note: an eager pageable-copy
            # note does not count for a copy refused inside a capture.
            needed = min(RANK[defaults[expected]], RANK["warning"])
            ok = expected in flagged and RANK[flagged[expected]] >= needed
            hits, misses = hits + ok, misses + (not ok)
        else:
            ok = "error" not in flagged.values()
            clean_ok, clean_bad = clean_ok + ok, clean_bad + (not ok)
        env_text = " ".join(f"{k}={v}" for k, v in extra.items())
        print(f"| {label} | {env_text} | {expected or 'clean: no error'} | {cells or '-'} | {'ok' if ok else 'FAIL'} |")
    print(f"\nplanted defects flagged with their check id: {hits} of {hits + misses}; "
          f"clean programs with no error: {clean_ok} of {clean_ok + clean_bad}\n")

    print("## Forecast accuracy\n")
    print("| program | measured eager (us/step) | measured graphed (us/step) | measured saving | "
          "forecast saving (graphcheck) | error |")
    print("|---|---|---|---|---|---|")
    for mode in FORECAST:
        plain = subprocess.run([sys.executable, PROGRAMS, mode], env=environment({}), capture_output=True, text=True,
                               timeout=300)
        line = [l for l in plain.stdout.splitlines() if l.startswith("eager_us")]
        if not line:
            print(f"| {mode} | program failed | | | | |")
            continue
        fields = line[-1].split()
        eager, graphed = float(fields[1]), float(fields[3])
        measured = 1 - graphed / eager
        report, _ = recorded(mode, {})
        forecast = metric(report, "launch.forecast_savings_ratio") if report else None
        if forecast is None:
            print(f"| {mode} | {eager:.1f} | {graphed:.1f} | {measured:.1%} | no forecast | |")
            continue
        error = (forecast - measured) / measured
        print(f"| {mode} | {eager:.1f} | {graphed:.1f} | {measured:.1%} | {forecast:.1%} | {error:+.1%} |")


if __name__ == "__main__":
    main()
