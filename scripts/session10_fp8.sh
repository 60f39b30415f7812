#!/usr/bin/env bash
# Session 10: the 8-bit floats. The GPU tests (every type, op and algorithm against the host
# reference), then all-reduce and reduce-scatter of f8e4m3 and f8e5m2 against NCCL in the same
# process, eager and in graphs, and the other reductions of f8e4m3, every result checked.
# Usage: scripts/session10_fp8.sh BUILD_DIR LOG_DIR [GPUS]
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
gpus=${3:-2}
STEP_TIMEOUT=${STEP_TIMEOUT:-200}
write_machine_info
link_build_path "$build"
md5sum "$g" "$build/tests/gpupeer_gpu_tests" > "$out/binary.md5"
[ -z "${SKIP_CTEST:-}" ] && step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
for t in f8e4m3 f8e5m2; do
  for op in all_reduce reduce_scatter; do
    step "g$gpus-$op-$t-eager" "$g" coll $op -b 8 -e 128M -f 4 -g $gpus -d $t -o sum --baseline nccl \
      --json "$out/g$gpus-$op-$t-eager.json"
    step "g$gpus-$op-$t-graph" "$g" coll $op -b 8 -e 128M -f 4 -g $gpus -d $t -o sum -G 10 --baseline nccl \
      --json "$out/g$gpus-$op-$t-graph.json"
  done
done
for o in prod min max avg; do
  step "g$gpus-all_reduce-f8e4m3-$o" "$g" coll all_reduce -b 8 -e 32M -f 8 -g $gpus -d f8e4m3 -o $o --baseline nccl
done
