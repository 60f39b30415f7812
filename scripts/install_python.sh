#!/usr/bin/env bash
# Builds libgpupeer_c.so and installs the Python package `gpupeer` (Python over ctypes, with the
# compiled pieces beside it) into PREFIX, a folder that goes on Python's path.
#
#   scripts/install_python.sh [--no-build] [PREFIX]
#
# The package is installed for $PYTHON, by default the python3 on PATH (the one a user runs, which
# on the GPU machines is the one with torch); PREFIX defaults to that Python's user site-packages.
# It builds the wheel that `pip install .` builds (python/backend/gpupeer_backend.py, from the
# build folder $GPUPEER_BUILD_DIR, default build/) and unpacks it into PREFIX, so it needs no pip.
# --no-build takes a library built earlier as it is: for a machine where nothing can be built
# but the build folder was carried, e.g. the GPU machine.
# Installs PREFIX/gpupeer/{*.py, libgpupeer_c.so, libre2.so.N, _fastcall.abi3.so, kb/} and
# PREFIX/gpupeer-VERSION.dist-info, plus _torchcall.<python>.so where $PYTHON has torch
# (python/csrc/build_torchcall.py), and prints how to import it.
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
[ -f "$build/libgpupeer_c.so" ] || { echo "install_python: no $build/libgpupeer_c.so (build it, or drop --no-build)" >&2; exit 1; }

wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT
# The backend also builds gpupeer._torchcall where $python imports torch (it cannot be carried).
wheel=$(GPUPEER_BUILD_DIR=$(cd "$build" && pwd) "$python" -c 'import sys; sys.path.insert(0, "python/backend")
import gpupeer_backend; print(gpupeer_backend.build_wheel(sys.argv[1]))' "$wheels")
rm -rf "$prefix/gpupeer" "$prefix"/gpupeer-*.dist-info
mkdir -p "$prefix"
"$python" - "$wheels/$wheel" "$prefix" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    for info in wheel.infolist():
        path = wheel.extract(info, sys.argv[2])
        os.chmod(path, (info.external_attr >> 16) & 0o777 or 0o644)
PY
dest="$prefix/gpupeer"
torchcall=$(cd "$dest" && ls _torchcall.*.so 2>/dev/null || true)
echo "installed $wheel into $dest ($(du -sh "$dest" | cut -f1)) for Python $python_version ($python_path);" \
  "$( [ -n "$torchcall" ] && echo "$torchcall built for torch $torch_version" ||
    echo "no gpupeer._torchcall: torch tensors are read through _fastcall or ctypes")"
if PYTHONPATH= "$python" -c "import sys; sys.exit(0 if '$prefix' in sys.path else 1)" 2>/dev/null; then
  echo "import it with: $python -c 'import gpupeer'"
else
  echo "import it with: PYTHONPATH=$prefix $python -c 'import gpupeer'"
fi
