#!/usr/bin/env bash
# Packs what a GPU machine needs to run graphcheck's GPU tests and benchmarks, built here, into .devcarry/ (ignored):
# stripped binaries in .devcarry/build (laid out as in build/) and the non-system shared libraries they load (Abseil,
# yaml-cpp, pugixml, ...) in .devcarry/lib. The GPU machine brings its own CUDA driver, CUPTI and LibTorch.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="${GRAPHCHECK_BUILD_DIR:-$root/build}"
out="$root/.devcarry"
rm -rf "$out" && mkdir -p "$out/build/tests/gpu" "$out/build/bench" "$out/build/examples" "$out/lib"
copy() {  # copy SRC DEST: stripped
  [ -e "$1" ] || return 0
  cp "$1" "$2" && strip --strip-debug "$2/$(basename "$1")" 2>/dev/null || true
}
copy "$build/graphcheck" "$out/build"
copy "$build/libgraphcheck_inject.so" "$out/build"
copy "$build/graphcheck-engine" "$out/build"
copy "$build/examples/graphed_training" "$out/build/examples"
cp -r "$build/probe" "$out/build/probe"
for f in "$build"/tests/gpu/*; do [ -f "$f" ] && [ -x "$f" ] && copy "$f" "$out/build/tests/gpu"; done
for f in "$build"/bench/*; do [ -f "$f" ] && [ -x "$f" ] && copy "$f" "$out/build/bench"; done
# Libraries from Debian packages that the GPU image lacks.
find "$out/build" -type f -perm -u+x -o -name '*.so' -type f | while read -r bin; do
  ldd "$bin" 2>/dev/null | awk '/=> \//{print $3}' |
    grep -E 'libabsl_|libyaml-cpp|libpugixml|libgtest|libgmock|libbenchmark|libfmt' || true
done | sort -u | while read -r lib; do cp -L "$lib" "$out/lib/"; done
du -sh "$out"
