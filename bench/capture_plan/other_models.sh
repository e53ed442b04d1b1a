#!/usr/bin/env bash
# `graphcheck run --plan` and `graphcheck plan` on other_models.py's loops (torchvision ResNet-18, Hugging Face BERT
# called with keyword tensors). Usage, on a GPU machine:
#   source scripts/gpu-env.sh; bench/capture_plan/other_models.sh OUT
set -u
out=${1:?usage: other_models.sh OUT}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
graphcheck="${GRAPHCHECK_BUILD_DIR:?source scripts/gpu-env.sh first}/graphcheck"
mkdir -p "$out"
for model in resnet bert; do
  timeout 180 "$graphcheck" run --plan --trace-dir "$out/$model" --fail-on never -o "$out/$model.report.txt" -- \
    python3 "$here/other_models.py" "$model" 2>&1 | tail -2
  "$graphcheck" plan "$out/$model" -o "$out/$model.plan.txt" || echo "$model: plan failed"
  head -12 "$out/$model.plan.txt"
  rm -rf "${out:?}/$model"
done
