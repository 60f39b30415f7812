#!/usr/bin/env bash
# Session 14 on 2 GPUs, first call: where an eager operation's host time goes (launch_cost, two
# passes: launches, gpupeer's checks alone, its choice of algorithm, the whole all-reduce), the
# copy engines' own rate both ways at 32 and 64 MiB per direction (ce_sm_mix: the floor under
# an all-gather of 64 and 128 MiB), and which profilers the machine has.
# Usage: scripts/session14_host.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/gpupeer_launch_cost" "$1/gpupeer_ce_sm_mix"
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
step profilers bash -c 'for t in perf strace ltrace gdb valgrind nsys ncu py-spy; do echo "$t: $(command -v $t || echo none)"; done'
for pass in 1 2; do step "launch-cost-$pass" "$build/gpupeer_launch_cost"; done
for mib in 32 64; do step "ce-sm-mix-${mib}M" "$build/gpupeer_ce_sm_mix" $mib; done
