#!/usr/bin/env bash
# Builds the Python wheel (pyproject.toml, scikit-build-core over the CMake build) into build-wheel/dist, installs it
# into a fresh virtual environment that holds only the PyPI torch wheel (no CUDA libraries: nothing here needs them),
# and checks that `graphcheck` and `python -m graphcheck` there behave as build/graphcheck does. Called by
# scripts/test.sh after setup.sh (which downloads the wheels used here into .deps/wheels); prints the wheel's size and
# the install time.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps="$root/.deps"
out="$root/build-wheel"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
tool="${GRAPHCHECK_BUILD_DIR:-$root/build}/graphcheck"
fail() { echo "wheel-test: FAIL: $*" >&2; exit 1; }

# The build front end: pip with scikit-build-core, offline, without build isolation (the build uses .deps' torch).
python3 -m venv "$out/build-env"
"$out/build-env/bin/pip" install --quiet --no-index --find-links "$deps/wheels" scikit-build-core
rm -rf "$out/dist"
"$out/build-env/bin/pip" wheel --quiet --no-build-isolation --no-deps -w "$out/dist" "$root" \
  -Cbuild-dir="$out/cmake" -Ccmake.define.GRAPHCHECK_SITE_DIR="$deps/site" \
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
echo "wheel-test: ok"
