#!/usr/bin/env bash
# Installs what gpupeer needs from Debian's packages (only what is missing) and builds it.
# Expects the CUDA toolkit in /usr/local/cuda (or CUDA_HOME). Usage: scripts/setup.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
scripts/install_git_hooks.sh  # the commit-msg hook, in a git checkout only
packages=(cmake make g++ libgtest-dev nlohmann-json3-dev libre2-dev libcli11-dev libfmt-dev clang-format
  python3 python3-dev python3-pytest python3-numpy clang-14 libclang-rt-14-dev
  python3-pip python3-venv chromium pkg-config)  # pip, venv: the wheel is installed in a test;
# chromium: the report is checked in a real browser; pkg-config: gpupeer.pc
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
cuda_home=${CUDA_HOME:-/usr/local/cuda}
if [ ! -x "$cuda_home/bin/nvcc" ]; then
  echo "setup: no nvcc in $cuda_home/bin: install the CUDA 13 toolkit there or set CUDA_HOME" >&2
  exit 1
fi
# GPUPEER_CUDA_ARCHITECTURES (CMake's list) picks the GPUs the device code is built for; by
# default A100 (sm_80), Hopper (sm_90) and PTX for newer GPUs.
archs=${GPUPEER_CUDA_ARCHITECTURES:-80-real;90-real;90-virtual}
# GPUPEER_OPT_LEVEL: the host compiler's -O of the Release build (default 3, CMake's own). Passed
# on every configure, so that a build folder never keeps another run's level.
opt=${GPUPEER_OPT_LEVEL:-3}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc" \
  "-DGPUPEER_CUDA_ARCHITECTURES=$archs" "-DCMAKE_CXX_FLAGS_RELEASE=-O$opt -DNDEBUG" \
  "-DCMAKE_CUDA_FLAGS_RELEASE=-O$opt -DNDEBUG" >/dev/null
cmake --build "$build" -j "$(nproc)"
