#!/usr/bin/env bash
# Session 12 on 2 GPUs, run 5: the 128-byte lines' kernel compiled for 2 ranks (38-47 registers
# instead of 96-128, so two or three 512-thread blocks fit on an SM) in grids of 132, 264 and
# 396 blocks (GPUPEER_ONESHOT_BLOCKS), at the lag rule's choice and at lags 0 and 1, forced for
# all-reduce in graphs from 8 KiB to 32 MiB against the table, each twice, alternating; the
# other operations in 132 and 264 blocks; then the GPU tests with every one-shot piece in
# 128-byte lines.
# Usage: scripts/session12_blocks.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-90}
ll128=(env GPUPEER_ALGO=oneshot GPUPEER_LL128_FROM=0 GPUPEER_ONESHOT_SLOT=32M GPUPEER_LL128_SLOT=36M)
ar=(coll all_reduce -g 2 -d float -o sum -G 10 -b 8K -e 32M -f 2)
for i in 1 2; do
  step "table-$i" "$g" "${ar[@]}"
  for blocks in 132 264 396; do
    step "b$blocks-$i" "${ll128[@]}" GPUPEER_ONESHOT_BLOCKS=$blocks "$g" "${ar[@]}"
  done
  for lag in 0 1; do
    step "b264-lag$lag-$i" "${ll128[@]}" GPUPEER_ONESHOT_BLOCKS=264 GPUPEER_LL128_LAG=$lag "$g" "${ar[@]}"
  done
done
for op in all_gather reduce_scatter broadcast sendrecv; do
  for blocks in 132 264; do
    step "$op-b$blocks" "${ll128[@]}" GPUPEER_ONESHOT_BLOCKS=$blocks "$g" coll $op -g 2 -d float -o sum -G 10 \
      -b 64K -e 16M -f 4
  done
done
step ctest-gpu-ll128 bash -c "cd '$build' && GPUPEER_LL128_FROM=0 ctest -L gpu --output-on-failure"
