#!/usr/bin/env bash
# Measurements behind the algorithm table for more than two GPUs: every algorithm an operation
# can take, forced over the sizes where they may cross, eager (and all-reduce in graphs), on
# GPUs 0..N-1.
# Usage: scripts/tune_ranks.sh BUILD_DIR LOG_DIR N
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
n=${3:?GPU count}
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
sizes=${TUNE_RANGE:--b 64K -e 512M -f 4}
for algo in oneshot pull ce twoshot; do
  record "g$n-all_reduce" GPUPEER_ALGO=$algo "$g" coll all_reduce $sizes -g "$n" -n 10
done
for op in reduce_scatter reduce; do
  for algo in oneshot pull ce; do
    record "g$n-$op" GPUPEER_ALGO=$algo "$g" coll $op $sizes -g "$n" -n 10
  done
done
for op in all_gather broadcast alltoall sendrecv; do
  for algo in oneshot ce; do
    record "g$n-$op" GPUPEER_ALGO=$algo "$g" coll $op $sizes -g "$n" -n 10
  done
done
# Where one-shot gives way to two-shot for all-reduce, in graphs (the latency that counts there).
for algo in oneshot twoshot; do
  record "g$n-all_reduce-graph" GPUPEER_ALGO=$algo "$g" coll all_reduce -b 64K -e 4M -f 2 -g "$n" -G 10
done
