"""scripts/install_python.sh on a copy of the build: it installs for the python3 on PATH and says
which Python and torch, and the installed package reads the KB installed with it, not the
source tree's kb/."""

import os
import platform
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, build_dir

OWN_ENTRY = '{"id": "test/installed-kb-only", "regex": "okapi-ledger-failure-17"}'
SOURCE_TREE_TEXT = "CUDA error: peer access is not supported between these two devices"


@pytest.fixture
def installed(tmp_path):
    """(prefix, python3 on PATH, the installer's output) for a package installed by the script
    with --no-build from the build folder, through a python3 found on a PATH of our own."""
    if not os.path.exists(os.path.join(build_dir(), "libgpupeer_c.so")):
        pytest.skip("no libgpupeer_c.so in %s (build it first)" % build_dir())
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    python3 = bin_dir / "python3"
    python3.write_text('#!/bin/sh\nexec %s "$@"\n' % sys.executable)
    python3.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "GPUPEER_LIBRARY", "PYTHONPATH")}
    env.update(PATH="%s:%s" % (bin_dir, os.environ["PATH"]), GPUPEER_BUILD_DIR=build_dir())
    prefix = tmp_path / "site"
    run = subprocess.run([os.path.join(REPO, "scripts", "install_python.sh"), "--no-build", str(prefix)],
                         capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    return prefix, python3, run.stdout


def test_installs_for_the_python3_on_path_and_says_which(installed):
    prefix, python3, out = installed
    assert "for Python %s (%s)" % (platform.python_version(), python3) in out
    has_torch = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True, check=False).returncode == 0
    assert ("no torch" in out) != has_torch, out
    assert (prefix / "gpupeer" / "libgpupeer_c.so").exists()


def test_installed_package_reads_its_own_kb(installed, tmp_path):
    prefix, python3, _ = installed
    kb = prefix / "gpupeer" / "kb"
    shutil.rmtree(kb)
    (kb / "test").mkdir(parents=True)
    (kb / "test" / "installed-kb-only.json").write_text(OWN_ENTRY)
    env = {k: v for k, v in os.environ.items() if k not in ("GPUPEER_LIBRARY", "GPUPEER_KB_PATH")}
    env["PYTHONPATH"] = str(prefix)

    def explain(text):
        return subprocess.run([str(python3), "-m", "gpupeer", "explain", text], capture_output=True, text=True,
                              env=env, cwd=tmp_path, check=False)

    own = explain("okapi-ledger-failure-17")
    assert own.returncode == 0 and "test/installed-kb-only" in own.stdout, own.stdout + own.stderr
    source = explain(SOURCE_TREE_TEXT)
    assert source.returncode == 1, "the source tree's kb/ was read:\n" + source.stdout
