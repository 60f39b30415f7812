#!/usr/bin/env bash
# Runs the GPU checks on a GPU machine from a build made elsewhere (see docs/gpu-machine.md).
# Usage: scripts/gpu_suite.sh BUILD_DIR OUT_DIR [extra steps: bench ...]
# Writes one log per step under OUT_DIR and prints a short summary last.
set -u
build=${1:?build dir}; out=${2:?output dir}; shift 2
export NCCL_NVLS_ENABLE=0   # NVLink multicast stays off on shared machines
mkdir -p "$out"
# The build folder holds absolute paths of the machine it was built on (CTest files).
# Recreate that path here with a symlink so ctest finds its binaries.
built_at=$(sed -n 's/^# Build directory: //p' "$build/CTestTestfile.cmake" 2>/dev/null)
if [ -n "$built_at" ] && [ ! -e "$built_at" ]; then
  mkdir -p "$(dirname "$(dirname "$built_at")")"
  ln -s "$(cd "$(dirname "$build")" && pwd)" "$(dirname "$built_at")"
fi
step() { local name=$1; shift; echo "== $name: $*" | tee -a "$out/summary.txt";
  ( "$@" ) > "$out/$name.log" 2>&1; local rc=$?; echo "   rc=$rc" | tee -a "$out/summary.txt"; return 0; }
{
  date -u +"%Y-%m-%dT%H:%M:%SZ"; hostname; uname -r
  nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv
} > "$out/machine.txt" 2>&1
step nvsmi-topo nvidia-smi topo -m
step nvsmi-p2p nvidia-smi topo -p2p r
step nvsmi-nvlink nvidia-smi nvlink -s
step snapshot "$build/gpupeer" snapshot -o "$out/snapshot.json"
step topo "$build/gpupeer" topo
step check "$build/gpupeer" check
step ctest-gpu ctest --test-dir "$build" -L gpu --output-on-failure
for extra in "$@"; do
  case $extra in
    doctor) step doctor "$build/gpupeer" doctor ;;
    *) echo "unknown step $extra" ;;
  esac
done
cat "$out/summary.txt"
