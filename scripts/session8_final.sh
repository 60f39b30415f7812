#!/usr/bin/env bash
# Session 8's final run on the GPU machine: the GPU tests, then every operation on 2 GPUs by
# the table against NCCL in the same process (eager; in graphs, where NCCL also runs with
# symmetric windows), from 8 B to 512 MiB, and the small all-reduce at every power of two.
# Usage: scripts/session8_final.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-90}
[ -z "${SKIP_CTEST:-}" ] && step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
step g2-all_reduce-small-graph "$g" coll all_reduce -b 8 -e 1M -f 2 -g 2 -d float -o sum -G 10 --baseline nccl \
  --json "$out/g2-all_reduce-small-graph.json"
for op in all_reduce reduce_scatter all_gather broadcast reduce alltoall sendrecv; do
  step "g2-$op-graph" "$g" coll $op -b 8 -e 512M -f 4 -g 2 -d float -o sum -G 10 --baseline nccl \
    --json "$out/g2-$op-graph.json"
  step "g2-$op-eager" "$g" coll $op -b 8 -e 512M -f 4 -g 2 -d float -o sum --baseline nccl \
    --json "$out/g2-$op-eager.json"
done
