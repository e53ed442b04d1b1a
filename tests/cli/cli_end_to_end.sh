#!/usr/bin/env bash
# End-to-end checks of the graphcheck binary: exit codes, one-line errors, report round trip to JUnit.
set -u
gc=${1:?graphcheck binary}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passes=0
expect() {  # expect NAME WANT_RC GOT_RC
  if [ "$2" = "$3" ]; then passes=$((passes + 1)); else echo "FAIL: $1: exit $3, want $2"; failures=$((failures + 1)); fi
}
contains() {  # contains NAME FILE TEXT
  if grep -q -- "$3" "$2"; then passes=$((passes + 1)); else echo "FAIL: $1: '$3' not in output:"; cat "$2"; failures=$((failures + 1)); fi
}
one_line() {  # one_line NAME FILE
  if [ "$(wc -l <"$2")" = 1 ]; then passes=$((passes + 1)); else echo "FAIL: $1: stderr is not one line:"; cat "$2"; failures=$((failures + 1)); fi
}
clean_env() { env -u PYTORCH_CUDA_ALLOC_CONF -u PYTORCH_ALLOC_CONF -u NCCL_GRAPH_REGISTER -u CUDA_LAUNCH_BLOCKING \
  -u PYTORCH_NO_CUDA_MEMORY_CACHING -u WORLD_SIZE "$@"; }

"$gc" --version >"$work/out" 2>&1; expect version 0 $?
contains version "$work/out" "graphcheck "

clean_env PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.6,expandable_segments:True "$gc" lint --env \
  >"$work/out" 2>&1
expect lint-env-bad 1 $?
contains lint-env-bad "$work/out" "env-expandable-segments-nccl-register"
contains lint-env-bad "$work/out" "fix: Set NCCL_GRAPH_REGISTER=0"
clean_env PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.6,expandable_segments:True NCCL_GRAPH_REGISTER=0 \
  "$gc" lint --env >"$work/out" 2>&1
expect lint-env-clean 0 $?
clean_env CUDA_LAUNCH_BLOCKING=1 "$gc" lint --env >/dev/null 2>&1; expect warning-not-failing 0 $?
clean_env CUDA_LAUNCH_BLOCKING=1 "$gc" lint --env --fail-on warning >/dev/null 2>&1; expect fail-on-warning 1 $?
clean_env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$gc" lint --env --fail-on never >/dev/null 2>&1; expect fail-on-never 0 $?
clean_env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$gc" lint --env --checks env-launch-blocking >/dev/null 2>&1
expect checks-selection 0 $?

# Usage errors: exit 2, one line naming the problem.
"$gc" lint --no-such-flag 2>"$work/err" >/dev/null; expect bad-flag 2 $?
one_line bad-flag "$work/err"; contains bad-flag "$work/err" "no-such-flag"
"$gc" explain no-such-check 2>"$work/err" >/dev/null; expect unknown-check 2 $?
one_line unknown-check "$work/err"; contains unknown-check "$work/err" "no-such-check"
"$gc" lint --env --checks no-such-check 2>"$work/err" >/dev/null; expect unknown-check-selection 2 $?
one_line unknown-check-selection "$work/err"
"$gc" lint --env --format yaml 2>"$work/err" >/dev/null; expect bad-format 2 $?
one_line bad-format "$work/err"
"$gc" report "$work/missing.json" 2>"$work/err" >/dev/null; expect missing-report 2 $?
one_line missing-report "$work/err"; contains missing-report "$work/err" "missing.json"
echo '{"schema": "graphcheck.report/1", "findings": [' >"$work/broken.json"
"$gc" report "$work/broken.json" 2>"$work/err" >/dev/null; expect broken-report 2 $?
one_line broken-report "$work/err"; contains broken-report "$work/err" "broken.json"
"$gc" 2>"$work/err" >/dev/null; expect no-subcommand 2 $?
"$gc" run --launches some -- true 2>"$work/err" >/dev/null; expect bad-launches 2 $?
one_line bad-launches "$work/err"; contains bad-launches "$work/err" "not all, sampled or capture"
"$gc" run --sampling 0:900:500 -- true 2>"$work/err" >/dev/null; expect bad-sampling 2 $?
one_line bad-sampling "$work/err"; contains bad-sampling "$work/err" "FIRST_LAUNCHES:WINDOW_MS:PERIOD_MS"
"$gc" run --shadow 4 --no-python-probe -- true 2>"$work/err" >/dev/null; expect shadow-without-probe 2 $?
one_line shadow-without-probe "$work/err"; contains shadow-without-probe "$work/err" "needs the Python probe"
"$gc" run --shadow -1 -- true 2>"$work/err" >/dev/null; expect shadow-negative 2 $?
one_line shadow-negative "$work/err"

# JSON report -> graphcheck report -> JUnit, well-formed XML.
clean_env CUDA_LAUNCH_BLOCKING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$gc" lint --env --format json -o "$work/r.json"
expect json-report 1 $?
"$gc" report "$work/r.json" --format junit -o "$work/r.xml"; expect junit 1 $?
if python3 -c "import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); \
  cases = d.getElementsByTagName('testcase'); assert len(cases) >= 4, len(cases); \
  assert len(d.getElementsByTagName('failure')) == 1" "$work/r.xml"; then
  passes=$((passes + 1)); else echo "FAIL: junit not well-formed or wrong content"; cat "$work/r.xml"; failures=$((failures + 1)); fi
"$gc" report "$work/r.json" --format json -o "$work/r2.json"; expect json-roundtrip 1 $?
if cmp -s "$work/r.json" "$work/r2.json"; then passes=$((passes + 1)); else echo "FAIL: json round trip differs"; failures=$((failures + 1)); fi
"$gc" list-checks --format json >"$work/checks.json"; expect list-checks 0 $?
python3 -c "import json,sys; ids=[c['id'] for c in json.load(open(sys.argv[1]))]; assert 'env-launch-blocking' in ids" \
  "$work/checks.json" && passes=$((passes + 1)) || { echo "FAIL: list-checks json"; failures=$((failures + 1)); }
"$gc" explain env-launch-blocking >"$work/out"; expect explain 0 $?
contains explain "$work/out" "## Fix"

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
