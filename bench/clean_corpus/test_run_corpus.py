"""CPU tests of run_corpus.py's verdicts and exit status (no GPU, no torch):
python3 bench/clean_corpus/test_run_corpus.py

The oracle's figures come from torch tensors on the GPU machine; here they are fabricated, and judge / failures /
select / plant_outcome / totals are checked on them. The end-to-end cases run main() against a fake `graphcheck`
(a Python script that writes a report and prints the program's OK line without running it), with --no-oracle
(the oracle needs torch) or with a usage error.
"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_corpus as rc  # noqa: E402


def summary(program, run="plain", failed=False, findings=(), oracle=None, **extra):
    s = {"program": program, "result": program + ("+shadow" if run == "shadow" else ""), "run": run,
         "graphcheck_rc": 0, "timed_out": False, "wall_s": 1.0, "report_ok": True, "program_status": 0,
         "ok_line": not failed, "errors": sum(f["severity"] == "error" for f in findings),
         "warnings": sum(f["severity"] == "warning" for f in findings), "notes": 0, "findings": list(findings),
         "metrics": {}, "failed": failed}
    if oracle is not None:
        s["oracle"] = oracle
    s.update(extra)
    return s


def finding(severity="warning", check_id="some-check"):
    return {"severity": severity, "check_id": check_id, "message": "a message", "where": ""}


SAME = {"loss": 0.0, "update": 0.0}
TINY_SPREAD = {"loss": 1e-7, "update": 1e-6}
FROZEN = {"loss": 0.3, "update": 1.0}  # a graphed run whose parameters never moved: update figure exactly 1


class Judge(unittest.TestCase):
    def test_bitwise_equal_passes_at_the_floors(self):
        v = rc.judge("graphed_amp_fp16_dropout_mlp", SAME, TINY_SPREAD)
        self.assertTrue(v["ok"], v)
        self.assertEqual(v["limits"], {"loss": rc.ORACLE_FLOOR["loss"], "update": rc.ORACLE_FLOOR["update"]})
        self.assertEqual(v["draws"], "same draws")
        self.assertIn("loss", v["figures"])  # a program that draws keeps its loss figure now

    def test_frozen_run_fails_for_a_program_that_draws(self):
        for name in sorted(rc.RANDOM):
            v = rc.judge(name, FROZEN, TINY_SPREAD)
            self.assertFalse(v["ok"], name)
            self.assertEqual(v["problem"], "", name)

    def test_spread_wide_enough_to_pass_a_frozen_run_is_a_failure(self):
        # the case: two eager runs drawing other masks spread by 0.5, limit 1.0, frozen figure 1.0 passed
        v = rc.judge("timm_resnet18_graphed_bf16", {"update": 1.0}, {"update": 0.5})
        self.assertFalse(v["ok"])
        self.assertIn("too wide", v["problem"])
        v = rc.judge("timm_resnet18_graphed_bf16", {"update": 0.0}, {"update": 0.3})  # limit 0.6 >= 0.5
        self.assertFalse(v["ok"])
        v = rc.judge("timm_resnet18_graphed_bf16", {"update": 0.1}, {"update": 0.2})  # limit 0.4 < 0.5
        self.assertTrue(v["ok"])

    def test_nan_figure_fails(self):
        v = rc.judge("graphed_two_modules_fp32", {"loss": float("nan"), "update": 0.0}, TINY_SPREAD)
        self.assertFalse(v["ok"])

    def test_nothing_to_compare_fails(self):
        v = rc.judge("graphed_two_modules_fp32", {}, {})
        self.assertFalse(v["ok"])
        self.assertEqual(v["problem"], "nothing to compare")

    def test_other_stream_programs_drop_the_loss_and_say_why(self):
        saved = dict(rc.RNG_OTHER_STREAM)
        try:
            rc.RNG_OTHER_STREAM["hf_gpt2_graphed_bf16"] = "a reason"
            v = rc.judge("hf_gpt2_graphed_bf16", {"loss": 0.5, "update": 0.01}, {"loss": 0.1, "update": 0.02})
            self.assertTrue(v["ok"], v)
            self.assertNotIn("loss", v["figures"])
            self.assertEqual(v["draws"], "other stream: a reason")
            self.assertIn("other stream: a reason", rc.oracle_cell(v))
        finally:
            rc.RNG_OTHER_STREAM.clear()
            rc.RNG_OTHER_STREAM.update(saved)

    def test_no_program_is_compared_over_other_streams(self):
        self.assertEqual(rc.RNG_OTHER_STREAM, {})


class Records(unittest.TestCase):
    def test_record_problem(self):
        self.assertEqual(rc.record_problem({"plant": "", "planted_steps": 0}, None), "")
        self.assertEqual(rc.record_problem({}, None), "")  # records written before plants existed
        self.assertIn("expected nothing", rc.record_problem({"plant": "frozen", "planted_steps": 3}, None))
        self.assertIn("expected frozen", rc.record_problem({"plant": "", "planted_steps": 0}, "frozen"))
        self.assertIn("never ran", rc.record_problem({"plant": "frozen", "planted_steps": 0}, "frozen"))
        self.assertEqual(rc.record_problem({"plant": "double-grad", "planted_steps": 1}, "double-grad"), "")


class ExitStatus(unittest.TestCase):
    def ok(self, name="graphed_two_modules_fp32"):
        return rc.judge(name, SAME, TINY_SPREAD)

    def reasons(self, summaries, plant=None, oracle=True):
        return rc.failures(summaries, rc.totals(summaries, plant), plant, oracle)

    def test_clean_run_passes(self):
        runs = [summary("graphed_two_modules_fp32", oracle=self.ok()), summary("graphed_two_modules_fp32", "shadow"),
                summary("eager_baseline_resnet")]
        self.assertEqual(self.reasons(runs), [])

    def test_failed_program_fails(self):
        runs = [summary("graphed_two_modules_fp32", failed=True, oracle=self.ok())]
        reasons = self.reasons(runs)
        self.assertEqual(len(reasons), 1)
        self.assertIn("no `OK <name>` line", reasons[0])

    def test_warning_or_error_finding_fails_even_on_a_shadow_run(self):
        for severity in ("warning", "error"):
            runs = [summary("graphed_two_modules_fp32", oracle=self.ok()),
                    summary("graphed_two_modules_fp32", "shadow", findings=[finding(severity)])]
            reasons = self.reasons(runs)
            self.assertEqual(len(reasons), 1, reasons)
            self.assertIn(f"{severity} [some-check]", reasons[0])

    def test_oracle_failed_fails_and_is_counted(self):
        bad = rc.judge("timm_resnet18_graphed_bf16", FROZEN, TINY_SPREAD)
        runs = [summary("timm_resnet18_graphed_bf16", oracle=bad),
                summary("graphed_two_modules_fp32", oracle=self.ok())]
        t = rc.totals(runs)
        self.assertEqual(t["oracle_failed"], ["timm_resnet18_graphed_bf16"])
        self.assertIn("oracle_failed=1", rc.total_line(t))
        reasons = rc.failures(runs, t)
        self.assertEqual(len(reasons), 1)
        self.assertTrue(reasons[0].startswith("timm_resnet18_graphed_bf16: oracle failed: FAIL"), reasons)
        self.assertIn("FAIL", rc.row_cells(runs[0])[9])

    def test_missing_verdict_fails_unless_no_oracle(self):
        runs = [summary("graphed_two_modules_fp32")]
        self.assertEqual(self.reasons(runs), ["graphed_two_modules_fp32: no oracle verdict"])
        self.assertEqual(self.reasons(runs, oracle=False), [])

    def test_no_runs_fails(self):
        self.assertEqual(self.reasons([]), ["no program ran"])


class Plants(unittest.TestCase):
    def test_caught_plants_pass_and_findings_do_not_count(self):
        caught = rc.judge("graphed_amp_fp16_dropout_mlp", FROZEN, TINY_SPREAD)
        runs = [summary("graphed_amp_fp16_dropout_mlp", oracle=caught, findings=[finding()]),
                summary("whole_step_gpu_stochastic_depth", oracle=rc.judge("whole_step_gpu_stochastic_depth", FROZEN,
                                                                           TINY_SPREAD))]
        t = rc.totals(runs, "frozen")
        self.assertEqual(rc.failures(runs, t, "frozen"), [])
        self.assertIn("planted=frozen caught=2/2", rc.total_line(t))
        self.assertIn("planted frozen: caught", rc.row_cells(runs[0], "frozen")[9])

    def test_missed_plant_fails(self):
        passed = rc.judge("graphed_amp_fp16_dropout_mlp", SAME, TINY_SPREAD)
        runs = [summary("graphed_amp_fp16_dropout_mlp", oracle=passed)]
        reasons = rc.failures(runs, rc.totals(runs, "double-grad"), "double-grad")
        self.assertEqual(len(reasons), 1)
        self.assertIn("MISSED", reasons[0])
        self.assertIn("NOT caught", rc.row_cells(runs[0], "double-grad")[9])

    def test_plant_that_broke_the_run_is_not_a_catch(self):
        broken = {"ok": False, "figures": {}, "limits": {}, "spread": {}, "problem": "no graphed record", "draws": ""}
        runs = [summary("graphed_fwd_bwd_eager_optimizer", failed=True, oracle=broken)]
        reasons = rc.failures(runs, rc.totals(runs, "frozen"), "frozen")
        self.assertEqual(len(reasons), 2, reasons)
        self.assertIn("run failed", reasons[0])
        self.assertIn("not judged: no graphed record", reasons[1])

    def test_plant_that_never_ran_is_not_a_catch(self):
        verdict = rc.judge("graphed_fwd_bwd_eager_optimizer", FROZEN, TINY_SPREAD)
        verdict["ok"], verdict["problem"] = False, rc.record_problem({"plant": "frozen", "planted_steps": 0}, "frozen")
        runs = [summary("graphed_fwd_bwd_eager_optimizer", oracle=verdict)]
        reasons = rc.failures(runs, rc.totals(runs, "frozen"), "frozen")
        self.assertEqual(len(reasons), 1)
        self.assertIn("never ran", reasons[0])

    def test_selection(self):
        names = rc.discover()
        self.assertIn("graphed_amp_fp16_dropout_mlp", names)
        self.assertNotIn("test_run_corpus", names)  # the test is no program of the corpus
        every, error = rc.select(names)
        self.assertEqual((every, error), (names, ""))
        frozen, error = rc.select(names, plant="frozen")
        self.assertEqual(error, "")
        self.assertEqual(set(frozen), set(names) - rc.NO_GRAPHS - rc.INFERENCE)
        double, error = rc.select(names, plant="double-grad")
        self.assertEqual(error, "")
        self.assertEqual(set(double), set(names) - rc.NO_GRAPHS - rc.INFERENCE - rc.SCALE_FREE_OPTIMIZER)
        self.assertIn("timm_resnet18_graphed_bf16", double)
        self.assertIn("graphed_fwd_bwd_eager_optimizer", double)
        only, error = rc.select(names, ["bench/clean_corpus/graphed_amp_fp16_dropout_mlp.py",
                                        "whole_step_gpu_stochastic_depth"], "frozen")
        self.assertEqual((only, error), (["graphed_amp_fp16_dropout_mlp", "whole_step_gpu_stochastic_depth"], ""))
        self.assertIn("Adam", rc.select(names, ["hf_gpt2_graphed_bf16"], "double-grad")[1])
        self.assertIn("inference", rc.select(names, ["shared_pool_buckets"], "frozen")[1])
        self.assertIn("unknown program", rc.select(names, ["no_such_program"])[1])

    def test_program_sets_name_real_programs(self):
        names = set(rc.discover())
        for group in (rc.SHADOW, rc.RANDOM, rc.NO_GRAPHS, rc.INFERENCE, rc.SCALE_FREE_OPTIMIZER,
                      set(rc.RNG_OTHER_STREAM)):
            self.assertLessEqual(group, names, group - names)

    def test_adam_programs_are_the_ones_that_say_adam(self):
        for name in rc.discover():
            with open(os.path.join(HERE, name + ".py")) as f:
                text = f.read()
            adam = "optim.Adam(" in text or "optim.AdamW(" in text
            if name in rc.NO_GRAPHS or name in rc.INFERENCE:
                continue
            self.assertEqual(adam, name in rc.SCALE_FREE_OPTIMIZER, name)


FAKE_GRAPHCHECK = textwrap.dedent('''\
    import json, os, sys
    args = sys.argv[1:]
    out = args[args.index("-o") + 1]
    program = os.path.basename(args[-1])[:-3]
    findings = []
    if os.environ.get("FAKE_NEEDS_NO_NVTX") and os.environ.get("CORPUS_NO_NVTX") != "1":
        findings.append({"severity": "error", "check_id": "fake-check", "message": "NVTX left on"})
    if os.environ.get("FAKE_FINDING") == program:
        findings.append({"severity": "warning", "check_id": "fake-check", "message": "planted by the test"})
    with open(out, "w") as f:
        json.dump({"steps": [{"name": "program", "message": "exited with status 0"}], "findings": findings,
                   "metrics": []}, f)
    print("OK " + program)
''')


class EndToEnd(unittest.TestCase):
    """main() through a subprocess, against a fake graphcheck, with --no-oracle (the oracle needs torch)."""

    def run_corpus(self, *extra, env=None):
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "graphcheck")
            with open(fake, "w") as f:
                f.write("#!" + sys.executable + "\n" + FAKE_GRAPHCHECK)
            os.chmod(fake, 0o755)
            command = [sys.executable, os.path.join(HERE, "run_corpus.py"), "--graphcheck", fake,
                       "--out", os.path.join(tmp, "out"), "--python", sys.executable, "--timeout", "60"] + list(extra)
            proc = subprocess.run(command, capture_output=True, text=True, timeout=300,
                                  env=dict(os.environ, **(env or {})))
            summary = None
            if os.path.exists(os.path.join(tmp, "out", "corpus.json")):
                with open(os.path.join(tmp, "out", "corpus.json")) as f:
                    summary = json.load(f)
            return proc, summary

    def test_clean_fake_run_exits_0(self):
        proc, summary = self.run_corpus("--no-oracle", "--shadow", "0", "--only", "graphed_two_modules_fp32",
                                        "eager_baseline_resnet")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("PASSED", proc.stdout)
        self.assertTrue(proc.stdout.strip().splitlines()[-1].startswith("TOTAL "), proc.stdout)
        self.assertEqual(summary["failures"], [])

    def test_warning_exits_1_with_the_reason(self):
        proc, summary = self.run_corpus("--no-oracle", "--only", "graphed_two_modules_fp32",
                                        env={"FAKE_FINDING": "graphed_two_modules_fp32"})
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("FAILED", proc.stdout)
        self.assertIn("warning [fake-check]", proc.stdout)
        self.assertEqual(len(summary["failures"]), 2)  # the plain run and the shadow run

    def test_no_nvtx_reaches_the_programs(self):
        only = ("--no-oracle", "--shadow", "0", "--only", "graphed_two_modules_fp32")
        proc, _ = self.run_corpus("--no-nvtx", *only, env={"FAKE_NEEDS_NO_NVTX": "1"})
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        proc, _ = self.run_corpus(*only, env={"FAKE_NEEDS_NO_NVTX": "1"})
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)

    def test_usage_errors_exit_2(self):
        proc, _ = self.run_corpus("--no-oracle", "--only", "no_such_program")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("unknown program", proc.stderr)
        proc, _ = self.run_corpus("--plant", "double-grad", "--only", "hf_llama_tiny_whole_step")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("Adam", proc.stderr)
        proc, _ = self.run_corpus("--plant", "frozen", "--no-oracle")
        self.assertEqual(proc.returncode, 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
