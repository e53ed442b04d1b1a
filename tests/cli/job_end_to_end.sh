#!/usr/bin/env bash
# A distributed job's traces analyzed as one: `graphcheck analyze DIR` over 4 synthetic ranks (bench/make_job_traces)
# of which rank 2 captured one kernel more. One report: the finding every rank shares once, naming ranks 0-3; the
# divergent rank named by rank-divergent-capture; the job's metrics, not one set per rank. Then the same job hung, and
# a job whose ranks replay their collective-bearing graph a different number of times.
set -u
gc=${1:?graphcheck binary}
make=${2:?make_job_traces binary}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
mkdir -p "$work/node0" "$work/node1"
"$make" "$work/node0" 4 30 2 || { echo "FAIL: make_job_traces"; exit 1; }
mv "$work"/node0/trace-node0-1000[23].gctrace "$work/node1/"  # two "nodes", analyzed through their common folder
"$gc" analyze "$work" --format json -o "$work/job.json" --fail-on never 2>"$work/err"
python3 - "$work/job.json" <<'PY' || failures=1
import json, sys
r = json.load(open(sys.argv[1]))
by_id = {}
for f in r["findings"]:
    by_id.setdefault(f["check_id"], []).append(f)
checks = [
    ("one env-launch-blocking finding for ranks 0-3", len(by_id.get("env-launch-blocking", [])) == 1 and
     by_id["env-launch-blocking"][0]["where"].get("ranks") == [0, 1, 2, 3]),
    ("rank 2 named as divergent", [f["where"].get("ranks") for f in by_id.get("rank-divergent-capture", [])] == [[2]]),
    ("its message", "capture 1 holds 61 nodes where the others' hold 60" in
     by_id.get("rank-divergent-capture", [{}])[0].get("message", "")),
    ("job metrics", any(m["name"] == "launch.kernels_per_iteration" and "median over 4 ranks" in m["description"]
                        for m in r["metrics"])),
    ("no per-rank metric names", not any(m["name"].startswith("rank") for m in r["metrics"])),
    ("the analyze step counts 4 traces", any(s["name"] == "analyze" and s["message"].startswith("4 traces")
                                             for s in r["steps"])),
]
failed = [name for name, ok in checks if not ok]
for name, ok in checks:
    print(("ok   " if ok else "FAIL ") + name)
sys.exit(1 if failed else 0)
PY
# The same job where rank 2's divergent capture left the others waiting in the collective, ended by --hang-timeout:
# one hang finding naming ranks 0, 1 and 3 and the NCCL kernel of their last graph.
mkdir -p "$work/hung"
"$make" "$work/hung" 4 30 2 hang || { echo "FAIL: make_job_traces hang"; exit 1; }
"$gc" analyze "$work/hung" --format json -o "$work/hung.json" --fail-on never 2>"$work/err"
python3 - "$work/hung.json" <<'PY' || failures=1
import json, sys
r = json.load(open(sys.argv[1]))
hangs = [f for f in r["findings"] if f["check_id"] == "hang"]
checks = [
    ("one hang finding for ranks 0, 1 and 3", len(hangs) == 1 and hangs[0]["where"].get("ranks") == [0, 1, 3]),
    ("it names the collective", hangs and "holds 1 NCCL collective:" in hangs[0]["message"] and
     any("ncclDevKernel_AllReduce_Sum_f32_RING_LL" in e and "NCCL calls: ncclAllReduce" in e
         for e in hangs[0]["evidence"])),
    ("rank 2 named as divergent", [f["where"].get("ranks") for f in r["findings"]
                                   if f["check_id"] == "rank-divergent-capture"] == [[2]]),
    ("no trace-incomplete for the hung ranks", not any(f["check_id"] == "trace-incomplete" for f in r["findings"])),
    # Every rank replayed its one all-reduce graph 20 times: the collectives paired up, the captures did not.
    ("it says the ledgers agree", hangs and "Yet the 4 ranks' collective ledgers agree: each made 20 "
     "collective-bearing graph replays" in hangs[0]["message"] and "rank-divergent-capture" in hangs[0]["fix"]),
]
for name, ok in checks:
    print(("ok   " if ok else "FAIL ") + name)
sys.exit(0 if all(ok for _, ok in checks) else 1)
PY
# A job whose rank 1 replays its all-reduce graph once more every 10 steps, from another line: named at both lines,
# with the counts, on both ranks' report; the clean twin (no divergent rank) is silent.
mkdir -p "$work/extra" "$work/twin"
"$make" "$work/extra" 4 40 1 extra-replay || { echo "FAIL: make_job_traces extra-replay"; exit 1; }
"$make" "$work/twin" 4 40 -1 extra-replay || { echo "FAIL: make_job_traces extra-replay twin"; exit 1; }
"$gc" analyze "$work/extra" --format json -o "$work/extra.json" --fail-on never 2>"$work/err"
"$gc" analyze "$work/twin" --format json -o "$work/twin.json" --fail-on never 2>"$work/err"
python3 - "$work/extra.json" "$work/twin.json" <<'PY' || failures=1
import json, sys
extra = [f for f in json.load(open(sys.argv[1]))["findings"] if f["check_id"] == "rank-divergent-collectives"]
twin = [f for f in json.load(open(sys.argv[2]))["findings"] if f["check_id"] == "rank-divergent-collectives"]
message = extra[0]["message"] if len(extra) == 1 else ""
checks = [
    ("one rank-divergent-collectives finding for rank 1", [f["where"].get("ranks") for f in extra] == [[1]]),
    ("at both lines", "the 11th replay of the graph of capture 1 (ncclAllReduce): rank 1 made it at "
     "/job/train.py:52 in log_loss, ranks 0,2-3 at /job/train.py:48 in train_step" in message),
    ("with the counts", extra and "rank 1 replayed the graph of capture 1 (ncclAllReduce) 44 times, rank 0 40"
     in extra[0]["evidence"]),
    ("the clean twin is silent", twin == []),
]
for name, ok in checks:
    print(("ok   " if ok else "FAIL ") + name)
sys.exit(0 if all(ok for _, ok in checks) else 1)
PY
# SARIF of a job's folder: every result points at a file (a trace, or the program's line), never at the folder.
"$gc" analyze "$work/extra" --format sarif -o "$work/extra.sarif" --fail-on never 2>"$work/err"
python3 - "$work/extra.sarif" "$work/extra" <<'PY' || failures=1
import json, sys
results = json.load(open(sys.argv[1]))["runs"][0]["results"]
uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
ok = results and all(u.endswith(".gctrace") or u.endswith(".py") for u in uris)
print(("ok   " if ok else "FAIL ") + "SARIF of a job's folder points at files: " + ", ".join(sorted(set(uris))))
sys.exit(0 if ok else 1)
PY
"$gc" analyze "$work/empty-folder" >/dev/null 2>"$work/err"; rc=$?
[ "$rc" = 2 ] || { echo "FAIL: a missing folder: exit $rc"; failures=1; }
mkdir "$work/empty"
"$gc" analyze "$work/empty" >/dev/null 2>"$work/err"; rc=$?
[ "$rc" = 2 ] && grep -q "holds no .gctrace file" "$work/err" || { echo "FAIL: an empty folder: exit $rc $(cat "$work/err")"; failures=1; }
echo "$failures failed"
[ "$failures" = 0 ]
