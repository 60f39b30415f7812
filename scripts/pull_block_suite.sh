#!/usr/bin/env bash
# Session 7's second run: the GPU tests, then the split kernel's grid and how its blocks share
# a part, forced (GPUPEER_ALGO=split) beside the table's choice with NCCL in the same process:
#  * GPUs 0-1, all-reduce 1-64 MiB in CUDA graphs: a block per 8/16/32/64 KiB
#    (GPUPEER_PULL_BLOCK), against the one-shot kernel;
#  * GPUs 0-1 and 0..N-1, 64-512 MiB or 2-512 MiB eager: one range per block against tiles of
#    64 or 256 KiB dealt to the blocks in turn (GPUPEER_PULL_TILE).
# Usage: scripts/pull_block_suite.sh BUILD_DIR LOG_DIR N
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
n=${3:?GPU count}
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
write_machine_info
link_build_path "$build"
[ -z "${SKIP_CTEST:-}" ] && step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
for share in ${PULL_SHARES-8K 16K 32K 64K}; do
  step "g2-all_reduce-split-block-$share-graph" env GPUPEER_PULL_BLOCK=$share GPUPEER_ALGO=split "$g" coll all_reduce \
    -b 1M -e 64M -f 2 -g 2 -d float -o sum -G 10
done
step g2-all_reduce-oneshot-graph env GPUPEER_ALGO=oneshot "$g" coll all_reduce -b 1M -e 16M -f 2 -g 2 -d float -o sum -G 10
step g2-all_reduce-table-graph "$g" coll all_reduce -b 1M -e 64M -f 2 -g 2 -d float -o sum -G 10 --baseline nccl
for tile in 0 64K 256K; do
  step "g2-all_reduce-split-tile-$tile" env GPUPEER_PULL_TILE=$tile GPUPEER_ALGO=split "$g" coll all_reduce \
    -b 16M -e 512M -f 2 -g 2 -d float -o sum
done
if [ "$n" -gt 2 ]; then
  for op in all_reduce reduce_scatter broadcast reduce all_gather; do
    for tile in 0 64K; do
      step "g$n-$op-split-tile-$tile" env GPUPEER_PULL_TILE=$tile GPUPEER_ALGO=split "$g" coll $op \
        -b 2M -e 512M -f 4 -g "$n" -d float -o sum
    done
  done
  step "g$n-all_reduce-table" "$g" coll all_reduce -b 2M -e 512M -f 4 -g "$n" -d float -o sum --baseline nccl
fi
