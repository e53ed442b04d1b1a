#!/usr/bin/env bash
# Peak memory of `graphcheck analyze` against the size of the trace it reads (target: <= 2x, DESIGN.md). Writes the
# synthetic 10 M-event trace of analysis_bench to a file, then runs `graphcheck analyze` on it in a process of its own
# and prints the file size, the peak resident memory (ru_maxrss of the child) and their ratio, and the same for a
# `graphcheck analyze` of a tiny shipped trace (the baseline: binary, libraries, check registry).
# usage: bench/analysis_memory.sh [BUILD_DIR]   (default build/)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
trace=$(mktemp --suffix .gctrace)
trap 'rm -f "$trace"' EXIT
"$build/bench/analysis_bench" --write-trace "$trace"
peak() {  # peak KiB of: graphcheck analyze FILE
  python3 - "$build/graphcheck" "$1" <<'PY'
import resource, subprocess, sys
subprocess.run([sys.argv[1], "analyze", sys.argv[2], "--format", "json", "-o", "/dev/null", "--fail-on", "never"],
               check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
base_kib=$(peak "$root/examples/traces/graphed_training/trace.gctrace")
start=$(date +%s%N)
peak_kib=$(peak "$trace")
seconds=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
bytes=$(stat -c %s "$trace")
awk -v b="$bytes" -v p="$peak_kib" -v z="$base_kib" -v s="$seconds" 'BEGIN {
  printf "trace file: %.1f MiB\n", b / 1048576
  printf "graphcheck analyze: peak RSS %.1f MiB (%.2fx the trace), %.1f s wall\n", p / 1024, p * 1024 / b, s
  printf "baseline (tiny shipped trace): peak RSS %.1f MiB; above it: %.1f MiB (%.2fx the trace)\n", z / 1024,
         (p - z) / 1024, (p - z) * 1024 / b
}'
