#!/usr/bin/env bash
# Session 7's copy-engine run on the GPU machine: the GPU tests, then every operation forced
# onto the copy engines, pulled between kernel meetings (the default with P2P) against the
# streams ordered by events across GPUs (GPUPEER_CE_SYNC=streams, the path before), with NCCL
# in the same process; the reducing operations also with whole chunks (GPUPEER_CE_TAIL=0) and
# 16 chunks (GPUPEER_CE_CHUNKS=16); then the table's all-reduce in CUDA graphs.
# The record of bench/results/2026-11-22-h200x2-s7/1-ce-pulled (commit 032b14f): the pulled
# copy engines were slower and were reverted, and GPUPEER_CE_SYNC, GPUPEER_CE_TAIL and
# GPUPEER_CE_CHUNKS went with them (later builds ignore them).
# Usage: scripts/ce_suite.sh BUILD_DIR LOG_DIR N
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
n=${3:?GPU count}
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
write_machine_info
link_build_path "$build"
[ -z "${SKIP_CTEST:-}" ] && step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
range=${CE_RANGE:--b 16M -e 512M -f 2}
for op in ${CE_OPS-all_reduce reduce_scatter reduce all_gather alltoall broadcast}; do
  step "g$n-$op-ce" env GPUPEER_ALGO=ce "$g" coll "$op" $range -g "$n" -d float -o sum --baseline nccl
  step "g$n-$op-ce-streams" env GPUPEER_ALGO=ce GPUPEER_CE_SYNC=streams "$g" coll "$op" $range -g "$n" -d float -o sum
  case $op in
    all_reduce|reduce_scatter|reduce)
      step "g$n-$op-ce-whole-tail" env GPUPEER_ALGO=ce GPUPEER_CE_TAIL=0 "$g" coll "$op" $range -g "$n" -d float -o sum
      step "g$n-$op-ce-16-chunks" env GPUPEER_ALGO=ce GPUPEER_CE_CHUNKS=16 "$g" coll "$op" $range -g "$n" -d float -o sum
      ;;
  esac
done
for op in ${GRAPH_OPS-all_reduce}; do
  step "g$n-$op-table-graph" "$g" coll "$op" -b 2M -e 512M -f 2 -g "$n" -d float -o sum -G 10 --baseline nccl \
    --json "$out/g$n-$op-table-graph.json"
done
