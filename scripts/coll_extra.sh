#!/usr/bin/env bash
# Extra collective runs beside scripts/coll_suite.sh: other types and ops against NCCL, the
# fallback without P2P, and the algorithm crossover around the table's points.
# Usage: scripts/coll_extra.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
record types "$g" coll all_reduce -b 8 -e 128M -f 16 -d bfloat16 -o sum --baseline nccl
record types "$g" coll all_reduce -b 8 -e 128M -f 16 -d half -o prod --baseline nccl
record types "$g" coll all_reduce -b 8 -e 128M -f 16 -d int32 -o max --baseline nccl
record types "$g" coll all_reduce -b 8 -e 128M -f 16 -d int8 -o min --baseline nccl
record types "$g" coll all_reduce -b 8 -e 128M -f 16 -d double -o avg --baseline nccl
record types "$g" coll reduce_scatter -b 8 -e 128M -f 16 -d int64 -o sum --baseline nccl
record types "$g" coll reduce -b 8 -e 128M -f 16 -d float -o sum -r 1 --baseline nccl
record types "$g" coll broadcast -b 8 -e 128M -f 16 -d uint8 -r 1 --baseline nccl
record no-p2p NCCL_P2P_DISABLE=1 "$g" coll all_reduce -b 8 -e 128M -f 16 --baseline nccl
record no-p2p NCCL_P2P_DISABLE=1 "$g" coll all_gather -b 8 -e 128M -f 16 --baseline nccl
for op in all_reduce reduce_scatter broadcast; do
  for algo in oneshot ce; do
    record "crossover-$op" GPUPEER_ALGO=$algo "$g" coll $op -b 4M -e 128M -f 2 -n 10
  done
done
