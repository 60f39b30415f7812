#!/usr/bin/env bash
# Session 8's third run: the low-latency kernel's block shapes compared in turn, three passes,
# all-reduce in graphs from 512 B to 1 MiB: OLD_BINARY (the build before this session: blocks of
# 512 lines, block 0 waiting for the others at the end), this build by its rule
# (comm/line_grid.hpp), and this build with 512, 256 and 128 lines per block.
# Usage: scripts/session8_shapes.sh BUILD_DIR OLD_BINARY LOG_DIR
set -u
source "$(dirname "$0")/logged_steps.sh"
begin_logs "${1:?build dir}" "${3:?log dir}"
old=${2:?old binary}
STEP_TIMEOUT=${STEP_TIMEOUT:-60}
write_machine_info
md5sum "$g" "$old" > "$out/binary.md5"
ar=(coll all_reduce -g 2 -d float -o sum -b 512 -e 1M -f 2 -G 10)
for pass in 1 2 3; do
  step "old-$pass" "$old" "${ar[@]}"
  step "rule-$pass" "$g" "${ar[@]}"
  for lines in 512 256 128; do step "lines-$lines-$pass" env GPUPEER_LL_BLOCK_LINES=$lines "$g" "${ar[@]}"; done
done
