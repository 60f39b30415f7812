"""PEP 517 build backend for the Python package `gpupeer`, standard library only.

pyproject.toml names it with backend-path and requires = [], so `pip install .` and `pip wheel .`
need neither setuptools nor a network. The wheel holds python/gpupeer/*.py, kb/ as gpupeer/kb/,
and the compiled pieces the package loads beside its __init__.py: libgpupeer_c.so, the libre2.so.N
it finds through RUNPATH $ORIGIN, _fastcall.abi3.so where it was built, and _torchcall.<python>.so
where the building Python imports torch.

`pip install -e .` (build_editable) installs a .pth file that puts this checkout's python/ on
the path instead; the package then loads the library from the checkout's build/ folder.

Where the compiled pieces come from:
  * GPUPEER_BUILD_DIR=DIR (or --config-settings build-dir=DIR): taken as they are from a build
    made earlier (scripts/setup.sh, or a build carried to a machine without the CUDA toolkit);
    nothing is compiled but _torchcall.
  * otherwise: CMake configures build/ of the checkout where it has no CMakeCache.txt (the flags
    of scripts/setup.sh; GPUPEER_CUDA_ARCHITECTURES and CUDA_HOME as there) and builds the targets
    gpupeer_c and, where CPython's headers are there, gpupeer_fastcall.
_torchcall is built (python/csrc/build_torchcall.py) where the building Python finds torch; pip hides
the installed packages during the build unless it is given --no-build-isolation. Set
GPUPEER_TORCHCALL=0 (or torchcall=0) to leave it out.

The version is the one in CMakeLists.txt's project(), the library's (gpupeer.__version__).
"""

import base64
import hashlib
import importlib.util
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAME = "gpupeer"
SUMMARY = "GPU peer-to-peer diagnosis and collectives inside one machine"
REQUIRES_PYTHON = ">=3.10"  # _fastcall.abi3.so is built for CPython's stable ABI of 3.10
# Zip entries carry this time (or SOURCE_DATE_EPOCH's), so that one build gives the same bytes.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def log(message):
    print("gpupeer_backend: " + message, file=sys.stderr, flush=True)


def version():
    """CMakeLists.txt's project(gpupeer VERSION x.y.z)."""
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        found = re.search(r"project\(\s*gpupeer\s+VERSION\s+([0-9.]+)", f.read())
    if not found:
        raise RuntimeError("no project(gpupeer VERSION ...) in %s" % os.path.join(ROOT, "CMakeLists.txt"))
    return found.group(1)


def _setting(config_settings, key, env):
    value = (config_settings or {}).get(key)
    return value if value not in (None, "") else os.environ.get(env) or None


def _run(command):
    log(" ".join(command))
    # The build's output goes to standard error: a frontend may read standard output.
    done = subprocess.run(command, cwd=ROOT, stdout=sys.stderr, stderr=sys.stderr, check=False)
    return done.returncode


def _cmake_build(build):
    """Configures `build` where it is not yet, builds gpupeer_c (and gpupeer_fastcall if it can)."""
    cmake = shutil.which("cmake")
    if cmake is None:
        raise RuntimeError("no cmake on PATH: install it (scripts/setup.sh), or set GPUPEER_BUILD_DIR to a "
                           "folder holding a build of libgpupeer_c.so")
    if not os.path.isfile(os.path.join(build, "CMakeCache.txt")):
        cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
        archs = os.environ.get("GPUPEER_CUDA_ARCHITECTURES", "80-real;90-real;90-virtual")
        if _run([cmake, "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                 "-DCMAKE_CUDA_COMPILER=%s/bin/nvcc" % cuda_home, "-DGPUPEER_CUDA_ARCHITECTURES=" + archs]) != 0:
            raise RuntimeError("CMake could not configure %s (above); scripts/setup.sh installs what it needs" % build)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    if _run([cmake, "--build", build, "--target", "gpupeer_c", "-j", jobs]) != 0:
        raise RuntimeError("building libgpupeer_c.so in %s failed (above)" % build)
    if _run([cmake, "--build", build, "--target", "gpupeer_fastcall", "-j", jobs]) != 0:
        log("no gpupeer._fastcall (CPython's headers missing?): eager calls go through ctypes")


def _torchcall(staging, config_settings):
    """python/csrc/build_torchcall.py's module for the torch this Python finds, in `staging`, or None."""
    if _setting(config_settings, "torchcall", "GPUPEER_TORCHCALL") == "0":
        return None
    if importlib.util.find_spec("torch") is None:
        log("no torch for %s: no gpupeer._torchcall (torch tensors are read through _fastcall)" % sys.executable)
        return None
    if _run([sys.executable, os.path.join(ROOT, "python", "csrc", "build_torchcall.py"), "--out", staging]) != 0:
        log("no gpupeer._torchcall (above): torch tensors are read through _fastcall")
        return None
    return os.path.join(staging, "_torchcall" + sysconfig.get_config_var("EXT_SUFFIX"))


def compiled_pieces(config_settings, staging):
    """{name in the package: path} of the compiled files the wheel carries."""
    given = _setting(config_settings, "build-dir", "GPUPEER_BUILD_DIR")
    build = os.path.abspath(given or os.path.join(ROOT, "build"))
    if given is None:
        _cmake_build(build)
    library = os.path.join(build, "libgpupeer_c.so")
    if not os.path.isfile(library):
        raise RuntimeError("no %s: build it (scripts/setup.sh %s) or unset GPUPEER_BUILD_DIR" % (library, build))
    pieces = {"libgpupeer_c.so": library}
    re2 = sorted(f for f in os.listdir(build) if re.fullmatch(r"libre2\.so\.[0-9]+", f))
    if not re2:
        raise RuntimeError("no libre2.so.N beside %s (libgpupeer_c.so loads it from its own folder)" % library)
    pieces[re2[-1]] = os.path.join(build, re2[-1])
    fastcall = os.path.join(build, "_fastcall.abi3.so")
    if os.path.isfile(fastcall):
        pieces["_fastcall.abi3.so"] = fastcall
    torchcall = _torchcall(staging, config_settings)
    if torchcall and os.path.isfile(torchcall):
        pieces[os.path.basename(torchcall)] = torchcall
    return pieces


def wheel_tag(pieces):
    """py3-none where only ctypes loads native code, cp3X-abi3 with _fastcall, cpXY-cpXY with
    _torchcall (built for this interpreter alone); always this platform."""
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    if any(name.startswith("_torchcall") for name in pieces):
        tag = "cp%d%d" % sys.version_info[:2]
        return "%s-%s-%s" % (tag, tag, platform)
    if "_fastcall.abi3.so" in pieces:
        return "cp310-abi3-" + platform
    return "py3-none-" + platform


def metadata_text():
    return "".join([
        "Metadata-Version: 2.1\n",
        "Name: %s\n" % NAME,
        "Version: %s\n" % version(),
        "Summary: %s\n" % SUMMARY,
        "Requires-Python: %s\n" % REQUIRES_PYTHON,
        "Description-Content-Type: text/markdown\n",
        "\n",
        "Diagnosis of GPU peer-to-peer and collectives between GPUs of one machine, over the C API\n",
        "of libgpupeer (libgpupeer_c.so, carried in the package). See docs/python.md.\n",
    ])


def _package_files():
    """{archive name: source path} of the Python files and the KB."""
    files = {}
    package = os.path.join(ROOT, "python", "gpupeer")
    for name in sorted(os.listdir(package)):
        if name.endswith(".py"):
            files["gpupeer/" + name] = os.path.join(package, name)
    kb = os.path.join(ROOT, "kb")
    for folder, dirs, names in os.walk(kb):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(folder, name)
            files["gpupeer/kb/" + os.path.relpath(path, kb).replace(os.sep, "/")] = path
    return files


def _zip_time():
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        import time

        return max(time.gmtime(int(epoch))[:6], ZIP_TIME)
    return ZIP_TIME


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (name, digest, len(data))


def write_wheel(wheel_directory, pieces):
    entries = [(name, path) for name, path in _package_files().items()]
    entries += [("gpupeer/" + name, path) for name, path in sorted(pieces.items())]
    return _write(wheel_directory, wheel_tag(pieces), entries, [])


def _write(wheel_directory, tag, entries, extra):
    """The wheel of `entries` ([(archive name, source path)]) and `extra` ([(archive name, bytes)])
    with its dist-info; its file name."""
    dist_info = "%s-%s.dist-info" % (NAME, version())
    wheel_text = "Wheel-Version: 1.0\nGenerator: gpupeer_backend\nRoot-Is-Purelib: false\nTag: %s\n" % tag
    generated = extra + [(dist_info + "/METADATA", metadata_text().encode()),
                         (dist_info + "/WHEEL", wheel_text.encode())]
    file_name = "%s-%s-%s.whl" % (NAME, version(), tag)
    target = os.path.join(wheel_directory, file_name)
    when = _zip_time()
    record = []
    partial = target + ".part"
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as wheel:
        def add(name, data, mode):
            info = zipfile.ZipInfo(name, when)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
            record.append(_record_line(name, data))

        for name, path in entries:
            with open(path, "rb") as f:
                data = f.read()
            add(name, data, 0o755 if name.endswith(".so") or ".so." in name else 0o644)
        for name, data in generated:
            add(name, data, 0o644)
        record_name = dist_info + "/RECORD"  # lists itself without a hash, as PEP 376 says
        info = zipfile.ZipInfo(record_name, when)
        info.external_attr = 0o100644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        wheel.writestr(info, "".join(record) + record_name + ",,\n")
    os.replace(partial, target)
    return file_name


# PEP 517 hooks.
def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """`pip install -e .`: a .pth file puts the checkout's python/ on the path, so edits to
    python/gpupeer take effect at once; the package loads libgpupeer_c.so (and reads kb/) from
    the checkout's build/ or build-*/, as it does when run from the source tree. That folder is
    built with CMake as for a wheel, or named by GPUPEER_BUILD_DIR."""
    build = os.path.abspath(_setting(config_settings, "build-dir", "GPUPEER_BUILD_DIR") or os.path.join(ROOT, "build"))
    if os.path.dirname(build) != ROOT or not re.fullmatch(r"build(-.*)?", os.path.basename(build)):
        raise RuntimeError("an editable install loads the library from %s/build or build-*/, not %s: build there, "
                           "or install a wheel" % (ROOT, build))
    if _setting(config_settings, "build-dir", "GPUPEER_BUILD_DIR") is None:
        _cmake_build(build)
    if not os.path.isfile(os.path.join(build, "libgpupeer_c.so")):
        raise RuntimeError("no %s: build it (scripts/setup.sh %s)" % (os.path.join(build, "libgpupeer_c.so"), build))
    os.makedirs(wheel_directory, exist_ok=True)
    pth = [("gpupeer_editable.pth", (os.path.join(ROOT, "python") + "\n").encode())]
    name = _write(wheel_directory, "py3-none-any", [], pth)
    log("wrote %s (python/ of %s on the path, library from %s)" % (name, ROOT, build))
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    os.makedirs(wheel_directory, exist_ok=True)
    with tempfile.TemporaryDirectory() as staging:
        pieces = compiled_pieces(config_settings, staging)
        name = write_wheel(wheel_directory, pieces)
    log("wrote %s (%s)" % (name, ", ".join(sorted(pieces))))
    return name


def build_sdist(sdist_directory, config_settings=None):
    """The files git tracks (or, outside git, the tree without build folders)."""
    base = "%s-%s" % (NAME, version())
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    if listed.returncode == 0 and listed.stdout:
        names = [n for n in listed.stdout.decode().split("\0") if n and os.path.isfile(os.path.join(ROOT, n))]
    else:
        names = []
        for folder, dirs, files in os.walk(ROOT):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build")) and d != "__pycache__")
            names += [os.path.relpath(os.path.join(folder, f), ROOT) for f in sorted(files)]
    file_name = base + ".tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    with tarfile.open(os.path.join(sdist_directory, file_name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(names):
            tar.add(os.path.join(ROOT, name), arcname=base + "/" + name, recursive=False)
        info = tarfile.TarInfo(base + "/PKG-INFO")
        data = metadata_text().encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return file_name
