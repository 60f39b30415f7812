#!/usr/bin/env bash
# Measurements behind the pull kernel's place in the algorithm table and its grid: pull forced
# over the sizes where it may cross the others, eager and in graphs, and reduce against NCCL.
# Usage: scripts/tune_pull.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
record pull-eager GPUPEER_ALGO=pull "$g" coll all_reduce -b 128K -e 512M -f 4 -n 10
for blocks in 66 264; do
  record pull-blocks GPUPEER_ALGO=pull GPUPEER_ONESHOT_BLOCKS=$blocks "$g" coll all_reduce -b 2M -e 512M -f 4 -n 10
done
record pull-graph GPUPEER_ALGO=pull "$g" coll all_reduce -b 128K -e 32M -f 2 -G 10
for op in reduce_scatter reduce; do
  record pull-ops GPUPEER_ALGO=pull "$g" coll $op -b 128K -e 512M -f 4 -n 10
done
record pull-reduce-nccl GPUPEER_ALGO=pull "$g" coll reduce -b 8M -e 512M -f 4 -G 10 --baseline nccl
