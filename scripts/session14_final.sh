#!/usr/bin/env bash
# Session 14 on 2 GPUs, the final run (two-shot for the all-reduce above 128 MiB, the one-shot
# kernel for the reduce-scatter to 64 MiB): the GPU tests, every operation by the table against
# NCCL in the same process, eager and in graphs, 8 B to 512 MiB, every result checked, and the
# small all-reduces (closing_sweep); the all-reduce and reduce-scatter by the table 16-512 MiB by
# factors of 2 in graphs, timing only, two passes, beside run 6's forced algorithms.
# Usage: scripts/session14_final.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
closing_sweep
for pass in 1 2; do
  for op in all_reduce reduce_scatter; do
    step "$op-table-$pass" "$g" coll $op -b 16M -e 512M -f 2 -g 2 -d float -o sum -G 10 -c 0
  done
done
