# Sourced by scripts/gpu.sh: run a command with its exact command line, output and exit code in a
# log under $out. STEP_TIMEOUT bounds each command (seconds; default 300) so that a hang cannot
# eat the machine's time.

# link_build_path BUILD_DIR: the CTest files of a build name the absolute paths of the checkout
# it was built in (binaries, test data); where the checkout was carried to another path, recreate
# that one as a symlink to this checkout so that ctest finds both.
link_build_path() {
  local built_at
  built_at=$(sed -n 's/^# Build directory: //p' "$1/CTestTestfile.cmake" 2>/dev/null)
  if [ -n "$built_at" ] && [ ! -e "$built_at" ]; then
    mkdir -p "$(dirname "$(dirname "$built_at")")"
    ln -s "$(cd "$(dirname "$1")" && pwd)" "$(dirname "$built_at")"
  fi
}

# write_machine_info: date, host, the GPUs (nvidia-smi's list, read by results_from_log.py) and
# the NCCL setting in $out/machine.txt.
write_machine_info() {
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"; echo "host: $(hostname), kernel $(uname -r)"
    nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total --format=csv
    echo "NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"
  } > "$out/machine.txt" 2>&1
}

# json_text TEXT: TEXT as a JSON string, quotes included.
json_text() {
  local t=${1//\\/\\\\}
  t=${t//\"/\\\"}
  printf '"%s"' "$t"
}

# write_meta COMMIT MACHINE COMMAND ABOUT: $out/meta.json with every field of the schema in
# scripts/results_meta.py; the date, GPUs and driver come from machine.txt (write_machine_info).
write_meta() {
  local date model driver count
  date=$(sed -n 's/^date: \(.\{10\}\).*/\1/p' "$out/machine.txt")
  date=${date:-$(date -u +%Y-%m-%d)}
  count=$(grep -cE '^[0-9]+, ' "$out/machine.txt")
  model=$(grep -m1 -E '^[0-9]+, ' "$out/machine.txt" | cut -d, -f2 | sed 's/^ *//')
  driver=$(grep -m1 -E '^[0-9]+, ' "$out/machine.txt" | cut -d, -f4 | sed 's/^ *//')
  {
    printf '{\n  "commit": %s,\n  "date": %s,\n  "machine": %s,\n' "$(json_text "$1")" "$(json_text "$date")" \
      "$(json_text "$2")"
    printf '  "gpu_model": %s,\n  "gpu_count": %s,\n  "driver": %s,\n' "$(json_text "${model:-not recorded}")" \
      "${count:-0}" "$(json_text "${driver:-not recorded}")"
    printf '  "command": %s,\n  "about": %s\n}\n' "$(json_text "$3")" "$(json_text "$4")"
  } > "$out/meta.json"
}

# step NAME COMMAND...: one log per step, and a line (exit code, time) in $out/summary.txt.
step() {
  local name=$1; shift
  local t0=$EPOCHREALTIME
  { echo "\$ $*"; timeout "${STEP_TIMEOUT:-300}" "$@" 2>&1; echo "[exit $?]"; } > "$out/$name.log"
  local rc=$(tail -1 "$out/$name.log" | tr -dc 0-9)
  printf '%-28s exit %-3s %6.1f s  %s\n' "$name" "$rc" "$(awk "BEGIN{print $EPOCHREALTIME - $t0}")" "$*" | tee -a "$out/summary.txt"
}

# record LOGNAME [VAR=VALUE...] COMMAND...: appended to one log per topic (several commands in
# one log, each after its "$ " line).
record() {
  local name=$1; shift
  { echo "\$ env $*"; timeout "${STEP_TIMEOUT:-300}" env "$@" 2>&1; echo "[exit $?]"; } >> "$out/$name.log"
}
