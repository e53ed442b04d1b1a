#!/usr/bin/env bash
# Configures a sanitizer build of everything that needs no GPU (no capture/: LibTorch and CUDA are not instrumented):
#   scripts/sanitizer-configure.sh DIR SANITIZERS [CMAKE_ARGS...]
# clang-14 at -O1 for the libraries and -O0 for the test binaries: under AddressSanitizer a test file compiles in
# about half the time at -O0 (python_probe_test.cc: 11 s, against 23 s with gcc at -O1), and the code under test
# keeps -O1, which the fuzzers need for their speed. Used by scripts/sanitizer-tests.sh and scripts/fuzz-tests.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$1 sanitizers=$2
shift 2
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14 \
  -DGRAPHCHECK_WITH_CAPTURE=OFF -DGRAPHCHECK_CCACHE=OFF -DGRAPHCHECK_SANITIZE="$sanitizers" -DGRAPHCHECK_TEST_COMPILE_OPTIONS=-O0 \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" \
  "$@" >/dev/null
