#!/usr/bin/env bash
# Session 9's second run: the GPU tests; the host's time for the pieces of an eager operation
# (gpupeer_launch_cost, now with the driver's launch and gpupeer from one thread); and the
# copy-engine algorithm with one or two side streams per rank (GPUPEER_CE_STREAMS), in graphs
# and eagerly.
# GPUPEER_CE_STREAMS existed only in the build this ran (the patch in
# bench/results/2026-11-22-h200x2-s9/2-side-streams); it was not kept.
# Usage: scripts/session9_streams.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/gpupeer_launch_cost"
STEP_TIMEOUT=${STEP_TIMEOUT:-90}
[ -z "${SKIP_CTEST:-}" ] && step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
step launch-cost-1 "$build/gpupeer_launch_cost"
for op in all_gather alltoall broadcast sendrecv; do
  for streams in 1 2; do
    step "$op-streams-$streams" env GPUPEER_CE_STREAMS=$streams "$g" coll $op -g 2 -d float -b 16M -e 512M -f 2 -G 4 -c 0
  done
done
for op in all_reduce reduce_scatter; do
  for streams in 1 2; do
    step "$op-ce-streams-$streams" env GPUPEER_ALGO=ce GPUPEER_CE_STREAMS=$streams \
      "$g" coll $op -g 2 -d float -b 32M -e 512M -f 2 -G 4 -c 0
  done
done
for streams in 1 2; do
  step "all_gather-eager-streams-$streams" env GPUPEER_CE_STREAMS=$streams "$g" coll all_gather -g 2 -d float -b 16M -e 512M -f 2 -c 0
  step "all_reduce-eager-ce-streams-$streams" env GPUPEER_ALGO=ce GPUPEER_CE_STREAMS=$streams "$g" coll all_reduce -g 2 -d float -b 32M -e 512M -f 2 -c 0
done
step launch-cost-2 "$build/gpupeer_launch_cost"
