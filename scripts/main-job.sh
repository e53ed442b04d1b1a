#!/usr/bin/env bash
# The main job. On a machine with an NVIDIA GPU: record and check a built-in training program end to end. Without
# one: analyze a trace recorded on a GPU machine and shipped in examples/traces/, and say so. The program has a
# planted defect, so the report shows a diagnosis; the job itself succeeds (--fail-on never).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gc="${GRAPHCHECK_BUILD_DIR:-$root/build}/graphcheck"
if nvidia-smi -L >/dev/null 2>&1; then
  echo "main job: GPU found; recording examples/programs/capture_item.py under graphcheck run"
  exec "$gc" run --fail-on never -- python3 "$root/examples/programs/capture_item.py"
fi
echo "main job: no GPU on this machine; analyzing the trace shipped in examples/traces/ (recorded on an H200)"
exec "$gc" analyze --fail-on never "$root"/examples/traces/capture_item/*.gctrace
