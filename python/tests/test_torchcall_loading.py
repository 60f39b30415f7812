"""Which reader of torch tensors the package takes: gpupeer._torchcall only where it was built
for the very torch in the process (its version and git revision), else gpupeer._fastcall; each
refusal says why. A stand-in _torchcall (a C module with a torch_build string) takes the place
of one built against torch, which this machine lacks."""

import subprocess
import sys
import sysconfig
import types

import pytest

from gpupeer import _tensors

STAND_IN = r"""
#include <Python.h>
static PyModuleDef module = {PyModuleDef_HEAD_INIT, "_torchcall", 0, -1, 0};
PyMODINIT_FUNC PyInit__torchcall(void) {
  PyObject* m = PyModule_Create(&module);
  if (m) PyModule_AddStringConstant(m, "torch_build", TORCH_BUILD);
  return m;
}
"""

TORCH = types.SimpleNamespace(__version__="2.11.0+cu130", version=types.SimpleNamespace(git_version="abc123"))


@pytest.fixture
def beside_library(tmp_path, monkeypatch):
    """A folder standing for libgpupeer_c.so's, and the file name _torchcall takes there."""
    monkeypatch.setattr(_tensors, "lib", types.SimpleNamespace(path=str(tmp_path / "libgpupeer_c.so")))
    monkeypatch.delenv("GPUPEER_NO_TORCHCALL", raising=False)
    monkeypatch.delenv("GPUPEER_NO_FASTCALL", raising=False)
    return tmp_path / ("_torchcall" + sysconfig.get_config_var("EXT_SUFFIX"))


def build_stand_in(path, torch_build):
    source = path.parent / "stand_in.c"
    source.write_text(STAND_IN)
    command = ["cc", "-shared", "-fPIC", "-I" + sysconfig.get_paths()["include"],
               '-DTORCH_BUILD="%s"' % torch_build, str(source), "-o", str(path)]
    try:
        subprocess.run(command, check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip("cannot build a stand-in extension here (a C compiler and Python.h needed): %s" % e)
    sys.modules.pop("gpupeer._torchcall", None)


def test_not_built_says_how_to_build_it(beside_library):
    assert _tensors._load_torchcall(TORCH) is None
    assert "python3 python/csrc/build_torchcall.py makes " + str(beside_library) in _tensors.torch_call_skipped


def test_built_for_this_torch_is_taken(beside_library):
    build_stand_in(beside_library, "2.11.0+cu130 abc123")
    module = _tensors._load_torchcall(TORCH)
    assert module is not None and module.torch_build == "2.11.0+cu130 abc123"
    assert _tensors.torch_call_skipped is None


def test_built_for_another_torch_is_refused_by_name(beside_library):
    build_stand_in(beside_library, "2.10.0+cu128 def456")
    assert _tensors._load_torchcall(TORCH) is None
    assert _tensors.torch_call_skipped == "%s is built for torch 2.10.0+cu128 def456, this is torch 2.11.0+cu130 abc123" % (
        beside_library)


def test_a_file_that_does_not_import_is_refused(beside_library):
    beside_library.write_bytes(b"\x7fELF not really")
    assert _tensors._load_torchcall(TORCH) is None
    assert _tensors.torch_call_skipped.startswith("%s does not import: " % beside_library)


def test_turned_off_by_the_environment(beside_library, monkeypatch):
    build_stand_in(beside_library, "2.11.0+cu130 abc123")
    monkeypatch.setenv("GPUPEER_NO_TORCHCALL", "1")
    assert _tensors._load_torchcall(TORCH) is None
    assert "GPUPEER_NO_TORCHCALL" in _tensors.torch_call_skipped
