"""Counts how many contract-breaking programs graphcheck names, and whether their clean twins stay silent: every
defect mode of a program of modes (tests/gpu/programs/contract_variants.py, blind_contract_cases.py: a TWINS dict of
defect mode -> clean twin, `# defect: MODE` on the line that breaks the term, and a line `... vs eager: max difference
D` that the program prints) runs under `graphcheck run`, and so does its twin, and each program of its CLEAN tuple
(clean programs without a defect, counted with the twins).

A defect mode is named when the report has a finding at warning level or above; it is named at its line when one of
those findings' first frame of the program's own is the marked line (else the line given is printed). A twin is
silent when its report has nothing at warning level or above, and it trains like eager when its printed difference is
below 1e-5 (a defect must print one above it: the defect is real). Rows, the counts and the findings go to stdout and
OUT/variants.md, the summaries to OUT/variants.json.

usage (GPU machine, after `source scripts/gpu-env.sh`):
  python3 bench/contract_variants/run_variants.py --graphcheck BUILD/graphcheck --out DIR PROGRAM [PROGRAM ...]
      [--only MODE ...] [--timeout 120] [--flags "--shadow 4"] [--jobs 4]
Runs go --jobs at a time (small programs share one GPU; the figures are findings, not timings).
Exit status: 0 (it counts; it does not judge), 2 for a usage error.
"""
import argparse
import ast
import concurrent.futures
import json
import os
import re
import subprocess
import sys

TRAINS_LIKE_EAGER = 1e-5
_DIFFERENCE = re.compile(r"vs eager: max difference ([-+0-9.eEinfa]+)")


def constant_of(program, name, default=None):
    """A literal the program assigns to `name` at its top level, read without importing it (torch is not needed
    here): TWINS, and CLEAN (clean programs without a defect twin, run as twins are)."""
    tree = ast.parse(open(program).read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    if default is None:
        raise SystemExit("run_variants: error: %s has no %s" % (program, name))
    return default


def marked_line(program, mode):
    for number, line in enumerate(open(program).read().splitlines(), 1):
        if re.search(r"# defect: %s\s*$" % re.escape(mode), line):
            return number
    return None


def run(graphcheck, program, mode, out, timeout, flags):
    name = "%s.%s" % (os.path.splitext(os.path.basename(program))[0], mode)
    report = os.path.join(out, name + ".json")
    command = [graphcheck, "run", "--fail-on", "never", "--format", "json", "-o", report] + flags + [
        "--", sys.executable, program, mode]
    try:
        done = subprocess.run(["timeout", "-k", "10", str(timeout)] + command, capture_output=True, text=True)
        output = done.stdout + done.stderr
    except OSError as error:
        output = str(error)
    with open(os.path.join(out, name + ".log"), "w") as log:
        log.write(output)
    findings = []
    try:
        for finding in json.load(open(report)).get("findings", []):
            if finding.get("severity") not in ("error", "warning"):
                continue
            frame = next((f for f in finding.get("where", {}).get("python", []) if f.get("user")), None)
            findings.append({"check": finding.get("check_id"), "severity": finding.get("severity"),
                             "line": frame.get("line") if frame else None,
                             "message": finding.get("message", "")[:300]})
    except (OSError, ValueError) as error:
        findings = None
        output += "\nno report: %s" % error
    match = _DIFFERENCE.search(output)
    return {"mode": mode, "findings": findings, "difference": float(match.group(1)) if match else None,
            "tail": output[-600:]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--graphcheck", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--flags", default="")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("programs", nargs="+")
    arguments = parser.parse_args()
    os.makedirs(arguments.out, exist_ok=True)
    pairs = [(program, defect, twin) for program in arguments.programs
             for defect, twin in constant_of(program, "TWINS").items() if not arguments.only or defect in arguments.only]
    alone = [(program, None, clean) for program in arguments.programs for clean in constant_of(program, "CLEAN", ())
             if not arguments.only or clean in arguments.only]
    with concurrent.futures.ThreadPoolExecutor(max(1, arguments.jobs)) as pool:
        runs = {(program, mode): pool.submit(run, arguments.graphcheck, program, mode, arguments.out,
                                             arguments.timeout, arguments.flags.split())
                for program, defect, twin in pairs + alone for mode in (defect, twin) if mode is not None}
    rows, summaries = [], []
    named = at_line = defects = silent = like_eager = twins = real = 0
    for program, defect, twin in pairs:
        line = marked_line(program, defect)
        result, clean = runs[(program, defect)].result(), runs[(program, twin)].result()
        summaries.append({"program": program, "defect": result, "twin": clean, "line": line})
        defects += 1
        twins += 1
        found = result["findings"] or []
        named += bool(found)
        at_line += any(f["line"] == line for f in found)
        real += result["difference"] is not None and result["difference"] > TRAINS_LIKE_EAGER
        quiet = clean["findings"] is not None and not clean["findings"]
        silent += quiet
        like = clean["difference"] is not None and clean["difference"] < TRAINS_LIKE_EAGER
        like_eager += like
        rows.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            defect, result["difference"], ", ".join("%s@%s" % (f["check"], f["line"]) for f in found) or "-",
            "yes" if any(f["line"] == line for f in found) else "no (marked %s)" % line, twin,
            ", ".join("%s@%s" % (f["check"], f["line"]) for f in clean["findings"] or []) or (
                "silent" if quiet else "no report"), clean["difference"]))
    for program, _, clean_mode in alone:
        clean = runs[(program, clean_mode)].result()
        summaries.append({"program": program, "defect": None, "twin": clean, "line": None})
        twins += 1
        quiet = clean["findings"] is not None and not clean["findings"]
        silent += quiet
        like_eager += clean["difference"] is not None and clean["difference"] < TRAINS_LIKE_EAGER
        rows.append("| (clean) | - | - | - | %s | %s | %s |" % (
            clean_mode, ", ".join("%s@%s" % (f["check"], f["line"]) for f in clean["findings"] or []) or (
                "silent" if quiet else "no report"), clean["difference"]))
    table = ["| defect | vs eager | findings (warning+) | at the marked line | twin | twin's findings | twin vs eager |",
             "|---|---|---|---|---|---|---|"] + rows
    totals = ("defects %d: named %d, at the marked line %d, real (differ from eager) %d; twins %d: silent %d, train "
              "like eager %d" % (defects, named, at_line, real, twins, silent, like_eager))
    text = "\n".join(table + ["", totals])
    for summary in summaries:
        for key in ("defect", "twin"):
            for finding in (summary[key] or {}).get("findings") or []:
                text += "\n- %s %s: %s" % (summary[key]["mode"], finding["check"], finding["message"])
    print(text)
    with open(os.path.join(arguments.out, "variants.md"), "w") as table_file:
        table_file.write(text + "\n")
    with open(os.path.join(arguments.out, "variants.json"), "w") as raw:
        json.dump(summaries, raw, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
