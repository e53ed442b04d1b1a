#!/usr/bin/env bash
# The tests that need no GPU, built with sanitizers in builds of their own (no capture/: LibTorch and CUDA are not
# instrumented) and run: every unit and golden test under AddressSanitizer + UndefinedBehaviorSanitizer
# (build-asan/), and the trace writer's threaded tests under ThreadSanitizer (build-tsan/). Called by scripts/test.sh
# after setup.sh; -O1 keeps the two builds inside CI's time on two cores.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=$(nproc)
configure() {  # configure DIR SANITIZERS
  cmake -S "$root" -B "$1" -G Ninja -DGRAPHCHECK_WITH_CAPTURE=OFF -DGRAPHCHECK_SANITIZE="$2" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" >/dev/null
}

start=$(date +%s)
configure "$root/build-asan" address,undefined
cmake --build "$root/build-asan" -j "$jobs"
# halt_on_error: any report fails its test; LeakSanitizer is on (ASan's default on Linux).
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
(cd "$root/build-asan" && ctest -L 'unit|golden' --output-on-failure -j "$jobs")
echo "sanitizer-tests: AddressSanitizer + UndefinedBehaviorSanitizer: $(($(date +%s) - start)) s"

start=$(date +%s)
configure "$root/build-tsan" thread
cmake --build "$root/build-tsan" -j "$jobs" --target core_tests
# The writer's threaded tests (many threads appending, a fork during concurrent writes).
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 "$root/build-tsan/tests/core_tests" \
  --gtest_filter='TraceFormatTest.ManyThreads*:TraceForkTest.*:TraceCrashTest.KilledMidWrite*'
echo "sanitizer-tests: ThreadSanitizer: $(($(date +%s) - start)) s"
