#!/usr/bin/env bash
# Session 11 on 4 GPUs, at the final library (broadcast in 512 KiB-2 MiB blocks from 2 MiB
# parts, split to 128 MiB): the GPU tests, then broadcast and reduce by the table against NCCL
# (graphs 8 B-128 MiB by factors of 2, eager by 4), every result checked.
# Usage: scripts/session11_four_final.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
for op in broadcast reduce; do
  step "g4-$op-graph" "$g" coll $op -b 8 -e 128M -f 2 -g 4 -d float -o sum -G 10 --baseline nccl \
    --json "$out/g4-$op-graph.json"
  step "g4-$op-eager" "$g" coll $op -b 8 -e 128M -f 4 -g 4 -d float -o sum --baseline nccl \
    --json "$out/g4-$op-eager.json"
done
