#!/usr/bin/env bash
# Session 8's fourth run: the low-latency kernel polling its lines with system-scope volatile
# loads (as built) against gpu-scope relaxed loads (GPUPEER_LL_POLL=gpu, an experiment), three
# passes in turn; then other operations both ways, and the default without programmatic
# dependent launch (GPUPEER_EARLY_LAUNCH=0).
# Usage: scripts/session8_poll.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}"
STEP_TIMEOUT=${STEP_TIMEOUT:-60}
ar=(coll all_reduce -g 2 -d float -o sum -b 512 -e 1M -f 2 -G 10)
for pass in 1 2 3; do
  step "sys-$pass" "$g" "${ar[@]}"
  step "gpu-$pass" env GPUPEER_LL_POLL=gpu "$g" "${ar[@]}"
done
step "no-early-launch" env GPUPEER_EARLY_LAUNCH=0 "$g" "${ar[@]}"
for op in reduce broadcast all_gather reduce_scatter; do
  step "$op-sys" "$g" coll $op -g 2 -d float -o sum -b 8 -e 1M -f 4 -G 10
  step "$op-gpu" env GPUPEER_LL_POLL=gpu "$g" coll $op -g 2 -d float -o sum -b 8 -e 1M -f 4 -G 10
done
