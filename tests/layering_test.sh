#!/usr/bin/env bash
# Fails when a file outside capture/ includes a CUDA, CUPTI, NVTX or LibTorch header: those areas must build and test
# on a machine with no GPU stack.
set -u
root=${1:?source dir}
bad=$(grep -rnE '^\s*#\s*include\s*[<"](cuda|cupti|nvtx3?/|generated_cuda|torch/|ATen/|c10/)' \
  "$root/core" "$root/analyzers" "$root/report" "$root/cli" "$root/validators" 2>/dev/null)
if [ -n "$bad" ]; then
  echo "layering violation: GPU-stack headers outside capture/:"
  echo "$bad"
  exit 1
fi
echo "layering ok"
