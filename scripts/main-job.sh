#!/usr/bin/env bash
# The main job. On a machine with an NVIDIA GPU: the full check of a built-in model (graphcheck check
# builtin:transformer: eager reference, warmup, forward and backward capture, replay, numerics and speedup, all under
# the recorder). Without one: analyze a trace recorded on a GPU machine and shipped in examples/traces/, and say so.
# That trace holds a planted defect, so the report shows a diagnosis; the job itself succeeds (--fail-on never).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gc="${GRAPHCHECK_BUILD_DIR:-$root/build}/graphcheck"
if nvidia-smi -L >/dev/null 2>&1; then
  echo "main job: GPU found; checking builtin:transformer end to end (graphcheck check)"
  exec "$gc" check builtin:transformer --fail-on never
fi
echo "main job: no GPU on this machine; analyzing the trace shipped in examples/traces/ (recorded on an H100)"
exec "$gc" analyze --fail-on never "$root"/examples/traces/capture_item/*.gctrace
