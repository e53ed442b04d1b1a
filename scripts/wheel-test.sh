#!/usr/bin/env bash
# Builds the Python wheel (pyproject.toml, scikit-build-core over the CMake build) into build-wheel/dist, installs it
# into a fresh virtual environment that holds only the PyPI torch wheel (no CUDA libraries: nothing here needs them),
# and checks that `graphcheck` and `python -m graphcheck` there behave as build/graphcheck does, also with no compiler
# or CMake on the PATH (what a user's machine may lack: the wheel must not need them). Called by
# scripts/test.sh after setup.sh (which downloads the wheels used here into .deps/wheels); prints the wheel's size and
# the install time.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps="$root/.deps"
# The CMake build folder, beside build/ at the same depth so that ccache serves the compiles setup.sh made
# (CMakeLists.txt); the wheel, the environments and the fake torch go inside it.
out="$root/build-wheel"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
tool="${GRAPHCHECK_BUILD_DIR:-$root/build}/graphcheck"
fail() { echo "wheel-test: FAIL: $*" >&2; exit 1; }

# The build front end: pip with scikit-build-core, offline, without build isolation (the build uses .deps' torch).
python3 -m venv "$out/build-env"
"$out/build-env/bin/pip" install --quiet --no-index --find-links "$deps/wheels" scikit-build-core
rm -rf "$out/dist"
# The compilers of the CMake build (pip's environment would pick g++ over c++: another name, no cache hit).
main_cache="${GRAPHCHECK_BUILD_DIR:-$root/build}/CMakeCache.txt"
compilers=()
if [ -f "$main_cache" ]; then
  for lang in C CXX; do
    compiler=$(sed -n "s/^CMAKE_${lang}_COMPILER:FILEPATH=//p" "$main_cache")
    if [ -n "$compiler" ]; then compilers+=("-Ccmake.define.CMAKE_${lang}_COMPILER=$compiler"); fi
  done
fi
"$out/build-env/bin/pip" wheel --quiet --no-build-isolation --no-deps -w "$out/dist" "$root" \
  -Cbuild-dir="$out" -Ccmake.define.GRAPHCHECK_SITE_DIR="$deps/site" "${compilers[@]}" \
  -Ccmake.define.CUDAToolkit_ROOT="$cuda_home" -Ccmake.define.CMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc"
wheel=$(ls "$out"/dist/graphcheck-*.whl)
echo "wheel-test: built $(basename "$wheel"), $(du -k "$wheel" | cut -f1) KiB"

# A user's environment: torch from PyPI, then graphcheck.
rm -rf "$out/venv"
python3 -m venv "$out/venv"
"$out/venv/bin/pip" install --quiet --no-index --no-deps "$deps"/wheels/torch-*.whl
start=$(date +%s%N)
"$out/venv/bin/pip" install --quiet --no-index --no-deps "$wheel"
echo "wheel-test: pip install of the wheel took $((($(date +%s%N) - start) / 1000000)) ms"

# The same answers as the CMake build's tool, through the console script and through python -m.
trace="$root/examples/traces/capture_item/trace.gctrace"
config="$root/tests/fixtures/lint/bridge_full_iteration_bad.yaml"
for args in "list-checks" "analyze --format json $trace" "lint --format json --config $config"; do
  set +e
  # shellcheck disable=SC2086
  expected=$("$tool" $args 2>&1); expected_rc=$?
  # shellcheck disable=SC2086
  got=$("$out/venv/bin/graphcheck" $args 2>&1); got_rc=$?
  # shellcheck disable=SC2086
  got_module=$("$out/venv/bin/python" -m graphcheck $args 2>&1); got_module_rc=$?
  set -e
  # JSON reports carry the command line and the step and analysis times: compare them without those (the text
  # format's step table prints times too, hence JSON for analyze and lint).
  normalize() { sed -E 's/"(command|analysis_ms|duration_ms|hostname)": [^,]*,?//g; s#[^ "]*/graphcheck\b#graphcheck#g'; }
  [ "$got_rc" = "$expected_rc" ] && [ "$got_module_rc" = "$expected_rc" ] ||
    fail "graphcheck $args: exit $got_rc / $got_module_rc (python -m), build/graphcheck exits $expected_rc"
  [ "$(normalize <<<"$got")" = "$(normalize <<<"$expected")" ] || fail "graphcheck $args: output differs from build/graphcheck"
  [ "$(normalize <<<"$got_module")" = "$(normalize <<<"$expected")" ] || fail "python -m graphcheck $args: output differs"
  echo "wheel-test: graphcheck $args: same output and exit code ($expected_rc) as build/graphcheck"
done

# The Python probe sits where `graphcheck run` looks for it: next to the binaries.
probe=$("$out/venv/bin/python" -c 'import graphcheck, os; print(os.path.join(os.path.dirname(graphcheck.__file__), "bin", "probe"))')
for file in sitecustomize.py $(cd "$root/python/probe" && ls graphcheck_probe/*.py); do
  cmp -s "$probe/$file" "$root/python/probe/$file" || fail "the wheel's bin/probe/$file is not python/probe/$file"
done
echo "wheel-test: the Python probe is in the wheel ($probe)"

# A torch other than the one the engine was built against is refused with one line, before the engine starts.
fake="$out/fake-torch"
rm -rf "$fake" && mkdir -p "$fake/torch"
printf "__version__ = '2.10.0+cu128'\ncuda = '12.8'\n" >"$fake/torch/version.py"
touch "$fake/torch/__init__.py"
set +e
message=$(PYTHONPATH="$fake" "$out/venv/bin/graphcheck" check builtin:mlp 2>&1); rc=$?
set -e
[ "$rc" = 2 ] && [ "$(wc -l <<<"$message")" = 1 ] && grep -q "built against torch 2.11" <<<"$message" ||
  fail "a mismatched torch was not refused with one line and exit 2 (exit $rc): $message"
echo "wheel-test: torch 2.10 refused: $message"

# A user's machine without a compiler: PATH holds only the environment's bin/, so no gcc, g++, cc, c++ or cmake is
# reachable, and the installed tool runs from there: its version, an analysis of a shipped trace, and that report
# re-rendered.
bare_path="$out/venv/bin"
for compiler in gcc g++ cc c++ cmake; do
  if env PATH="$bare_path" /bin/sh -c "command -v $compiler" >/dev/null; then fail "$compiler is on the bare PATH"; fi
done
report="$out/bare-path-report.json"
set +e
version=$(env -i HOME="$HOME" PATH="$bare_path" graphcheck --version 2>&1); version_rc=$?
env -i HOME="$HOME" PATH="$bare_path" graphcheck analyze "$trace" --format json -o "$report" >/dev/null 2>&1
analyze_rc=$?
rendered=$(env -i HOME="$HOME" PATH="$bare_path" graphcheck report "$report" --format markdown 2>&1); report_rc=$?
set -e
[ "$version_rc" = 0 ] && grep -q "^graphcheck " <<<"$version" || fail "graphcheck --version without a compiler: $version"
expected_rc=$("$tool" analyze "$trace" --format json -o /dev/null >/dev/null 2>&1; echo $?)
[ "$analyze_rc" = "$expected_rc" ] || fail "analyze without a compiler exits $analyze_rc, build/graphcheck $expected_rc"
[ "$report_rc" = "$expected_rc" ] && grep -q "sync-in-capture" <<<"$rendered" ||
  fail "report without a compiler (exit $report_rc): $rendered"
echo "wheel-test: with only $bare_path on PATH: $version, analyze and report exit $expected_rc as build/graphcheck"
echo "wheel-test: ok"
