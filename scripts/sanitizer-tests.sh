#!/usr/bin/env bash
# The tests that need no GPU, built with sanitizers in builds of their own (scripts/sanitizer-configure.sh) and run:
# every unit and golden test under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/, which also holds the
# libFuzzer targets scripts/fuzz-tests.sh runs next: one build of the libraries serves both), and the trace writer's
# threaded tests under ThreadSanitizer (build-tsan/). Called by scripts/test.sh after setup.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=$(nproc)

start=$(date +%s)
"$root/scripts/sanitizer-configure.sh" "$root/build-asan" address,undefined -DGRAPHCHECK_FUZZ=ON
cmake --build "$root/build-asan" -j "$jobs"
# halt_on_error: any report fails its test; LeakSanitizer is on (ASan's default on Linux).
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
(cd "$root/build-asan" && ctest -L 'unit|golden' --output-on-failure -j "$jobs")
echo "sanitizer-tests: AddressSanitizer + UndefinedBehaviorSanitizer: $(($(date +%s) - start)) s"

start=$(date +%s)
"$root/scripts/sanitizer-configure.sh" "$root/build-tsan" thread
cmake --build "$root/build-tsan" -j "$jobs" --target trace_tests
# The writer's threaded tests (many threads appending, a fork during concurrent writes).
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 "$root/build-tsan/tests/trace_tests" \
  --gtest_filter='TraceFormatTest.ManyThreads*:TraceForkTest.*:TraceCrashTest.KilledMidWrite*'
echo "sanitizer-tests: ThreadSanitizer: $(($(date +%s) - start)) s"
