#!/usr/bin/env bash
# Installs the built library to a temporary prefix and builds two consumers against it: the
# CMake project in examples/cmake-consumer (find_package) and the same source by pkg-config.
# Each must run on a fixture snapshot and print its GPU count. Usage: scripts/check_package.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
fixture=tests/data/snapshot_hgx_h100_8gpu.json
cmake --install "$build" --prefix "$prefix/install" >/dev/null
cmake -S examples/cmake-consumer -B "$prefix/consumer" -DCMAKE_PREFIX_PATH="$prefix/install" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$prefix/consumer" -j 2 >/dev/null
out=$("$prefix/consumer/gpupeer_consumer" "$fixture")
echo "$out" | grep -qx "GPUs: 8" || { echo "check_package: find_package consumer printed:"; echo "$out"; exit 1; }
echo "$out" | grep -qx "KB entry added: yes" || { echo "check_package: RE2 not usable:"; echo "$out"; exit 1; }
# The same program by pkg-config alone.
export PKG_CONFIG_PATH; PKG_CONFIG_PATH=$(dirname "$(find "$prefix/install" -name gpupeer.pc)")
# shellcheck disable=SC2046
g++ -std=c++20 -O1 examples/cmake-consumer/main.cpp -o "$prefix/pc-consumer" $(pkg-config --cflags --libs gpupeer)
out=$("$prefix/pc-consumer" "$fixture")
echo "$out" | grep -qx "GPUs: 8" || { echo "check_package: pkg-config consumer printed:"; echo "$out"; exit 1; }
echo "check_package: find_package and pkg-config consumers built against the installed gpupeer and ran"
