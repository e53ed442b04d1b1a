"""The probe over whole GPU programs on a CPU (emulated/site-packages/cuda_emulation.py): the clean twin of every mode
of the blind contract sets (tests/gpu/programs/blind_contract_cases.py, blind_contract_cases_2.py,
blind_held_outputs.py, written by people who never read the probe) and the clean corpus's programs that need no
downloaded model or compiler must send no contract event (a changed host value, a rebound tensor, a training mode, an aliased gradient, held outputs, a host
draw); each defect the probe names under emulation must send at least one. The GPU runs (run_variants.py,
run_corpus.py) say what graphcheck reports; this says, on every CI run, that the probe stays silent where it must.

usage: emulated_programs_test.py PROBE_DIR TORCH_SITE_DIR REPO_ROOT
       emulated_programs_test.py --one PROBE_DIR TORCH_SITE_DIR PROGRAM [MODE]   (one run; prints its events as JSON)
"""
import ast
import concurrent.futures
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# What the probe sends about a program's contract with its graphs (bridge.EventKind names).
CONTRACT_EVENTS = {"STATE_REBOUND", "HOST_VALUE_CHANGED", "TRAINING_MODE_CHANGED", "GRAD_ALIASED", "OUTPUTS_HELD",
                   "HOST_RANDOM_DRAW", "STATE_MADE_IN_CAPTURE"}
# Defects the emulation cannot show: autocast, the CUDA generator and the replays' numbers are not emulated, a CPU
# generator's draws cannot be told from the emulated device's, and graph pools are not emulated (grad-assign-alias).
NOT_EMULATED = {"autocast-disabled", "autocast-decorator", "mc-dropout", "bn-freeze-eval", "cpu-generator-mask",
                "grad-assign-alias"}
CORPUS_NEEDS = ("import timm", "from transformers", "torchvision", "torch.compile", "torch.distributed")


def run_one(probe, site, program, mode):
    sys.path[:0] = [probe, site, os.path.join(HERE, "emulated", "site-packages")]
    os.environ.setdefault("CORPUS_ORACLE_DIR", "")
    import cuda_emulation
    from graphcheck_probe.bridge import EventKind

    recorder, status = cuda_emulation.run(program, [mode] if mode else [])
    events = []
    for event in recorder.events:
        kind = EventKind(event["kind"]).name
        # The emulation's device draws come from the CPU generator (device=x.device is the CPU): not the program's.
        if kind in CONTRACT_EVENTS and not (kind == "HOST_RANDOM_DRAW" and event.get("type_name") == "torch-cpu"):
            events.append("%s %s %s at %s" % (kind, event.get("type_name"), (event.get("text") or "").split("\n")[0],
                                              event.get("where")))
    print(json.dumps({"status": status, "events": events}))


def twins_of(program):
    for node in ast.parse(open(program).read()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "TWINS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise SystemExit("%s has no TWINS" % program)


def runs(root):
    """(program, mode, expect events) of every run."""
    found = []
    for name in ("blind_contract_cases.py", "blind_contract_cases_2.py", "blind_held_outputs.py"):
        program = os.path.join(root, "tests", "gpu", "programs", name)
        for defect, twin in twins_of(program).items():
            found.append((program, twin, False))
            if defect not in NOT_EMULATED:
                found.append((program, defect, True))
    corpus = os.path.join(root, "bench", "clean_corpus")
    for name in sorted(os.listdir(corpus)):
        path = os.path.join(corpus, name)
        if name.endswith(".py") and not name.startswith(("_", "run_", "test_")) and not any(
                need in open(path).read() for need in CORPUS_NEEDS):
            found.append((path, "", False))
    return found


def main():
    if sys.argv[1] == "--one":
        run_one(*sys.argv[2:5], sys.argv[5] if len(sys.argv) > 5 else "")
        return
    probe, site, root = (os.path.abspath(path) for path in sys.argv[1:4])

    def launch(run):
        program, mode, _ = run
        command = [sys.executable, __file__, "--one", probe, site, program] + ([mode] if mode else [])
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=os.path.dirname(program))
        lines = done.stdout.strip().splitlines()
        try:
            return json.loads(lines[-1])
        except (IndexError, ValueError):
            return {"status": "no result: " + done.stderr.strip()[-300:], "events": None}

    failures = 0
    every = runs(root)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for (program, mode, expect), result in zip(every, pool.map(launch, every)):
            name = "%s %s" % (os.path.basename(program), mode)
            events = result["events"]
            ok = events is not None and (bool(events) if expect else not events)
            failures += not ok
            what = "sends" if expect else "sends nothing"
            print(("ok   " if ok else "FAIL ") + "%s %s%s" % (name, what, "" if ok else ": %s (%s)" % (
                events, result["status"])))
    print("%d failure(s) of %d runs" % (failures, len(every)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
