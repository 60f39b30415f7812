#!/usr/bin/env bash
# Session 10 on 4 GPUs: the small all-reduce of float, f8e4m3, int8 and half in graphs on GPUs
# 0-1 side by side (twice, alternating), the GPU tests (six of them need 3+ GPUs), the
# all-reduce of f8e4m3 on 4 GPUs, then every operation on 4 GPUs by the table against NCCL in
# the same process, eager and in graphs (NCCL also with symmetric windows), 8 B to 32 MiB;
# every result checked.
# Usage: scripts/session10_four.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
for i in 1 2; do
  for t in float f8e4m3 int8 half; do
    step "g2-all_reduce-small-$t-$i" "$g" coll all_reduce -b 8 -e 32K -f 4 -g 2 -d $t -o sum -G 10 --baseline nccl
  done
done
step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
for mode in eager graph; do
  step "g4-all_reduce-f8e4m3-$mode" "$g" coll all_reduce -b 8 -e 32M -f 4 -g 4 -d f8e4m3 -o sum \
    $([ $mode = graph ] && echo -G 10) --baseline nccl --json "$out/g4-all_reduce-f8e4m3-$mode.json"
done
every_operation_against_nccl g4 4 32M
