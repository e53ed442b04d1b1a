#!/usr/bin/env bash
# Runs graphcheck's GPU tests on a machine with an NVIDIA GPU, CUDA 13 and python3 with torch (the GPU machine's
# image). Uses build/ when it holds a full build, else the .devcarry/ bundle made by scripts/device-bundle.sh on a
# build machine. Results (gtest XML and log) go to $OUT, or gpu-results/.
#
#   scripts/gpu-tests.sh [--shard I/N]
#
# The whole suite takes longer than one 10-minute device call: `--shard I/N` (I from 0) runs the I-th of N shards of
# every test binary (GoogleTest's own sharding, GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS), so N calls run it all. With N
# = 4, one shard alone on an H200 took 466 s and the others ran past 560 s (bench/results/2026-11-29-session27.md).
# With N = 8, shards 4-7 alone on an H200 take 104-207 s and 0 and 3 finish in 284 and 398 s even two to an H200
# (bench/results/2026-11-29-session28.md), but 1 and 2 run past 555 s even alone on an H200: their python_probe parts
# take 361 and 378 s (BlindLoopShapes 175 s, DdpUnderTorchrun 121 s; CollectiveLedgers 223 s, ContractBreaches 107 s)
# before megatron_gpu_test (bench/results/2026-11-30-session29.md). N = 16 splits each shard of 8 in two (shard i of 16
# runs about half of shard i mod 8 of 8): shards 1, 2, 9 and 10 (8's 1 and 2) take 365, 204, 270 and 423 s, one per
# H200 of a two-GPU machine with the other running a shard too (bench/results/2026-11-30-session30.md); the others
# are halves of shards of 8 that took at most 398 s. A machine with a GPU on which no test ran (every one skipped: no
# CUDA seen, a broken bundle) fails the run; without Megatron-Core (.whl/) megatron_gpu_test's tests skip.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/gpu-env.sh"
source "$root/scripts/megatron-site.sh"
out="${OUT:-$root/gpu-results}"
mkdir -p "$out"
if [ "${1:-}" = "--shard" ]; then
  [[ "${2:-}" =~ ^([0-9]+)/([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -lt "${BASH_REMATCH[2]}" ] ||
    { echo "gpu-tests: error: --shard takes I/N with 0 <= I < N, got '${2:-}'" >&2; exit 2; }
  export GTEST_SHARD_INDEX="${BASH_REMATCH[1]}" GTEST_TOTAL_SHARDS="${BASH_REMATCH[2]}"
elif [ $# -gt 0 ]; then
  echo "gpu-tests: error: unknown argument '$1' (usage: gpu-tests.sh [--shard I/N])" >&2
  exit 2
fi
status=0
ran=0
# Megatron-Core from .whl/ when it travelled with the tree: without it, megatron_gpu_test skips every test (session
# 30's first sharded run did, and passed).
python3 -c "import megatron.core" 2>/dev/null || megatron_site "$root" ||
  echo "gpu-tests: no Megatron-Core (scripts/fetch-megatron-wheels.sh, carry .whl): megatron_gpu_test will skip"
for test in recorder_gpu_test recorder_stress_gpu_test python_probe_gpu_test graphed_callables_gpu_test check_gpu_test megatron_gpu_test; do
  start=$SECONDS
  "$GRAPHCHECK_BUILD_DIR/tests/gpu/$test" --gtest_output="xml:$out/$test.xml" 2>&1 | tee "$out/$test.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  passed=$(grep -c '\[       OK \]' "$out/$test.log")  # not anchored: a program's output may end without a newline
  ran=$((ran + passed))
  echo "gpu-tests: $test: $passed passed in $((SECONDS - start)) s${GTEST_TOTAL_SHARDS:+ (shard $GTEST_SHARD_INDEX/$GTEST_TOTAL_SHARDS)}"
done
if [ "$ran" -eq 0 ] && nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-tests: error: this machine has a GPU and no GPU test ran (every one skipped)" >&2
  status=1
fi
exit "$status"
