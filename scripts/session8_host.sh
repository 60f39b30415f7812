#!/usr/bin/env bash
# Session 8's host-cost run: small all-reduces launched back to back with the host's enqueue time
# per operation beside the GPUs' (GPUPEER_DEBUG=info): by default, without the driver's pointer
# queries (GPUPEER_CHECK_BUFFERS=0, an experiment), without programmatic dependent launch, and
# both; twice each, in turn.
# Usage: scripts/session8_host.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-60}
ar=(coll all_reduce -g 2 -d float -o sum -b 8 -e 64K -f 4)
export GPUPEER_DEBUG=info
for pass in 1 2; do
  step "default-$pass" "$g" "${ar[@]}"
  step "no-check-$pass" env GPUPEER_CHECK_BUFFERS=0 "$g" "${ar[@]}"
  step "no-early-$pass" env GPUPEER_EARLY_LAUNCH=0 "$g" "${ar[@]}"
  step "no-check-no-early-$pass" env GPUPEER_CHECK_BUFFERS=0 GPUPEER_EARLY_LAUNCH=0 "$g" "${ar[@]}"
done
