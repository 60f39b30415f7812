#!/usr/bin/env bash
# The CPU sources and CPU unit tests built once more with AddressSanitizer and UBSan (clang, no
# nvcc: tests/host_only), run; then each fuzz target for FUZZ_SECONDS (scripts/fuzz.sh) on the
# same build. The CLI tests run the normal build's gpupeer (build/gpupeer) when it exists.
# Usage: scripts/sanitize.sh [FUZZ_SECONDS (default 20; 0: no fuzzing)] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds=${1:-20}
build=${2:-build-sanitize}
start=$(date +%s)
scripts/fuzz.sh --build-only "$build"
built=$(date +%s)
# detect_leaks: a leak fails the test binary too. halt_on_error: the first report fails it.
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -L cpu
tested=$(date +%s)
if [ "$fuzz_seconds" -gt 0 ]; then scripts/fuzz.sh "$fuzz_seconds" "$build"; fi
echo "sanitize: build $((built - start)) s, sanitized tests $((tested - built)) s, fuzzing $(($(date +%s) - tested)) s"
