#!/usr/bin/env bash
# Downloads Megatron-Core 0.19.2 (cp312 manylinux wheel) and those of its runtime dependencies the GPU machine's image
# lacks into .whl/ (ignored by git), for the Megatron GPU tests (tests/gpu/megatron_gpu_test.cc, issue 35). The GPU
# machine has no network: the wheels travel with the working tree (`carry: [".whl"]`) and are installed there with
#
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
#     --target /tmp/megatron/site-packages .whl/*.whl && export PYTHONPATH=/tmp/megatron/site-packages
#
# The folder's name must contain "site-packages": graphcheck tells a library's frames from the program's by its path,
# and would take Megatron's own lines for the program's anywhere else.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
wheels="$root/.whl"
MEGATRON=megatron-core==0.19.2
# What the GPU machine's Python 3.12 image already has of Megatron-Core's unconditional requirements
# (/work/.library/device/KINDS.md): torch 2.11, numpy, packaging; triton and typing_extensions, which some of its
# modules import, too.
GPU_IMAGE_HAS=(torch numpy packaging triton typing-extensions)

die() { echo "fetch-megatron-wheels: error: $*" >&2; exit 1; }

# pip matches manylinux_2_N tags exactly: name every one a wheel for the GPU machine's glibc may carry.
download() {
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform any \
    -d "$wheels" "$1" || die "could not download $1"
}

mkdir -p "$wheels"
download "$MEGATRON"
megatron_wheel=$(ls "$wheels"/megatron_core-0.19.2-*.whl 2>/dev/null | head -n 1)
[ -n "$megatron_wheel" ] || die "no megatron_core-0.19.2 wheel in $wheels"

# Requirements without an extra ("; extra == ..." lines are optional features: training scripts, Transformer Engine).
mapfile -t requirements < <(unzip -p "$megatron_wheel" '*/METADATA' | sed -n 's/^Requires-Dist: //p' | grep -v 'extra ==')
for requirement in "${requirements[@]}"; do
  name=$(echo "$requirement" | sed 's/[ ;<>=!~\[].*//' | tr '[:upper:]_' '[:lower:]-')
  if printf '%s\n' "${GPU_IMAGE_HAS[@]}" | grep -qx "$name"; then
    echo "fetch-megatron-wheels: $requirement: on the GPU machine already"
  else
    echo "fetch-megatron-wheels: $requirement: fetching"
    download "$(echo "$requirement" | sed 's/ *;.*//')"
  fi
done

echo "fetch-megatron-wheels: in $wheels:"
ls -l "$wheels"
total=$(du -cb "$wheels"/*.whl | tail -n 1 | cut -f 1)
echo "fetch-megatron-wheels: $((total / 1024)) KiB in all"
