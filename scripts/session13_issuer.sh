#!/usr/bin/env bash
# Session 13 on 2 GPUs: whose copy engines carry the copy-engine algorithm's copies
# (GPUPEER_CE_ISSUE): each sender's (as before), each receiver's (copies only), or GPU0's for
# both directions (copy_engine_pair.cpp). The new GPU test first, then every copy-engine
# operation forced (GPUPEER_ALGO=ce) 16-512 MiB in graphs, the three ways alternating, twice;
# eager once; then the GPU tests.
# Usage: scripts/session13_issuer.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
step ctest-issuer bash -c "cd '$build' && ctest -L gpu -R 'CopyEngine' --output-on-failure"
for i in 1 2; do
  for op in sendrecv all_gather alltoall broadcast all_reduce reduce_scatter reduce; do
    for issue in sender receiver first; do
      case $op in all_reduce|reduce_scatter|reduce) [ $issue = receiver ] && continue ;; esac
      step "$op-$issue-$i" env GPUPEER_ALGO=ce GPUPEER_CE_ISSUE=$issue "$g" coll $op -b 16M -e 512M -f 2 -g 2 \
        -d float -o sum -G 10 -c 0
    done
  done
done
for op in sendrecv all_gather all_reduce; do
  for issue in sender first; do
    step "$op-$issue-eager" env GPUPEER_ALGO=ce GPUPEER_CE_ISSUE=$issue "$g" coll $op -b 16M -e 512M -f 2 -g 2 \
      -d float -o sum -c 0
  done
done
# Checked: every result against the host's reference, up to 128 MiB.
for op in sendrecv all_gather alltoall broadcast all_reduce reduce_scatter reduce; do
  step "$op-first-checked" env GPUPEER_ALGO=ce GPUPEER_CE_ISSUE=first "$g" coll $op -b 1M -e 128M -f 8 -g 2 \
    -d float -o sum -G 4
done
step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
