#!/usr/bin/env bash
# The split algorithm on the GPU machine: the GPU tests, then each operation split serves
# forced to it (against NCCL in the same process, results checked) beside the table's own
# choice, eager, on GPUs 0..N-1 and on GPUs 0-1.
# Usage: scripts/split_suite.sh BUILD_DIR LOG_DIR N
# SKIP_CTEST=1 leaves the tests out; SPLIT_OPS, PAIR_OPS choose the operations ("" skips);
# SPLIT_RANGE the sizes; SPLIT_GRAPH=1 adds -G 10 to every run.
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
n=${3:?GPU count}
STEP_TIMEOUT=${STEP_TIMEOUT:-150}
sizes=${SPLIT_RANGE:--b 2M -e 512M -f 4}
graph=${SPLIT_GRAPH:+-G 10}
write_machine_info
if [ -z "${SKIP_CTEST:-}" ]; then
  link_build_path "$build"
  step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
fi
for op in ${SPLIT_OPS-all_reduce reduce_scatter broadcast reduce all_gather}; do
  record "g$n-$op" GPUPEER_ALGO=split "$g" coll "$op" $sizes -g "$n" $graph --baseline nccl
  record "g$n-$op" "$g" coll "$op" $sizes -g "$n" $graph -c 0
done
for op in ${PAIR_OPS-all_reduce reduce_scatter}; do
  record "g2-$op" GPUPEER_ALGO=split "$g" coll "$op" $sizes -g 2 $graph --baseline nccl
  record "g2-$op" "$g" coll "$op" $sizes -g 2 $graph -c 0
done
