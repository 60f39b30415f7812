#!/usr/bin/env bash
# How fast `gpupeer explain --file LOG` reads a large log, on two logs built in a temporary folder:
#   benign: tests/data/benign_log.txt (a healthy NCCL run: INFO lines, nccl-tests tables)
#           repeated to MIB MiB; nothing in it matches a KB entry;
#   cases:  every positive line of tests/data/kb_cases.json, each after the whole benign
#           corpus, that sequence repeated to MIB MiB (the matches are rare, as in real logs).
# Each log is read 3 times with `--top 1`; one JSON line per run on stdout, MB = 10^6 bytes,
# mb_per_s from the wall time, cpu_mb_per_s from user + system time (steadier on a busy
# machine). The logs are deleted at the end. With BASELINE_BIN (another gpupeer binary, e.g. an
# earlier commit's) each run of the build's binary is followed by one of the baseline on the same
# log, and every line says which it timed ("binary": "build" or "baseline").
# Usage: scripts/explain_speed.sh [BUILD_DIR] [MIB] [BASELINE_BIN]    (defaults: build 256, none)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
mib=${2:-256}
bin="$build/gpupeer"
baseline=${3:-}
[ -x "$bin" ] || { echo "explain_speed: no $bin: build first (scripts/setup.sh $build)" >&2; exit 2; }
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "explain_speed: baseline $baseline is not an executable" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$tmp" "$mib" <<'EOF'
import json, sys
tmp, target = sys.argv[1], int(sys.argv[2]) << 20
benign = open("tests/data/benign_log.txt", "rb").read()
if not benign.endswith(b"\n"):
    benign += b"\n"
cycle = b"".join(benign + p.encode() + b"\n"
                 for c in json.load(open("tests/data/kb_cases.json")) for p in c.get("positive", []))
for name, unit in (("benign", benign), ("cases", cycle)):
    with open(f"{tmp}/{name}.log", "wb") as out:
        written = 0
        while written < target:
            out.write(unit)
            written += len(unit)
EOF

# The entry count as explain reports it for a message that matches nothing.
# (exit 1: nothing matched)
entries=$({ "$bin" explain "explain-speed: no entry matches this line" 2>/dev/null || true; } |
  sed -n 's/.*(\([0-9]*\) entries.*/\1/p')
host=$(hostname)
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
TIMEFORMAT='%R %U %S'
binaries="build"
[ -z "$baseline" ] || binaries="build baseline"
for log in benign cases; do
  file="$tmp/$log.log"
  bytes=$(wc -c <"$file")
  "$bin" explain --file "$file" --top 1 >/dev/null 2>&1 || true  # page the log in: time the matcher, not the disk
  for _ in 1 2 3; do
    for which in $binaries; do
      exe=$bin
      [ "$which" = build ] || exe=$baseline
      # explain exits 1 when nothing matched: a normal outcome here.
      { time "$exe" explain --file "$file" --top 1 >/dev/null 2>&1 || true; } 2>"$tmp/time"
      read -r wall user sys <"$tmp/time"
      mbps=$(awk -v b="$bytes" -v s="$wall" 'BEGIN { printf "%.1f", (s > 0 ? b / 1e6 / s : 0) }')
      cpu_mbps=$(awk -v b="$bytes" -v s="$user" -v t="$sys" 'BEGIN { printf "%.1f", (s + t > 0 ? b / 1e6 / (s + t) : 0) }')
      printf '{"topic":"explain-speed","binary":"%s","log":"%s","bytes":%s,"wall_s":%s,"user_s":%s,"sys_s":%s,"mb_per_s":%s,"cpu_mb_per_s":%s,"entries":%s,"date":"%s","host":"%s"}\n' \
        "$which" "$log" "$bytes" "$wall" "$user" "$sys" "$mbps" "$cpu_mbps" "${entries:-0}" "$date" "$host"
    done
  done
done
