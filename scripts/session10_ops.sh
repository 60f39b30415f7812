#!/usr/bin/env bash
# Session 10: the reduction operator chosen once per kernel (reduceUnits, the pull kernel)
# instead of per lane, against the build before it (BEFORE_BIN) in the same call. The GPU tests
# at the new build; the small all-reduce in graphs for five types (one-shot lines kernel), the
# 2-8 MiB all-reduce (split, the pull kernel) and the reduce-scatter by pull, each new and
# before alternately, twice; NCCL beside the new build's float rows.
# Usage: scripts/session10_ops.sh BUILD_DIR LOG_DIR BEFORE_BIN
set -u
source "$(dirname "$0")/logged_steps.sh"
before=${3:?gpupeer binary before the change}
begin_run "${1:?build dir}" "${2:?log dir}" "$before" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
for i in 1 2; do
  for t in float f8e4m3 int8 half bfloat16; do
    nccl=$([ $t = float ] && echo --baseline nccl)
    step "small-$t-new-$i" "$g" coll all_reduce -b 8 -e 1M -f 4 -g 2 -d $t -o sum -G 10 $nccl
    step "small-$t-before-$i" "$before" coll all_reduce -b 8 -e 1M -f 4 -g 2 -d $t -o sum -G 10
  done
  step "small-f8e4m3-max-new-$i" "$g" coll all_reduce -b 8 -e 32K -f 4 -g 2 -d f8e4m3 -o max -G 10
  step "small-f8e4m3-max-before-$i" "$before" coll all_reduce -b 8 -e 32K -f 4 -g 2 -d f8e4m3 -o max -G 10
  for t in float f8e4m3 half; do
    nccl=$([ $t = float ] && echo --baseline nccl)
    step "split-$t-new-$i" "$g" coll all_reduce -b 2M -e 8M -f 2 -g 2 -d $t -o sum -G 10 $nccl
    step "split-$t-before-$i" "$before" coll all_reduce -b 2M -e 8M -f 2 -g 2 -d $t -o sum -G 10
  done
  step "pull-rs-new-$i" "$g" coll reduce_scatter -b 8M -e 128M -f 4 -g 2 -d float -o sum -G 10 -c 0
  step "pull-rs-before-$i" "$before" coll reduce_scatter -b 8M -e 128M -f 4 -g 2 -d float -o sum -G 10 -c 0
done
