#!/usr/bin/env bash
# Session 7's final run on the GPU machine: the GPU tests; then the table's choices with NCCL in
# the same process, where the pull and split kernels now take a block per 16 KiB and deal 64 KiB
# tiles to their blocks when each would own 1 MiB or more; beside them the same with the old
# grid (GPUPEER_PULL_BLOCK=64K GPUPEER_PULL_TILE=0, results not checked: -c 0) and the one-shot
# kernel at the 2 MiB all-reduce that split took over on 2 GPUs.
# Usage: scripts/session7_final.sh BUILD_DIR LOG_DIR N
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
n=${3:?GPU count}
STEP_TIMEOUT=${STEP_TIMEOUT:-150}
write_machine_info
link_build_path "$build"
old_grid=(env GPUPEER_PULL_BLOCK=64K GPUPEER_PULL_TILE=0)
[ -z "${SKIP_CTEST:-}" ] && step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
step g2-all_reduce-eager "$g" coll all_reduce -b 8 -e 512M -f 4 -g 2 -d float -o sum --baseline nccl \
  --json "$out/g2-all_reduce-eager.json"
step g2-all_reduce-graph "$g" coll all_reduce -b 8 -e 512M -f 4 -g 2 -d float -o sum -G 10 --baseline nccl \
  --json "$out/g2-all_reduce-graph.json"
step g2-all_reduce-oneshot-eager env GPUPEER_ALGO=oneshot "$g" coll all_reduce -b 1M -e 4M -f 2 -g 2 -d float -o sum
step g2-all_reduce-oneshot-graph env GPUPEER_ALGO=oneshot "$g" coll all_reduce -b 1M -e 4M -f 2 -g 2 -d float -o sum -G 10
step g2-all_reduce-old-grid-eager "${old_grid[@]}" "$g" coll all_reduce -b 1M -e 512M -f 2 -g 2 -d float -o sum -c 0
for op in reduce_scatter reduce; do
  step "g2-$op-eager" "$g" coll $op -b 1M -e 512M -f 4 -g 2 -d float -o sum --baseline nccl --json "$out/g2-$op-eager.json"
  step "g2-$op-old-grid-eager" "${old_grid[@]}" "$g" coll $op -b 1M -e 512M -f 4 -g 2 -d float -o sum -c 0
done
if [ "$n" -gt 2 ]; then
  for op in all_reduce reduce_scatter all_gather broadcast reduce; do
    step "g$n-$op-eager" "$g" coll $op -b 512K -e 512M -f 4 -g "$n" -d float -o sum --baseline nccl \
      --json "$out/g$n-$op-eager.json"
    step "g$n-$op-old-grid-eager" "${old_grid[@]}" "$g" coll $op -b 512K -e 512M -f 4 -g "$n" -d float -o sum -c 0
  done
fi
