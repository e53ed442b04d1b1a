#!/usr/bin/env bash
# The GPU check of `graphcheck plan` (docs/profiling.md): records poisson_serving.py's eager loop under
# `graphcheck run --plan`, plans it (text and JSON), then captures the plan's balanced bucket set and measures it
# against the plan (verify.json). Usage, on a GPU machine: source scripts/gpu-env.sh; bench/capture_plan/run_check.sh OUT
set -u
out=${1:?usage: run_check.sh OUT}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
graphcheck="${GRAPHCHECK_BUILD_DIR:?source scripts/gpu-env.sh first}/graphcheck"
mkdir -p "$out"
timeout 180 "$graphcheck" run --plan --trace-dir "$out/trace" --format json -o "$out/run.json" --fail-on never -- \
  python3 "$here/poisson_serving.py" record "$out/record.calls.json" >"$out/record.log" 2>&1 ||
  echo "record: exit status $?"
"$graphcheck" plan "$out/trace" -o "$out/plan.txt" && "$graphcheck" plan "$out/trace" --format json -o "$out/plan.json" ||
  { echo "plan: failed"; exit 1; }
cat "$out/plan.txt"
timeout 300 python3 "$here/poisson_serving.py" verify "$out/plan.json" "$out/verify.calls.json" \
  >"$out/verify.json" 2>"$out/verify.log" ||
  echo "verify: exit status $?"
cat "$out/verify.json"
