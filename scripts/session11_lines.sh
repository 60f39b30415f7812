#!/usr/bin/env bash
# Session 11 on 2 GPUs: the low-latency kernel loading its own unit once, before it sends
# (build) against the build before (before/gpupeer), alternating in one call: all-reduce,
# reduce-scatter and reduce in graphs from 8 B to 64 KiB, float, and all-reduce of f8e4m3 and
# half; then the GPU tests at the new build.
# Usage: scripts/session11_lines.sh BUILD_DIR BEFORE_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
before=${2:?before dir}
begin_run "${1:?build dir}" "${3:?log dir}" "$before/gpupeer" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
for i in 1 2; do
  for which in before after; do
    bin=$([ $which = before ] && echo "$before/gpupeer" || echo "$g")
    for op in all_reduce reduce_scatter reduce; do
      step "$op-$which-$i" "$bin" coll $op -b 8 -e 64K -f 2 -g 2 -d float -o sum -G 10
    done
    for t in f8e4m3 half; do
      step "all_reduce-$t-$which-$i" "$bin" coll all_reduce -b 8 -e 64K -f 4 -g 2 -d $t -o sum -G 10
    done
  done
done
step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
