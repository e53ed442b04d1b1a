#!/usr/bin/env bash
# The layout's two rules (docs/architecture.md):
# 1. Only capture/ and the engine (engine/, not engine/run/) include CUDA, CUPTI, NVTX or LibTorch headers: every
#    other folder builds and tests on a machine with no GPU stack.
# 2. Each folder includes only the folders below it in the flow: core < trace < engine/run < report, analysis <
#    checks < cli (analysis/ is what the checks share); capture/ and engine/ sit beside them, on core and trace or core
#    and engine/run.
# 3. A folder's internal/ is included from that folder (and the folders inside it) only.
# 4. No include cycle inside a folder, between its modules (a header and its .cc): tests/include_cycles.py.
set -u
root=${1:?source dir}
status=0
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The cycle rule must see a cycle planted in a folder: b.cc includes a.h, a.cc includes b.h.
planted=$(mktemp -d)
trap 'rm -rf "$planted"' EXIT
mkdir -p "$planted/x"
printf '#include "x/b.h"\n' >"$planted/x/a.cc"
printf '#include "x/a.h"\n' >"$planted/x/b.cc"
touch "$planted/x/a.h" "$planted/x/b.h"
if python3 "$here/include_cycles.py" "$planted" x >/dev/null; then
  echo "layering: the include-cycle rule missed a planted cycle"
  status=1
fi
python3 "$here/include_cycles.py" "$root" core trace engine capture report analysis checks cli || status=1

gpu_free="core trace engine/run analysis checks report cli"
for folder in $gpu_free; do
  bad=$(grep -rnE '^\s*#\s*include\s*[<"](cuda|cupti|nvtx3?/|generated_cuda|torch/|ATen/|c10/)' "$root/$folder" 2>/dev/null)
  if [ -n "$bad" ]; then
    echo "layering violation: GPU-stack headers in $folder/:"
    echo "$bad"
    status=1
  fi
done

declare -A may_include=(
  [core]="core"
  [trace]="core trace"
  [engine/run]="core engine/run"
  [engine]="core engine engine/run"
  [capture]="core trace capture"
  [report]="core trace report"
  [analysis]="core trace engine/run analysis"
  [checks]="core trace engine/run analysis checks"
  [cli]="core trace engine/run report analysis checks cli"
)
for folder in "${!may_include[@]}"; do
  if [ "$folder" = engine ]; then
    files=$(find "$root/engine" -path "$root/engine/run" -prune -o \( -name '*.cc' -o -name '*.h' \) -print)
  else
    files=$(find "$root/$folder" \( -name '*.cc' -o -name '*.h' \))
  fi
  [ -n "$files" ] || { echo "layering: $folder/ has no sources"; status=1; continue; }
  # Each project include as its folder: engine/run/... is engine/run, anything else its first component.
  while IFS=: read -r file line target; do
    case "$target" in
      engine/run/*) used=engine/run ;;
      */*) used=${target%%/*} ;;
      *) continue ;;
    esac
    [ -d "$root/$used" ] || continue  # a library's header (absl/, gtest/, ...)
    owner=${target%%/internal/*}
    if [ "$owner" != "$target" ] && [[ "${file#"$root"/}" != "$owner"/* ]]; then
      echo "layering violation: ${file#"$root"/}:$line includes $target, internal to $owner/"
      status=1
    fi
    case " ${may_include[$folder]} " in
      *" $used "*) ;;
      *) echo "layering violation: ${file#"$root"/}:$line includes $target ($folder/ may include ${may_include[$folder]})"
         status=1 ;;
    esac
  done < <(grep -HnoE '^#include "[^"]+"' $files | sed -E 's/#include "([^"]+)"/\1/')
done

[ $status -eq 0 ] && echo "layering ok"
exit $status
