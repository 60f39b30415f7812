#!/usr/bin/env bash
# Session 12 on 2 GPUs, the closing run (128-byte lines for every piece): the GPU tests, then every
# operation by the table against NCCL in the same process (eager and in graphs; NCCL also with
# symmetric windows), 8 B to 512 MiB, every result checked: the data of bench/coll-h200x2.svg; the
# all-reduce in graphs at every power of 2 from 8 B to 8 MiB, for the issue's figures; and 128-byte
# against 16-byte lines from 8 B to 8 KiB (GPUPEER_LL128_FROM=1G), alternating.
# Usage: scripts/session12_closing.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
closing_sweep
for i in 1 2; do
  step "g2-all_reduce-8-8K-lines128-$i" "$g" coll all_reduce -b 8 -e 8K -f 2 -g 2 -d float -o sum -G 10
  step "g2-all_reduce-8-8K-lines-$i" env GPUPEER_LL128_FROM=1G "$g" coll all_reduce -b 8 -e 8K -f 2 -g 2 -d float \
    -o sum -G 10
done
