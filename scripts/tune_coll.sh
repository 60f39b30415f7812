#!/usr/bin/env bash
# Measurements behind the algorithm table (src/comm/collective_algo.cpp) and the copy-engine
# pipeline's defaults: each algorithm forced over the sizes where they cross, and the pipeline's
# chunk and depth at large sizes. Usage: scripts/tune_coll.sh BUILD_DIR LOG_DIR
set -u
build=${1:?build dir}; out=${2:?log dir}
export NCCL_NVLS_ENABLE=0
mkdir -p "$out"
g="$build/gpupeer"
run() {  # run LOGNAME ENV... -- ARGS...
  local name=$1; shift
  { echo "\$ $*"; timeout 120 env "$@" 2>&1; echo "[exit $?]"; } >> "$out/$name.log"
}
for op in all_reduce reduce_scatter all_gather broadcast alltoall; do
  for algo in oneshot ce; do
    run "crossover-$op" GPUPEER_ALGO=$algo "$g" coll $op -b 1M -e 512M -f 2 -n 10
  done
done
for depth in 2 3 4; do
  run ce-pipeline GPUPEER_ALGO=ce GPUPEER_CE_DEPTH=$depth "$g" coll all_reduce -b 64M -e 512M -f 2 -n 10
done
run ce-pipeline GPUPEER_ALGO=ce GPUPEER_CE_SIGNALS=flags "$g" coll all_reduce -b 64M -e 512M -f 2 -n 10
for threads in 1 0; do
  run launch-threads GPUPEER_LAUNCH_THREADS=$threads "$g" coll all_reduce -b 8 -e 64K -f 8 --baseline nccl
done
for early in 1 0; do
  run early-launch GPUPEER_EARLY_LAUNCH=$early "$g" coll all_reduce -b 8 -e 64K -f 8 -G 10 --baseline nccl
done
