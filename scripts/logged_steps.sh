# Sourced by the GPU scripts (gpu_suite.sh, coll_suite.sh, coll_extra.sh, tune_*.sh): run a
# command with its exact command line, output and exit code in a log under $out.
# STEP_TIMEOUT bounds each command (seconds; default 300) so a hang cannot eat the device time.

# begin_logs BUILD_DIR LOG_DIR: the gpupeer binary in $g, logs in $out, NVLink multicast off
# (the machines are shared).
begin_logs() {
  build=$1; out=$2; g="$build/gpupeer"
  export NCCL_NVLS_ENABLE=0
  mkdir -p "$out"
}

# link_build_path BUILD_DIR: the CTest files of a build name the absolute path it was built at;
# where the build was carried to another path, recreate that one as a symlink so ctest finds
# its binaries.
link_build_path() {
  local built_at
  built_at=$(sed -n 's/^# Build directory: //p' "$1/CTestTestfile.cmake" 2>/dev/null)
  if [ -n "$built_at" ] && [ ! -e "$built_at" ]; then
    mkdir -p "$(dirname "$(dirname "$built_at")")"
    ln -s "$(cd "$(dirname "$1")" && pwd)" "$(dirname "$built_at")"
  fi
}

# begin_run BUILD_DIR LOG_DIR [BINARY...]: begin_logs, the machine's facts, the build's CTest
# paths (link_build_path), and the md5 of the gpupeer binary and of every BINARY named in
# $out/binary.md5: the preamble of every session's GPU script.
begin_run() {
  begin_logs "$1" "$2"
  shift 2
  write_machine_info
  link_build_path "$build"
  md5sum "$g" "$@" > "$out/binary.md5"
}

# every_operation_against_nccl TAG GPUS MAXBYTES: every operation by the table on GPUS GPUs,
# float sum, 8 B to MAXBYTES by factors of 4, in graphs and eager, against NCCL in the same
# process, every result checked; logs and JSON $out/TAG-OP-MODE.*.
every_operation_against_nccl() {
  local tag=$1 gpus=$2 max=$3 op
  for op in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
    step "$tag-$op-graph" "$g" coll $op -b 8 -e "$max" -f 4 -g "$gpus" -d float -o sum -G 10 --baseline nccl \
      --json "$out/$tag-$op-graph.json"
    step "$tag-$op-eager" "$g" coll $op -b 8 -e "$max" -f 4 -g "$gpus" -d float -o sum --baseline nccl \
      --json "$out/$tag-$op-eager.json"
  done
}

# tests_and_every_operation TAG GPUS MAXBYTES: the GPU tests, then
# every_operation_against_nccl TAG GPUS MAXBYTES: the body of the verification runs.
tests_and_every_operation() {
  step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
  every_operation_against_nccl "$@"
}

# closing_sweep: the GPU tests; every operation by the table on 2 GPUs against NCCL, 8 B to
# 512 MiB (every_operation_against_nccl g2); the all-reduce in graphs at every power of 2 from
# 8 B to 8 MiB against NCCL; and three all-reduce sweeps from 1 to 64 KiB in graphs: the body of
# every session's closing run on 2 GPUs since session 11.
closing_sweep() {
  local i
  tests_and_every_operation g2 2 512M
  step g2-all_reduce-small-graph "$g" coll all_reduce -b 8 -e 8M -f 2 -g 2 -d float -o sum -G 10 --baseline nccl \
    --json "$out/g2-all_reduce-small-graph.json"
  for i in 1 2 3; do
    step "g2-all_reduce-1K-64K-graph-$i" "$g" coll all_reduce -b 1K -e 64K -f 2 -g 2 -d float -o sum -G 10
  done
}

# write_machine_info: date, host, the GPUs and the NCCL setting in $out/machine.txt.
write_machine_info() {
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"; echo "host: $(hostname), kernel $(uname -r)"
    nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total --format=csv
    echo "NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"
  } > "$out/machine.txt" 2>&1
}

# topology_steps: nvidia-smi's view of the machine beside gpupeer's (snapshot, topo, check).
topology_steps() {
  step nvsmi-topo nvidia-smi topo -m
  step nvsmi-p2p-read nvidia-smi topo -p2p r
  step nvsmi-nvlink nvidia-smi nvlink -s
  step snapshot "$g" snapshot -o "$out/snapshot.json"
  step topo "$g" topo
  step topo-json "$g" topo --json
  step check "$g" check
}

# step NAME COMMAND...: one log per step, and a line (exit code, time) in $out/summary.txt.
step() {
  local name=$1; shift
  local t0=$EPOCHREALTIME
  { echo "\$ $*"; timeout "${STEP_TIMEOUT:-300}" "$@" 2>&1; echo "[exit $?]"; } > "$out/$name.log"
  local rc=$(tail -1 "$out/$name.log" | tr -dc 0-9)
  printf '%-28s exit %-3s %6.1f s  %s\n' "$name" "$rc" "$(awk "BEGIN{print $EPOCHREALTIME - $t0}")" "$*" | tee -a "$out/summary.txt"
}

# record LOGNAME [VAR=VALUE...] COMMAND...: appended to one log per topic.
record() {
  local name=$1; shift
  { echo "\$ $*"; timeout "${STEP_TIMEOUT:-300}" env "$@" 2>&1; echo "[exit $?]"; } >> "$out/$name.log"
}
