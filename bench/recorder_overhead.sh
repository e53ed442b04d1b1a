#!/usr/bin/env bash
# Recorder overhead on launch-bound steps, side by side in one run: nothing attached, graphcheck run in its default
# (sampled launches), with --launches all and with --capture-only, and torch.profiler with CUDA activities (Python steps
# only). Each sample is one process running its step for $SECONDS_PER_RUN s (default 20); rounds alternate the
# variants so drift hits all alike. Run on a GPU machine after sourcing scripts/gpu-env.sh. Prints a Markdown table
# (medians over rounds of each process's mean us/step). NO_PROFILER=1 leaves out the torch.profiler runs.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gc="$GRAPHCHECK_BUILD_DIR/graphcheck"
cpp="$GRAPHCHECK_BUILD_DIR/bench/overhead_chain"
rounds=${ROUNDS:-2}
seconds=${SECONDS_PER_RUN:-20}
declare -A samples slowest
measure() {  # measure KEY CMD...
  local key=$1 out
  shift
  out=$("$@" 2>/dev/null)
  samples[$key]+="$(echo "$out" | awk '/^us_per_step /{print $2}' | tail -1) "
  slowest[$key]+="$(echo "$out" | awk '/^us_per_step_slowest_block /{print $2}' | tail -1) "
}
recorded() {  # recorded KEY FLAGS -- CMD...
  local key=$1 flags=$2
  shift 3
  # shellcheck disable=SC2086
  measure "$key" "$gc" run $flags --fail-on never --format json -o "$(mktemp)" -- "$@"
}
for ((r = 0; r < rounds; r++)); do
  for step in chain mlp; do
    py=(python3 "$root/bench/overhead_steps.py" "$step" --seconds "$seconds")
    measure "py-$step-none" "${py[@]}"
    recorded "py-$step-sampled" "" -- "${py[@]}"
    recorded "py-$step-all" "--launches all" -- "${py[@]}"
    recorded "py-$step-capture" "--capture-only" -- "${py[@]}"
    [ "${NO_PROFILER:-0}" = 1 ] || measure "py-$step-profiler" "${py[@]}" --profiler
  done
  if [ -x "$cpp" ]; then
    measure "cpp-chain-none" "$cpp" "$seconds"
    recorded "cpp-chain-sampled" "" -- "$cpp" "$seconds"
    recorded "cpp-chain-all" "--launches all" -- "$cpp" "$seconds"
    recorded "cpp-chain-capture" "--capture-only" -- "$cpp" "$seconds"
  fi
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{if (NR) print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a == "" || b == "") print "-"; else printf "%.3f", a / b }'; }
echo "Each process ran its step for ${seconds} s; ${rounds} rounds; us per step, medians over rounds."
echo
echo "| step | none | graphcheck (sampled, default) | ratio | --launches all | ratio | --capture-only | ratio | torch.profiler | ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for key in py-chain py-mlp cpp-chain; do
  none=$(echo "${samples[$key-none]:-}" | median)
  [ -n "$none" ] || continue
  row="| $key | $none"
  for variant in sampled all capture profiler; do
    v=$(echo "${samples[$key-$variant]:-}" | median)
    row+=" | ${v:--} | $(ratio "$v" "$none")"
  done
  echo "$row |"
done
echo
echo "raw samples (mean us/step per round; slowest 0.25 s block in brackets):"
for key in "${!samples[@]}"; do echo "  $key: ${samples[$key]} [${slowest[$key]}]"; done | sort
