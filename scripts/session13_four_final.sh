#!/usr/bin/env bash
# Session 13 on 4 GPUs, second call: the library with the 128-byte lines from 3 GPUs (pieces
# from 64 KiB) and split broadcast's grid by the message: the GPU tests; every operation by the
# table against NCCL in the same process, eager and in graphs, 8 B to 128 MiB, every result
# checked; broadcast in graphs 1-128 MiB by factors of 2 against NCCL.
# Usage: scripts/session13_four_final.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
tests_and_every_operation g4 4 128M
step broadcast-1M-128M-graph "$g" coll broadcast -b 1M -e 128M -f 2 -g 4 -d float -G 10 --baseline nccl \
  --json "$out/broadcast-1M-128M-graph.json"
