#!/usr/bin/env bash
# Peak memory of `graphcheck analyze` on traces holding one long string (target: at most 2x the trace's size above the
# process's fixed baseline, docs/architecture.md). For 1, 10 and 40 MB, writes a trace whose one kernel name (also a
# Python frame's function name) is that long (bench/make_long_string_trace), analyzes it under /usr/bin/time -v and
# prints the trace's size, the peak resident memory, what lies above the baseline (the same analyze of a tiny shipped
# trace: binary, libraries, check registry) and its ratio to the trace.
# usage: bench/long_strings_memory.sh [BUILD_DIR]   (default build/)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
peak_kib() {  # peak KiB of: graphcheck analyze FILE
  /usr/bin/time -v "$build/graphcheck" analyze "$1" --format json -o /dev/null --fail-on never 2>"$work/time" >/dev/null
  awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time"
}
base=$(peak_kib "$root/examples/traces/graphed_training/trace.gctrace")
printf "baseline (tiny shipped trace): peak RSS %.1f MiB\n" "$(awk -v k="$base" 'BEGIN { print k / 1024 }')"
printf "%-8s %12s %14s %16s %8s\n" string "trace MiB" "peak RSS MiB" "above base MiB" ratio
for mb in 1 10 40; do
  "$build/bench/make_long_string_trace" "$work/long.gctrace" "$mb"
  bytes=$(stat -c %s "$work/long.gctrace")
  peak=$(peak_kib "$work/long.gctrace")
  awk -v mb="$mb" -v b="$bytes" -v p="$peak" -v z="$base" 'BEGIN {
    printf "%-8s %12.1f %14.1f %16.1f %7.2fx\n", mb " MB", b / 1048576, p / 1024, (p - z) / 1024, (p - z) * 1024 / b
  }'
done
