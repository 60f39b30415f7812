#!/usr/bin/env bash
# Session 12 on 2 GPUs, run 6 (128-byte lines from 8 KiB, the one-shot all-reduce to 16 MiB): the
# GPU tests, then every operation by the table against NCCL in the same process (eager and in
# graphs; NCCL also with symmetric windows), 8 B to 512 MiB, every result checked: the data of
# bench/coll-h200x2.svg; the all-reduce in graphs at every power of 2 from 8 B to 8 MiB, for the
# issue's figures; and 16-byte against 128-byte lines from 8 B to 8 KiB (GPUPEER_LL128_FROM=8),
# alternating.
# Usage: scripts/session12_final.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
closing_sweep
for i in 1 2; do
  step "g2-all_reduce-8-8K-lines-$i" "$g" coll all_reduce -b 8 -e 8K -f 2 -g 2 -d float -o sum -G 10
  step "g2-all_reduce-8-8K-lines128-$i" env GPUPEER_LL128_FROM=8 "$g" coll all_reduce -b 8 -e 8K -f 2 -g 2 -d float \
    -o sum -G 10
done
