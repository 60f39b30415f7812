#!/usr/bin/env bash
# Session 13 on 2 GPUs: eager all-reduce of 8 B-32 KiB by session 12's closing build and by this
# session's, alternating in one call, three times each, against NCCL: whether the eager times of
# run 4 (6.5-7.7 us, session 12's run 7: 5.2-6.1) moved with the library or with the machine.
# Usage: scripts/session13_eager.sh BUILD_DIR LOG_DIR SESSION12_GPUPEER
set -u
source "$(dirname "$0")/logged_steps.sh"
s12=${3:?session 12 gpupeer binary}
begin_run "${1:?build dir}" "${2:?log dir}" "$s12"
STEP_TIMEOUT=${STEP_TIMEOUT:-60}
for i in 1 2 3; do
  step "ar-eager-s12-$i" "$s12" coll all_reduce -b 8 -e 32K -f 4 -g 2 -d float -o sum --baseline nccl
  step "ar-eager-s13-$i" "$g" coll all_reduce -b 8 -e 32K -f 4 -g 2 -d float -o sum --baseline nccl
done
