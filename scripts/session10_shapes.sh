#!/usr/bin/env bash
# Session 10: after the operator moved out of the lanes, do the grids measured in sessions 7-8
# still hold? The lines kernel's lines per block (GPUPEER_LL_BLOCK_LINES, default by
# comm/line_grid.cpp) for 2-64 KiB, and the split kernel's bytes per block (GPUPEER_PULL_BLOCK,
# default 16 KiB for all-reduce) for 2-8 MiB, all-reduce of float in graphs, each setting twice,
# alternating with the default.
# Usage: scripts/session10_shapes.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-60}
for i in 1 2; do
  step "lines-default-$i" "$g" coll all_reduce -b 2K -e 64K -f 2 -g 2 -d float -o sum -G 10
  for l in 32 128 256; do
    step "lines-$l-$i" env GPUPEER_LL_BLOCK_LINES=$l "$g" coll all_reduce -b 2K -e 64K -f 2 -g 2 -d float -o sum -G 10
  done
  step "split-default-$i" "$g" coll all_reduce -b 2M -e 8M -f 2 -g 2 -d float -o sum -G 10
  for b in 8192 32768; do
    step "split-$b-$i" env GPUPEER_PULL_BLOCK=$b "$g" coll all_reduce -b 2M -e 8M -f 2 -g 2 -d float -o sum -G 10
  done
done
