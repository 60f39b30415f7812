#!/usr/bin/env bash
# Session 7's last run: the pull kernel's reduce and reduce-scatter on GPUs 0-1 from 64 MiB,
# with the tiles that pullTileBytesFor now deals where each block owns 1 MiB or more, against
# one range per block (GPUPEER_PULL_TILE=0) and the table's choice (the copy engines from
# 256 MiB), NCCL in the same process. Usage: scripts/pull_large_suite.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
write_machine_info
for op in reduce reduce_scatter; do
  step "g2-$op-pull-tiles" env GPUPEER_ALGO=pull "$g" coll $op -b 64M -e 512M -f 2 -g 2 -d float -o sum --baseline nccl
  step "g2-$op-pull-no-tiles" env GPUPEER_ALGO=pull GPUPEER_PULL_TILE=0 "$g" coll $op -b 64M -e 512M -f 2 -g 2 -d float \
    -o sum -c 0
  step "g2-$op-table" "$g" coll $op -b 64M -e 512M -f 2 -g 2 -d float -o sum -c 0
done
