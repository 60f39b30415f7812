#!/usr/bin/env bash
# Session 6's last run: the GPU tests at the final build, then the operations split and the
# chain kernel took over in CUDA graphs (-G 10) against NCCL's graphs and symmetric windows in
# the same process, on GPUs 0..N-1.
# Usage: scripts/session6_graphs.sh BUILD_DIR LOG_DIR N
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
n=${3:?GPU count}
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
write_machine_info
link_build_path "$build"
step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
for op in ${GRAPH_OPS-broadcast reduce all_reduce}; do
  step "coll-$op-graph-g$n" "$g" coll "$op" -b 2M -e 512M -f 4 -g "$n" -d float -o sum -G 10 --baseline nccl \
    --json "$out/coll-$op-graph-g$n.json"
done
