#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, in build-asan/: scripts/sanitizer-tests.sh built them already) and runs each for a fixed time over its seed corpus:
# configurations (fuzz/corpus/config), traces (written by make_trace_seeds, plus fuzz/corpus/trace), report JSON (the
# reports of the shipped traces) and program output (fuzz/corpus/stderr). Anything a fuzzer finds fails the run; the
# input is kept in build-asan/findings/: add it to the corpus as regression_NAME (fuzz/corpus/trace/ runs in
# tests/checks/fuzz_regressions_test.cc, fuzz/corpus/config/ in tests/checks/config/config_parser_corpus_test.cc).
# Called by scripts/test.sh; FUZZ_SECONDS sets the time per target (default 60).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build-asan"
seconds="${FUZZ_SECONDS:-60}"
"$root/scripts/sanitizer-configure.sh" "$build" address,undefined -DGRAPHCHECK_FUZZ=ON
cmake --build "$build" -j "$(nproc)" --target config_parser_fuzzer trace_reader_fuzzer make_trace_seeds \
  report_reader_fuzzer stderr_messages_fuzzer graphcheck

# Working corpora: copies of the seeds (the fuzzers add to them; the repository's seeds stay as they are).
work="$build/corpus"
rm -rf "$work" "$build/findings" && mkdir -p "$work"/{config,trace,report,stderr} "$build/findings"
cp "$root"/fuzz/corpus/config/* "$work/config/"
cp "$root"/fuzz/corpus/stderr/* "$work/stderr/"
"$build/fuzz/make_trace_seeds" "$work/trace"
cp "$root"/fuzz/corpus/trace/* "$work/trace/"  # inputs fuzzing found once (tests/checks/fuzz_regressions_test.cc)
for trace in "$root"/examples/traces/*/trace.gctrace; do
  "$build/graphcheck" analyze "$trace" --format json --fail-on never -o "$work/report/$(basename "$(dirname "$trace")").json"
done

fuzz() {  # fuzz FUZZER CORPUS [ARGS...]: one fuzzer for $seconds; its exit status is the fuzzer's
  local fuzzer=$1 corpus=$2
  shift 2
  # A fixed seed: CI walks the same mutations each run (as far as its time allows), so a red run is reproducible.
  "$build/fuzz/$fuzzer" -seed=1 -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/findings/$fuzzer-" "$@" "$corpus" >"$build/$fuzzer.log" 2>&1
}
report() {  # report FUZZER STATUS: what it ran over, its statistics, and what it found
  local fuzzer=$1 fuzz_status=$2
  echo "fuzz-tests: $fuzzer, $seconds s over ${seeds[$fuzzer]} seeds"
  if [ "$fuzz_status" != 0 ]; then
    tail -40 "$build/$fuzzer.log"
    echo "fuzz-tests: FAIL: $fuzzer found an input; see $build/findings/"
    status=1
  fi
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$build/$fuzzer.log" | tr '\n' ' '
  echo
}

# Two at a time (CI has two cores): each fuzzer is one process, and the pairs take half the time one after another.
declare -A seeds=([config_parser_fuzzer]=$(ls "$work/config" | wc -l) [trace_reader_fuzzer]=$(ls "$work/trace" | wc -l)
  [report_reader_fuzzer]=$(ls "$work/report" | wc -l) [stderr_messages_fuzzer]=$(ls "$work/stderr" | wc -l))
status=0
start=$(date +%s)
fuzz config_parser_fuzzer "$work/config" & config_pid=$!
fuzz trace_reader_fuzzer "$work/trace" -max_len=65536 & trace_pid=$!
config_status=0; wait "$config_pid" || config_status=$?
trace_status=0; wait "$trace_pid" || trace_status=$?
fuzz report_reader_fuzzer "$work/report" -max_len=262144 & report_pid=$!
fuzz stderr_messages_fuzzer "$work/stderr" & stderr_pid=$!
report_status=0; wait "$report_pid" || report_status=$?
stderr_status=0; wait "$stderr_pid" || stderr_status=$?
report config_parser_fuzzer "$config_status"
report trace_reader_fuzzer "$trace_status"
report report_reader_fuzzer "$report_status"
report stderr_messages_fuzzer "$stderr_status"
echo "fuzz-tests: $(($(date +%s) - start)) s of fuzzing"
exit "$status"
