#!/usr/bin/env bash
# The collectives on the GPU machine against NCCL, eager and in CUDA graphs, from a build made
# elsewhere (docs/gpu-machine.md). Usage: scripts/coll_suite.sh BUILD_DIR LOG_DIR [OPS...]
# One log and one JSON per operation and mode under LOG_DIR, each log starting with its exact
# command; summary.txt lists the steps with their exit codes. COLL_GPUS=N runs on GPUs 0..N-1
# (default: all visible), COLL_RANGE sets the sizes.
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"; shift 2
ops=${*:-all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv}
touch "$out/summary.txt"
STEP_TIMEOUT=280
range=${COLL_RANGE:--b 8 -e 512M -f 4}
gpus=${COLL_GPUS:+-g $COLL_GPUS}
tag=${COLL_GPUS:+-g$COLL_GPUS}
for op in $ops; do
  step "coll-$op-eager$tag" "$g" coll "$op" $range $gpus -d float -o sum --baseline nccl --json "$out/coll-$op-eager$tag.json"
  step "coll-$op-graph$tag" "$g" coll "$op" $range $gpus -d float -o sum -G 10 --baseline nccl --json "$out/coll-$op-graph$tag.json"
done
