#!/usr/bin/env bash
# Session 9's first run: the GPU tests; the host's time for the pieces of an eager operation
# (gpupeer_launch_cost); and the copy-engine algorithm with its side streams started and
# joined by the meeting kernel or by events awaited across GPUs (GPUPEER_CE_MEET), and for the
# reductions with the chunk tail halving to 1, 2 or 4 MiB (GPUPEER_CE_TAIL), in graphs.
# GPUPEER_CE_MEET and GPUPEER_CE_TAIL existed only in the build this ran (the patch in
# bench/results/2026-11-22-h200x2-s9/1-meet-tail); neither was kept.
# Usage: scripts/session9_ce.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/gpupeer_launch_cost"
STEP_TIMEOUT=${STEP_TIMEOUT:-90}
[ -z "${SKIP_CTEST:-}" ] && step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
step launch-cost-1 "$build/gpupeer_launch_cost"
for op in all_gather alltoall broadcast sendrecv; do
  for meet in events kernel; do
    step "$op-meet-$meet" env GPUPEER_CE_MEET=$meet "$g" coll $op -g 2 -d float -b 16M -e 512M -f 2 -G 4 -c 0
  done
done
for meet in events kernel; do
  step "all_gather-eager-meet-$meet" env GPUPEER_CE_MEET=$meet "$g" coll all_gather -g 2 -d float -b 16M -e 512M -f 2 -c 0
done
for op in all_reduce reduce_scatter; do
  for setting in events:0 kernel:0 kernel:1M kernel:2M kernel:4M; do
    meet=${setting%:*} tail=${setting#*:}
    step "$op-ce-meet-$meet-tail-$tail" env GPUPEER_ALGO=ce GPUPEER_CE_MEET=$meet GPUPEER_CE_TAIL=$tail \
      "$g" coll $op -g 2 -d float -b 32M -e 512M -f 2 -G 4 -c 0
  done
done
step launch-cost-2 "$build/gpupeer_launch_cost"
