#!/usr/bin/env bash
# Session 8's eager tables after the timing fix (the warm-up drains before each timed window):
# every operation on 2 GPUs against NCCL eager, and the small all-reduce with the host's enqueue
# time per operation (GPUPEER_DEBUG=info).
# Usage: scripts/session8_eager_final.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-60}
step g2-all_reduce-small-eager-host env GPUPEER_DEBUG=info "$g" coll all_reduce -b 8 -e 1M -f 4 -g 2 -d float -o sum \
  --baseline nccl
for op in all_reduce reduce_scatter all_gather broadcast reduce alltoall sendrecv; do
  step "g2-$op-eager" "$g" coll $op -b 8 -e 512M -f 4 -g 2 -d float -o sum --baseline nccl \
    --json "$out/g2-$op-eager.json"
done
