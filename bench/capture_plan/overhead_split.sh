#!/usr/bin/env bash
# Where graphcheck's cost on poisson_serving.py's eager loop goes (issue 47): `poisson_serving.py timing` (the loop with
# a synchronize per call, its calls alone, the synchronizes alone) plain, under `graphcheck run` in several settings,
# and in the recorder's environment without a graphcheck parent, with parts of it left out. Usage, on a GPU machine:
# source scripts/gpu-env.sh; bench/capture_plan/overhead_split.sh OUT
set -u
out=${1:?usage: overhead_split.sh OUT}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
graphcheck="${GRAPHCHECK_BUILD_DIR:?source scripts/gpu-env.sh first}/graphcheck"
program=(python3 "$here/poisson_serving.py" timing)
mkdir -p "$out/traces"
variant() {  # variant NAME COMMAND...: the timing line of one setting
  local name=$1
  shift
  printf '%-44s ' "$name"
  timeout 120 "$@" 2>&1 | grep -E '^timing:|rror' | head -3 || echo "(no timing line)"
}
variant "plain" "${program[@]}"
for flags in "" "--no-python-probe" "--no-python-probe --launches capture" \
  "--no-python-probe --launches capture --no-activity"; do
  dir="$out/traces/run-$(echo "$flags" | tr -dc 'a-z')"
  # shellcheck disable=SC2086
  variant "run $flags" "$graphcheck" run $flags --trace-dir "$dir" --fail-on never -o "$dir.report.txt" -- \
    "${program[@]}"
done
# The variables graphcheck run adds to the program's environment.
mkdir -p "$out/traces/env"
"$graphcheck" run --trace-dir "$out/traces/env" --fail-on never -o /dev/null -- env | sort >"$out/env.child"
env | sort | comm -13 - "$out/env.child" | grep -E '^[A-Z_0-9]+=' >"$out/env.added"
echo "graphcheck run adds: $(cut -d= -f1 "$out/env.added" | tr '\n' ' ')"
mapfile -t added <"$out/env.added"
without() {  # the added variables but NAME
  local name=$1 kept=()
  for v in "${added[@]}"; do [[ $v == "$name="* ]] || kept+=("$v"); done
  printf '%s\n' "${kept[@]}"
}
variant "recorder environment, no parent" env "${added[@]}" "${program[@]}"
mapfile -t no_nvtx < <(without NVTX_INJECTION64_PATH)
variant "  without NVTX_INJECTION64_PATH" env -u NVTX_INJECTION64_PATH "${no_nvtx[@]}" "${program[@]}"
mapfile -t no_cuda < <(without CUDA_INJECTION64_PATH)
variant "  without CUDA_INJECTION64_PATH" env -u CUDA_INJECTION64_PATH "${no_cuda[@]}" "${program[@]}"
variant "plain again" "${program[@]}"
