#!/usr/bin/env bash
# The chain kernel on the GPU machine: the GPU tests, then broadcast and reduce by the chain
# against NCCL in the same process, its step size, and split against the table's choice below
# 4 MiB, on GPUs 0..N-1.
# Usage: scripts/chain_suite.sh BUILD_DIR LOG_DIR N
# SKIP_CTEST=1 leaves the tests out; CHAIN_OPS the chain's operations, CHAIN_STEPS the extra
# step sizes, SMALL_OPS the operations of the small-size comparison ("" skips any of them);
# CHAIN_GRAPH=1 adds -G 10 to the chain's runs.
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
n=${3:?GPU count}
STEP_TIMEOUT=${STEP_TIMEOUT:-150}
graph=${CHAIN_GRAPH:+-G 10}
write_machine_info
if [ -z "${SKIP_CTEST:-}" ]; then
  link_build_path "$build"
  step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
fi
for op in ${CHAIN_OPS-broadcast reduce}; do
  record "g$n-$op-chain" GPUPEER_ALGO=chain "$g" coll "$op" -b 2M -e 512M -f 4 -g "$n" $graph --baseline nccl
  for s in ${CHAIN_STEPS-8K 128K}; do
    record "g$n-$op-chain-steps" GPUPEER_ALGO=chain GPUPEER_CHAIN_STEP=$s "$g" coll "$op" -b 2M -e 512M -f 4 \
      -g "$n" $graph -c 0
  done
done
for op in ${SMALL_OPS-all_reduce reduce_scatter all_gather broadcast reduce}; do
  record "g$n-small-$op" GPUPEER_ALGO=split "$g" coll "$op" -b 256K -e 4M -f 2 -g "$n" --baseline nccl
  record "g$n-small-$op" "$g" coll "$op" -b 256K -e 4M -f 2 -g "$n" -c 0
done
