#!/usr/bin/env bash
# The ring on the GPU machine: the GPU tests, then every operation the ring serves forced to
# it (against NCCL in the same process) beside the table's own choice, eager; the ring's chunk
# size for the chain operations (broadcast, reduce), eager and in CUDA graphs (where the host's
# enqueueing is out of the time).
# Usage: scripts/ring_suite.sh BUILD_DIR LOG_DIR N   (GPUs 0..N-1)
# SKIP_CTEST=1 leaves the tests out; RING_OPS, RING_CHUNKS, RING_GRAPH_OPS, RING_GRAPH_CHUNKS
# choose the operations and chunk sizes of each part ("" skips it).
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
n=${3:?GPU count}
STEP_TIMEOUT=${STEP_TIMEOUT:-150}
sizes=${RING_RANGE:--b 2M -e 512M -f 4}
write_machine_info
if [ -z "${SKIP_CTEST:-}" ]; then
  link_build_path "$build"
  step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
fi
for op in ${RING_OPS-broadcast reduce all_reduce reduce_scatter all_gather}; do
  record "g$n-$op" GPUPEER_ALGO=ring "$g" coll "$op" $sizes -g "$n" --baseline nccl
  record "g$n-$op" "$g" coll "$op" $sizes -g "$n" -c 0
done
for chunk in ${RING_CHUNKS-2M 32M}; do
  for op in broadcast reduce; do
    record "g$n-chunks" GPUPEER_ALGO=ring GPUPEER_RING_CHUNK=$chunk "$g" coll "$op" -b 32M -e 512M -f 4 -g "$n" -c 0
  done
done
for chunk in ${RING_GRAPH_CHUNKS-}; do
  for op in ${RING_GRAPH_OPS-broadcast reduce}; do
    record "g$n-graph" GPUPEER_ALGO=ring GPUPEER_RING_CHUNK=$chunk "$g" coll "$op" -b 32M -e 512M -f 4 -g "$n" -c 0 \
      -G 10
  done
done
