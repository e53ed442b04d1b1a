"""Runs every program of the clean corpus (bench/clean_corpus/*.py) under `graphcheck run` and tabulates what the
reports say. Every program uses CUDA graphs correctly, so the goal is 0 errors and 0 warnings (notes are fine).

usage (GPU machine, after `source scripts/gpu-env.sh`):
  python3 bench/clean_corpus/run_corpus.py --graphcheck $GRAPHCHECK_BUILD_DIR/graphcheck --out $OUT/corpus
      [--jobs N] [--shadow 4] [--only NAME ...] [--timeout 120] [--keep-traces] [--python python3]

For each program: `graphcheck run --fail-on never --format json -o OUT/<name>.json [--trace-dir OUT/<name>-trace]
-- python3 PROGRAM` under `timeout`, its stdout and stderr in OUT/<name>.log. The programs in SHADOW (those that graph
through make_graphed_callables, torch.cuda.graph whole steps or manual captures) run a second time with `--shadow N`
(result name `<name>+shadow`, files OUT/<name>.shadow.json and .log: file names keep to letters, digits, '.', '_' and
'-'). `--shadow 0` skips the second runs.

With --jobs N and more than one GPU, N runs go at a time, each on its own GPU (CUDA_VISIBLE_DEVICES); with one GPU
they run one at a time whatever --jobs says.

Prints a fixed-width table (program, run, the program's exit status from the report's `program` step, graphcheck's
own exit code, whether the program printed its `OK <name>` line, errors / warnings / notes, the check ids of every
warning and error with the first 160 characters of each message below the row, and for shadow runs the metrics
shadow.calls_compared and shadow.calls_random), then `TOTAL errors=E warnings=W notes=N programs=P
failed_programs=F`: E, W, N summed over all runs; P the programs run; F the programs with at least one failed run
(no report, a non-zero exit status, or no `OK <name>` line). The same table goes to OUT/corpus.md and the raw
per-run summaries to OUT/corpus.json. Exits 0 always: it is a measurement.

The oracle (_oracle.py; `--no-oracle` leaves it out): clean means the program computes what it would without graphs.
Every program that makes graphs also runs without graphcheck and with its graphs removed (CORPUS_GRAPHS=0), from the
same seeds and data, twice: the second run gives eager's own spread (kernels that add with atomics differ from run to
run), and for the programs in RANDOM (they draw random numbers on the GPU) it draws from another stream of the CUDA
generator (CORPUS_RNG_STREAM=1). Each run saves what it computed in OUT/oracle/; the graphed run (the plain one) is
held to the eager one: the last loss (not for RANDOM programs, whose one-batch loss under other masks says little)
and the parameters' training update (|graphed - eager| over the size of eager's update), or an inference program's
outputs (|graphed - eager| over eager's largest), each within a floor (ORACLE_FLOOR) or within twice eager's spread,
whichever is larger. The table's `oracle` column gives the figures; the TOTAL line adds `oracle_failed=K`. Eager
runs go `--oracle-jobs` at a time (default 3; they are not timed).
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
}
SHADOW_METRICS = ("shadow.calls_compared", "shadow.replays_compared", "shadow.calls_drawing")
# Programs that draw random numbers on the GPU once their graphs exist (dropout, drop path, stochastic depth; eager
# dropout after a capture too, which moves the generator's offset): their spread run draws from another stream.
RANDOM = {
    "eval_graph_captured_in_eval",
    "timm_resnet18_graphed_bf16",
    "timm_vit_tiny_graphed_droppath",
    "hf_gpt2_graphed_bf16",
    "hf_bert_classifier_graphed",
    "graphed_amp_fp16_dropout_mlp",
    "whole_step_gpu_stochastic_depth",
}
NO_GRAPHS = {"eager_baseline_resnet"}  # nothing to remove: no oracle
# Below these relative differences a graphed run computes like eager whatever the spread.
ORACLE_FLOOR = {"loss": 0.02, "update": 0.05, "outputs": 0.01}
MESSAGE_CHARS = 160


def discover():
    """The corpus's programs, by name (file stem), in a stable order."""
    names = []
    for entry in sorted(os.listdir(HERE)):
        if entry.endswith(".py") and not entry.startswith("_") and entry != os.path.basename(__file__):
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
    env["PYTHONUNBUFFERED"] = "1"
    if args.oracle and not job["shadow"]:
        env["CORPUS_ORACLE_DIR"] = os.path.join(args.out, "oracle")
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
    """The program with its graphs removed (CORPUS_GRAPHS=0), without graphcheck: `variant` "eager", or
    "eager-spread", its second run (for RANDOM programs with the CUDA generator on another stream). Its output goes to
    OUT/<name>.<variant>.log."""
    stream = "1" if variant == "eager-spread" and name in RANDOM else "0"
    env = dict(os.environ, PYTHONUNBUFFERED="1", CORPUS_GRAPHS="0", CORPUS_RNG_STREAM=stream,
               CORPUS_ORACLE_VARIANT=variant, CORPUS_ORACLE_DIR=os.path.join(args.out, "oracle"))
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


def oracle_verdict(name, folder):
    """Whether the graphed run of `name` computed what eager did: {"ok", "figures", "limits", "spread", "problem"}."""
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
        return {"ok": False, "figures": {}, "limits": {}, "spread": {}, "problem": f"no {missing} record"}
    figures = oracle_figures(graphed, eager)
    spread = oracle_figures(other, eager)
    if name in RANDOM:  # one batch's loss under other dropout masks says little: the update integrates every step
        figures.pop("loss", None)
    limits = {k: max(ORACLE_FLOOR[k], 2 * spread.get(k, 0.0)) for k in figures}
    ok = bool(figures) and all(figures[k] <= limits[k] for k in figures)
    return {"ok": ok, "figures": figures, "limits": limits, "spread": spread,
            "problem": "" if figures else "nothing to compare"}


def oracle_cell(verdict):
    if verdict is None:
        return "-"
    if verdict["problem"]:
        return "FAIL " + verdict["problem"]
    parts = [f"{k} {v:.2g}/{verdict['limits'][k]:.2g}" for k, v in sorted(verdict["figures"].items())]
    return ("ok " if verdict["ok"] else "FAIL ") + " ".join(parts)


def fmt_int(value):
    if value is None:
        return "-"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def row_cells(s):
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
            str(s["errors"]), str(s["warnings"]), str(s["notes"]), shadow, oracle_cell(s.get("oracle")),
            f"{s['wall_s']:.0f}", ids]


HEADERS = ["program", "run", "exit", "gc_rc", "ok", "E", "W", "N", "shadow cmp/rand",
           "oracle (graphed vs eager / limit)", "s", "warning/error ids"]


def totals(summaries):
    programs = sorted({s["program"] for s in summaries})
    failed = sorted({s["program"] for s in summaries if s["failed"]})
    oracle_failed = sorted({s["program"] for s in summaries if s.get("oracle") and not s["oracle"]["ok"]})
    return {"errors": sum(s["errors"] for s in summaries), "warnings": sum(s["warnings"] for s in summaries),
            "notes": sum(s["notes"] for s in summaries), "programs": len(programs), "failed_programs": len(failed),
            "failed": failed, "oracle_failed": oracle_failed}


def total_line(t):
    return (f"TOTAL errors={t['errors']} warnings={t['warnings']} notes={t['notes']} programs={t['programs']} "
            f"failed_programs={t['failed_programs']} oracle_failed={len(t['oracle_failed'])}")


def text_table(summaries):
    rows = [row_cells(s) for s in summaries]
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


def markdown_table(summaries, t, header):
    lines = [f"# Clean corpus under graphcheck", "", header, "",
             "| " + " | ".join(HEADERS) + " |", "|" + "|".join("---" for _ in HEADERS) + "|"]
    for s in summaries:
        lines.append("| " + " | ".join(markdown_escape(c) for c in row_cells(s)) + " |")
    messages = [(s, f) for s in summaries for f in s["findings"]]
    if messages:
        lines += ["", "## Warnings and errors", ""]
        for s, f in messages:
            where = f" ({f['where']})" if f["where"] else ""
            lines.append(f"- `{s['result']}`: {f['severity']} `{f['check_id']}`{markdown_escape(where)}: "
                         f"{markdown_escape(f['message'])}")
    lines += ["", "`" + total_line(t) + "`", ""]
    return "\n".join(lines)


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
    args = parser.parse_args()
    args.out = os.path.abspath(args.out)
    args.graphcheck = os.path.abspath(args.graphcheck) if os.sep in args.graphcheck else args.graphcheck
    os.makedirs(args.out, exist_ok=True)

    names = discover()
    if args.only:
        wanted = [n[:-3] if n.endswith(".py") else n for n in (os.path.basename(o) for o in args.only)]
        unknown = [n for n in wanted if n not in names]
        if unknown:
            print(f"unknown program(s): {', '.join(unknown)}; known: {', '.join(names)}", file=sys.stderr)
        names = [n for n in names if n in wanted]
    jobs = []
    for name in names:
        jobs.append({"name": name, "shadow": False})
        if args.shadow > 0 and name in SHADOW:
            jobs.append({"name": name, "shadow": True})

    if args.oracle:
        os.makedirs(os.path.join(args.out, "oracle"), exist_ok=True)
    gpus = gpu_count(args.python)
    parallel = max(1, min(args.jobs, gpus)) if gpus > 1 else 1
    devices = queue.Queue()
    if parallel > 1:
        for device in visible_devices(parallel):
            devices.put(device)
    else:
        devices.put(None)  # one at a time, in the environment's own CUDA_VISIBLE_DEVICES
    print(f"{len(jobs)} runs of {len(names)} programs, {parallel} at a time ({gpus} GPU(s) seen); out: {args.out}",
          flush=True)

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
                s["oracle"] = oracle_verdict(s["program"], os.path.join(args.out, "oracle"))
        shutil.rmtree(os.path.join(args.out, "oracle"), ignore_errors=True)  # parameters: tens of MB; verdicts kept

    t = totals(summaries)
    header = (f"graphcheck: `{args.graphcheck}`; {len(jobs)} runs of {len(names)} programs; "
              f"--shadow {args.shadow}; timeout {args.timeout} s")
    print()
    print(text_table(summaries))
    print()
    try:
        with open(os.path.join(args.out, "corpus.md"), "w") as f:
            f.write(markdown_table(summaries, t, header))
        with open(os.path.join(args.out, "corpus.json"), "w") as f:
            json.dump({"graphcheck": args.graphcheck, "shadow": args.shadow, "timeout_s": args.timeout,
                       "totals": t, "runs": summaries}, f, indent=2)
    except OSError as error:
        print(f"cannot write the summaries: {error}", file=sys.stderr)
    print(total_line(t), flush=True)
    return 0


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
    except Exception:  # noqa: BLE001 - a measurement exits 0; the traceback says what broke
        import traceback

        traceback.print_exc()
    sys.exit(0)
