# Sourced by the GPU scripts: installs the Megatron-Core wheels that scripts/fetch-megatron-wheels.sh put in .whl/
# (carried to the GPU machine, which has no network) into a folder named site-packages, and puts it on PYTHONPATH, so
# that megatron_gpu_test runs instead of skipping. The folder's name holds "site-packages": graphcheck tells a
# library's frames from the program's by path. Returns 1 when .whl/ holds no wheel or pip fails.
#
#   source scripts/megatron-site.sh && megatron_site "$root" || echo "no Megatron-Core"
megatron_site() {
  local root=$1 site=/tmp/megatron/site-packages
  compgen -G "$root/.whl/megatron_core-*.whl" >/dev/null || return 1
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" \
    "$root"/.whl/*.whl || return 1
  export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
}
