#!/usr/bin/env bash
# Session 13 on 4 GPUs, third call, for the next session (nothing adopted from it): where the
# table is slower than NCCL at large sizes, candidates forced in graphs, timing only: split
# broadcast in blocks of 2 MiB (the rule's), 4 and 8 MiB, 16-128 MiB; reduce-scatter by the
# table, the one-shot kernel, the copy engines and pull, 32-256 MiB.
# Usage: scripts/session13_four_large.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-60}
for block in 2M 4M 8M; do
  step "broadcast-split-block$block" env GPUPEER_ALGO=split GPUPEER_PULL_BLOCK=$block "$g" coll broadcast \
    -b 16M -e 128M -f 2 -g 4 -d float -G 10 -c 0
done
step reduce_scatter-table "$g" coll reduce_scatter -b 32M -e 256M -f 2 -g 4 -d float -o sum -G 10 -c 0
for algo in oneshot ce pull; do
  step "reduce_scatter-$algo" env GPUPEER_ALGO=$algo "$g" coll reduce_scatter -b 32M -e 256M -f 2 -g 4 -d float \
    -o sum -G 10 -c 0
done
