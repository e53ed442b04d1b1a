#!/usr/bin/env bash
# One device call's worth of GPU work, in stages (a call has at most 10 minutes): builds nothing, runs the bundle from
# scripts/device-bundle.sh. Everything it prints or writes lands in $OUT (or device-out/), tarred by stage.
#   scripts/device-session.sh probe-tests 'GTEST_FILTER'   python_probe_gpu_test with that filter
#   scripts/device-session.sh gpu-tests BINARY [FILTER]     another GPU test binary (recorder_gpu_test, ...)
#   scripts/device-session.sh corpus [--only NAME...]       bench/clean_corpus, plain and under --shadow 4
#   scripts/device-session.sh variants NAME GRAPHCHECK PROGRAM...  bench/contract_variants/run_variants.py: each
#                                                           program's defect modes and twins under GRAPHCHECK (its
#                                                           probe/ beside it: an older probe's count too)
#   scripts/device-session.sh trace NAME PROGRAM MODE...    `graphcheck run` of one program, keeping its trace
#   scripts/device-session.sh overhead ARGS...             bench/recorder_overhead.py ARGS, its samples saved
#   scripts/device-session.sh megatron [FILTER]             megatron_gpu_test, Megatron-Core installed from .whl/
#                                                           (scripts/fetch-megatron-wheels.sh; carry .whl)
# Each stage runs under `timeout` (GRAPHCHECK_STAGE_TIMEOUT seconds, default 480): a hung NCCL job must not eat the
# call. CUDA_VISIBLE_DEVICES is honoured, so two stages can share a two-GPU machine (one GPU each, in parallel).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/gpu-env.sh"
out="${OUT:-$root/device-out}"
mkdir -p "$out"
limit="${GRAPHCHECK_STAGE_TIMEOUT:-480}"
stage=${1:?stage}
shift
case "$stage" in
  probe-tests)
    timeout -k 10 "$limit" "$GRAPHCHECK_BUILD_DIR/tests/gpu/python_probe_gpu_test" --gtest_filter="${1:-*}" \
      --gtest_output="xml:$out/probe-tests.xml" >"$out/probe-tests.log" 2>&1
    status=$?
    grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|Failure|AUDIT|TWIN|SHADOW|CLEAN|LIBRARY|FINDING|DDP|^RUN |HANG|^STALL" "$out/probe-tests.log" | cut -c1-400
    ;;
  gpu-tests)
    test=${1:?binary}
    timeout -k 10 "$limit" "$GRAPHCHECK_BUILD_DIR/tests/gpu/$test" --gtest_filter="${2:-*}" \
      --gtest_output="xml:$out/$test.xml" >"$out/$test.log" 2>&1
    status=$?
    grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|Failure" "$out/$test.log" | cut -c1-300
    ;;
  corpus)
    timeout -k 10 "$limit" python3 "$root/bench/clean_corpus/run_corpus.py" --graphcheck "$GRAPHCHECK_BUILD_DIR/graphcheck" \
      --out "$out/corpus" --timeout 120 "$@" >"$out/corpus.log" 2>&1
    status=$?
    tail -c 6000 "$out/corpus.log"
    tar -C "$out" -czf "$out/corpus.tgz" corpus && rm -rf "$out/corpus"
    ;;
  variants)
    name=${1:?name}
    graphcheck=${2:?graphcheck}
    shift 2
    timeout -k 10 "$limit" python3 "$root/bench/contract_variants/run_variants.py" --graphcheck "$graphcheck" \
      --out "$out/$name" "$@" >"$out/$name.log" 2>&1
    status=$?
    grep -E "^\| |^defects" "$out/$name.log" | cut -c1-300
    tar -C "$out" -czf "$out/$name.tgz" "$name" && rm -rf "$out/$name"
    ;;
  trace)
    name=${1:?name}
    program=${2:?program}
    shift 2
    timeout -k 10 "$limit" "$GRAPHCHECK_BUILD_DIR/graphcheck" run --trace-dir "$out/$name" --fail-on never \
      --format json -o "$out/$name/report.json" -- python3 "$program" "$@" >"$out/$name.log" 2>&1
    status=$?
    tail -c 3000 "$out/$name.log"
    tar -C "$out" -czf "$out/$name.tgz" "$name" && rm -rf "$out/$name"
    ;;
  overhead)
    timeout -k 10 "$limit" python3 "$root/bench/recorder_overhead.py" \
      --save "$out/overhead.json" "$@" >"$out/overhead.log" 2>&1
    status=$?
    tail -c 9000 "$out/overhead.log"
    ;;
  megatron)
    source "$root/scripts/megatron-site.sh"
    megatron_site "$root" || { echo "device-session: no Megatron-Core wheel in .whl/ (or pip failed)" >&2; exit 2; }
    timeout -k 10 "$limit" "$GRAPHCHECK_BUILD_DIR/tests/gpu/megatron_gpu_test" --gtest_filter="${1:-*}" \
      --gtest_output="xml:$out/megatron_gpu_test.xml" >"$out/megatron_gpu_test.log" 2>&1
    status=$?
    grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|Failure|FINDING|CLEAN|^RUN |^STALL" "$out/megatron_gpu_test.log" | cut -c1-400
    ;;
  *)
    echo "device-session: unknown stage '$stage'" >&2
    exit 2
    ;;
esac
echo "device-session: $stage exited $status"
exit "$status"
