#!/usr/bin/env bash
# Session 6's table run on the GPU machine: the GPU tests, then every operation that split or
# the chain took over by the new table against NCCL in the same process (eager, JSON for the
# plot) on GPUs 0..N-1, and all-reduce on GPUs 0-1. (At 11e35ad it also ran the chain with
# GPUPEER_CHAIN_MIN_STEPS=8, a knob removed after that run showed it slower.)
# Usage: scripts/session6_final.sh BUILD_DIR LOG_DIR N
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
n=${3:?GPU count}
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
write_machine_info
link_build_path "$build"
step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
for op in ${FINAL_OPS-all_reduce reduce_scatter all_gather broadcast reduce}; do
  step "coll-$op-eager-g$n" "$g" coll "$op" -b 8 -e 512M -f 4 -g "$n" -d float -o sum --baseline nccl \
    --json "$out/coll-$op-eager-g$n.json"
done
step coll-all_reduce-eager-g2 "$g" coll all_reduce -b 8 -e 512M -f 4 -g 2 -d float -o sum --baseline nccl \
  --json "$out/coll-all_reduce-eager-g2.json"
