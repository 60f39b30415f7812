#!/usr/bin/env bash
# Session 14 on 2 GPUs: eager all-reduces of 8 B-32 KiB against NCCL in windows of 20 (coll's and
# nccl-tests' default), 200 and 1000 back-to-back operations, three passes in turn, with the
# host's time to enqueue one operation per window (GPUPEER_DEBUG=info): how much of the eager
# time is the window's start rather than each operation.
# Usage: scripts/session14_eager.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
for pass in 1 2 3; do
  for n in 20 200 1000; do
    step "eager-n$n-$pass" env GPUPEER_DEBUG=info "$g" coll all_reduce -b 8 -e 32K -f 4 -g 2 -d float -o sum -n $n \
      --baseline nccl
  done
done
