#!/usr/bin/env bash
# The HTML report of a real run (examples/traces/eager_then_graphed), of a two-rank job and one full of hostile
# program strings, opened in headless Chromium (html_in_browser.py): no console error, no network request, no script,
# the plots drawn, the strings shown as text, and one value for the graphed step time (302 us) in the verdict and the
# drawn step (the every-step plot's points, tooltips only, are held to it in tests/analysis/report_timeline_test.cc).
# Saves the first report's screenshot as report-graphed-training.png in the working directory (docs/images/ holds
# one). Skips (77) without chromium.
set -u
gc=${1:?graphcheck binary}
root=${2:?source dir}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$gc" analyze "$root/examples/traces/eager_then_graphed/trace.gctrace" --format json -o "$work/real.json"
"$gc" report "$work/real.json" --format html -o "$work/real.html"
# The same report with a kernel name, an NVTX range, an exception text and a finding made hostile.
python3 - "$work/real.json" "$work/hostile.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
evil = '<script>alert("x")</script> ]]> <img src=http://example.invalid/x.png> \ufffd end'
report["timeline"]["eager_step"]["kernels"][0]["name"] = evil
report["steps"][0]["message"] = evil
report["findings"][0]["message"] = evil
report["findings"][0]["where"]["nvtx_path"] = evil
json.dump(report, open(sys.argv[2], "w"))
PY
"$gc" report "$work/hostile.json" --format html -o "$work/hostile.html"
python3 "$root/tests/report/html_in_browser.py" "$work/real.html" --expect-figures 4 \
  --expect-text "Capturable: graphed steps ran with no error" --screenshot report-graphed-training.png \
  --expect-text "graphed steps took 302.4 us" --expect-text "graphed step 6: 302 us step time"
real=$?
[ $real = 77 ] && exit 77
python3 "$root/tests/report/html_in_browser.py" "$work/hostile.html" --expect-figures 4 \
  --expect-text '<script>alert("x")</script> ]]> <img src=http://example.invalid/x.png>'
hostile=$?
# A two-rank job's report (examples/traces/two_rank_extra_replay): the verdict, the ranks side by side, and rank 0's
# drawn graphed step with one time in its heading.
"$gc" analyze "$root/examples/traces/two_rank_extra_replay" --format json -o "$work/job.json" --fail-on never
"$gc" report "$work/job.json" --format html -o "$work/job.html"
python3 "$root/tests/report/html_in_browser.py" "$work/job.html" --expect-figures 2 \
  --expect-text "Not capturable: A process waited longer than --hang-timeout (hang)" \
  --expect-text "Ranks side by side" --expect-text "graphed step 9: 90.1 us step time"
job=$?
[ $real = 0 ] && [ $hostile = 0 ] && [ $job = 0 ]
