#!/usr/bin/env bash
# Hostile reports end to end, as a shared report would reach whoever renders it: `report` in every format, `diff` and
# `--baseline` both ways. The corpus is tests/fixtures/hostile_reports (make_corpus.py there): strings.json sets every
# string a program or a shared file can set to screen clears, forged finding lines, C1 controls, line separators, bidi
# overrides and a mention; numbers.json every decimal to 1e308. No output, stdout or stderr, passes one of them raw;
# no line of a line-structured output is forged; Markdown mentions nobody; XML parses; JSON reads back the same;
# every number of an SVG plot, in its attributes and its labels, is finite and short; and no output line, of any
# format a person reads, holds a 309-digit number, "nan" or "inf".
set -u
gc=${1:?graphcheck binary}
root=${2:?source dir}
corpus="$root/tests/fixtures/hostile_reports"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok   $*"; }

# inert NAME KIND FILE...: each file passes the checks of its kind (text, markdown, html, junit, sarif, json, svg).
inert() {
  local name=$1 kind=$2
  shift 2
  if problems=$(python3 - "$kind" "$@" <<'PY'
import json, re, sys, xml.dom.minidom
kind, paths = sys.argv[1], sys.argv[2:]
RAW = {"ESC": "\x1b", "BEL": "\x07", "BS": "\x08", "CR": "\r", "NUL": "\x00", "DEL": "\x7f", "CSI U+009B": "\u009b",
       "NEL U+0085": "\u0085", "U+2028": "\u2028", "U+2029": "\u2029", "U+202E": "\u202e", "U+200F": "\u200f",
       "U+200E": "\u200e"}
problems = []
for path in paths:
    data = open(path, "rb").read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        problems.append(f"{path}: not UTF-8 ({e})")
        continue
    problems += [f"{path}: raw {name}" for name, c in RAW.items() if c in text]
    if kind in ("text", "markdown", "junit") and any(l.startswith("error [forged]") for l in text.split("\n")):
        problems.append(f"{path}: a forged line")
    if kind == "markdown" and "@maintainers" in text:
        problems.append(f"{path}: mentions @maintainers")
    if kind in ("junit", "html"):
        try:
            xml.dom.minidom.parseString(data)
        except Exception as e:
            problems.append(f"{path}: not XML 1.0 ({e})")
    if kind in ("json", "sarif"):
        json.loads(text)
    if kind in ("html", "svg"):
        for svg in re.findall(r"<svg.*?</svg>", text, re.S):
            for attribute, value in re.findall(r'\s(x|y|x1|x2|y1|y2|cx|cy|r|width|height|viewBox|points|d)="([^"]*)"', svg):
                for number in re.findall(r"[-+0-9.eE]+|inf|nan", value, re.I):
                    if not re.fullmatch(r"-?[0-9]{1,9}(\.[0-9]+)?", number):
                        problems.append(f"{path}: SVG {attribute}=\"{value[:40]}\"")
            for label in re.findall(r">([^<]*)<", svg):
                if re.search(r"\b(inf|nan)\b|[0-9]{20,}", label, re.I):
                    problems.append(f"{path}: SVG text \"{label[:60]}\"")
print("\n".join(problems[:10]))
sys.exit(1 if problems else 0)
PY
  ); then
    pass "$name"
  else
    fail "$name: $problems"
  fi
}

# render NAME WANT_RC CMD...: runs CMD with stdout and stderr to $work/NAME.out and $work/NAME.err; the exit code
# must be WANT_RC (an incomplete run exits 1; a crash or a refusal would not).
render() {
  local name=$1 want=$2
  shift 2
  timeout 20 "$@" >"$work/$name.out" 2>"$work/$name.err"
  local rc=$?
  [ "$rc" = "$want" ] || fail "$name: exit $rc, want $want: $(head -c 300 "$work/$name.err")"
}

strings="$corpus/strings.json"
clean="$corpus/clean.json"
numbers="$corpus/numbers.json"
# The corpus is hostile: a change to make_corpus.py or the schema that tamed it would make this test pass vacuously.
python3 -c "import json, sys; r = json.load(open(sys.argv[1])); sys.exit(0 if r['findings'][0]['check_id'].startswith('\x1b[2J') and r['machine']['hostname'].startswith('\x1b[2J') else 1)" "$strings" ||
  fail "strings.json is not hostile"

for format in text json junit sarif markdown html; do
  render "report-$format" 1 "$gc" report "$strings" --format "$format"
  inert "report --format $format" "$format" "$work/report-$format.out"
  inert "report --format $format, stderr" text "$work/report-$format.err"
done
# JSON reads back as it was written: escaping kept the data.
"$gc" report "$work/report-json.out" --format json --fail-on never >"$work/again.json" 2>/dev/null
cmp -s "$work/report-json.out" "$work/again.json" && pass "the JSON report reads back the same" ||
  fail "the JSON report changes when read back"

for format in text json markdown; do
  render "diff-to-$format" 1 "$gc" diff "$clean" "$strings" --format "$format"
  render "diff-from-$format" 1 "$gc" diff "$strings" "$clean" --format "$format"
  inert "diff to a hostile report, --format $format" "$format" "$work/diff-to-$format.out" "$work/diff-from-$format.out"
  inert "diff, --format $format, stderr" text "$work/diff-to-$format.err" "$work/diff-from-$format.err"
done

for format in text markdown junit; do
  render "baseline-clean-$format" 1 "$gc" report "$strings" --baseline "$clean" --format "$format"
  render "baseline-hostile-$format" 1 "$gc" report "$clean" --baseline "$strings" --format "$format"
  inert "--baseline, --format $format" "$format" "$work/baseline-clean-$format.out" \
    "$work/baseline-hostile-$format.out"
  inert "--baseline, --format $format, stderr" text "$work/baseline-clean-$format.err" \
    "$work/baseline-hostile-$format.err"
done

# 1e308 everywhere: the plots draw, with finite numbers only.
render "numbers-html" 1 "$gc" report "$numbers" --format html
inert "1e308 durations and extents in the HTML's plots" html "$work/numbers-html.out"
[ "$(grep -c '<svg' "$work/numbers-html.out")" -ge 3 ] && pass "the plots of numbers.json are drawn" ||
  fail "numbers.json drew fewer than 3 plots"

# short NAME FILE...: no line of the files holds a run of more than 20 digits (1e308 written out), "nan" or "inf"
# ("-nan%", "inf%", "+inf%": a share or change of such numbers).
short() {
  local name=$1
  shift
  if problems=$(grep -HnoiE '[0-9]{21,}|(^|[^a-z/])[-+]?(nan|inf)(%|[^a-z/]|$)' "$@" | cut -c1-160 | head -5) &&
    [ -n "$problems" ]; then
    fail "$name: $problems"
  else
    pass "$name"
  fi
}
for format in text markdown junit html; do
  render "numbers-report-$format" 1 "$gc" report "$numbers" --format "$format"
  short "numbers.json, report --format $format" "$work/numbers-report-$format.out" "$work/numbers-report-$format.err"
done
for format in text markdown; do
  render "numbers-diff-to-$format" 1 "$gc" diff "$clean" "$numbers" --format "$format"
  render "numbers-diff-from-$format" 1 "$gc" diff "$numbers" "$clean" --format "$format"
  short "numbers.json, diff --format $format" "$work/numbers-diff-to-$format".* "$work/numbers-diff-from-$format".*
done
for format in text markdown junit; do
  render "numbers-baseline-clean-$format" 1 "$gc" report "$numbers" --baseline "$clean" --format "$format"
  render "numbers-baseline-numbers-$format" 1 "$gc" report "$clean" --baseline "$numbers" --format "$format"
  short "numbers.json, --baseline, --format $format" "$work/numbers-baseline-clean-$format".* \
    "$work/numbers-baseline-numbers-$format".*
done

echo "$failures failed"
[ "$failures" = 0 ]
