#!/usr/bin/env bash
# Session 8's run on the GPU machine: the GPU tests; the block counter that replaced the
# readers' wait at the end of every one-kernel operation (this build against OLD_BINARY, the
# build before it, on the same sizes); the low-latency kernel's lines per block
# (GPUPEER_LL_BLOCK_LINES); the split all-reduce from 1 to 16 MiB with tiles and grids
# (GPUPEER_PULL_TILE, GPUPEER_PULL_BLOCK, GPUPEER_ONESHOT_BLOCKS); then the all-reduce by the
# table with NCCL in the same process, eager and in graphs.
# Usage: scripts/session8_suite.sh BUILD_DIR OLD_BINARY LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${3:?log dir}"
old=${2:?old binary}
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
write_machine_info
link_build_path "$build"
md5sum "$g" "$old" > "$out/binary.md5"
ar=(coll all_reduce -g 2 -d float -o sum)
[ -z "${SKIP_CTEST:-}" ] && step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
# Old and new alternate, twice each, so that drift over the run shows.
for pass in 1 2; do
  step "small-graph-old-$pass" "$old" "${ar[@]}" -b 8 -e 64K -f 2 -G 10
  step "small-graph-new-$pass" "$g" "${ar[@]}" -b 8 -e 64K -f 2 -G 10
done
for lines in 512 256 128 64; do
  step "lines-$lines-graph" env GPUPEER_ALGO=oneshot GPUPEER_LL_BLOCK_LINES=$lines "$g" "${ar[@]}" -b 1K -e 1M -f 2 -G 10
done
step split-graph-old env GPUPEER_ALGO=split "$old" "${ar[@]}" -b 1M -e 16M -f 2 -G 10
step split-graph-new env GPUPEER_ALGO=split "$g" "${ar[@]}" -b 1M -e 16M -f 2 -G 10
for tile in 2K 4K 8K 16K 32K; do
  step "split-tile-$tile-graph" env GPUPEER_ALGO=split GPUPEER_PULL_TILE=$tile "$g" "${ar[@]}" -b 1M -e 16M -f 2 -G 10
done
for grid in 8K:264 16K:264 4K:264 32K:132; do
  step "split-block-${grid%:*}-blocks-${grid#*:}-graph" env GPUPEER_ALGO=split GPUPEER_PULL_BLOCK=${grid%:*} \
    GPUPEER_ONESHOT_BLOCKS=${grid#*:} "$g" "${ar[@]}" -b 1M -e 16M -f 2 -G 10
done
step g2-all_reduce-graph "$g" "${ar[@]}" -b 8 -e 512M -f 4 -G 10 --baseline nccl --json "$out/g2-all_reduce-graph.json"
step g2-all_reduce-eager "$g" "${ar[@]}" -b 8 -e 512M -f 4 --baseline nccl --json "$out/g2-all_reduce-eager.json"
