#!/usr/bin/env bash
# Session 5's last measurements on 4x H200: the GPU tests, the collectives without P2P on GPUs
# 0-1 (gpupeer's staged pipeline from 8 MiB a copy, against CUDA's own staging and NCCL with
# NCCL_P2P_DISABLE=1, same run). Run from the repository root on the GPU machine.
set -u
source scripts/logged_steps.sh
begin_logs build /tmp/f
write_machine_info
link_build_path build
STEP_TIMEOUT=200
step ctest-gpu bash -c "cd build && ctest -L gpu --output-on-failure"
STEP_TIMEOUT=120
for op in all_reduce all_gather broadcast; do
  record no-p2p-g2 NCCL_P2P_DISABLE=1 build/gpupeer coll $op -b 1M -e 256M -f 4 -g 2 --baseline nccl
  record no-p2p-g2 NCCL_P2P_DISABLE=1 GPUPEER_STAGING=cuda build/gpupeer coll $op -b 1M -e 256M -f 4 -g 2
done
