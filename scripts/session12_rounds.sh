#!/usr/bin/env bash
# Session 12 on 2 GPUs, run 3: the 128-byte lines' kernel with its rounds walked without a
# division (run 2's build counted them first), at lags 0, 1, 2 and 64 (sending everything
# first, as run 1's build did) against the table, all-reduce in graphs 8 KiB-32 MiB, each
# twice, alternating; then the GPU tests with every one-shot piece in 128-byte lines.
# Usage: scripts/session12_rounds.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-90}
ll128=(env GPUPEER_ALGO=oneshot GPUPEER_LL128_FROM=0 GPUPEER_ONESHOT_SLOT=32M GPUPEER_LL128_SLOT=36M)
ar=(coll all_reduce -g 2 -d float -o sum -G 10)
for i in 1 2; do
  step "table-$i" "$g" "${ar[@]}" -b 8K -e 32M -f 2
  for lag in 0 1 2 64; do
    step "lag$lag-$i" "${ll128[@]}" GPUPEER_LL128_LAG=$lag "$g" "${ar[@]}" -b 8K -e 32M -f 2
  done
done
step ctest-gpu-ll128 bash -c "cd '$build' && GPUPEER_LL128_FROM=0 ctest -L gpu --output-on-failure"
