#!/usr/bin/env bash
# Session 11 on 2 GPUs: the low-latency kernel issuing its own unit's load before the operation
# counter's (build) against the session's final library (before/gpupeer), alternating three
# times, graphs, float: all-reduce 1-64 KiB, reduce-scatter 2-64 KiB, all-reduce of f8e4m3 to
# 32 KiB; then the GPU tests and every operation from 8 B to 1 MiB in graphs at the new build
# (every result checked).
# Usage: scripts/session11_epoch.sh BUILD_DIR BEFORE_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
before=${2:?before dir}
begin_run "${1:?build dir}" "${3:?log dir}" "$before/gpupeer" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
for i in 1 2 3; do
  for which in before after; do
    bin=$([ $which = before ] && echo "$before/gpupeer" || echo "$g")
    step "all_reduce-$which-$i" "$bin" coll all_reduce -b 1K -e 64K -f 2 -g 2 -d float -o sum -G 10
    step "reduce_scatter-$which-$i" "$bin" coll reduce_scatter -b 2K -e 64K -f 2 -g 2 -d float -o sum -G 10
    step "all_reduce-f8e4m3-$which-$i" "$bin" coll all_reduce -b 512 -e 32K -f 4 -g 2 -d f8e4m3 -o sum -G 10
  done
done
step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
for op in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
  step "g2-$op-small-graph" "$g" coll $op -b 8 -e 1M -f 4 -g 2 -d float -o sum -G 10 --baseline nccl
done
