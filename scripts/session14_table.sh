#!/usr/bin/env bash
# Session 14 on 2 GPUs: whether the table's choices for the large all-reduce and reduce-scatter
# still hold: each algorithm forced beside the table's, 16-512 MiB by factors of 2, in graphs,
# timing only, two passes in turn.
# Usage: scripts/session14_table.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-90}
for pass in 1 2; do
  for op in all_reduce reduce_scatter; do
    for algo in table oneshot twoshot split pull ce; do
      [ "$algo" = twoshot ] && [ "$op" != all_reduce ] && continue
      step "$op-$algo-$pass" env GPUPEER_ALGO=${algo/table/} "$g" coll $op -b 16M -e 512M -f 2 -g 2 -d float -o sum \
        -G 10 -c 0
    done
  done
done
