#!/usr/bin/env bash
# Session 13 on 2 GPUs: the copy-engine algorithm's copying operations with a share of each copy
# between GPUs carried by the sender's SMs beside the engines (GPUPEER_CE_SM_SHARE, percent;
# GPUPEER_CE_SM_BLOCKS, default 16), after bench/micro/ce_sm_mix.cu's 5% gain at 32 MiB each way
# (session 11, run 1). The copy-engine GPU tests first; then all-gather, alltoall, send/recv and
# broadcast forced to the copy engines 16-512 MiB in graphs, timing only, shares 0/5/10/20 and
# again 0/10; 32 blocks at 10%; every result checked at 10% from 1 to 128 MiB.
# Usage: scripts/session13_sm_share.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-90}
step ctest-ce bash -c "cd '$build' && ctest -L gpu -R 'CopyEngine' --output-on-failure"
ce() { local tag=$1 share=$2; shift 2; step "$tag" env GPUPEER_ALGO=ce GPUPEER_CE_SM_SHARE=$share "$@"; }
for op in all_gather alltoall sendrecv broadcast; do
  for share in 0 5 10 20; do
    ce "$op-sm$share-1" $share "$g" coll $op -b 16M -e 512M -f 2 -g 2 -d float -G 10 -c 0
  done
done
for op in all_gather alltoall sendrecv broadcast; do
  for share in 0 10; do
    ce "$op-sm$share-2" $share "$g" coll $op -b 16M -e 512M -f 2 -g 2 -d float -G 10 -c 0
  done
done
for op in all_gather sendrecv; do
  ce "$op-sm10-b32" 10 env GPUPEER_CE_SM_BLOCKS=32 "$g" coll $op -b 16M -e 512M -f 2 -g 2 -d float -G 10 -c 0
done
for op in all_gather alltoall sendrecv broadcast; do
  ce "$op-sm10-checked" 10 "$g" coll $op -b 1M -e 128M -f 8 -g 2 -d float -G 4
done
