#!/usr/bin/env bash
# The collectives on the GPU machine against NCCL, eager and in CUDA graphs, from a build made
# elsewhere (docs/gpu-machine.md). Usage: scripts/coll_suite.sh BUILD_DIR LOG_DIR [OPS...]
# One log and one JSON per operation and mode under LOG_DIR, each log starting with its exact
# command; summary.txt lists the steps with their exit codes.
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"; shift 2
ops=${*:-all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv}
touch "$out/summary.txt"
STEP_TIMEOUT=280
range=${COLL_RANGE:--b 8 -e 512M -f 4}
for op in $ops; do
  step "coll-$op-eager" "$g" coll "$op" $range -d float -o sum --baseline nccl --json "$out/coll-$op-eager.json"
  step "coll-$op-graph" "$g" coll "$op" $range -d float -o sum -G 10 --baseline nccl --json "$out/coll-$op-graph.json"
done
