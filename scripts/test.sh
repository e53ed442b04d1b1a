#!/usr/bin/env bash
# Builds (through setup.sh) and runs every test that needs no GPU, then the same unit and golden tests under
# AddressSanitizer + UndefinedBehaviorSanitizer and the trace writer's threaded tests under ThreadSanitizer
# (scripts/sanitizer-tests.sh), the fuzzers for a fixed time each (scripts/fuzz-tests.sh), and builds the pip wheel
# and tests it in a fresh virtual environment (scripts/wheel-test.sh). GPU tests (ctest label gpu) are excluded
# here; scripts/gpu-tests.sh runs them on a GPU machine.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="${GRAPHCHECK_BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh"
cmake --build "$build_dir" -j "$(nproc)"  # the tests, benchmarks and examples setup.sh leaves out
cd "$build_dir"
ctest -LE gpu --output-on-failure -j "$(nproc)"
"$root/scripts/sanitizer-tests.sh"
"$root/scripts/fuzz-tests.sh"
"$root/scripts/wheel-test.sh"
