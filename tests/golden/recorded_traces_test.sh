#!/usr/bin/env bash
# Golden test over the traces graphcheck recorded on a GPU machine (examples/traces/*/trace.gctrace, or a job's
# folder of traces, one per process, where there is no trace.gctrace): the findings (severity, check id, call, torch
# operator, the user's Python file:line) of `graphcheck analyze` must equal examples/traces/*/expected.txt; and where
# a trace was recorded with `graphcheck run --plan`, `graphcheck plan` must print examples/traces/*/plan.txt (from its
# second line: the first names the path given). GRAPHCHECK_UPDATE_GOLDEN=1 rewrites the expected files; review the diff.
set -u
gc=${1:?graphcheck binary}
root=${2:?source dir}
failures=0
passes=0
for dir in "$root"/examples/traces/*/; do
  name=$(basename "$dir")
  # The analysis must succeed and write a report that ran checks: an empty expected file (a clean trace) would
  # otherwise pass for a binary that writes nothing.
  input="$dir"trace.gctrace
  [ -e "$input" ] || input="$dir"
  json=$("$gc" analyze "$input" --format json --fail-on never 2>/dev/null)
  rc=$?
  if [ "$rc" != 0 ]; then
    echo "FAIL: $name: analyze exited $rc"
    failures=$((failures + 1))
    continue
  fi
  actual=$(printf '%s' "$json" | python3 -c '
import json, sys
report = json.load(sys.stdin)
if not report["checks_run"]:
    sys.exit("no check ran")
for f in report["findings"]:
    where = f["where"]
    user = [p for p in where.get("python", []) if p.get("user")]
    line = "%s:%d" % (user[0]["file"].rsplit("/", 1)[-1], user[0]["line"]) if user else "-"
    print(f["severity"], f["check_id"], where.get("api", "-"), where.get("torch_op", "-"), line)')
  if [ $? != 0 ]; then
    echo "FAIL: $name: the report could not be read"
    failures=$((failures + 1))
    continue
  fi
  if [ -e "$dir/plan.txt" ]; then
    plan=$("$gc" plan "$input" | tail -n +2)
    if [ "${GRAPHCHECK_UPDATE_GOLDEN:-0}" = 1 ]; then
      printf 'graphcheck plan: %s\n%s\n' "examples/traces/$name" "$plan" >"$dir/plan.txt"
    elif [ "$plan" != "$(tail -n +2 "$dir/plan.txt")" ]; then
      echo "FAIL: $name: graphcheck plan"
      diff <(tail -n +2 "$dir/plan.txt") <(printf '%s\n' "$plan")
      failures=$((failures + 1))
      continue
    fi
  fi
  if [ "${GRAPHCHECK_UPDATE_GOLDEN:-0}" = 1 ]; then
    printf '%s\n' "$actual" >"$dir/expected.txt"
    continue
  fi
  if [ "$actual" = "$(cat "$dir/expected.txt")" ]; then
    passes=$((passes + 1))
  else
    echo "FAIL: $name"
    diff <(cat "$dir/expected.txt") <(printf '%s\n' "$actual")
    failures=$((failures + 1))
  fi
done
echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
