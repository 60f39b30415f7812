#!/usr/bin/env bash
# Session 10, run 9: the 8-bit floats converted two lanes per instruction. The GPU tests at the
# new build, then the f8e4m3 and f8e5m2 all-reduce 8 B-1 MiB in graphs, new and before
# (BEFORE_BIN) alternately, twice; NCCL beside the new build's rows.
# Usage: scripts/session10_pairs.sh BUILD_DIR LOG_DIR BEFORE_BIN
set -u
source "$(dirname "$0")/logged_steps.sh"
before=${3:?gpupeer binary before the change}
begin_run "${1:?build dir}" "${2:?log dir}" "$before" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-150}
step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
for i in 1 2; do
  for t in f8e4m3 f8e5m2; do
    step "small-$t-new-$i" "$g" coll all_reduce -b 8 -e 1M -f 4 -g 2 -d $t -o sum -G 10 --baseline nccl
    step "small-$t-before-$i" "$before" coll all_reduce -b 8 -e 1M -f 4 -g 2 -d $t -o sum -G 10
  done
done
