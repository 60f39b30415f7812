#!/usr/bin/env bash
# Session 8's eager diagnosis: small all-reduces launched back to back, with the host's enqueue
# time per operation beside the GPUs' (GPUPEER_DEBUG=info), by default, with NCCL between the
# windows, without launch threads, and with 200 and 2000 warm-up operations before each window.
# Usage: scripts/session8_eager.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-60}
ar=(coll all_reduce -g 2 -d float -o sum -b 8 -e 64K -f 4)
export GPUPEER_DEBUG=info
step eager-1 "$g" "${ar[@]}"
step eager-2 "$g" "${ar[@]}"
step eager-nccl "$g" "${ar[@]}" --baseline nccl
step eager-no-threads env GPUPEER_LAUNCH_THREADS=0 "$g" "${ar[@]}"
step eager-warm-200 "$g" "${ar[@]}" -w 200
step eager-warm-2000 "$g" "${ar[@]}" -w 2000
step eager-iters-200 "$g" "${ar[@]}" -n 200
