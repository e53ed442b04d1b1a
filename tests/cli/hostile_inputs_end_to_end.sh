#!/usr/bin/env bash
# Hostile and broken inputs end to end, as a hostile user would try them: each gets one line naming the input and
# exit 2 (bad input), or, for a trace that reads but is damaged, a trace-incomplete finding and exit 1; all within a
# time and memory limit, never a crash, a hang or a half-written report. Every output format stays well formed
# whatever bytes the program printed.
set -u
gc=${1:?graphcheck binary}
root=${2:?source dir}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trace="$root/examples/traces/capture_item/trace.gctrace"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok   $*"; }

# 2 GB of address space for graphcheck: an input that makes it allocate without bound fails instead of passing.
# Not under AddressSanitizer (scripts/sanitizer-tests.sh sets ASAN_OPTIONS), whose shadow memory alone needs terabytes
# of address space: that build checks memory errors, this one the bound.
limit_memory() {
  [ -n "${ASAN_OPTIONS:-}" ] || ulimit -v 2000000
}

# bad NAME CMD...: exit 2 within 20 s and 2 GB of address space, one stderr line "graphcheck: error: ...", no control
# bytes in it.
bad() {
  local name=$1
  shift
  (limit_memory; timeout 20 "$@") >/dev/null 2>"$work/err"
  local rc=$?
  if [ "$rc" != 2 ]; then fail "$name: exit $rc, want 2: $(head -c 300 "$work/err")"; return; fi
  if [ "$(wc -l <"$work/err")" != 1 ] || ! grep -q '^graphcheck: error: ' "$work/err"; then
    fail "$name: not one error line: $(head -c 300 "$work/err")"; return
  fi
  if LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n' <"$work/err"); then fail "$name: control bytes in the error line"; return; fi
  pass "$name: $(cat "$work/err")"
}
# json_has NAME FILE PYTHON-EXPRESSION-ON-r
json_has() {
  if python3 -c "import json, sys; r = json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" "$2"; then
    pass "$1"
  else
    fail "$1: $3"
  fi
}

# Inputs too large, or not files at all.
python3 -c "open('$work/big.yaml', 'w').write('a: 1\n' * 5000000)"
bad "25 MB configuration" "$gc" lint --config "$work/big.yaml"
bad "/dev/zero as --config" "$gc" lint --config /dev/zero
bad "/dev/zero as --stderr" "$gc" analyze "$trace" --stderr /dev/zero
bad "/dev/zero as a report" "$gc" report /dev/zero
mkfifo "$work/fifo"
bad "a FIFO as a trace" "$gc" analyze "$work/fifo"
bad "a folder as a trace" "$gc" analyze "$work"
# Selections of nothing and empty file names are usage errors, not "everything" or standard output.
bad "--checks ''" "$gc" analyze "$trace" --checks ''
bad "--checks ',,,'" "$gc" analyze "$trace" --checks ',,,'
printf 'checks: []\n' >"$work/no-checks.yaml"
bad "checks: [] in the configuration file" "$gc" analyze "$trace" --config-file "$work/no-checks.yaml"
bad "-o ''" "$gc" analyze "$trace" -o ''
bad "trace export -o ''" "$gc" trace export "$trace" -o ''
bad "trace dump --limit -1" "$gc" trace dump "$trace" --limit -1
"$gc" analyze "$trace" --format json -o "$work/base.json" --fail-on never 2>/dev/null
python3 -c "import json, sys; r = json.load(open(sys.argv[1])); r['incomplete'] = {'exit_code': 77, 'reason': 'r'}
json.dump(r, open(sys.argv[2], 'w'))" "$work/base.json" "$work/exit77.json"
bad "a report whose stored exit code is not graphcheck's" "$gc" report "$work/exit77.json"
# 500 new errors against a baseline: stderr names the first 20 and says how many more, the report has them all.
python3 -c "import copy, json, sys
r = json.load(open(sys.argv[1]))
r['findings'] = [f for f in r['findings'] if f['severity'] == 'error'][:1]
json.dump(dict(r, findings=[]), open(sys.argv[2], 'w'))
many = []
for i in range(500):
    f = copy.deepcopy(r['findings'][0])
    f['message'] = 'planted %d' % i
    f['where'] = dict(f.get('where', {}), file='p%d.py' % i, line=i + 1)
    many.append(f)
json.dump(dict(r, findings=many), open(sys.argv[3], 'w'))" "$work/base.json" "$work/none.json" "$work/many.json"
"$gc" diff "$work/none.json" "$work/many.json" >/dev/null 2>"$work/err"
lines=$(wc -l <"$work/err")
if [ "$lines" -le 22 ] && grep -q "and 480 more" "$work/err"; then pass "diff of 500 new errors: $lines stderr lines"; else
  fail "diff of 500 new errors: $lines stderr lines: $(tail -c 300 "$work/err")"; fi
# Every command that reads traces names a file it cannot read once ("x: 'x': not a graphcheck trace" named it twice).
printf 'not a trace\n' >"$work/not-a-trace.gctrace"
for command in analyze plan "trace dump" "trace export -o $work/out.json"; do
  for input in "$work/not-a-trace.gctrace" "$work/missing.gctrace"; do
    # shellcheck disable=SC2086  # the command's words
    bad "$command of $(basename "$input")" "$gc" $command "$input"
    [ "$(grep -o "$(basename "$input")" "$work/err" | wc -l)" = 1 ] || fail "$command names the path twice: $(cat "$work/err")"
  done
done
# A trace's file name is program text too: printed with its controls escaped, never raw.
mkdir -p "$work/named"
cp "$trace" "$work/named/$(printf 'esc\033[31m\nname').gctrace"
"$gc" analyze "$work/named/$(printf 'esc\033[31m\nname').gctrace" --fail-on never >/dev/null 2>"$work/err"
if LC_ALL=C grep -q "$(printf '\033')" "$work/err"; then fail "a trace's file name reached stderr raw"; else
  pass "a trace's file name is escaped on stderr"; fi

# Traces that read but are damaged: a finding and exit 1, never "0 errors".
for cut in 64 4096; do
  head -c "$cut" "$trace" >"$work/cut.gctrace"
  (limit_memory; timeout 20 "$gc" analyze "$work/cut.gctrace" --format json -o "$work/cut.json" 2>/dev/null)
  rc=$?
  [ "$rc" = 1 ] || fail "trace cut after $cut bytes: exit $rc, want 1"
  json_has "trace cut after $cut bytes is trace-incomplete" "$work/cut.json" \
    "any(f['check_id'] == 'trace-incomplete' and f['severity'] == 'error' for f in r['findings'])"
done
# The first chunk's capacity claims 4 GiB: read in bounded memory, reported as damage.
cp "$trace" "$work/huge.gctrace"
python3 - "$work/huge.gctrace" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    data_offset = struct.unpack_from("<I", f.read(64), 12)[0]
    f.seek(data_offset + 8)
    f.write(struct.pack("<Q", 4 << 30))
PY
(limit_memory; timeout 20 "$gc" analyze "$work/huge.gctrace" --format json -o "$work/huge.json" 2>/dev/null)
rc=$?
[ "$rc" = 1 ] || fail "a chunk claiming 4 GiB: exit $rc, want 1"
json_has "a chunk claiming 4 GiB is trace-incomplete" "$work/huge.json" \
  "any(f['check_id'] == 'trace-incomplete' for f in r['findings'])"

# Selections and options that cannot mean anything.
bad "--region that matches nothing" "$gc" analyze "$trace" --region no-such-range
bad "--step-range beyond the steps" "$gc" analyze "$trace" --step-range 500:600
for value in -1e308 nan inf 1e400; do
  bad "--check-option ...=$value" "$gc" analyze "$trace" --check-option "launch-bound.graph-launch-us=$value"
done

# A program that printed anything: invalid UTF-8, U+FFFE, an escape sequence, CUDA's capture error text.
printf 'ok\nbad \xff\xfe \xef\xbf\xbe \x1b[31m red RuntimeError: CUDA error: operation not permitted when stream is capturing\n' \
  >"$work/stderr.txt"
"$gc" analyze "$trace" --stderr "$work/stderr.txt" --checks '*,-sync-in-capture' --format json -o "$work/sel.json" \
  --fail-on never
json_has "--checks '*,-sync-in-capture' keeps no sync-in-capture finding, whatever made it" "$work/sel.json" \
  "all(f['check_id'] != 'sync-in-capture' for f in r['findings']) and 'sync-in-capture' not in r['checks_run']"
"$gc" report "$work/sel.json" --format junit -o "$work/sel.xml" --fail-on never
python3 - "$work/sel.xml" "$work/sel.json" <<'PY' && pass "JUnit: well-formed, one test per check run" || fail "JUnit"
import json, sys, xml.dom.minidom
doc = xml.dom.minidom.parse(sys.argv[1])
assert len(doc.getElementsByTagName("testcase")) == len(json.load(open(sys.argv[2]))["checks_run"])
PY
for format in text json junit sarif markdown html; do
  "$gc" analyze "$trace" --stderr "$work/stderr.txt" --format "$format" -o "$work/out.$format" --fail-on never
  python3 - "$work/out.$format" "$format" <<'PY' && pass "$format output well formed" || fail "$format output"
import json, sys, xml.dom.minidom
data = open(sys.argv[1], "rb").read()
text = data.decode("utf-8")  # valid UTF-8 whatever the program printed
assert "\x1b" not in text  # no terminal escape reaches the reader
if sys.argv[2] in ("junit", "html"):
    assert "\ufffe" not in text  # not a character XML 1.0 may carry
if sys.argv[2] in ("json", "sarif"):
    json.loads(text)
if sys.argv[2] == "junit":
    xml.dom.minidom.parseString(data)
PY
done

# `graphcheck report` applies --checks to the saved findings and refuses --check-option.
"$gc" analyze "$trace" --format json -o "$work/all.json" --fail-on never
"$gc" report "$work/all.json" --checks launch-bound --format json -o "$work/only.json" --fail-on never
json_has "report --checks keeps only the selected findings" "$work/only.json" \
  "{f['check_id'] for f in r['findings']} == {'launch-bound'} and r['checks_run'] == ['launch-bound']"
bad "report --check-option" "$gc" report "$work/all.json" --check-option launch-bound.graph-launch-us=5

# Configurations: a binary one, an unclosed quote, a duplicate key, deep nesting.
printf 'cuda_graph_impl: local\n\x1b[31mbad: [\n' >"$work/esc.yaml"
bad "a configuration with an escape byte" "$gc" lint --config "$work/esc.yaml"
printf 'cuda_graph_impl: "local\n' >"$work/quote.yaml"
bad "an unclosed quote" "$gc" lint --config "$work/quote.yaml"
grep -q 'never closed' "$work/err" || fail "unclosed quote: $(cat "$work/err")"
printf -- "--cuda-graph-impl 'local\n" >"$work/quote.args"
bad "an unclosed quote in an arguments file" "$gc" lint --config "$work/quote.args"
# A Megatron Bridge configuration without a CUDA-graph setting lints, and says so (docker-compose files and Hydra
# configurations are refused: tests/cli/hostile_configs_end_to_end.sh).
printf 'model:\n  num_layers: 2\ntrain:\n  micro_batch_size: 1\n' >"$work/no-graphs.yaml"
"$gc" lint --config "$work/no-graphs.yaml" --format json -o "$work/compose.json"
json_has "a configuration without CUDA-graph settings says so" "$work/compose.json" \
  "any('no CUDA-graph setting found' in s['message'] for s in r['steps'])"
printf 'cuda_graph_impl: local\ncuda_graph_impl: none\n' >"$work/dup.yaml"
bad "a duplicate key" "$gc" lint --config "$work/dup.yaml"
grep -q "dup.yaml:2:1: duplicate key 'cuda_graph_impl'" "$work/err" || fail "duplicate key: $(cat "$work/err")"
python3 -c "print('a: ' + '[' * 100000 + ']' * 100000)" >"$work/deep.yaml"
bad "100000 nested lists" "$gc" lint --config "$work/deep.yaml"
grep -q 'nesting is too deep' "$work/err" || fail "deep nesting: $(cat "$work/err")"

echo "$failures failed"
[ "$failures" = 0 ]
