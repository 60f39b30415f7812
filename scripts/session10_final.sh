#!/usr/bin/env bash
# Session 10's final build: the GPU tests, then (unless ONLY_CTEST is set) the all-reduce,
# reduce-scatter and reduce on GPUs 0-1 against NCCL in the same process, eager and in graphs,
# 8 B to 128 MiB, the small all-reduce at every power of two and the split sizes (2-8 MiB) in
# graphs; every result checked. SPLIT_ONLY=1 (run 8, after the 32 KiB blocks for 2-GPU
# all-reduce parts from 2 MiB): after the tests, only the split sizes in graphs (twice) and the
# all-reduce from 1 to 64 MiB eager, against NCCL.
# Usage: scripts/session10_final.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/tests/gpupeer_gpu_tests"
STEP_TIMEOUT=${STEP_TIMEOUT:-150}
step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
[ -n "${ONLY_CTEST:-}" ] && exit 0
if [ -n "${SPLIT_ONLY:-}" ]; then
  for i in 1 2; do
    step "g2-all_reduce-split-graph-$i" "$g" coll all_reduce -b 2M -e 8M -f 2 -g 2 -d float -o sum -G 10 \
      --baseline nccl --json "$out/g2-all_reduce-split-graph-$i.json"
  done
  step g2-all_reduce-mid-eager "$g" coll all_reduce -b 1M -e 64M -f 2 -g 2 -d float -o sum --baseline nccl \
    --json "$out/g2-all_reduce-mid-eager.json"
  exit 0
fi
step g2-all_reduce-small-graph "$g" coll all_reduce -b 8 -e 1M -f 2 -g 2 -d float -o sum -G 10 --baseline nccl \
  --json "$out/g2-all_reduce-small-graph.json"
step g2-all_reduce-split-graph "$g" coll all_reduce -b 2M -e 8M -f 2 -g 2 -d float -o sum -G 10 --baseline nccl \
  --json "$out/g2-all_reduce-split-graph.json"
for op in all_reduce reduce_scatter reduce; do
  step "g2-$op-graph" "$g" coll $op -b 8 -e 128M -f 4 -g 2 -d float -o sum -G 10 --baseline nccl \
    --json "$out/g2-$op-graph.json"
  step "g2-$op-eager" "$g" coll $op -b 8 -e 128M -f 4 -g 2 -d float -o sum --baseline nccl \
    --json "$out/g2-$op-eager.json"
done
