#!/usr/bin/env bash
# Hostile and mistaken configurations, flags and files end to end, kept as a corpus: a threshold that would switch the
# baseline gate off, YAML that is not a configuration graphcheck knows, selections of nothing, deep nesting, the wrong
# kind of file. Each gets one line that a newcomer can act on and exit 2. (A signal while a report is written is
# tests/core/file_io_test.cc's: here it could not be timed to land mid-write.)
set -u
gc=${1:?graphcheck binary}
root=${2:?source dir}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trace="$root/examples/traces/capture_item/trace.gctrace"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok   $*"; }

# bad NAME WANT CMD...: exit 2 within 20 s, one stderr line "graphcheck: error: ..." holding WANT, no control bytes.
bad() {
  local name=$1 want=$2
  shift 2
  timeout 20 "$@" >/dev/null 2>"$work/err"
  local rc=$?
  if [ "$rc" != 2 ]; then fail "$name: exit $rc, want 2: $(head -c 300 "$work/err")"; return; fi
  if [ "$(wc -l <"$work/err")" != 1 ] || ! grep -q '^graphcheck: error: ' "$work/err"; then
    fail "$name: not one error line: $(head -c 300 "$work/err")"; return
  fi
  if LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n' <"$work/err"); then fail "$name: control bytes in the error line"; return; fi
  if ! grep -qF -- "$want" "$work/err"; then fail "$name: '$want' not in: $(cat "$work/err")"; return; fi
  if [ "$(wc -c <"$work/err")" -gt 400 ]; then fail "$name: a line of $(wc -c <"$work/err") bytes"; return; fi
  pass "$name: $(cat "$work/err")"
}

# Thresholds that would switch the gate off: a +1900% regression must fail, and every non-finite threshold is refused,
# from the command line and from the configuration file alike.
"$gc" analyze "$trace" --format json -o "$work/base.json" --fail-on never 2>/dev/null
python3 -c "import json, sys; r = json.load(open(sys.argv[1]))
for m in r['metrics']:
    if m['name'] == 'launch.iteration_us': m['value'] *= 20
json.dump(r, open(sys.argv[2], 'w'))" "$work/base.json" "$work/worse.json"
"$gc" report "$work/worse.json" --baseline "$work/base.json" --max-regression launch.iteration_us=10 >/dev/null 2>&1
[ $? = 1 ] && pass "a +1900% regression fails the gate" || fail "a +1900% regression passes the gate"
for value in nan NaN nan% inf -inf infinity 1e999 -5; do
  bad "--max-regression METRIC=$value" "--max-regression 'launch.iteration_us=$value' must be METRIC=PERCENT" \
    "$gc" report "$work/worse.json" --baseline "$work/base.json" --max-regression "launch.iteration_us=$value"
  printf 'max-regression:\n  launch.iteration_us: %s\n' "$value" >"$work/threshold.yaml"
  bad "max-regression: $value in the configuration file" "threshold.yaml:2:24: max-regression 'launch.iteration_us=" \
    "$gc" report "$work/worse.json" --baseline "$work/base.json" --config-file "$work/threshold.yaml"
done
# Every other number: floating-point flags refuse nan and inf, bounds are written short.
bad "--hang-timeout nan" "--hang-timeout: 'nan' must be a finite number" "$gc" run --hang-timeout nan -- true
bad "--chunks 1e999" "--chunks: '1e999' must be a finite number of at least 1" "$gc" lint --chunks 1e999 --order 1,-1
bad "--warmup-microbatches -inf" "must be a finite number of at least 0" \
  "$gc" lint --warmup-microbatches -inf --schedule-table 0:0
bad "--check-option nan" "needs a finite number" "$gc" analyze "$trace" --check-option launch-bound.graph-launch-us=nan
printf 'tolerances:\n  bfloat16: inf\n' >"$work/tolerance.yaml"
bad "tolerances: inf" "needs a finite number" "$gc" analyze "$trace" --config-file "$work/tolerance.yaml"

# YAML that is not a configuration lint knows: refused in one line, never "0 errors".
mkdir -p "$work/.github/workflows"
printf 'name: CI\non: [push]\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n' \
  >"$work/.github/workflows/ci.yml"
printf 'services:\n  web:\n    image: nginx\n    environment:\n      - FOO=bar\n' >"$work/compose.yaml"
printf 'defaults:\n  - _self_\nmodel:\n  name: gpt\n  num_layers: 2\nhydra:\n  run:\n    dir: outputs\n' >"$work/hydra.yaml"
printf 'env:\n  CUDA_VISIBLE_DEVICES: "0"\n' >"$work/env.yaml"
for file in .github/workflows/ci.yml compose.yaml hydra.yaml env.yaml; do
  bad "lint --config $file" "not a configuration graphcheck knows" "$gc" lint --config "$work/$file"
done

# A graphcheck configuration that selects nothing: an error naming the file's line, as --checks '' is for the flag.
printf 'checks: ""\n' >"$work/empty-checks.yaml"
printf 'checks: ",,,"\n' >"$work/commas-checks.yaml"
printf 'checks: ["-*"]\n' >"$work/none-checks.yaml"
bad "checks: \"\"" "empty-checks.yaml:1:9: checks selects no check" \
  "$gc" analyze "$trace" --config-file "$work/empty-checks.yaml"
bad "checks: \",,,\"" "commas-checks.yaml:1:9: checks selects no check" \
  "$gc" analyze "$trace" --config-file "$work/commas-checks.yaml"
bad "checks: [\"-*\"]" "none-checks.yaml:1:9: checks '-*' selects no check" \
  "$gc" analyze "$trace" --config-file "$work/none-checks.yaml"
bad "--checks ''" "--checks: selects no check" "$gc" analyze "$trace" --checks ''

# 3000 levels of nested block mappings: said to be too deep, not "bad file".
python3 -c "print(''.join('  ' * i + 'k%d:\n' % i for i in range(3000)) + '  ' * 3000 + 'x: 1')" >"$work/deep.yaml"
bad "a 3000-deep configuration file" "nesting is too deep" "$gc" analyze "$trace" --config-file "$work/deep.yaml"
bad "a 3000-deep lint --config" "nesting is too deep" "$gc" lint --config "$work/deep.yaml"

# The wrong kind of file: a trace given to report, empty files; each path named once.
bad "report on a trace" "a graphcheck trace, not a report: analyze it with \`graphcheck analyze $trace\`" \
  "$gc" report "$trace"
: >"$work/empty.gctrace"
bad "an empty trace" "'$work/empty.gctrace': the file is empty (0 bytes)" "$gc" analyze "$work/empty.gctrace"
grep -q "$work/empty.gctrace.*$work/empty.gctrace" "$work/err" && fail "the empty trace's path is printed twice"
bad "a missing trace" "cannot open trace '$work/missing.gctrace'" "$gc" analyze "$work/missing.gctrace"
grep -q "$work/missing.gctrace.*$work/missing.gctrace" "$work/err" && fail "the missing trace's path is printed twice"
: >"$work/empty.json"
bad "an empty report" "empty.json: the file is empty (0 bytes), not a report" "$gc" report "$work/empty.json"

# The no-speedup note tells the truth: x7.68 is faster beyond the noise, short only of a min-speedup set at x10.
"$gc" analyze "$root/examples/traces/eager_then_graphed/trace.gctrace" --checks no-speedup \
  --check-option no-speedup.min-speedup=10 >"$work/out" 2>&1
if grep -q "speedup x7.68; faster beyond the steps' noise of [0-9]*%, but short of min-speedup x10.00" "$work/out"; then
  pass "no-speedup on a x7.68 speedup"
else
  fail "no-speedup on a x7.68 speedup: $(grep -o 'speedup x[^)]*' "$work/out")"
fi

# report --help says what --checks does there: report runs no check.
"$gc" report --help | grep -q -- "--checks.*Show only the findings of these checks" && pass "report --help on --checks" ||
  fail "report --help on --checks: $("$gc" report --help | grep -- --checks)"

echo "$failures failed"
[ "$failures" = 0 ]
