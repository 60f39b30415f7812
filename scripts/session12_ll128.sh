#!/usr/bin/env bash
# Session 12 on 2 GPUs: the one-shot kernel's 128-byte lines (GPUPEER_LL128_FROM=0: every piece
# that fits takes them) against the table and against the one-shot kernel as it was (16-byte
# lines to 1 MiB, the regular variant above), alternating in one call: all-reduce in graphs
# 8 KiB-16 MiB, the other operations 64 KiB-16 MiB, eager all-reduce, other types; then the
# GPU tests with every one-shot piece in 128-byte lines.
# Usage: scripts/session12_ll128.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-90}
ll128=(env GPUPEER_ALGO=oneshot GPUPEER_LL128_FROM=0)
for i in 1 2; do
  step "ar-table-$i" "$g" coll all_reduce -b 8K -e 16M -f 2 -g 2 -d float -o sum -G 10
  step "ar-ll128-$i" "${ll128[@]}" "$g" coll all_reduce -b 8K -e 16M -f 2 -g 2 -d float -o sum -G 10
  step "ar-oneshot-$i" env GPUPEER_ALGO=oneshot "$g" coll all_reduce -b 8K -e 16M -f 2 -g 2 -d float -o sum -G 10
done
for op in all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
  step "$op-table" "$g" coll $op -b 64K -e 16M -f 4 -g 2 -d float -o sum -G 10
  step "$op-ll128" "${ll128[@]}" "$g" coll $op -b 64K -e 16M -f 4 -g 2 -d float -o sum -G 10
done
step "ar-eager-table" "$g" coll all_reduce -b 256K -e 16M -f 4 -g 2 -d float -o sum
step "ar-eager-ll128" "${ll128[@]}" "$g" coll all_reduce -b 256K -e 16M -f 4 -g 2 -d float -o sum
for t in half bfloat16 int8 double f8e4m3; do
  step "ar-ll128-$t" "${ll128[@]}" "$g" coll all_reduce -b 8 -e 8M -f 8 -g 2 -d $t -o max -G 10
done
step ctest-gpu-ll128 bash -c "cd '$build' && GPUPEER_LL128_FROM=0 ctest -L gpu --output-on-failure"
