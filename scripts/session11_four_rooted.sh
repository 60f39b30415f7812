#!/usr/bin/env bash
# Session 11 on 4 GPUs, third call: the GPU tests at the library whose split reduce and
# broadcast take 16-256 KiB per block by part length (comm/pull_plan.cpp) and leave the one-shot
# kernel from 512 KiB / 256 KiB; reduce and broadcast by the table against NCCL (eager, graphs,
# 8 B to 128 MiB, every result checked); then split in still larger blocks (256 KiB-2 MiB) from
# 2 to 128 MiB, every result checked, beside the chain kernel the table takes from 64 MiB.
# Usage: scripts/session11_four_rooted.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
for op in reduce broadcast; do
  step "g4-$op-graph" "$g" coll $op -b 8 -e 128M -f 2 -g 4 -d float -o sum -G 10 --baseline nccl \
    --json "$out/g4-$op-graph.json"
  step "g4-$op-eager" "$g" coll $op -b 8 -e 128M -f 4 -g 4 -d float -o sum --baseline nccl \
    --json "$out/g4-$op-eager.json"
done
for op in reduce broadcast; do
  for kib in 256 512 1024 2048; do
    step "$op-split-block${kib}K" env GPUPEER_ALGO=split GPUPEER_PULL_BLOCK=${kib}K \
      "$g" coll $op -b 2M -e 128M -f 2 -g 4 -d float -o sum -G 10
  done
done
