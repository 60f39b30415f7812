#!/usr/bin/env bash
# session 5 final measurements (copied into bench/results with the logs)
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
for op in broadcast reduce; do
  record ring-signals-g4 GPUPEER_CE_SIGNALS=flags build/gpupeer coll $op -b 32M -e 512M -f 4 -g 4 -c 0 -G 10
done
for op in all_reduce reduce_scatter; do
  record ring-spread-g4 GPUPEER_ALGO=ring build/gpupeer coll $op -b 2M -e 512M -f 4 -g 4 --baseline nccl
done
STEP_TIMEOUT=100 COLL_GPUS=4 timeout 260 scripts/coll_suite.sh build /tmp/f broadcast reduce
