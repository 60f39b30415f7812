#!/usr/bin/env bash
# The NCCL program (nccl_program.cpp) on 2 to 4 GPUs, one process per GPU and then one process
# driving them all (--one-process): NCCL alone, then with libgpupeer_nccl.so preloaded routing
# by its table (the default), then routing every call gpupeer can run to gpupeer. Every run must
# check every element right. Then the ranks act as 2 hosts (--hosts 2: NCCL's traffic between
# them over its network transport): 4 ranks as 2 hosts of 2 where 4 GPUs are visible, whose
# all-reduce the library runs in parts (gpupeer inside each host, NCCL across) with every call
# on gpupeer, else 2 ranks of one host each, which stay NCCL's. Then, with every call on
# gpupeer, STALLED_PEER (nccl_stalled_peer.cpp): a rank of a one-process set that never reaches
# its call must be reported by ncclCommGetAsyncError once GPUPEER_NCCL_TIMEOUT_MS passed. Last,
# where torch is installed, pynccl_program.py on 2 GPUs opens NCCL by path as vLLM does: torch's
# own NCCL, then the library by its table, then with every call on gpupeer. Skips (77) where
# fewer than 2 GPUs are visible: NCCL refuses two ranks on one GPU.
# Usage: run_nccl_program.sh PROGRAM LIBRARY STALLED_PEER [MAX_BYTES]
set -uo pipefail
program=$1 library=$2 stalled=$3 max=${4:-${GPUPEER_NCCL_TEST_MAX_BYTES:-268435456}}
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${gpus:-0}" -lt 2 ]; then
  echo "skipped: ${gpus:-0} GPU(s) visible; NCCL needs a GPU per rank"
  exit 77
fi
export NCCL_NVLS_ENABLE=0
failed=0
# route_env MODE: the library's variables for MODE: nccl (the library is not used), table (its
# default route) or gpupeer (every call gpupeer can run).
route_env() {
  case $1 in
    table) echo GPUPEER_NCCL_DEBUG=INFO ;;
    gpupeer) echo GPUPEER_NCCL_ROUTE=gpupeer GPUPEER_NCCL_DEBUG=INFO ;;
  esac
}
# run_program MODE ARGS...: the NCCL program with ARGS, the library preloaded unless MODE is nccl.
run_program() {
  local mode=$1 preload=()
  shift
  [ "$mode" != nccl ] && preload=(LD_PRELOAD="$library")
  env "${preload[@]}" $(route_env "$mode") "$program" "$@"
}
for ranks in $(seq 2 $((gpus < 4 ? gpus : 4))); do
  for shape in "" --one-process; do
    for mode in nccl table gpupeer; do
      echo "== $ranks ranks${shape:+ in one process}, $mode"
      run_program "$mode" --ranks "$ranks" --max-bytes "$max" $shape || failed=1
    done
  done
done
hosts_ranks=$((gpus >= 4 ? 4 : 2))
for mode in nccl table gpupeer; do
  echo "== $hosts_ranks ranks as 2 hosts, $mode"
  log=$(mktemp)
  run_program "$mode" --ranks "$hosts_ranks" --hosts 2 --max-bytes "$max" 2>&1 | tee "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
  # Two ranks on each host: the library must have taken the all-reduce in parts.
  if [ "$mode" = gpupeer ] && [ "$hosts_ranks" -eq 4 ] && ! grep -q "all_reduce to gpupeer" "$log"; then
    echo "FAILED: 2 hosts of 2 ranks with every call on gpupeer ran no all-reduce in parts"
    failed=1
  fi
  rm -f "$log"
done
echo "== a stalled rank in one process, gpupeer, waits bounded at 5 s"
env LD_PRELOAD="$library" $(route_env gpupeer) GPUPEER_NCCL_TIMEOUT_MS=5000 "$stalled" || failed=1
here=$(cd "$(dirname "$0")" && pwd)
torch_nccl=$(python3 -c "import glob, site; print(sorted(glob.glob(site.getsitepackages()[0] + '/nvidia/nccl*/lib/libnccl.so.2'))[0])" 2>/dev/null)
if [ -z "$torch_nccl" ]; then
  echo "== opened by path: skipped, no torch with its NCCL in python3"
else
  by_path=(python3 -m torch.distributed.run --nproc-per-node 2 "$here/pynccl_program.py" --bound 60
    --max-bytes "$((max < 67108864 ? max : 67108864))")
  for mode in nccl table gpupeer; do
    opened=$library
    [ "$mode" = nccl ] && opened=$torch_nccl
    echo "== opened by path, $mode ($opened)"
    env $(route_env $mode) "${by_path[@]}" --library "$opened" || failed=1
  done
fi
exit $failed
