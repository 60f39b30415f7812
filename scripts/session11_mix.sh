#!/usr/bin/env bash
# Session 11 on 2 GPUs: copy engines and SM copies sharing the NVLink connection
# (bench/micro/ce_sm_mix.cu; 512 MiB and 32 MiB per direction), then two looks at the small
# all-reduce's step between 2 and 4 KiB in graphs: sizes between them, and the same without
# programmatic dependent launch; all-gather, reduce-scatter and reduce over the same range.
# Usage: scripts/session11_mix.sh BUILD_DIR LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_run "${1:?build dir}" "${2:?log dir}" "$1/gpupeer_ce_sm_mix"
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
step mix-512M "$build/gpupeer_ce_sm_mix" 512
step mix-32M "$build/gpupeer_ce_sm_mix" 32
step g2-all_reduce-step-graph "$g" coll all_reduce -b 1K -e 8K -f 1.25 -g 2 -d float -o sum -G 10
step g2-all_reduce-step-nopdl env GPUPEER_EARLY_LAUNCH=0 "$g" coll all_reduce -b 1K -e 8K -f 1.25 -g 2 -d float \
  -o sum -G 10
for op in all_gather reduce_scatter reduce; do
  step "g2-$op-step-graph" "$g" coll $op -b 1K -e 128K -f 2 -g 2 -d float -o sum -G 10
done
