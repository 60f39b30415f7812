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
