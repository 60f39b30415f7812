#!/usr/bin/env bash
# Session 9's last run: the GPU tests at the final build; the host's time per eager operation
# (gpupeer_launch_cost) at the final build and at run 2's build (BEFORE_DIR, before errors
# became one word on success); the small all-reduce eagerly (host enqueue pace logged) and in
# graphs, and the all-reduce, all-gather and reduce-scatter from 32 MiB, against NCCL in the
# same process, every result checked.
# Usage: scripts/session9_final.sh BUILD_DIR LOG_DIR [BEFORE_DIR]
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
before=${3:-}
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
write_machine_info
link_build_path "$build"
md5sum "$g" "$build/gpupeer_launch_cost" ${before:+"$before/gpupeer" "$before/gpupeer_launch_cost"} > "$out/binary.md5"
step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
for i in 1 2; do
  step "launch-cost-final-$i" "$build/gpupeer_launch_cost"
  [ -n "$before" ] && step "launch-cost-before-$i" "$before/gpupeer_launch_cost"
done
for i in 1 2; do
  step "all_reduce-small-eager-final-$i" env GPUPEER_DEBUG=info "$g" coll all_reduce -b 8 -e 32K -f 4 -g 2 -d float -o sum \
    --baseline nccl --json "$out/all_reduce-small-eager-final-$i.json"
  [ -n "$before" ] && step "all_reduce-small-eager-before-$i" env GPUPEER_DEBUG=info "$before/gpupeer" coll all_reduce \
    -b 8 -e 32K -f 4 -g 2 -d float -o sum
done
step all_reduce-small-graph "$g" coll all_reduce -b 8 -e 1M -f 2 -g 2 -d float -o sum -G 10 --baseline nccl \
  --json "$out/all_reduce-small-graph.json"
for op in all_reduce all_gather reduce_scatter; do
  step "$op-large-graph" "$g" coll $op -b 32M -e 512M -f 2 -g 2 -d float -o sum -G 4 --baseline nccl \
    --json "$out/$op-large-graph.json"
done
