#!/usr/bin/env bash
# Measurements behind the one-shot kernel's low-latency threshold (GPUPEER_LL_SLOT: lines per
# sender, so pieces up to half of it take the low-latency variant) and the regular variant's
# step at large pieces. Usage: scripts/tune_lines.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
record lines-graph "$g" coll all_reduce -b 8 -e 8M -f 2 -G 10 --baseline nccl
for slot in 512K 2M 8M; do
  record lines-graph GPUPEER_LL_SLOT=$slot "$g" coll all_reduce -b 16K -e 8M -f 2 -G 10
done
for slot in 128K 2M; do
  record lines-eager GPUPEER_LL_SLOT=$slot "$g" coll all_reduce -b 8 -e 8M -f 2
  for op in all_gather reduce_scatter broadcast; do
    record lines-ops GPUPEER_LL_SLOT=$slot "$g" coll $op -b 16K -e 8M -f 4 -G 10
  done
done
for step in 32K 64K; do
  record oneshot-step GPUPEER_ALGO=oneshot GPUPEER_ONESHOT_SLOT=64M GPUPEER_ONESHOT_STEP=$step "$g" coll all_reduce -b 1M -e 256M -f 4 -n 10
done
