#!/usr/bin/env bash
# Session 11 on 4 GPUs, second call: the GPU tests at the library with session 11's table
# (two-shot all-reduce from 16 MiB, one-shot send/recv to 32 MiB on 3+ GPUs); every operation by
# the table against NCCL in the same process, eager and in graphs, 8 B to 128 MiB, every result
# checked; then the pull kernel's share per block for split reduce and broadcast (16-256 KiB,
# forced, timing only) beside the one-shot kernel, 256 KiB to 32 MiB, where the table is still
# slower than NCCL.
# Usage: scripts/session11_four_table.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
every_operation_against_nccl g4 4 128M
for op in reduce broadcast; do
  step "$op-oneshot" env GPUPEER_ALGO=oneshot "$g" coll $op -b 256K -e 32M -f 2 -g 4 -d float -o sum -G 10 -c 0
  for kib in 16 32 64 128 256; do
    step "$op-split-block${kib}K" env GPUPEER_ALGO=split GPUPEER_PULL_BLOCK=${kib}K \
      "$g" coll $op -b 256K -e 32M -f 2 -g 4 -d float -o sum -G 10 -c 0
  done
done
