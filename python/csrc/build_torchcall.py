#!/usr/bin/env python3
"""Builds gpupeer._torchcall (python/csrc/torchcall.cpp) against the torch this Python imports.

Usage: python3 python/csrc/build_torchcall.py [--out DIR] [--cxx COMPILER]

DIR defaults to the folder the package loads libgpupeer_c.so from ($GPUPEER_LIBRARY's, else
build/ of this checkout); the package loads the module from there. The module reads torch
tensors as at::Tensor, so it is tied to one torch build: it records torch's version and git
revision, and the package uses it only under that same torch. Needs torch's C++ headers (pip's
wheels ship them), CPython's headers, the CUDA runtime's headers and a C++17 compiler; exits 2
saying which is missing. The module is written whole or not at all.
"""
import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))  # python/csrc
ROOT = os.path.dirname(os.path.dirname(HERE))


def fail(message):
    print("build_torchcall: " + message, file=sys.stderr)
    sys.exit(2)


def torch_build_id(torch):
    """python/gpupeer/_torch_build.py's, loaded by path: importing the package needs its library."""
    spec = importlib.util.spec_from_file_location("_torch_build", os.path.join(ROOT, "python", "gpupeer", "_torch_build.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.torch_build_id(torch)


def cuda_include(torch_dir):
    """A folder holding cuda_runtime_api.h: CUDA_HOME's, the toolkit's, or pip's NVIDIA wheel's."""
    candidates = [os.path.join(os.environ[v], "include") for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    candidates += ["/usr/local/cuda/include", "/usr/include",
                   os.path.join(os.path.dirname(torch_dir), "nvidia", "cuda_runtime", "include")]
    for folder in candidates:
        if os.path.isfile(os.path.join(folder, "cuda_runtime_api.h")):
            return folder
    return None


def default_out():
    library = os.environ.get("GPUPEER_LIBRARY")
    return os.path.dirname(os.path.abspath(library)) if library else os.path.join(ROOT, "build")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=default_out(), help="folder of libgpupeer_c.so (default: %(default)s)")
    parser.add_argument("--cxx", default=os.environ.get("CXX", "c++"), help="C++ compiler (default: %(default)s)")
    args = parser.parse_args()
    try:
        import torch
    except ImportError as e:
        fail("this Python (%s) cannot import torch: %s" % (sys.executable, e))
    torch_dir = os.path.dirname(torch.__file__)
    torch_include = os.path.join(torch_dir, "include")
    if not os.path.isfile(os.path.join(torch_include, "torch", "csrc", "autograd", "python_variable.h")):
        fail("torch %s has no C++ headers under %s" % (torch.__version__, torch_include))
    if getattr(torch.version, "cuda", None) is None or not os.path.isfile(
            os.path.join(torch_include, "c10", "cuda", "CUDAStream.h")):
        fail("torch %s is built without CUDA" % torch.__version__)
    python_include = sysconfig.get_paths()["include"]
    if not os.path.isfile(os.path.join(python_include, "Python.h")):
        fail("no Python.h under %s (CPython's headers: python3-dev)" % python_include)
    cuda = cuda_include(torch_dir)
    if cuda is None:
        fail("no cuda_runtime_api.h (set CUDA_HOME)")
    compiler = shutil.which(args.cxx)
    if compiler is None:
        fail("no C++ compiler %r (set CXX or --cxx)" % args.cxx)
    if not os.path.isdir(args.out):
        fail("no folder %s" % args.out)
    name = "_torchcall" + sysconfig.get_config_var("EXT_SUFFIX")
    torch_lib = os.path.join(torch_dir, "lib")
    abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True))
    build_id = torch_build_id(torch)
    with tempfile.TemporaryDirectory(dir=args.out) as tmp:
        target = os.path.join(tmp, name)
        command = [compiler, "-std=c++17", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-DNDEBUG",
                   "-D_GLIBCXX_USE_CXX11_ABI=%d" % abi, '-DGPUPEER_TORCH_BUILD="%s"' % build_id,
                   "-I" + HERE, "-I" + os.path.join(ROOT, "include"), "-I" + python_include, "-I" + torch_include,
                   "-I" + os.path.join(torch_include, "torch", "csrc", "api", "include"), "-I" + cuda,
                   os.path.join(HERE, "torchcall.cpp"), "-o", target,
                   "-L" + torch_lib, "-Wl,-rpath," + torch_lib, "-ltorch_python", "-lc10_cuda", "-lc10"]
        print(" ".join(command))
        if subprocess.run(command).returncode != 0:
            fail("the compiler failed (above)")
        os.replace(target, os.path.join(args.out, name))
    print("built %s for torch %s" % (os.path.join(args.out, name), build_id))


if __name__ == "__main__":
    main()
