#!/usr/bin/env bash
# Session 14 on 4 GPUs, second call: the library as committed (session 13's, the 4-GPU
# reduce-scatter by the one-shot kernel to 256 MiB): the GPU tests; every operation by the table
# against NCCL in the same process, eager and in graphs, 8 B to 128 MiB, every result checked;
# reduce-scatter and all-reduce at 256 MiB in graphs against NCCL, checked; which profilers the
# machine has.
# Usage: scripts/session14_four_final.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
tests_and_every_operation g4 4 128M
for op in reduce_scatter all_reduce; do
  step "g4-$op-256M-graph" "$g" coll $op -b 256M -e 256M -g 4 -d float -o sum -G 10 --baseline nccl \
    --json "$out/g4-$op-256M-graph.json"
done
step profilers bash -c 'for t in perf strace ltrace gdb valgrind nsys ncu; do echo "$t: $(command -v $t || echo none)"; done'
