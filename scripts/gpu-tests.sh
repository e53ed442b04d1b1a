#!/usr/bin/env bash
# Runs graphcheck's GPU tests on a machine with an NVIDIA GPU, CUDA 13 and python3 with torch (the GPU machine's
# image). Uses build/ when it holds a full build, else the .devcarry/ bundle made by scripts/device-bundle.sh on a
# build machine. Results (gtest XML and log) go to $OUT, or gpu-results/.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/gpu-env.sh"
out="${OUT:-$root/gpu-results}"
mkdir -p "$out"
status=0
for test in recorder_gpu_test recorder_stress_gpu_test python_probe_gpu_test graphed_callables_gpu_test check_gpu_test megatron_gpu_test; do
  "$GRAPHCHECK_BUILD_DIR/tests/gpu/$test" --gtest_output="xml:$out/$test.xml" 2>&1 | tee "$out/$test.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
exit "$status"
