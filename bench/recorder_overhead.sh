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
# VARIANTS: which recorded variants run besides "none" (default: all four); PIN_CPUS: a taskset CPU list every
# process runs on (e.g. 4-7), which narrows the process-to-process spread.
variants=${VARIANTS:-sampled all capture profiler}
[ "${NO_PROFILER:-0}" = 1 ] && variants=${variants//profiler/}
pin=()
[ -n "${PIN_CPUS:-}" ] && pin=(taskset -c "$PIN_CPUS")
wants() { [[ " $variants " == *" $1 "* ]]; }
declare -A samples slowest
measure() {  # measure KEY CMD...
  local key=$1 out
  shift
  out=$("${pin[@]}" "$@" 2>/dev/null)
  samples[$key]+="$(echo "$out" | awk '/^us_per_step /{print $2}' | tail -1) "
  slowest[$key]+="$(echo "$out" | awk '/^us_per_step_slowest_block /{print $2}' | tail -1) "
}
recorded() {  # recorded KEY FLAGS -- CMD...
  local key=$1 flags=$2
  shift 3
  # shellcheck disable=SC2086
  measure "$key" "$gc" run $flags --fail-on never --format json -o "$(mktemp)" -- "$@"
}
variants_of() {  # variants_of KEY CMD...: nothing attached, then each recorded variant wanted
  local key=$1
  shift
  measure "$key-none" "$@"
  if wants sampled; then recorded "$key-sampled" "" -- "$@"; fi
  if wants all; then recorded "$key-all" "--launches all" -- "$@"; fi
  if wants capture; then recorded "$key-capture" "--capture-only" -- "$@"; fi
}
for ((r = 0; r < rounds; r++)); do
  for step in chain mlp; do
    py=(python3 "$root/bench/overhead_steps.py" "$step" --seconds "$seconds")
    variants_of "py-$step" "${py[@]}"
    if wants profiler; then measure "py-$step-profiler" "${py[@]}" --profiler; fi
  done
  if [ -x "$cpp" ]; then variants_of cpp-chain "$cpp" "$seconds"; fi
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{if (NR) print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a == "" || b == "") print "-"; else printf "%.3f", a / b }'; }
echo "Each process ran its step for ${seconds} s${PIN_CPUS:+ on CPUs $PIN_CPUS}; ${rounds} rounds; us per step, medians over rounds."
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
