"""Runs every program of the clean corpus (bench/clean_corpus/*.py) under `graphcheck run` and tabulates what the
reports say. Every program uses CUDA graphs correctly, so the goal is 0 errors and 0 warnings (notes are fine).

usage (GPU machine, after `source scripts/gpu-env.sh`):
  python3 bench/clean_corpus/run_corpus.py --graphcheck $GRAPHCHECK_BUILD_DIR/graphcheck --out $OUT/corpus
      [--jobs N] [--shadow 4] [--only NAME ...] [--timeout 120] [--keep-traces] [--python python3]
      [--no-oracle] [--oracle-jobs 3] [--plant frozen|double-grad]

For each program: `graphcheck run --fail-on never --format json -o OUT/<name>.json [--trace-dir OUT/<name>-trace]
-- python3 PROGRAM` under `timeout`, its stdout and stderr in OUT/<name>.log. The programs in SHADOW (those that graph
through make_graphed_callables, torch.cuda.graph whole steps or manual captures) run a second time with `--shadow N`
(result name `<name>+shadow`, files OUT/<name>.shadow.json and .log: file names keep to letters, digits, '.', '_' and
'-'). `--shadow 0` skips the second runs.

With --jobs N and more than one GPU, N runs go at a time, each on its own GPU (CUDA_VISIBLE_DEVICES); with one GPU
they run one at a time whatever --jobs says.

Prints a fixed-width table (program, run, the program's exit status from the report's `program` step, graphcheck's
own exit code, whether the program printed its `OK <name>` line, errors / warnings / notes, the check ids of every
warning and error with the first 160 characters of each message below the row, for shadow runs the metrics
shadow.calls_compared and shadow.calls_random, and the oracle's verdict), then the reasons the run failed, if any,
one a line, then `TOTAL errors=E warnings=W notes=N programs=P failed_programs=F oracle_failed=K`: E, W, N summed
over all runs; P the programs run; F the programs with at least one failed run (no report, a non-zero exit status,
or no `OK <name>` line); K the programs whose graphed run the oracle failed. The same table and reasons go to
OUT/corpus.md and the raw per-run summaries to OUT/corpus.json.

Exit status: 0 when every run passed; 1 when any run failed, any run reported an error or a warning, or the oracle
failed a program (its reason printed, one a line, before the TOTAL line); 2 for a usage error (an unknown program in
--only, a plant that cannot apply to a program asked for).

The oracle (_oracle.py; `--no-oracle` leaves it out): clean means the program computes what it would without graphs.
Every program that makes graphs also runs without graphcheck and with its graphs removed (CORPUS_GRAPHS=0), from the
same seeds and data, twice: the second run gives eager's own spread (kernels that add with atomics differ from run to
run). Random numbers are compared draw for draw: a replay draws what the same code run eagerly would from the same
CUDA generator state, and the eager twin makes make_graphed_callables' warmup calls too (_oracle.py says why), so both
runs of a program that draws (RANDOM) draw the same numbers. Each run saves what it computed in OUT/oracle/; the
graphed run (the plain one) is held to the eager one: the last loss and the parameters' training update (|graphed -
eager| over the size of eager's update), or an inference program's outputs (|graphed - eager| over eager's largest),
each within a floor (ORACLE_FLOOR) or within twice eager's spread, whichever is larger. A limit at or above
ORACLE_CEILING fails the program: an update limit of 0.5 or more would pass a run whose parameters never moved (its
figure is 1). A program whose eager twin cannot draw what its graphed run draws goes in RNG_OTHER_STREAM, with the
reason (shown in the table): its spread run draws from another stream of the CUDA generator (CORPUS_RNG_STREAM=1) and
its loss is not compared; none is listed. The table's `oracle` column gives the figures; the TOTAL line
`oracle_failed=K`. Eager runs go `--oracle-jobs` at a time (default 3; they are not timed).

Planted wrong runs (`--plant frozen|double-grad`), to show that the oracle fails on wrong runs: the chosen programs
(`--only`, else every program the plant applies to: plant_refusal says which not, and why) run once, under graphcheck,
with CORPUS_PLANT set in the graphed run only (no shadow runs): `frozen`, the optimizer steps no parameter; `double-
grad`, every gradient doubled before each optimizer step (_oracle.py). Their eager twins run unplanted, and the oracle
judges as it always does. Exits 0 only if the oracle failed every planted run on its figures (a planted run that did
not complete, or whose plant never ran, counts as not caught); graphcheck's findings are listed but do not count.

`--no-nvtx` runs the programs as a user who marks no steps would (CORPUS_NO_NVTX=1: _oracle.py turns
torch.cuda.nvtx's ranges into no-ops), so graphcheck cuts the steps at the programs' own loops (the probe's
program-step marks) rather than at their `step` ranges; the verdicts are the same.
"""
import argparse
import concurrent.futures
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Programs that graph through make_graphed_callables, a torch.cuda.graph whole step or a manual capture.
SHADOW = {
    "timm_resnet18_graphed_bf16",
    "timm_vit_tiny_graphed_droppath",
    "torchvision_resnet18_whole_step",
    "whole_step_tensor_lr_scheduler",
    "graphed_fwd_bwd_eager_optimizer",
    "hf_gpt2_graphed_bf16",
    "hf_bert_classifier_graphed",
    "hf_llama_tiny_whole_step",
    "manual_capture_inference_timm",
    "shared_pool_buckets",
    "graphed_amp_fp16_dropout_mlp",
    "graphed_encoder_bf16_nodrop",
    "graphed_two_modules_fp32",
    "graphed_grads_precreated",
    "eval_graph_captured_in_eval",
    "whole_step_temperature_buffer",
    "whole_step_gpu_stochastic_depth",
    "eager_twin_then_graphed_mlp",
    "eager_twin_whole_step_nanogpt",
    "lazy_bucket_serving_bert",
    "static_kv_cache_decode",
    "timm_convnext_stages_graphed_after_eager",
    "whole_step_cosine_lr_eager_validation",
    "amp_gradscaler_graphed_eager_eval",
    "grad_accum_captured_eager_tail_batch",
    "hf_distilbert_item_every_step",
}
SHADOW_METRICS = ("shadow.calls_compared", "shadow.replays_compared", "shadow.calls_drawing")
# Programs that draw random numbers on the GPU once their graphs exist (dropout, drop path, stochastic depth): their
# eager twin draws the same numbers (see _oracle.py), so they are held to the same limits as the others.
RANDOM = {
    "eval_graph_captured_in_eval",
    "timm_resnet18_graphed_bf16",
    "timm_vit_tiny_graphed_droppath",
    "hf_gpt2_graphed_bf16",
    "hf_bert_classifier_graphed",
    "graphed_amp_fp16_dropout_mlp",
    "whole_step_gpu_stochastic_depth",
    "whole_step_cosine_lr_eager_validation",
    "amp_gradscaler_graphed_eager_eval",
    "hf_distilbert_item_every_step",
}
# Programs whose eager twin cannot draw what the graphed run draws, name -> why: their spread run draws from another
# stream of the CUDA generator and their last loss is not compared (ORACLE_CEILING still holds). None at present.
RNG_OTHER_STREAM = {}
NO_GRAPHS = {"eager_baseline_resnet"}  # nothing to remove: no oracle
INFERENCE = {"compile_reduce_overhead_infer", "manual_capture_inference_timm", "shared_pool_buckets",
             "lazy_bucket_serving_bert", "compile_infer_after_eager_bench", "static_kv_cache_decode"}  # no optimizer
# Programs that train with Adam or AdamW: their update is m / (sqrt(v) + eps), the same within eps / sqrt(v) (about
# 1e-5 here) for a gradient twice as large, so a doubled gradient changes nothing an oracle could see.
SCALE_FREE_OPTIMIZER = {
    "compile_reduce_overhead_train",
    "ddp_one_rank_recipe",
    "graphed_encoder_bf16_nodrop",
    "hf_bert_classifier_graphed",
    "hf_gpt2_graphed_bf16",
    "hf_llama_tiny_whole_step",
    "timm_vit_tiny_graphed_droppath",
    "torchvision_resnet18_whole_step",
    "whole_step_gpu_stochastic_depth",
    "whole_step_temperature_buffer",
    "whole_step_tensor_lr_scheduler",
    "eager_twin_whole_step_nanogpt",
    "whole_step_cosine_lr_eager_validation",
    "hf_distilbert_item_every_step",
}
PLANTS = ("frozen", "double-grad")
# Below these relative differences a graphed run computes like eager whatever the spread.
ORACLE_FLOOR = {"loss": 0.02, "update": 0.05, "outputs": 0.01}
# A limit at or above these cannot fail a wrong run: a run whose parameters never moved has an update figure of 1.
ORACLE_CEILING = {"update": 0.5}
MESSAGE_CHARS = 160


def discover():
    """The corpus's programs, by name (file stem), in a stable order."""
    names = []
    for entry in sorted(os.listdir(HERE)):
        if (entry.endswith(".py") and not entry.startswith(("_", "test_"))  # test_run_corpus.py: CPU tests
                and entry != os.path.basename(__file__)):
            names.append(entry[:-3])
    return names


def gpu_count(python):
    try:
        out = subprocess.run([python, "-c", "import torch; print(torch.cuda.device_count())"], capture_output=True,
                             text=True, timeout=180)
        return int(out.stdout.strip().splitlines()[-1])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return 1


def visible_devices(count):
    """The device names to hand out, one per concurrent job: the current CUDA_VISIBLE_DEVICES entries if set."""
    current = os.environ.get("CUDA_VISIBLE_DEVICES")
    if current:
        entries = [e.strip() for e in current.split(",") if e.strip()]
        if len(entries) >= count:
            return entries[:count]
    return [str(i) for i in range(count)]


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def run_one(job, args, device):
    """Runs one program under graphcheck; returns the raw facts (paths, exit code, wall time)."""
    stem = job["name"] + (".shadow" if job["shadow"] else "")
    json_path = os.path.join(args.out, stem + ".json")
    log_path = os.path.join(args.out, stem + ".log")
    for stale in (json_path, log_path):
        if os.path.exists(stale):
            os.remove(stale)
    command = [args.graphcheck, "run", "--fail-on", "never", "--format", "json", "-o", json_path]
    if args.keep_traces:
        trace_dir = os.path.join(args.out, stem + "-trace")
        shutil.rmtree(trace_dir, ignore_errors=True)
        command += ["--trace-dir", trace_dir]
    if job["shadow"]:
        command += ["--shadow", str(args.shadow)]
    command += ["--", args.python, os.path.join(HERE, job["name"] + ".py")]
    timeout_bin = shutil.which("timeout")
    if timeout_bin:
        command = [timeout_bin, "--kill-after=15", str(args.timeout)] + command
    env = dict(os.environ)
    env.pop("CORPUS_PLANT", None)  # only --plant plants, and only in the plain graphed run
    env["PYTHONUNBUFFERED"] = "1"
    if args.no_nvtx:
        env["CORPUS_NO_NVTX"] = "1"
    if args.oracle and not job["shadow"]:
        env["CORPUS_ORACLE_DIR"] = os.path.join(args.out, "oracle")
        if args.plant:
            env["CORPUS_PLANT"] = args.plant
    if device is not None:
        env["CUDA_VISIBLE_DEVICES"] = device
    start = time.monotonic()
    timed_out = False
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(command) + "\n")
        log.flush()
        try:
            proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=args.out,
                                    start_new_session=True)
        except OSError as error:
            log.write(f"cannot start: {error}\n")
            return {"json": json_path, "log": log_path, "rc": None, "wall_s": 0.0, "timed_out": False,
                    "device": device, "start_error": str(error)}
        try:
            rc = proc.wait(timeout=args.timeout + 45)
        except subprocess.TimeoutExpired:
            kill_group(proc.pid)
            rc = proc.wait()
            timed_out = True
        kill_group(proc.pid)  # whatever the run left behind in its process group (compile workers, ...)
    if rc == 124:
        timed_out = True
    return {"json": json_path, "log": log_path, "rc": rc, "wall_s": time.monotonic() - start,
            "timed_out": timed_out, "device": device}


def metric_value(metrics, name):
    """Sum of the metric over processes (names may carry a `pid123.` prefix); None when absent."""
    total, seen = 0.0, False
    for metric in metrics:
        if not isinstance(metric, dict):
            continue
        metric_name = str(metric.get("name", ""))
        if metric_name == name or metric_name.endswith("." + name):
            try:
                total += float(metric.get("value"))
                seen = True
            except (TypeError, ValueError):
                pass
    return total if seen else None


def program_status(report, metrics):
    """The program's exit status from the report's `program` step ("exited with status N"), else its metrics."""
    steps = report.get("steps") if isinstance(report.get("steps"), list) else []
    step = next((s for s in steps if isinstance(s, dict) and s.get("name") == "program"), None)
    if step is None and steps and isinstance(steps[0], dict):
        step = steps[0]
    message = str(step.get("message", "")) if step else ""
    match = re.search(r"exited with status (-?\d+)", message)
    if match:
        return int(match.group(1)), message
    code = metric_value(metrics, "program.exit_code")
    sig = metric_value(metrics, "program.signal")
    if sig:
        return f"sig{int(sig)}", message
    if code is not None:
        return int(code), message
    return None, message


def printed_ok(log_path, name):
    try:
        with open(log_path, errors="replace") as log:
            return any(line.strip() == f"OK {name}" for line in log)
    except OSError:
        return False


def summarize(job, facts):
    name = job["name"]
    summary = {
        "program": name,
        "result": name + ("+shadow" if job["shadow"] else ""),
        "run": "shadow" if job["shadow"] else "plain",
        "graphcheck_rc": facts.get("rc"),
        "timed_out": facts.get("timed_out", False),
        "wall_s": round(facts.get("wall_s", 0.0), 1),
        "device": facts.get("device"),
        "report": facts["json"],
        "log": facts["log"],
        "ok_line": printed_ok(facts["log"], name),
        "report_ok": False,
        "program_status": None,
        "program_message": "",
        "errors": 0,
        "warnings": 0,
        "notes": 0,
        "findings": [],
        "metrics": {},
    }
    if facts.get("start_error"):
        summary["problem"] = "graphcheck did not start: " + facts["start_error"]
    try:
        with open(facts["json"]) as f:
            report = json.load(f)
    except (OSError, ValueError) as error:
        report = None
        summary.setdefault("problem", f"no report ({type(error).__name__})")
    if isinstance(report, dict):
        summary["report_ok"] = True
        metrics = report.get("metrics") if isinstance(report.get("metrics"), list) else []
        summary["program_status"], summary["program_message"] = program_status(report, metrics)
        findings = report.get("findings") if isinstance(report.get("findings"), list) else []
        for finding in findings:
            if not isinstance(finding, dict):
                continue
            severity = finding.get("severity")
            if severity == "error":
                summary["errors"] += 1
            elif severity == "warning":
                summary["warnings"] += 1
            elif severity == "note":
                summary["notes"] += 1
            if severity in ("error", "warning"):
                where = finding.get("where") if isinstance(finding.get("where"), dict) else {}
                python = where.get("python") if isinstance(where.get("python"), list) else []
                frame = next((p for p in python if isinstance(p, dict) and p.get("user")), None)
                summary["findings"].append({
                    "severity": severity,
                    "check_id": str(finding.get("check_id", "?")),
                    "message": " ".join(str(finding.get("message", "")).split())[:MESSAGE_CHARS],
                    "where": f"{os.path.basename(str(frame.get('file', '')))}:{frame.get('line')}" if frame else "",
                })
        for metric in SHADOW_METRICS + ("program.exit_code",):
            value = metric_value(metrics, metric)
            if value is not None:
                summary["metrics"][metric] = value
    elif report is not None:
        summary.setdefault("problem", "report is not a JSON object")
    summary["failed"] = (not summary["report_ok"] or summary["program_status"] != 0 or not summary["ok_line"]
                         or summary["timed_out"])
    return summary


def run_eager(name, variant, args):
    """The program with its graphs removed (CORPUS_GRAPHS=0), without graphcheck and never planted: `variant`
    "eager", or "eager-spread", its second run from the same seeds (for RNG_OTHER_STREAM programs with the CUDA
    generator on another stream). Its output goes to OUT/<name>.<variant>.log."""
    stream = "1" if variant == "eager-spread" and name in RNG_OTHER_STREAM else "0"
    env = dict(os.environ, PYTHONUNBUFFERED="1", CORPUS_GRAPHS="0", CORPUS_RNG_STREAM=stream,
               CORPUS_ORACLE_VARIANT=variant, CORPUS_ORACLE_DIR=os.path.join(args.out, "oracle"))
    env.pop("CORPUS_PLANT", None)
    command = [args.python, os.path.join(HERE, name + ".py")]
    timeout_bin = shutil.which("timeout")
    if timeout_bin:
        command = [timeout_bin, "--kill-after=15", str(args.timeout)] + command
    with open(os.path.join(args.out, f"{name}.{variant}.log"), "w") as log:
        try:
            return subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=args.out,
                                  timeout=args.timeout + 45).returncode
        except (OSError, subprocess.SubprocessError) as error:
            log.write(f"cannot run: {error}\n")
            return None


def oracle_figures(graphed, eager):
    """Relative differences of `graphed` from `eager` (records of _oracle.save): the last loss, the parameters'
    update, the outputs."""
    figures = {}
    if graphed.get("loss") is not None and eager.get("loss") is not None:
        figures["loss"] = abs(graphed["loss"] - eager["loss"]) / max(abs(eager["loss"]), 1e-8)
    if all(r.get(k) is not None for r in (graphed, eager) for k in ("initial", "final")):
        update = float((eager["final"] - eager["initial"]).norm())
        figures["update"] = float((graphed["final"] - eager["final"]).norm()) / max(update, 1e-12)
    if graphed.get("outputs") is not None and eager.get("outputs") is not None:
        if graphed["outputs"].shape == eager["outputs"].shape:
            scale = float(eager["outputs"].abs().max())
            figures["outputs"] = float((graphed["outputs"] - eager["outputs"]).abs().max()) / max(scale, 1e-8)
        else:
            figures["outputs"] = float("inf")
    return figures


def draws(name):
    """How the program's random draws are compared, for the table: "" (it draws none), "same draws", or why not."""
    if name in RNG_OTHER_STREAM:
        return "other stream: " + RNG_OTHER_STREAM[name]
    return "same draws" if name in RANDOM else ""


def judge(name, figures, spread):
    """The verdict on figures (oracle_figures of the graphed run against eager) given eager's own spread (the same
    of the spread run): {"ok", "figures", "limits", "spread", "problem", "draws"}. Pure: no torch."""
    figures = dict(figures)
    if name in RNG_OTHER_STREAM:  # one batch's loss under other random draws says little: the update integrates
        figures.pop("loss", None)
    limits = {k: max(ORACLE_FLOOR[k], 2 * spread.get(k, 0.0)) for k in figures}
    problem = "" if figures else "nothing to compare"
    wide = sorted(k for k in limits if k in ORACLE_CEILING and not limits[k] < ORACLE_CEILING[k])
    if wide and not problem:
        problem = "eager's spread too wide to judge: " + ", ".join(
            f"{k} limit {limits[k]:.2g} >= {ORACLE_CEILING[k]:.2g}" for k in wide)
    ok = not problem and all(figures[k] <= limits[k] for k in figures)
    return {"ok": ok, "figures": figures, "limits": limits, "spread": dict(spread), "problem": problem,
            "draws": draws(name)}


def record_problem(graphed, plant):
    """What is wrong with the graphed run's record for this run of run_corpus.py ("" if nothing): planted when no
    plant was asked for, not planted with the plant asked for, or a plant that never ran (no optimizer step)."""
    recorded = graphed.get("plant", "") or ""
    if recorded != (plant or ""):
        return f"graphed run planted {recorded or 'nothing'}, expected {plant or 'nothing'}"
    if plant and not graphed.get("planted_steps"):
        return "the plant never ran (no optimizer step after start())"
    return ""


def oracle_verdict(name, folder, plant=None):
    """Whether the graphed run of `name` computed what eager did (see judge)."""
    import torch  # the GPU machine's; only the oracle needs it here

    def load(variant):
        try:
            return torch.load(os.path.join(folder, f"{name}.{variant}.pt"), weights_only=False)
        except Exception:  # noqa: BLE001 - a missing or broken record is a failed oracle, said below
            return None

    graphed, eager, other = load("graphed"), load("eager"), load("eager-spread")
    if graphed is None or eager is None or other is None:
        missing = ", ".join(v for v, r in (("graphed", graphed), ("eager", eager), ("eager-spread", other))
                            if r is None)
        return {"ok": False, "figures": {}, "limits": {}, "spread": {}, "problem": f"no {missing} record",
                "draws": draws(name)}
    verdict = judge(name, oracle_figures(graphed, eager), oracle_figures(other, eager))
    wrong = record_problem(graphed, plant)
    if wrong:
        verdict["ok"], verdict["problem"] = False, wrong
    return verdict


def plant_outcome(summary):
    """For a planted run: "" when the oracle caught it (judged it and failed it on its figures), else why not."""
    verdict = summary.get("oracle")
    if not verdict:
        return "no oracle verdict"
    if verdict["problem"]:
        return "not judged: " + verdict["problem"]
    if verdict["ok"]:
        return "MISSED: the oracle passed the planted run"
    return ""


def oracle_cell(verdict, plant=None):
    if verdict is None:
        return "-"
    if verdict["problem"]:
        cell = "FAIL " + verdict["problem"]
    else:
        parts = [f"{k} {v:.2g}/{verdict['limits'][k]:.2g}" for k, v in sorted(verdict["figures"].items())]
        cell = ("ok " if verdict["ok"] else "FAIL ") + " ".join(parts)
    notes = [verdict["draws"]] if verdict.get("draws") else []
    if plant:
        notes.append(f"planted {plant}: " + ("caught" if not verdict["problem"] and not verdict["ok"] else
                                             "NOT caught"))
    return cell + (" (" + "; ".join(notes) + ")" if notes else "")


def fmt_int(value):
    if value is None:
        return "-"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def row_cells(s, plant=None):
    exit_status = "-" if s["program_status"] is None else str(s["program_status"])
    if s["timed_out"]:
        exit_status += " (timeout)"
    shadow = ""
    if s["run"] == "shadow":
        shadow = "/".join(fmt_int(s["metrics"].get(m)) for m in SHADOW_METRICS)
    ids = ",".join(sorted({f["check_id"] for f in s["findings"]}))
    if not s["report_ok"]:
        ids = s.get("problem", "no report")
    return [s["program"], s["run"], exit_status, fmt_int(s["graphcheck_rc"]), "yes" if s["ok_line"] else "NO",
            str(s["errors"]), str(s["warnings"]), str(s["notes"]), shadow, oracle_cell(s.get("oracle"), plant),
            f"{s['wall_s']:.0f}", ids]


HEADERS = ["program", "run", "exit", "gc_rc", "ok", "E", "W", "N", "shadow cmp/rand",
           "oracle (graphed vs eager / limit)", "s", "warning/error ids"]


def totals(summaries, plant=None):
    programs = sorted({s["program"] for s in summaries})
    failed = sorted({s["program"] for s in summaries if s["failed"]})
    oracle_failed = sorted({s["program"] for s in summaries if s.get("oracle") and not s["oracle"]["ok"]})
    t = {"errors": sum(s["errors"] for s in summaries), "warnings": sum(s["warnings"] for s in summaries),
         "notes": sum(s["notes"] for s in summaries), "programs": len(programs), "failed_programs": len(failed),
         "failed": failed, "oracle_failed": oracle_failed}
    if plant:
        t["plant"] = plant
        t["planted"] = sorted({s["program"] for s in summaries if s["run"] == "plain"})
        t["caught"] = sorted({s["program"] for s in summaries if s["run"] == "plain" and not plant_outcome(s)})
    return t


def total_line(t):
    line = (f"TOTAL errors={t['errors']} warnings={t['warnings']} notes={t['notes']} programs={t['programs']} "
            f"failed_programs={t['failed_programs']} oracle_failed={len(t['oracle_failed'])}")
    if t.get("plant"):
        line += f" planted={t['plant']} caught={len(t['caught'])}/{len(t['planted'])}"
    return line


def run_problem(s):
    """Why a run failed, in words (the summary has failed set)."""
    if not s["report_ok"]:
        return s.get("problem", "no report")
    if s["timed_out"]:
        return "timed out"
    if s["program_status"] != 0:
        return f"program exit status {s['program_status']}"
    if not s["ok_line"]:
        return "no `OK <name>` line"
    return "failed"


def failures(summaries, t, plant=None, oracle=True):
    """The reasons this run of run_corpus.py fails, one a line; none: it passes (exit 0). `t` is totals(summaries).
    Without a plant: a failed run (t["failed"]), an error or warning finding, a graphed run without an oracle
    verdict, or one the oracle failed (t["oracle_failed"]). With a plant: a planted run that failed, or that the
    oracle did not catch; graphcheck's findings do not count."""
    reasons = []
    if not summaries:
        reasons.append("no program ran")
    for s in summaries:
        if s["failed"]:
            reasons.append(f"{s['result']}: run failed: {run_problem(s)}")
        if not plant:
            for f in s["findings"]:
                reasons.append(f"{s['result']}: {f['severity']} [{f['check_id']}] {f['message']}")
    graphed = [s for s in summaries if s["run"] == "plain" and s["program"] not in NO_GRAPHS]
    if plant:
        if not oracle:
            reasons.append("--plant needs the oracle")
        for s in graphed:
            why = plant_outcome(s)
            if why:
                reasons.append(f"{s['program']}: planted {plant} not caught: {why}")
    elif oracle:
        reasons += [f"{s['program']}: no oracle verdict" for s in graphed if not s.get("oracle")]
        verdicts = {s["program"]: s["oracle"] for s in graphed if s.get("oracle")}
        for name in t["oracle_failed"]:
            reasons.append(f"{name}: oracle failed: {oracle_cell(verdicts.get(name))}")
    return reasons


def text_table(summaries, plant=None):
    rows = [row_cells(s, plant) for s in summaries]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(HEADERS)]
    widths[-1] = len(HEADERS[-1])  # the last column is not padded
    lines = ["  ".join(h.ljust(w) for h, w in zip(HEADERS, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for s, r in zip(summaries, rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        for f in s["findings"]:
            where = f" ({f['where']})" if f["where"] else ""
            lines.append(f"    {f['severity']} [{f['check_id']}]{where} {f['message']}")
    return "\n".join(lines)


def markdown_escape(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown_table(summaries, t, header, reasons=(), plant=None):
    lines = [f"# Clean corpus under graphcheck", "", header, "",
             "| " + " | ".join(HEADERS) + " |", "|" + "|".join("---" for _ in HEADERS) + "|"]
    for s in summaries:
        lines.append("| " + " | ".join(markdown_escape(c) for c in row_cells(s, plant)) + " |")
    messages = [(s, f) for s in summaries for f in s["findings"]]
    if messages:
        lines += ["", "## Warnings and errors", ""]
        for s, f in messages:
            where = f" ({f['where']})" if f["where"] else ""
            lines.append(f"- `{s['result']}`: {f['severity']} `{f['check_id']}`{markdown_escape(where)}: "
                         f"{markdown_escape(f['message'])}")
    other = sorted({n for s in summaries for n in [s["program"]] if n in RNG_OTHER_STREAM})
    if other:
        lines += ["", "## Programs compared over other random draws", ""]
        lines += [f"- `{n}`: {markdown_escape(RNG_OTHER_STREAM[n])}" for n in other]
    lines += ["", "## Result", ""]
    lines += [f"- {markdown_escape(r)}" for r in reasons] if reasons else ["passed"]
    lines += ["", "`" + total_line(t) + "`", ""]
    return "\n".join(lines)


def plant_refusal(plant, name):
    """Why `plant` cannot apply to program `name` ("" if it can)."""
    if name in NO_GRAPHS:
        return "no graphs, so no oracle"
    if name in INFERENCE:
        return "inference only: no optimizer step to plant in"
    if plant == "double-grad" and name in SCALE_FREE_OPTIMIZER:
        return "trains with Adam/AdamW, which a doubled gradient leaves the same within eps / sqrt(v)"
    return ""


def select(names, only=None, plant=None):
    """The programs to run, or a usage error: (selected, error). `only` names programs by file stem (a path or .py
    is fine); with a plant, the default is every program it applies to, and asking for one it cannot apply to is an
    error."""
    selected = list(names)
    if only:
        wanted = [n[:-3] if n.endswith(".py") else n for n in (os.path.basename(o) for o in only)]
        unknown = [n for n in wanted if n not in names]
        if unknown:
            return [], f"unknown program(s): {', '.join(unknown)}; known: {', '.join(names)}"
        selected = [n for n in names if n in wanted]
    if plant:
        refused = [f"{n} ({plant_refusal(plant, n)})" for n in selected if plant_refusal(plant, n)]
        if only and refused:
            return [], f"--plant {plant} cannot apply to: " + "; ".join(refused)
        selected = [n for n in selected if not plant_refusal(plant, n)]
    if not selected:
        return [], "no program to run"
    return selected, ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graphcheck", required=True, help="path to the graphcheck binary")
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "graphcheck-clean-corpus"),
                        help="output folder (reports, logs, corpus.md, corpus.json)")
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time (one per GPU; 1 on a single GPU)")
    parser.add_argument("--shadow", type=int, default=4,
                        help="N for the second, `--shadow N` run of the SHADOW programs (0: no second run)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these programs (file stems)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per run")
    parser.add_argument("--keep-traces", action="store_true", help="pass --trace-dir OUT/<name>-trace")
    parser.add_argument("--python", default="python3", help="the Python that runs the programs")
    parser.add_argument("--no-oracle", dest="oracle", action="store_false",
                        help="do not run the programs with their graphs removed and compare")
    parser.add_argument("--oracle-jobs", type=int, default=3, help="eager runs at a time (they are not timed)")
    parser.add_argument("--no-nvtx", action="store_true",
                        help="turn the programs' NVTX ranges off, so that steps are cut at their loops")
    parser.add_argument("--plant", choices=PLANTS,
                        help="run the programs (--only, else all it applies to) with this error planted in the "
                             "graphed run and exit 0 only if the oracle fails every one (no shadow runs)")
    args = parser.parse_args()
    if args.plant and not args.oracle:
        parser.error("--plant needs the oracle (drop --no-oracle)")
    args.out = os.path.abspath(args.out)
    args.graphcheck = os.path.abspath(args.graphcheck) if os.sep in args.graphcheck else args.graphcheck
    os.makedirs(args.out, exist_ok=True)

    names, error = select(discover(), args.only, args.plant)
    if error:
        print(f"run_corpus.py: {error}", file=sys.stderr)
        return 2
    if args.plant:
        args.shadow = 0  # a planted run is there for the oracle
    jobs = []
    for name in names:
        jobs.append({"name": name, "shadow": False})
        if args.shadow > 0 and name in SHADOW:
            jobs.append({"name": name, "shadow": True})

    if args.oracle:  # no record left from an earlier run may stand in for one this run did not write
        shutil.rmtree(os.path.join(args.out, "oracle"), ignore_errors=True)
        os.makedirs(os.path.join(args.out, "oracle"), exist_ok=True)
    gpus = gpu_count(args.python)
    parallel = max(1, min(args.jobs, gpus)) if gpus > 1 else 1
    devices = queue.Queue()
    if parallel > 1:
        for device in visible_devices(parallel):
            devices.put(device)
    else:
        devices.put(None)  # one at a time, in the environment's own CUDA_VISIBLE_DEVICES
    planted = f", planted {args.plant} in the graphed runs" if args.plant else ""
    print(f"{len(jobs)} runs of {len(names)} programs{planted}, {parallel} at a time ({gpus} GPU(s) seen); "
          f"out: {args.out}", flush=True)

    def work(job):
        device = devices.get()
        try:
            facts = run_one(job, args, device)
        finally:
            devices.put(device)
        summary = summarize(job, facts)
        print(f"  done {summary['result']}: exit {summary['program_status']} E={summary['errors']} "
              f"W={summary['warnings']} N={summary['notes']} ({summary['wall_s']:.0f} s)", flush=True)
        return summary

    summaries = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=parallel) as pool:
        futures = [pool.submit(work, job) for job in jobs]
        for job, future in zip(jobs, futures):
            try:
                summaries.append(future.result())
            except Exception as error:  # noqa: BLE001 - a measurement reports, it does not stop
                summaries.append(summarize(job, {"json": "", "log": "", "rc": None, "wall_s": 0.0,
                                                 "start_error": f"{type(error).__name__}: {error}"}))

    if args.oracle:
        eager = [(n, variant) for n in names if n not in NO_GRAPHS for variant in ("eager", "eager-spread")]
        print(f"oracle: {len(eager)} runs without graphs, {args.oracle_jobs} at a time", flush=True)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.oracle_jobs)) as pool:
            list(pool.map(lambda e: run_eager(e[0], e[1], args), eager))
        for s in summaries:
            if s["run"] == "plain" and s["program"] not in NO_GRAPHS:
                s["oracle"] = oracle_verdict(s["program"], os.path.join(args.out, "oracle"), args.plant)
        shutil.rmtree(os.path.join(args.out, "oracle"), ignore_errors=True)  # parameters: tens of MB; verdicts kept

    t = totals(summaries, args.plant)
    reasons = failures(summaries, t, args.plant, args.oracle)
    header = (f"graphcheck: `{args.graphcheck}`; {len(jobs)} runs of {len(names)} programs; "
              f"--shadow {args.shadow}; timeout {args.timeout} s"
              + (f"; planted `{args.plant}` in every graphed run (the oracle must fail each)" if args.plant else ""))
    print()
    print(text_table(summaries, args.plant))
    print()
    try:
        with open(os.path.join(args.out, "corpus.md"), "w") as f:
            f.write(markdown_table(summaries, t, header, reasons, args.plant))
        with open(os.path.join(args.out, "corpus.json"), "w") as f:
            json.dump({"graphcheck": args.graphcheck, "shadow": args.shadow, "timeout_s": args.timeout,
                       "plant": args.plant, "totals": t, "failures": reasons, "runs": summaries}, f, indent=2)
    except OSError as error:
        reasons.append(f"cannot write the summaries: {error}")
    if reasons:
        print(f"FAILED: {len(reasons)} reason(s)")
        for reason in reasons:
            print(f"  {reason}")
    else:
        print("PASSED: " + (f"the oracle failed every planted ({args.plant}) run" if args.plant else
                            "every run clean, every oracle passed"))
    print(total_line(t), flush=True)
    return 1 if reasons else 0


if __name__ == "__main__":
    try:
        status = main()
    except KeyboardInterrupt:
        status = 130
    except Exception:  # noqa: BLE001 - the traceback says what broke; the run did not pass
        import traceback

        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    # os._exit, not sys.exit: a corpus run once stayed alive after writing its whole table (session 16, until its
    # `timeout`), and a hang at interpreter shutdown would turn this status into the timeout's.
    os._exit(status)
