#!/usr/bin/env bash
# Whether recording slows poisson_serving.py's eager loop, pass by pass (issue 47): `poisson_serving.py record` in
# each named setting, printing its three passes' time per call and its model calls' per-size medians (each call's time
# in OUT/N-SETTING.calls.json); for `--plan` runs also the eager time per call `graphcheck plan` took from the trace.
# Settings: plain (no graphcheck), run, run-plan (--plan), run-no-probe (--no-python-probe), run-capture
# (--launches capture), run-capture-no-probe (both). Usage, on a GPU machine:
#   source scripts/gpu-env.sh; bench/capture_plan/record_passes.sh OUT [SETTING...]
# (default: plain run run-plan run-plan plain)
set -u
out=${1:?usage: record_passes.sh OUT [SETTING...]}
shift
settings=("$@")
[ ${#settings[@]} -gt 0 ] || settings=(plain run run-plan run-plan plain)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
graphcheck="${GRAPHCHECK_BUILD_DIR:?source scripts/gpu-env.sh first}/graphcheck"
program=(python3 "$here/poisson_serving.py" record)
mkdir -p "$out"
planned_eager() {  # planned_eager PLAN.json: the plan's eager time per call (each size's median, weighted by calls)
  python3 -c 'import json, sys
region = json.load(open(sys.argv[1]))["regions"][0]
print("%.1f" % (sum(s["calls"] * s["eager_us"] for s in region["sizes"]) / region["calls"]))' "$1"
}
n=0
for setting in "${settings[@]}"; do
  case $setting in
    plain | run) flags=() ;;
    run-plan) flags=(--plan) ;;
    run-no-probe) flags=(--no-python-probe) ;;
    run-capture) flags=(--launches capture) ;;
    run-capture-no-probe) flags=(--launches capture --no-python-probe) ;;
    *) echo "unknown setting $setting" && continue ;;
  esac
  n=$((n + 1))
  dir="$out/$n-$setting"
  printf '%-22s ' "$setting"
  if [ "$setting" = plain ]; then
    timeout 120 "${program[@]}" "$dir.calls.json" 2>&1 | grep -E '^eager loop|rror' | head -3
    continue
  fi
  timeout 180 "$graphcheck" run "${flags[@]}" --trace-dir "$dir" --fail-on never -o "$dir.report.txt" -- \
    "${program[@]}" "$dir.calls.json" 2>&1 | grep -E '^eager loop|rror' | head -3
  if [ "$setting" = run-plan ]; then
    "$graphcheck" plan "$dir" --format json -o "$dir.plan.json" &&
      printf '%-22s the plan'"'"'s eager time per call: %s us\n' "" "$(planned_eager "$dir.plan.json")"
  fi
  rm -rf "$dir"
done
