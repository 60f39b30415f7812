#!/usr/bin/env bash
# The whole test suite: install what is missing, build, check formatting, run every test.
# GPU tests (label gpu) skip with the reason where no GPU is visible.
set -euo pipefail
cd "$(dirname "$0")/.."
# Where no GPU is visible no device code runs: it is compiled to Hopper's PTX only (every kernel
# still goes through the compiler's front end and optimizer; no machine code is generated, which
# took a third of one kernel file's time), and the host code at -O1 (a third less compile time
# than -O3; nothing there is timed). A build carried to a GPU machine comes from
# scripts/setup.sh, which builds for all of them at -O3.
if ! nvidia-smi -L >/dev/null 2>&1; then
  export GPUPEER_CUDA_ARCHITECTURES=${GPUPEER_CUDA_ARCHITECTURES:-90-virtual}
  export GPUPEER_OPT_LEVEL=${GPUPEER_OPT_LEVEL:-1}
fi
scripts/setup.sh build
scripts/check_format.sh
ctest --test-dir build --output-on-failure -j 2
python3 scripts/bench_readme.py --check  # bench/README.md and results.jsonl files generated, not stale

# The installed package: a find_package and a pkg-config consumer built against it.
scripts/check_package.sh build

# Once more with AddressSanitizer + UBSan (CPU sources only, no CUDA headers: also the build
# without CUDA, whose gpupeer its CLI tests run), then each fuzz target briefly.
# 5 s per fuzz target keeps the whole run under 15 minutes on 2 cores (six targets); longer
# fuzzing: scripts/fuzz.sh SECONDS.
scripts/sanitize.sh "${GPUPEER_FUZZ_SECONDS:-5}"
