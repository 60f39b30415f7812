#!/usr/bin/env bash
# Measurements behind the one-shot kernel's defaults (grid, step per block, scratch slot) and
# the algorithm table's crossovers with it. Usage: scripts/tune_oneshot.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
for step in 8K 16K 32K 64K 128K; do
  record oneshot-step GPUPEER_ALGO=oneshot GPUPEER_ONESHOT_STEP=$step "$g" coll all_reduce -b 128K -e 64M -f 2 -G 10
done
for blocks in 33 66 264; do
  record oneshot-blocks GPUPEER_ALGO=oneshot GPUPEER_ONESHOT_BLOCKS=$blocks "$g" coll all_reduce -b 128K -e 64M -f 2 -G 10
done
for slot in 16M 64M; do
  record oneshot-slot GPUPEER_ALGO=oneshot GPUPEER_ONESHOT_SLOT=$slot "$g" coll all_reduce -b 16M -e 512M -f 2 -n 10
done
for op in all_reduce reduce_scatter all_gather broadcast reduce alltoall sendrecv; do
  for algo in oneshot ce; do
    record "crossover-$op" GPUPEER_ALGO=$algo "$g" coll $op -b 1M -e 512M -f 2 -n 10
  done
done
