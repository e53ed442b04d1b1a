#!/usr/bin/env bash
# End-to-end checks of `graphcheck lint --config / --order / -- ARGS`: exit codes, findings with file and line,
# one-line errors naming line and column for malformed input, valid JSON with the order timeline on stderr, speed.
set -u
gc=${1:?graphcheck binary}
src=${2:?source dir}
fx="$src/tests/fixtures/lint"
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

for ok in bridge_te_moe_ok.yaml bridge_local_ok.json mcore_launch_ok.sh; do
  "$gc" lint --config "$fx/$ok" >"$work/out" 2>&1; expect "clean $ok" 0 $?
done
"$gc" lint --config "$fx/bridge_full_iteration_bad.yaml" >"$work/out" 2>&1; expect bad-yaml 1 $?
contains bad-yaml "$work/out" "\[config-te-rng-tracker\]"
contains bad-yaml "$work/out" "bridge_full_iteration_bad.yaml:6:3, key model.use_te_rng_tracker"
contains bad-yaml "$work/out" "fix: set model.use_te_rng_tracker: true"
"$gc" lint --config "$fx/bridge_moe_bad.json" >"$work/out" 2>&1; expect bad-json 1 $?
contains bad-json "$work/out" "bridge_moe_bad.json:4:41, key model.cuda_graph_scope"
"$gc" lint --config "$fx/mcore_launch_bad.sh" >"$work/out" 2>&1; expect bad-args 1 $?
contains bad-args "$work/out" "mcore_launch_bad.sh:10:3, key --add-qkv-bias"
"$gc" lint -- --cuda-graph-impl transformer_engine --cuda-graph-scope attn --te-rng-tracker >"$work/out" 2>&1
expect args-after-dashes-clean 0 $?
"$gc" lint -- --cuda-graph-impl local --te-rng-tracker --cuda-graph-scope full_iteration >"$work/out" 2>&1
expect args-after-dashes-bad 1 $?
contains args-after-dashes-bad "$work/out" "<command line>, key --check-for-nan-in-loss-and-grad"
"$gc" lint --config "$fx/bridge_full_iteration_bad.yaml" --checks 'config-*,-config-te-rng-tracker' \
  --format json -o "$work/r.json" 2>"$work/err"
expect checks-selection 1 $?
python3 -c "import json,sys; ids={f['check_id'] for f in json.load(open(sys.argv[1]))['findings']}; \
  assert 'config-te-rng-tracker' not in ids and 'config-full-iteration-impl' in ids, ids" "$work/r.json" \
  && passes=$((passes + 1)) || { echo "FAIL: --checks selection"; failures=$((failures + 1)); }

# Malformed input: exit 2, one line naming FILE:LINE:COLUMN.
"$gc" lint --config "$fx/malformed.yaml" 2>"$work/err" >/dev/null; expect malformed-yaml 2 $?
one_line malformed-yaml "$work/err"; contains malformed-yaml "$work/err" "malformed.yaml:4:4: "
"$gc" lint --config "$fx/malformed.json" 2>"$work/err" >/dev/null; expect malformed-json 2 $?
one_line malformed-json "$work/err"; contains malformed-json "$work/err" "malformed.json:4:33: "
"$gc" lint --config "$work/missing.yaml" 2>"$work/err" >/dev/null; expect missing-config 2 $?
one_line missing-config "$work/err"; contains missing-config "$work/err" "missing.yaml"
"$gc" lint --order "1,x" 2>"$work/err" >/dev/null; expect bad-order 2 $?
one_line bad-order "$work/err"; contains bad-order "$work/err" "'x' is not a number"
"$gc" lint 2>"$work/err" >/dev/null; expect nothing-to-lint 2 $?
one_line nothing-to-lint "$work/err"

# Capture orders: the schedule-table example converts to Megatron's stated order, which passes.
"$gc" lint --schedule-table "0:0 1:0 2:0 0:1 1:1 2:1 3:0 4:0 3:1 4:1" --warmup-microbatches 5 >"$work/out" 2>&1
expect schedule-table 0 $?
contains schedule-table "$work/out" "1, 1, 1, 2, 2, 2, -2, 1, -2, 1, -2, 2, -1, 2, -1, -1, -2, -2, -1, -1"
contains schedule-table "$work/out" "chunk 2   .  .  . F0 F1 F2 B0"
"$gc" lint --order-file "$fx/order_pp2_vp2_ok.txt" --chunks 2 --microbatches 5 --callables 4 --sample-args 20 \
  >"$work/out" 2>&1
expect order-file-ok 0 $?
"$gc" lint --order-file "$fx/order_bad.txt" >"$work/out" 2>&1; expect order-file-bad 1 $?
contains order-file-bad "$work/out" "order_bad.txt:3:1, key _order"
"$gc" lint --order "1,-1,-2,2" --format json >"$work/r.json" 2>"$work/err"; expect order-json 1 $?
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['findings'][0]['check_id']=='schedule-order'" \
  "$work/r.json" && passes=$((passes + 1)) || { echo "FAIL: order json"; failures=$((failures + 1)); }
contains order-json-timeline "$work/err" "chunk 1  F0 B0"
"$gc" lint --order "1,2,-2,1,-1,-1" --moe-overlap --layers-per-chunk 1,2 --capture-wgrad >"$work/out" 2>&1
contains moe-overlap "$work/out" "1, 2, 3, 1, -3, -3.5, -2, -2.5, -1, -1.5, -1, -1.5"

# Speed: a lint of a configuration takes well under a second.
start=$(date +%s%N)
"$gc" lint --config "$fx/bridge_te_moe_ok.yaml" >/dev/null 2>&1
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ "$ms" -lt 1000 ]; then passes=$((passes + 1)); else echo "FAIL: lint took ${ms} ms"; failures=$((failures + 1)); fi

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
