#!/usr/bin/env bash
# Recorder overhead on launch-bound steps, side by side in one run: nothing attached, graphcheck run, and
# torch.profiler with CUDA activities (Python steps only). Rounds alternate the variants so drift hits all alike.
# Run on a GPU machine after sourcing scripts/gpu-env.sh. Prints a Markdown table (medians over rounds).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gc="$GRAPHCHECK_BUILD_DIR/graphcheck"
cpp="$GRAPHCHECK_BUILD_DIR/bench/overhead_chain"
rounds=${ROUNDS:-5}
declare -A samples
measure() {  # measure KEY CMD...
  local key=$1 us
  shift
  us=$("$@" 2>/dev/null | awk '/^us_per_step/{print $2}' | tail -1)
  samples[$key]+="${us:-nan} "
}
for ((r = 0; r < rounds; r++)); do
  for step in chain mlp; do
    measure "py-$step-none" python3 "$root/bench/overhead_steps.py" $step
    measure "py-$step-graphcheck" "$gc" run --fail-on never --format json -o "$(mktemp)" -- python3 "$root/bench/overhead_steps.py" $step
    measure "py-$step-profiler" python3 "$root/bench/overhead_steps.py" $step --profiler
    measure "py-$step-graphcheck-no-activity" "$gc" run --no-activity --fail-on never --format json -o "$(mktemp)" -- \
      python3 "$root/bench/overhead_steps.py" $step
    measure "py-$step-graphcheck-capture-only" "$gc" run --capture-only --fail-on never --format json -o "$(mktemp)" \
      -- python3 "$root/bench/overhead_steps.py" $step
  done
  if [ -x "$cpp" ]; then
    measure "cpp-chain-none" "$cpp"
    measure "cpp-chain-graphcheck" "$gc" run --fail-on never --format json -o "$(mktemp)" -- "$cpp"
    measure "cpp-chain-graphcheck-no-activity" "$gc" run --no-activity --fail-on never --format json -o "$(mktemp)" -- "$cpp"
    measure "cpp-chain-graphcheck-capture-only" "$gc" run --capture-only --fail-on never --format json -o "$(mktemp)" \
      -- "$cpp"
  fi
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{if (NR) print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo "| step | none (us/step) | graphcheck | ratio | torch.profiler | ratio | graphcheck --no-activity | ratio | graphcheck --capture-only | ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for key in py-chain py-mlp cpp-chain; do
  none=$(echo "${samples[$key-none]:-}" | median)
  [ -n "$none" ] || continue
  gcus=$(echo "${samples[$key-graphcheck]:-}" | median)
  prof=$(echo "${samples[$key-profiler]:-}" | median)
  lean=$(echo "${samples[$key-graphcheck-no-activity]:-}" | median)
  capture=$(echo "${samples[$key-graphcheck-capture-only]:-}" | median)
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a == "" || b == "") print "-"; else printf "%.3f", a / b }'; }
  echo "| $key | $none | $gcus | $(ratio "$gcus" "$none") | ${prof:--} | $(ratio "$prof" "$none") | ${lean:--} | $(ratio "$lean" "$none") | ${capture:--} | $(ratio "$capture" "$none") |"
done
echo
echo "raw samples (us/step per round):"
for key in "${!samples[@]}"; do echo "  $key: ${samples[$key]}"; done | sort
