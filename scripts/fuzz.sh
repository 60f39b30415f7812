#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, AddressSanitizer + UBSan, CPU sources only)
# and runs each for SECONDS (default 60), seeded from tests/data. A crash stops with the input
# saved under build-fuzz/crashes/<target>/; once fixed, keep it in tests/data/fuzz/<target>/,
# which fuzz_regression_test replays. Prints executions per target.
# Usage: scripts/fuzz.sh [SECONDS] [BUILD_DIR]    (scripts/fuzz.sh --build-only BUILD_DIR: build)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${2:-build-sanitize}
cxx=${FUZZ_CXX:-$(command -v clang++-14 || command -v clang++)}
cli=""
[ -x build/gpupeer ] && cli="$PWD/build/gpupeer"
# -O1 and line tables only: a lean build (CI compiles it from scratch on 2 cores). It is also the
# build without CUDA, so the toolkit is kept out of reach: PATH without its folders, CUDA_HOME
# pointing nowhere (scripts/sanitize.sh checks the compile commands).
no_cuda=(env PATH="$(tr ':' '\n' <<<"$PATH" | grep -iv cuda | paste -sd:)" CUDA_HOME=/nonexistent CUDA_PATH= CUDACXX=)
"${no_cuda[@]}" cmake -S tests/host_only -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DGPUPEER_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DGPUPEER_CLI="$cli" >/dev/null
"${no_cuda[@]}" cmake --build "$build" -j "$(nproc)" >/dev/null
[ "$seconds" = "--build-only" ] && exit 0

# Seeds: the files each parser reads in the repository, and the inputs kept from crashes.
seed() {  # seed TARGET FILES...
  local dir="$build/corpus/$1"
  shift
  mkdir -p "$dir"
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$dir/"; done
  cp tests/data/fuzz/"${dir##*/}"/* "$dir/" 2>/dev/null || true
}
seed snapshot tests/data/snapshot_*.json
seed kb_entry kb/*/*.json tests/data/kb_canon/*.json
seed log_lines tests/data/*.txt
seed matcher tests/data/*.txt
seed results bench/results/*/*/*.jsonl tests/data/results_*
seed cpulist
printf '0-47,96-143\n' >"$build/corpus/cpulist/sysfs"
printf '0,2,4-7,9\n' >"$build/corpus/cpulist/mixed"

status=0
for target in snapshot kb_entry log_lines matcher cpulist results; do
  crashes="$build/crashes/$target"
  mkdir -p "$crashes"
  log="$build/fuzz_$target.log"
  # -rss_limit_mb and -max_len bound memory; -timeout catches an input that hangs.
  if ! "$build/fuzz_$target" "$build/corpus/$target" -max_total_time="$seconds" -max_len=262144 \
      -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$crashes/" >"$log" 2>&1; then
    echo "fuzz_$target: FAILED (input kept in $crashes)"; tail -30 "$log"; status=1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  echo "fuzz_$target: $runs executions in ${seconds} s"
done
exit $status
