"""The probe over whole GPU programs on a CPU (emulated/site-packages/cuda_emulation.py): the clean twin of every mode
of the blind contract sets (tests/gpu/programs/blind_contract_cases.py, blind_contract_cases_2.py,
blind_held_outputs.py, blind_contract_cases_4.py and _5.py, written by people who never read the probe) and the clean corpus's programs that need no
downloaded model or compiler must send no contract event (a changed host value, a rebound tensor, a training mode, an aliased gradient, held outputs, a host
draw); each defect the probe names under emulation must send at least one. The GPU runs (run_variants.py,
run_corpus.py) say what graphcheck reports; this says, on every CI run, that the probe stays silent where it must.
The loops the probe cuts the programs' steps at (steps.py: its optimizer steps' marks, else its replays', as the
analysis reads them) must be the programs' own, and for the programs of
EXPECTED_LOOPS, and every mode of tests/gpu/programs/blind_loops.py (14 clean programs of as many loop shapes, written
by someone who never read the probe, with their own answer key), exactly the passes their code makes.

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
# Defects no probe event names under the emulation: set 4's outputs let go in a shared pool (graph-reads-freed reads
# them from the allocator's history, which is not emulated), set 5's EMA tensors replaced in a dict that
# torch.func.functional_call reads (graph-reads-freed on a GPU), and the pool-order set's outputs of captures made
# with capture_begin/capture_end, which only the allocator's snapshot names. Their twins run all the same.
NO_PROBE_EVENT = {"hook-features-pool", "layer-graphs-probe-last", "grid-key-batch-only", "ensemble-late-binding",
                  "ema-functional-call-rebound", "ppo-act-then-value", "augment-stream-prefetch"}
CORPUS_NEEDS = ("import timm", "from transformers", "torchvision", "torch.compile", "torch.distributed")
# Program (mode) -> its loops' passes as the probe marks them, phase by phase ("LINE xPASSES"): an eager twin's loop
# and the graphed loop through one function are two phases; a gradient-accumulation loop's inner loop is a phase in
# each epoch, the eager tail batch between them (in the epoch's loop) another.
EXPECTED_LOOPS = {
    "eager_twin_then_graphed_mlp.py ": ["37 x25", "37 x25"],
    "grad_accum_captured_eager_tail_batch.py ": ["64 x5", "63 x1"] * 3,
    "amp_gradscaler_graphed_eager_eval.py ": ["49 x30"],
}


def run_one(probe, site, program, mode):
    sys.path[:0] = [probe, site, os.path.join(HERE, "emulated", "site-packages")]
    os.environ.setdefault("CORPUS_ORACLE_DIR", "")
    import cuda_emulation
    from graphcheck_probe.bridge import EventKind

    recorder, status = cuda_emulation.run(program, [mode] if mode else [])
    events, loops_by_anchor = [], {"optimizer-step": [], "replay": []}
    for event in recorder.events:
        kind = EventKind(event["kind"]).name
        if kind == "PROGRAM_STEP":
            file, _, line = (event.get("text") or "").split(" in ")[0].rpartition(":")
            loops = loops_by_anchor[event.get("type_name")]
            if not loops or loops[-1][0] != event.get("value"):
                loops.append([event.get("value"), os.path.basename(file), line, 0])
            loops[-1][3] += 1
        # The emulation's device draws come from the CPU generator (device=x.device is the CPU): not the program's.
        if kind in CONTRACT_EVENTS and not (kind == "HOST_RANDOM_DRAW" and event.get("type_name") == "torch-cpu"):
            events.append("%s %s %s at %s" % (kind, event.get("type_name"), (event.get("text") or "").split("\n")[0],
                                              event.get("where")))
    # As the analysis does: a replay's marks cut steps only where no optimizer step's did.
    loops = loops_by_anchor["optimizer-step"] or loops_by_anchor["replay"]
    print(json.dumps({"status": status, "events": events, "loops": loops}))


def constant(program, name):
    """The literal a program assigns to `name` at its top level."""
    for node in ast.parse(open(program).read()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise SystemExit("%s has no %s" % (program, name))


def runs(root):
    """(program, mode, expect events) of every run."""
    found = []
    for name in ("blind_contract_cases.py", "blind_contract_cases_2.py", "blind_held_outputs.py",
                 "blind_contract_cases_4.py", "blind_contract_cases_5.py", "blind_pool_order_cases.py",
                 "blind_pool_clean.py"):
        program = os.path.join(root, "tests", "gpu", "programs", name)
        for defect, twin in constant(program, "TWINS").items():
            found.append((program, twin, False))
            if defect not in NOT_EMULATED | NO_PROBE_EVENT:
                found.append((program, defect, True))
        if "\nCLEAN = " in open(program).read():
            found.extend((program, mode, False) for mode in constant(program, "CLEAN"))
    loops = os.path.join(root, "tests", "gpu", "programs", "blind_loops.py")
    for mode, passes in constant(loops, "EXPECTED_LOOPS").items():
        EXPECTED_LOOPS["blind_loops.py %s" % mode] = ["%d x%d" % pair for pair in passes]
        found.append((loops, mode, False))
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
            return {"status": "no result: " + done.stderr.strip()[-300:], "events": None, "loops": []}

    failures = 0
    seen_loops = set()
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
            loops = ["%s x%d" % (line, passes) for _, file, line, passes in result["loops"]]
            foreign = [file for _, file, _, _ in result["loops"] if file != os.path.basename(program)]
            loops_ok = not foreign and EXPECTED_LOOPS.get(name, loops) == loops
            failures += not loops_ok
            if not loops_ok:
                print("FAIL %s: steps cut at loops %s%s, expected %s" % (name, loops, " in " + ", ".join(
                    set(foreign)) if foreign else "", EXPECTED_LOOPS.get(name, "the program's own")))
            if loops:
                seen_loops.add(name)
    missing = set(EXPECTED_LOOPS) - seen_loops
    failures += len(missing)
    print("%d runs cut steps at the program's loop%s" % (len(seen_loops), "; none in " + ", ".join(sorted(missing))
                                                         if missing else ""))
    print("%d failure(s) of %d runs" % (failures, len(every)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
