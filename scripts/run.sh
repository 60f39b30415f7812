#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build, run gpupeer doctor.
# Without a GPU the doctor says why none is visible (exit 3).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
exec build/gpupeer doctor "$@"
