#!/usr/bin/env bash
# The machine-level steps on a machine of more than two GPUs (issue 7): topology against
# nvidia-smi, the data check on every ordered pair, the GPU tests, the doctor's time, the
# bandwidth matrices (one-to-all and all-to-one included) and a sweep for one pair, from a build
# made elsewhere (docs/gpu-machine.md). Lighter than gpu_suite.sh, whose every testcase twice
# grows with the square of the GPU count. Usage: scripts/many_gpu_suite.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${2:?log dir}"
: > "$out/summary.txt"
STEP_TIMEOUT=${STEP_TIMEOUT:-240}
link_build_path "$build"
# The last GPU this process sees (CUDA_VISIBLE_DEVICES, else every GPU; MIG lines not counted).
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
  visible=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
else
  visible=$(nvidia-smi --query-gpu=index --format=csv,noheader | grep -c .)
fi
last=$((visible - 1))
write_machine_info
step ctest-gpu ctest --test-dir "$build" -L gpu --output-on-failure
topology_steps
step check-json "$g" check --json
step doctor "$g" doctor
step doctor-json "$g" doctor --json
step bench-p2p "$g" bench -t ce_read,ce_write,ce_bidir,sm_read,sm_write,sm_bidir,sm_copy,ce_one_to_all,ce_all_to_one -i 3
step bench-host-latency "$g" bench -t h2d,d2h,latency_chase,latency_ce,latency_pingpong -i 3
step bench-no-p2p "$g" bench -t ce_no_p2p -s 64M -i 3
step sweep-far-pair "$g" bench --sweep -t ce_write,sm_copy -b 8 -e 1G -f 2 --pair 0,$last
