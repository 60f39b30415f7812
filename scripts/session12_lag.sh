#!/usr/bin/env bash
# Session 12 on 2 GPUs, run 2: the 128-byte lines' lag (GPUPEER_LL128_LAG: a warp finishes
# the round it sent that many rounds before; 64 is more rounds than any warp has here, so it
# sends everything first as run 1's build did) against the table, all-reduce in graphs
# 256 KiB-32 MiB, each setting twice, alternating; 264 blocks instead of 132; 16-byte against
# 128-byte lines from 8 KiB to 256 KiB; then the GPU tests with every one-shot piece in
# 128-byte lines.
# Usage: scripts/session12_lag.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-90}
ll128=(env GPUPEER_ALGO=oneshot GPUPEER_LL128_FROM=0 GPUPEER_ONESHOT_SLOT=32M GPUPEER_LL128_SLOT=36M)
ar=(coll all_reduce -g 2 -d float -o sum -G 10)
for i in 1 2; do
  step "table-$i" "$g" "${ar[@]}" -b 256K -e 32M -f 2
  for lag in 0 1 2 4 64; do
    step "lag$lag-$i" "${ll128[@]}" GPUPEER_LL128_LAG=$lag "$g" "${ar[@]}" -b 256K -e 32M -f 2
  done
  step "lag2-264-$i" "${ll128[@]}" GPUPEER_ONESHOT_BLOCKS=264 "$g" "${ar[@]}" -b 256K -e 32M -f 2
  step "small-lines-$i" env GPUPEER_ALGO=oneshot "$g" "${ar[@]}" -b 8K -e 256K -f 2
  step "small-ll128-$i" "${ll128[@]}" "$g" "${ar[@]}" -b 8K -e 256K -f 2
done
step ctest-gpu-ll128 bash -c "cd '$build' && GPUPEER_LL128_FROM=0 ctest -L gpu --output-on-failure"
