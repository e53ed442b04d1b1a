#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, in build-asan/: scripts/sanitizer-tests.sh built them already) and runs each for a fixed time over its seed corpus:
# configurations (fuzz/corpus/config), traces (written by make_trace_seeds, plus fuzz/corpus/trace), report JSON (the
# reports of the shipped traces) and program output (fuzz/corpus/stderr). Anything a fuzzer finds fails the run; the
# input is kept in build-asan/findings/: add it to the corpus as regression_NAME (fuzz/corpus/trace/ runs in
# tests/analyzers/fuzz_regressions_test.cc, fuzz/corpus/config/ in tests/validators/config_parser_corpus_test.cc).
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
cp "$root"/fuzz/corpus/trace/* "$work/trace/"  # inputs fuzzing found once (tests/analyzers/fuzz_regressions_test.cc)
for trace in "$root"/examples/traces/*/trace.gctrace; do
  "$build/graphcheck" analyze "$trace" --format json --fail-on never -o "$work/report/$(basename "$(dirname "$trace")").json"
done

status=0
run() {  # run FUZZER CORPUS [ARGS...]
  local fuzzer=$1 corpus=$2
  shift 2
  echo "fuzz-tests: $fuzzer, $seconds s over $(ls "$corpus" | wc -l) seeds"
  # A fixed seed: CI walks the same mutations each run (as far as its time allows), so a red run is reproducible.
  if ! "$build/fuzz/$fuzzer" -seed=1 -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$build/findings/$fuzzer-" "$@" "$corpus" >"$build/$fuzzer.log" 2>&1; then
    tail -40 "$build/$fuzzer.log"
    echo "fuzz-tests: FAIL: $fuzzer found an input; see $build/findings/"
    status=1
  fi
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$build/$fuzzer.log" | tr '\n' ' '
  echo
}
run config_parser_fuzzer "$work/config"
run trace_reader_fuzzer "$work/trace" -max_len=65536
run report_reader_fuzzer "$work/report" -max_len=262144
run stderr_messages_fuzzer "$work/stderr"
exit "$status"
