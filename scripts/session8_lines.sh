#!/usr/bin/env bash
# Session 8's second run: the GPU tests; the low-latency kernel's grid by the new rule
# (comm/line_grid.hpp) against OLD_BINARY (the build before this session), in graphs and eager,
# alternating; blocks of 32 lines; and a sleep between a thread's polls of a line that has not
# arrived (GPUPEER_LL_POLL_NS).
# Usage: scripts/session8_lines.sh BUILD_DIR OLD_BINARY LOG_DIR
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
for pass in 1 2; do
  step "small-graph-old-$pass" "$old" "${ar[@]}" -b 8 -e 1M -f 2 -G 10
  step "small-graph-new-$pass" "$g" "${ar[@]}" -b 8 -e 1M -f 2 -G 10
  step "small-eager-old-$pass" "$old" "${ar[@]}" -b 8 -e 1M -f 2
  step "small-eager-new-$pass" "$g" "${ar[@]}" -b 8 -e 1M -f 2
done
step lines-32-graph env GPUPEER_ALGO=oneshot GPUPEER_LL_BLOCK_LINES=32 "$g" "${ar[@]}" -b 1K -e 64K -f 2 -G 10
for ns in 20 50 100 200; do
  step "poll-$ns-graph" env GPUPEER_LL_POLL_NS=$ns "$g" "${ar[@]}" -b 1K -e 1M -f 2 -G 10
done
for op in all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
  step "small-$op-graph-old" "$old" coll $op -g 2 -d float -o sum -b 8 -e 1M -f 4 -G 10
  step "small-$op-graph-new" "$g" coll $op -g 2 -d float -o sum -b 8 -e 1M -f 4 -G 10
done
