#!/usr/bin/env bash
# The chain broadcast on the GPU machine: the GPU tests, then broadcast by the chain kernel
# against NCCL in the same process, its step size, and split against the table's choice below
# 2 MiB on GPUs 0..N-1.
# Usage: scripts/chain_suite.sh BUILD_DIR LOG_DIR N
# SKIP_CTEST=1 leaves the tests out; CHAIN_STEPS the extra step sizes ("" skips);
# SMALL_OPS the operations of the small-size comparison ("" skips).
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
n=${3:?GPU count}
STEP_TIMEOUT=${STEP_TIMEOUT:-150}
write_machine_info
if [ -z "${SKIP_CTEST:-}" ]; then
  link_build_path "$build"
  step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
fi
record "g$n-broadcast-chain" GPUPEER_ALGO=chain "$g" coll broadcast -b 2M -e 512M -f 4 -g "$n" --baseline nccl
for s in ${CHAIN_STEPS-8K 128K}; do
  record "g$n-broadcast-chain-steps" GPUPEER_ALGO=chain GPUPEER_CHAIN_STEP=$s "$g" coll broadcast -b 2M -e 512M -f 4 \
    -g "$n" -c 0
done
for op in ${SMALL_OPS-all_reduce reduce_scatter all_gather broadcast reduce}; do
  record "g$n-small-$op" GPUPEER_ALGO=split "$g" coll "$op" -b 256K -e 4M -f 2 -g "$n" --baseline nccl
  record "g$n-small-$op" "$g" coll "$op" -b 256K -e 4M -f 2 -g "$n" -c 0
done
