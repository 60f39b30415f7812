#!/usr/bin/env bash
# Session 12 on 2 GPUs, run 4 (128-byte lines from 64 KiB, the one-shot all-reduce to 4 MiB): the
# GPU tests, then every operation by the table against NCCL in the same process (eager and in
# graphs; NCCL also with symmetric windows), 8 B to 512 MiB, every result checked: the data of
# bench/coll-h200x2.svg; and the all-reduce in graphs at every power of 2 from 8 B to 8 MiB, for the
# issue's figures.
# Usage: scripts/session12_table.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
closing_sweep
