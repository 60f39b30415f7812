#!/usr/bin/env bash
# Session 7's confirmation on the GPU machine after the last table change: the GPU tests, and
# the 2-GPU reduce by the table (pull with tiles from 512 KiB per block) against NCCL.
# Usage: scripts/session7_confirm.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-100}
write_machine_info
link_build_path "$build"
step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
step g2-reduce-eager "$g" coll reduce -b 32M -e 512M -f 2 -g 2 -d float -o sum --baseline nccl
