#!/usr/bin/env bash
# Traces a newcomer or a hostile user hands `graphcheck analyze`: unrelated processes are never merged into one job
# (the shipped examples' folder holds 7 runs: one line naming why, exit 2), while one job's ranks, agent included,
# still merge.
set -u
gc=${1:?graphcheck binary}
root=${2:?source dir}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
traces="$root/examples/traces"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok   $*"; }

# refused NAME PATTERN ARGS...: exit 2 with one stderr line "graphcheck: error: ..." matching PATTERN.
refused() {
  local name=$1 pattern=$2
  shift 2
  "$gc" analyze "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [ "$rc" != 2 ]; then fail "$name: exit $rc, want 2: $(head -c 300 "$work/err")"; return; fi
  if [ "$(wc -l <"$work/err")" != 1 ] || ! grep -q "^graphcheck: error: .*$pattern" "$work/err"; then
    fail "$name: not one error line matching '$pattern': $(head -c 400 "$work/err")"; return
  fi
  pass "$name: $(cat "$work/err")"
}

# Processes of different jobs do not merge.
refused examples-folder "7 separate jobs" "$traces"
refused two-programs "2 separate jobs" "$traces/capture_item/trace.gctrace" "$traces/graphed_training/trace.gctrace"
refused a-job-and-a-program "2 separate jobs" "$traces/two_rank_extra_replay" "$traces/capture_item/trace.gctrace"

# One job's ranks and their launcher still merge: one report, both ranks named.
if "$gc" analyze "$traces/two_rank_extra_replay" --format json -o "$work/job.json" --fail-on never 2>"$work/err" &&
  python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if any(f['check_id'] == 'rank-divergent-collectives' for f in r['findings']) else 1)" "$work/job.json"; then
  pass "one job merges"
else
  fail "one job merges: $(head -c 300 "$work/err")"
fi

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all passed"
