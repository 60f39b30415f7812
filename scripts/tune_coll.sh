#!/usr/bin/env bash
# Measurements behind the algorithm table (src/comm/collective_algo.cpp) and the copy-engine
# pipeline's defaults: each algorithm forced over the sizes where they cross, and the pipeline's
# scratch slot at large sizes. Usage: scripts/tune_coll.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
for op in all_reduce reduce_scatter all_gather broadcast alltoall; do
  for algo in oneshot ce; do
    record "crossover-$op" GPUPEER_ALGO=$algo "$g" coll $op -b 1M -e 512M -f 2 -n 10
  done
done
for slot in 64M 128M 256M; do
  record ce-pipeline GPUPEER_ALGO=ce GPUPEER_CE_SLOT=$slot "$g" coll all_reduce -b 64M -e 512M -f 2 -n 10
done
record ce-pipeline GPUPEER_ALGO=ce GPUPEER_CE_SIGNALS=flags "$g" coll all_reduce -b 64M -e 512M -f 2 -n 10
for threads in 1 0; do
  record launch-threads GPUPEER_LAUNCH_THREADS=$threads "$g" coll all_reduce -b 8 -e 64K -f 8 --baseline nccl
done
for early in 1 0; do
  record early-launch GPUPEER_EARLY_LAUNCH=$early "$g" coll all_reduce -b 8 -e 64K -f 8 -G 10 --baseline nccl
done
