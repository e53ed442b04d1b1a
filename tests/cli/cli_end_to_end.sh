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
# Bare graphcheck: the help on stdout, exit 2 (no command ran). An unknown command is named.
"$gc" 2>"$work/err" >"$work/out"; expect no-subcommand 2 $?
contains no-subcommand "$work/out" "Subcommands:"
"$gc" analyse x 2>"$work/err" >/dev/null; expect unknown-command 2 $?
one_line unknown-command "$work/err"; contains unknown-command "$work/err" "unknown command 'analyse'"
# report cannot take --check-option (its findings are made), so its help does not offer it.
"$gc" report --help >"$work/out"; expect report-help 0 $?
if grep -q -- "--check-option" "$work/out"; then echo "FAIL: report --help lists --check-option"; failures=$((failures + 1)); else passes=$((passes + 1)); fi
"$gc" analyze --help >"$work/out"; contains analyze-help "$work/out" "--check-option"
# Selections of no check are usage errors, not "0 checks ran".
for selection in 'nonexistent-*' '-*'; do
  "$gc" lint --env --checks "$selection" 2>"$work/err" >/dev/null; expect "empty-selection $selection" 2 $?
  one_line "empty-selection $selection" "$work/err"; contains "empty-selection $selection" "$work/err" "selects no check"
done
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
# list-metrics: the catalogue, with each metric's direction; every metric of a shipped trace's report is in it.
"$gc" list-metrics --format json >"$work/metrics.json"; expect list-metrics 0 $?
"$gc" analyze "$(dirname "$0")/../../examples/traces/eager_then_graphed/trace.gctrace" --format json --fail-on never \
  -o "$work/analyzed.json"; expect analyze-shipped 0 $?
python3 -c "
import json, sys
catalogue = {m['name']: m for m in json.load(open(sys.argv[1]))}
assert catalogue['graphed.speedup']['better'] == 'higher' and catalogue['launch.iteration_us']['unit'] == 'us'
report = json.load(open(sys.argv[2]))
assert report['metrics'], 'the report has no metrics'
def known(name):
    shared = name.rsplit('.', 1)[0]
    return name in catalogue or (shared in catalogue and catalogue[shared]['by_origin'])
missing = [m['name'] for m in report['metrics'] if not known(m['name'])]
assert not missing, missing" "$work/metrics.json" "$work/analyzed.json" && passes=$((passes + 1)) ||
  { echo "FAIL: list-metrics json"; failures=$((failures + 1)); }
# explain: plain text by default, the Markdown page with --format markdown.
"$gc" explain env-launch-blocking >"$work/out"; expect explain 0 $?
contains explain "$work/out" "^Fix$"
if grep -qE '^#|\*\*|`' "$work/out"; then echo "FAIL: explain prints Markdown:"; cat "$work/out"; failures=$((failures + 1)); else passes=$((passes + 1)); fi
"$gc" explain env-launch-blocking --format markdown >"$work/out"; expect explain-markdown 0 $?
contains explain-markdown "$work/out" "## Fix"

# lint --config of a file with no Megatron configuration in it: one line, exit 2.
printf 'foo: bar\n' >"$work/foo.yaml"
"$gc" lint --config "$work/foo.yaml" 2>"$work/err" >/dev/null; expect unknown-config 2 $?
one_line unknown-config "$work/err"; contains unknown-config "$work/err" "nothing in it is a Megatron"
"$gc" lint --config "$work/r.json" 2>"$work/err" >/dev/null; expect report-as-config 2 $?
one_line report-as-config "$work/err"; contains report-as-config "$work/err" "nothing in it is a Megatron"

# A run that did not complete re-renders as such, with its exit code, whatever the findings.
python3 -c "import json, sys; r = json.load(open(sys.argv[1])); r['findings'] = []
r['incomplete'] = {'exit_code': 3, 'reason': 'only the static checks ran; no GPU'}
json.dump(r, open(sys.argv[2], 'w'))" "$work/r.json" "$work/incomplete.json"
"$gc" report "$work/incomplete.json" --format markdown >"$work/out" 2>"$work/err"; expect incomplete-report 3 $?
contains incomplete-report "$work/out" "did not complete"
if grep -q "No capture blocker" "$work/out"; then echo "FAIL: an incomplete run reads as clean"; failures=$((failures + 1)); else passes=$((passes + 1)); fi
# The same from a real `check` where this machine has no GPU (exit 3); a GPU machine runs the model instead.
"$gc" check builtin:mlp --format json -o "$work/k.json" >/dev/null 2>&1
if [ $? = 3 ]; then
  "$gc" report "$work/k.json" --format markdown >"$work/out" 2>/dev/null; expect check-without-gpu-report 3 $?
  contains check-without-gpu-report "$work/out" "did not complete"
fi

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
