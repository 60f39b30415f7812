#!/usr/bin/env bash
# Session 14 on 4 GPUs, first call: the GPU tests (the chain's ramped steps among them); the
# chain kernel forced in graphs, timing only, 8-512 MiB, steps full from the start or starting
# at 4 or 16 KiB and doubling (GPUPEER_CHAIN_FIRST_STEP, a knob of that build only: the ramp was
# reverted after this run, bench/results/2026-11-22-h200x4-s14), and 128 KiB steps from 4 KiB;
# broadcast and reduce by the table against NCCL, 8-512 MiB, results checked; reduce-scatter and
# all-reduce by the one-shot reduce-scatter to 256 MiB (this build) against session 13's
# table (OLD_BINARY, split from 128 MiB), timing only, then this build against NCCL, checked.
# Usage: scripts/session14_four.sh BUILD_DIR LOG_DIR OLD_BINARY
set -u
source "$(dirname "$0")/logged_steps.sh"
old=${3:?session 13 gpupeer binary}
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests" "$old"
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
STEP_TIMEOUT=60
for op in broadcast reduce; do
  for first in 0 4K 16K; do
    step "chain-$op-first$first" env GPUPEER_ALGO=chain GPUPEER_CHAIN_FIRST_STEP=$first "$g" coll $op \
      -b 8M -e 512M -f 4 -g 4 -d float -o sum -G 10 -c 0
  done
  step "chain-$op-step128K-first4K" env GPUPEER_ALGO=chain GPUPEER_CHAIN_FIRST_STEP=4K GPUPEER_CHAIN_STEP=128K \
    GPUPEER_CHAIN_REDUCE_STEP=128K "$g" coll $op -b 8M -e 512M -f 4 -g 4 -d float -o sum -G 10 -c 0
  step "table-$op-nccl" "$g" coll $op -b 8M -e 512M -f 4 -g 4 -d float -o sum -G 10 --baseline nccl \
    --json "$out/table-$op-nccl.json"
done
for op in reduce_scatter all_reduce; do
  for pass in 1 2; do
    step "$op-s13-$pass" "$old" coll $op -b 32M -e 256M -f 2 -g 4 -d float -o sum -G 10 -c 0
    step "$op-s14-$pass" "$g" coll $op -b 32M -e 256M -f 2 -g 4 -d float -o sum -G 10 -c 0
  done
  step "$op-s14-nccl" "$g" coll $op -b 32M -e 256M -f 2 -g 4 -d float -o sum -G 10 --baseline nccl \
    --json "$out/$op-s14-nccl.json"
done
