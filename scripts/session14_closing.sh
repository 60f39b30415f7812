#!/usr/bin/env bash
# Session 14 on 2 GPUs, the closing run: the GPU tests, every operation by the table against
# NCCL in the same process, eager and in graphs, 8 B to 512 MiB, every result checked, and the
# small all-reduces (closing_sweep); the floors under the issue's figures in the same call: the
# host's cost of kernel launches beside gpupeer's eager all-reduce (launch_cost), the copy
# engines' and SM copies' own rates both ways at 32, 64 and 128 MiB per direction (ce_sm_mix),
# and the large operations at every power of 2 from 64 MiB in graphs, timing only.
# Usage: scripts/session14_closing.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests" "$1/gpupeer_launch_cost" \
  "$1/gpupeer_ce_sm_mix"
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
closing_sweep
for pass in 1 2; do step "launch-cost-$pass" "$build/gpupeer_launch_cost"; done
for mib in 32 64 128; do step "ce-sm-mix-${mib}M" "$build/gpupeer_ce_sm_mix" $mib; done
for op in all_gather alltoall reduce_scatter all_reduce broadcast; do
  step "$op-64M-512M-graph" "$g" coll $op -b 64M -e 512M -f 2 -g 2 -d float -o sum -G 10 -c 0
done
