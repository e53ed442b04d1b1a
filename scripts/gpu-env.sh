# Sourced by the GPU-machine scripts: finds the build (build/ or the .devcarry bundle), LibTorch's libraries from the
# machine's torch, and CUPTI, and exports GRAPHCHECK_BUILD_DIR, GRAPHCHECK_SOURCE_DIR and LD_LIBRARY_PATH.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -x "$root/.devcarry/build/graphcheck" ]; then
  export GRAPHCHECK_BUILD_DIR="$root/.devcarry/build"
  bundle_lib="$root/.devcarry/lib"
else
  export GRAPHCHECK_BUILD_DIR="$root/build"
  bundle_lib=""
fi
export GRAPHCHECK_SOURCE_DIR="$root"
torch_lib=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null)
cupti_dir=""
for candidate in $(python3 -c 'import nvidia, os; [print(os.path.join(p, "cu13", "lib")) for p in nvidia.__path__]' \
                     2>/dev/null) /usr/local/cuda/lib64 /usr/local/cuda/extras/CUPTI/lib64; do
  if [ -e "$candidate/libcupti.so.13" ]; then cupti_dir="$candidate"; break; fi
done
export LD_LIBRARY_PATH="${bundle_lib:+$bundle_lib:}${cupti_dir:+$cupti_dir:}${torch_lib:+$torch_lib:}${LD_LIBRARY_PATH:-}"
