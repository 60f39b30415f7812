#!/usr/bin/env bash
# Session 13 on 4 GPUs (not lent in session 12): the GPU tests; every operation by the table
# against NCCL in the same process, eager and in graphs, 8 B to 128 MiB, every result checked;
# the 128-byte lines, off from 3 GPUs until measured there, turned on for every piece
# (GPUPEER_LL128_SLOT=18M GPUPEER_LL128_FROM=0) beside the table, graphs, 8 B-8 MiB, checked;
# the copying operations by copy engine with the senders' or the receivers' engines
# (GPUPEER_CE_ISSUE), 16-128 MiB, timing only; the 4-GPU tests with the 128-byte lines on.
# Usage: scripts/session13_four.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
tests_and_every_operation g4 4 128M
ll128=(env GPUPEER_LL128_SLOT=18M GPUPEER_LL128_FROM=0)
for op in all_reduce reduce_scatter all_gather broadcast reduce alltoall sendrecv; do
  step "$op-ll128" "${ll128[@]}" "$g" coll $op -b 8 -e 8M -f 4 -g 4 -d float -o sum -G 10
done
for op in all_gather alltoall sendrecv broadcast; do
  for issue in sender receiver; do
    step "$op-ce-$issue" env GPUPEER_ALGO=ce GPUPEER_CE_ISSUE=$issue "$g" coll $op -b 16M -e 128M -f 2 -g 4 \
      -d float -o sum -G 10 -c 0
  done
done
step ctest-many-ll128 bash -c "cd '$build' && ${ll128[*]:1} ctest -L gpu -R ManyGpus --output-on-failure"
