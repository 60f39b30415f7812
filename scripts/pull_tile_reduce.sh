#!/usr/bin/env bash
# Session 7: the pull kernel's 2-GPU reduce of 32-256 MiB with 64 KiB tiles at every size
# (GPUPEER_PULL_TILE=64K) against pullTileBytesFor's rule (tiles from 1 MiB per block, so not
# at 128 MiB), NCCL in the same process. Usage: scripts/pull_tile_reduce.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-60}
write_machine_info
step g2-reduce-pull-tile-64K env GPUPEER_ALGO=pull GPUPEER_PULL_TILE=64K "$g" coll reduce -b 32M -e 256M -f 2 -g 2 \
  -d float -o sum --baseline nccl
step g2-reduce-pull-tile-rule env GPUPEER_ALGO=pull "$g" coll reduce -b 32M -e 256M -f 2 -g 2 -d float -o sum -c 0
