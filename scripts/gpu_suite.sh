#!/usr/bin/env bash
# Every GPU step of the project in one go, from a build made on another machine
# (docs/gpu-machine.md). Usage: scripts/gpu_suite.sh BUILD_DIR LOG_DIR
# One log per step under LOG_DIR (each starts with its exact command); summary.txt lists the
# steps with their exit codes.
set -u
build=${1:?build dir}; out=${2:?log dir}
export NCCL_NVLS_ENABLE=0   # NVLink multicast stays off on shared machines
mkdir -p "$out"; : > "$out/summary.txt"
g="$build/gpupeer"
source "$(dirname "$0")/logged_steps.sh"
link_build_path "$build"
write_machine_info
topology_steps
step check-json "$g" check --json --devices 1,0
step check-bad-dup "$g" check --devices 0,0
step check-bad-index "$g" check --devices 0,7
step check-one-gpu "$g" check --devices 1
step ctest-gpu ctest --test-dir "$build" -L gpu --output-on-failure
step doctor "$g" doctor
step doctor-json "$g" doctor --json
step doctor-p2p-disabled env NCCL_P2P_DISABLE=1 "$g" doctor
step doctor-visible-1-0 env CUDA_VISIBLE_DEVICES=1,0 "$g" doctor
step explain-seed "$g" explain "RuntimeError: CUDA error: peer access is not supported between these two devices"
step bench-all "$g" bench -i 5
step bench-all-json "$g" bench -i 5 --json
step sweep-ce-write "$g" bench --sweep -t ce_write -b 8 -e 1G -f 2 --pair 0,1
step sweep-sm "$g" bench --sweep -t sm_copy,sm_write,sm_read -b 8 -e 1G -f 2 --pair 0,1
step sweep-no-p2p "$g" bench --sweep -t ce_no_p2p -b 4K -e 1G -f 4 --pair 0,1
step bench-sm-variants bash -c "for v in vector bulk; do for k in 1 2 4; do $g bench -t sm_write,sm_read,sm_copy --sm-kernel \$v --sm-blocks-per-sm \$k --json; done; done"
step bench-bad-zero "$g" bench -s 0
step bench-bad-huge "$g" bench -t ce_write -s 200G
step bench-bad-testcase "$g" bench -t bogus,latency_pingpong
step bench-odd-size "$g" bench -t sm_write,sm_read -s 1000003
cat "$out/summary.txt"
