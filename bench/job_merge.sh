#!/usr/bin/env bash
# The analysis of a large distributed job on one machine: RANKS synthetic rank traces (bench/make_job_traces, STEPS
# eager steps of 60 launches each: 330 steps is about the 20000 launches the default recorder keeps per process),
# analyzed as one report by `graphcheck analyze DIR`, with 1 and with 2 analysis threads. Prints the traces' size,
# wall time, CPU time and peak memory of each, and the job's findings. MODE `extra-replay`: each rank replays a
# graph holding an all-reduce STEPS times, each replay followed by an eager all-reduce (collective ledgers of 2 x STEPS
# entries), and rank RANKS/2 replays it once more every 10 steps (rank-divergent-collectives).
#   bench/job_merge.sh [RANKS] [STEPS] [MODE]     (default 256 330; MODE: "" or extra-replay)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="${GRAPHCHECK_BUILD_DIR:-$root/build}"
ranks=${1:-256}
steps=${2:-330}
mode=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/bench/make_job_traces" "$work" "$ranks" "$steps" $((ranks / 2)) $mode
echo "job: $ranks ranks${mode:+ ($mode)}, $(du -sh --apparent-size "$work" | cut -f1) of traces ($(du -sh "$work" | cut -f1) on disk)"
for threads in 1 2; do
  GRAPHCHECK_ANALYSIS_THREADS=$threads /usr/bin/time -f "%e s wall, %U s user, %M KiB peak" \
    "$build/graphcheck" analyze "$work" --format json -o "$work/report.json" --fail-on never 2>"$work/time"
  echo "threads $threads: $(tail -1 "$work/time")"
done
python3 - "$work/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for f in r["findings"]:
    ranks = f["where"].get("ranks", [])
    print(f"  {f['severity']} {f['check_id']}: {len(ranks)} rank(s): {f['message'][:400]}")
print(f"  {len(r['metrics'])} metrics")
PY
