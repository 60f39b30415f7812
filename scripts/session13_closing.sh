#!/usr/bin/env bash
# Session 13 on 2 GPUs, the closing run (the receivers' copy engines pull the copying
# operations): the GPU tests, every operation by the table against NCCL in the same process,
# eager and in graphs, 8 B to 512 MiB, every result checked, and the small all-reduces
# (closing_sweep); then all-gather and alltoall by copy engine 16-512 MiB, the senders' engines
# against the receivers' (the default), timing only.
# Usage: scripts/session13_closing.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
closing_sweep
for op in all_gather alltoall; do
  for issue in sender receiver; do
    step "$op-ce-$issue" env GPUPEER_ALGO=ce GPUPEER_CE_ISSUE=$issue "$g" coll $op -b 16M -e 512M -f 2 -g 2 \
      -d float -o sum -G 10 -c 0
  done
done
