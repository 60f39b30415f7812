#!/usr/bin/env bash
# Session 11 on 2 GPUs: the low-latency kernel's second poll in flight (GPUPEER_LL_POLL_OFFSET,
# clock cycles between the two polls; 0: one at a time) against the build before (before/gpupeer,
# which also loads its own unit after sending), alternating in one call, graphs, float:
# all-reduce 1-64 KiB, reduce-scatter 2-64 KiB, all-gather and reduce 1-128 KiB.
# Usage: scripts/session11_poll.sh BUILD_DIR BEFORE_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
before=${2:?before dir}
begin_run "${1:?build dir}" "${3:?log dir}" "$before/gpupeer"
STEP_TIMEOUT=${STEP_TIMEOUT:-60}
for i in 1 2; do
  for which in before 0 64 128 256 512; do
    if [ $which = before ]; then run=("$before/gpupeer"); else run=(env GPUPEER_LL_POLL_OFFSET=$which "$g"); fi
    step "all_reduce-$which-$i" "${run[@]}" coll all_reduce -b 1K -e 64K -f 2 -g 2 -d float -o sum -G 10
    step "reduce_scatter-$which-$i" "${run[@]}" coll reduce_scatter -b 2K -e 64K -f 2 -g 2 -d float -o sum -G 10
  done
done
for which in before 0 128 256; do
  if [ $which = before ]; then run=("$before/gpupeer"); else run=(env GPUPEER_LL_POLL_OFFSET=$which "$g"); fi
  for op in all_gather reduce; do
    step "$op-$which" "${run[@]}" coll $op -b 1K -e 128K -f 2 -g 2 -d float -o sum -G 10
  done
done
