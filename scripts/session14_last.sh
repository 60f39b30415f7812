#!/usr/bin/env bash
# Session 14 on 2 GPUs, the last run: the library as committed (run 7's table without two-shot
# for the 2-GPU all-reduce): the GPU tests, every operation by the table against NCCL in the same
# process, eager and in graphs, 8 B to 512 MiB, every result checked, and the small all-reduces
# (closing_sweep).
# Usage: scripts/session14_last.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
closing_sweep
