#!/usr/bin/env bash
# Session 11 on 4 GPUs: where the table is slower than NCCL (session 10, run 2), each
# candidate forced side by side in graphs (timing only, -c 0), then the table's choice against
# NCCL with every result checked:
# * reduce and broadcast by the chain kernel in grids of 32-264 blocks and steps of 8-64 KiB
#   (the table's split and one-shot kernels took 0.70-0.98x NCCL from 512 KiB);
# * all-reduce by two-shot against split, 2-128 MiB (split 0.89-0.91x NCCL at 32 MiB);
# * send/recv by the one-shot kernel against the copy engines, 8-128 MiB.
# Usage: scripts/session11_four.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
for op in reduce broadcast; do
  step "$op-table" "$g" coll $op -b 512K -e 32M -f 2 -g 4 -d float -o sum -G 10 --baseline nccl \
    --json "$out/$op-table.json"
  stepvar=$([ $op = reduce ] && echo GPUPEER_CHAIN_REDUCE_STEP || echo GPUPEER_CHAIN_STEP)
  for blocks in 32 64 132 264; do
    for kib in 8 16 32 64; do
      step "$op-chain-b$blocks-s${kib}K" env GPUPEER_ALGO=chain GPUPEER_ONESHOT_BLOCKS=$blocks $stepvar=${kib}K \
        "$g" coll $op -b 512K -e 32M -f 2 -g 4 -d float -o sum -G 10 -c 0
    done
  done
done
step all_reduce-table "$g" coll all_reduce -b 2M -e 128M -f 2 -g 4 -d float -o sum -G 10 --baseline nccl \
  --json "$out/all_reduce-table.json"
for algo in twoshot split; do
  step "all_reduce-$algo" env GPUPEER_ALGO=$algo "$g" coll all_reduce -b 2M -e 128M -f 2 -g 4 -d float -o sum -G 10 -c 0
done
step sendrecv-table "$g" coll sendrecv -b 8M -e 128M -f 2 -g 4 -d float -G 10 --baseline nccl \
  --json "$out/sendrecv-table.json"
for algo in oneshot ce; do
  step "sendrecv-$algo" env GPUPEER_ALGO=$algo "$g" coll sendrecv -b 8M -e 128M -f 2 -g 4 -d float -G 10 -c 0
done
