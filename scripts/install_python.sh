#!/usr/bin/env bash
# Builds libgpupeer_c.so and installs the Python package `gpupeer` (pure Python over ctypes: one
# copy serves every Python 3 version) into PREFIX, a folder that goes on Python's path.
#
#   scripts/install_python.sh [--no-build] [PREFIX]
#
# The package is installed for $PYTHON, by default the python3 on PATH (the one a user runs, which
# on the GPU machines is the one with torch); PREFIX defaults to that Python's user site-packages.
# --no-build copies a library built earlier (build/libgpupeer_c.so): for a machine where nothing
# can be built but the build folder was carried, e.g. the GPU machine.
# Installs PREFIX/gpupeer/{*.py, libgpupeer_c.so, libre2.so.N, _fastcall.abi3.so, kb/}, and
# _torchcall.<python>.so where $python has torch (python/build_torchcall.py), and prints how to
# import it.
set -euo pipefail
cd "$(dirname "$0")/.."
build_lib=1
if [ "${1:-}" = "--no-build" ]; then
  build_lib=0
  shift
fi
python=${PYTHON:-python3}
python_path=$(command -v "$python") || { echo "install_python: no $python on PATH (set PYTHON)" >&2; exit 1; }
python_version=$("$python" -c 'import platform; print(platform.python_version())')
torch_version=$("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null) || torch_version=""
echo "install_python: for Python $python_version ($python_path), $( [ -n "$torch_version" ] &&
  echo "torch $torch_version" || echo "no torch")"
prefix=${1:-$("$python" -m site --user-site)}
build=${GPUPEER_BUILD_DIR:-build}

if [ "$build_lib" = 1 ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    scripts/setup.sh "$build"  # Debian packages, configure, build everything
  else
    cmake --build "$build" --target gpupeer_c -j "$(nproc)"
    # Optional (needs python3-dev): without it eager calls go through ctypes.
    cmake --build "$build" --target gpupeer_fastcall -j "$(nproc)" 2>/dev/null ||
      echo "install_python: no gpupeer._fastcall (CPython headers missing): eager calls use ctypes"
  fi
fi
lib="$build/libgpupeer_c.so"
[ -f "$lib" ] || { echo "install_python: no $lib (build it, or drop --no-build)" >&2; exit 1; }
# Where $python has torch (with its C++ headers and CUDA) and a C++ compiler: gpupeer._torchcall,
# built against that torch, here even with --no-build (it cannot be carried from elsewhere).
rm -f "$build"/_torchcall.*.so
if [ -n "$torch_version" ]; then
  "$python" python/build_torchcall.py --out "$build" ||
    echo "install_python: no gpupeer._torchcall (above): torch tensors are read through _fastcall"
fi

dest="$prefix/gpupeer"
rm -rf "$dest"
mkdir -p "$dest/kb"
cp python/gpupeer/*.py "$dest/"
cp "$lib" "$build"/libre2.so.* "$dest/"  # RE2 beside it, found through RUNPATH $ORIGIN
[ -f "$build/_fastcall.abi3.so" ] && cp "$build/_fastcall.abi3.so" "$dest/"  # else ctypes alone
for f in "$build"/_torchcall.*.so; do [ -f "$f" ] && cp "$f" "$dest/"; done
cp -r kb/. "$dest/kb/"
torchcall=$(cd "$dest" && ls _torchcall.*.so 2>/dev/null || true)
echo "installed gpupeer into $dest ($(du -sh "$dest" | cut -f1)) for Python $python_version ($python_path);" \
  "$( [ -n "$torchcall" ] && echo "$torchcall built for torch $torch_version" ||
    echo "no gpupeer._torchcall: torch tensors are read through _fastcall or ctypes")"
if PYTHONPATH= "$python" -c "import sys; sys.exit(0 if '$prefix' in sys.path else 1)" 2>/dev/null; then
  echo "import it with: $python -c 'import gpupeer'"
else
  echo "import it with: PYTHONPATH=$prefix $python -c 'import gpupeer'"
fi
