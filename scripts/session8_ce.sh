#!/usr/bin/env bash
# Session 8's fifth run: the copy-engine reduce-scatter in graphs from 64 to 512 MiB by chunks
# per message (GPUPEER_CE_PARTS) and the local reduction's most blocks
# (GPUPEER_CE_REDUCE_BLOCKS), beside pull; the copy-engine all-reduce the same way; and the split
# all-reduce of 64-512 MiB with two blocks per SM and tiles.
# Usage: scripts/session8_ce.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-60}
for op in reduce_scatter all_reduce; do
  run=(coll $op -g 2 -d float -o sum -b 64M -e 512M -f 2 -G 4)
  step "$op-pull" env GPUPEER_ALGO=$([ $op = all_reduce ] && echo split || echo pull) "$g" "${run[@]}"
  for parts in 4 8 16 32; do
    for blocks in 0 66 33; do
      step "$op-ce-parts-$parts-blocks-$blocks" env GPUPEER_ALGO=ce GPUPEER_CE_PARTS=$parts \
        $([ $blocks != 0 ] && echo GPUPEER_CE_REDUCE_BLOCKS=$blocks) "$g" "${run[@]}"
    done
  done
done
ar=(coll all_reduce -g 2 -d float -o sum -b 64M -e 512M -f 2 -G 4)
step split-blocks-264 env GPUPEER_ALGO=split GPUPEER_ONESHOT_BLOCKS=264 "$g" "${ar[@]}"
step split-blocks-264-tile-64K env GPUPEER_ALGO=split GPUPEER_ONESHOT_BLOCKS=264 GPUPEER_PULL_TILE=64K "$g" "${ar[@]}"
step split-tile-64K env GPUPEER_ALGO=split GPUPEER_PULL_TILE=64K "$g" "${ar[@]}"
