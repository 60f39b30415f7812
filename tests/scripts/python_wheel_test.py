#!/usr/bin/env python3
"""The wheel of `pip wheel .` (pyproject.toml, python/backend/gpupeer_backend.py), offline: its
files, their RECORD and its metadata; then installed into a fresh venv with --no-index, as is
`pip install .`, and imported there with the library, the KB and the version of the wheel; and
`pip install -e .`, which runs the checkout's python/ with its build/.

Takes the compiled pieces from $GPUPEER_BUILD_DIR (ctest sets it; default build/).
Run by ctest (label cpu) or directly: python3 tests/scripts/python_wheel_test.py
"""
import base64
import csv
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("GPUPEER_BUILD_DIR") or os.path.join(ROOT, "build"))
KB_TEXT = "CUDA error: peer access is not supported between these two devices"
KB_ID = "cuda/peer-access-unsupported-by-hardware"


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(gpupeer VERSION ([0-9.]+)", f.read()).group(1)


def clean_env(**extra):
    """The environment without anything that points Python at the checkout or the build."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "GPUPEER_LIBRARY", "GPUPEER_KB_PATH", "GPUPEER_BUILD_DIR", "PIP_INDEX_URL")}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", GPUPEER_TORCHCALL="0", **extra)
    return env


def run(command, **kw):
    done = subprocess.run(command, capture_output=True, text=True, check=False, **kw)
    assert done.returncode == 0, "%s exited %d:\n%s%s" % (command, done.returncode, done.stdout, done.stderr)
    return done


@unittest.skipUnless(os.path.isfile(os.path.join(BUILD, "libgpupeer_c.so")),
                     "no libgpupeer_c.so in %s (build the target gpupeer_c)" % BUILD)
class Wheel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.wheels = os.path.join(cls.tmp.name, "wheels")
        run([sys.executable, "-m", "pip", "wheel", ROOT, "--no-deps", "--no-build-isolation", "--no-index",
             "--no-cache-dir", "-w", cls.wheels], env=clean_env(GPUPEER_BUILD_DIR=BUILD), cwd=cls.tmp.name)
        names = os.listdir(cls.wheels)
        assert len(names) == 1, names
        cls.wheel = os.path.join(cls.wheels, names[0])
        cls.zip = zipfile.ZipFile(cls.wheel)
        cls.dist_info = "gpupeer-%s.dist-info/" % project_version()

    @classmethod
    def tearDownClass(cls):
        cls.zip.close()
        cls.tmp.cleanup()

    def test_holds_the_package_the_kb_and_the_compiled_pieces(self):
        names = set(self.zip.namelist())
        for py in os.listdir(os.path.join(ROOT, "python", "gpupeer")):
            if py.endswith(".py"):
                self.assertIn("gpupeer/" + py, names)
        kb = {os.path.relpath(os.path.join(d, f), os.path.join(ROOT, "kb"))
              for d, _, files in os.walk(os.path.join(ROOT, "kb")) for f in files}
        self.assertGreater(len(kb), 100)
        self.assertEqual({n[len("gpupeer/kb/"):] for n in names if n.startswith("gpupeer/kb/")}, kb)
        with open(os.path.join(BUILD, "libgpupeer_c.so"), "rb") as f:
            self.assertEqual(self.zip.read("gpupeer/libgpupeer_c.so"), f.read())
        self.assertTrue([n for n in names if re.fullmatch(r"gpupeer/libre2\.so\.[0-9]+", n)], sorted(names))
        has_fastcall = os.path.isfile(os.path.join(BUILD, "_fastcall.abi3.so"))
        self.assertEqual("gpupeer/_fastcall.abi3.so" in names, has_fastcall)
        self.assertFalse([n for n in names if "__pycache__" in n or n.endswith(".pyc")])
        self.assertEqual({n.split("/")[0] for n in names}, {"gpupeer", self.dist_info.rstrip("/")})

    def test_record_hashes_every_file(self):
        rows = list(csv.reader(io.StringIO(self.zip.read(self.dist_info + "RECORD").decode())))
        listed = {row[0]: row for row in rows}
        self.assertEqual(set(listed), set(self.zip.namelist()))
        self.assertEqual(listed[self.dist_info + "RECORD"][1:], ["", ""])
        for name, algo_digest, size in (r for r in rows if r[0] != self.dist_info + "RECORD"):
            data = self.zip.read(name)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            self.assertEqual(algo_digest, "sha256=" + digest, name)
            self.assertEqual(int(size), len(data), name)

    def test_metadata_and_tag(self):
        metadata = self.zip.read(self.dist_info + "METADATA").decode()
        self.assertIn("\nName: gpupeer\n", "\n" + metadata)
        self.assertIn("\nVersion: %s\n" % project_version(), metadata)
        with open(os.path.join(ROOT, "include", "gpupeer", "version.hpp"), encoding="utf-8") as f:
            self.assertIn('kVersion = "%s"' % project_version(), f.read())
        wheel = self.zip.read(self.dist_info + "WHEEL").decode()
        tag = re.search(r"^Tag: (.+)$", wheel, re.M).group(1)
        self.assertTrue(os.path.basename(self.wheel).endswith("-%s.whl" % tag), (self.wheel, tag))
        self.assertIn("Root-Is-Purelib: false", wheel)
        expected = "cp310-abi3-" if "gpupeer/_fastcall.abi3.so" in self.zip.namelist() else "py3-none-"
        self.assertTrue(tag.startswith(expected), tag)

    def test_same_bytes_when_built_again(self):
        again = os.path.join(self.tmp.name, "again")
        run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import gpupeer_backend; "
             "gpupeer_backend.build_wheel(sys.argv[2])", os.path.join(ROOT, "python", "backend"), again],
            env=clean_env(GPUPEER_BUILD_DIR=BUILD))
        with open(self.wheel, "rb") as a, open(os.path.join(again, os.path.basename(self.wheel)), "rb") as b:
            self.assertEqual(hashlib.sha256(a.read()).digest(), hashlib.sha256(b.read()).digest())

    def test_installs_offline_into_a_fresh_venv_and_imports(self):
        venv = os.path.join(self.tmp.name, "venv")
        run([sys.executable, "-m", "venv", venv])
        python = os.path.join(venv, "bin", "python")
        elsewhere = os.path.join(self.tmp.name, "elsewhere")
        os.makedirs(elsewhere, exist_ok=True)
        probe = ("import gpupeer, importlib.metadata, json; print(json.dumps({'version': gpupeer.__version__, "
                 "'dist': importlib.metadata.version('gpupeer'), 'library': gpupeer.library_path, "
                 "'package': gpupeer.__file__}))")

        def check_installed():
            seen = json.loads(run([python, "-c", probe], env=clean_env(), cwd=elsewhere).stdout)
            self.assertEqual(seen["version"], project_version())
            self.assertEqual(seen["dist"], project_version())
            self.assertTrue(seen["package"].startswith(venv), seen)
            self.assertEqual(seen["library"], os.path.join(os.path.dirname(seen["package"]), "libgpupeer_c.so"))
            explained = run([python, "-m", "gpupeer", "explain", KB_TEXT], env=clean_env(), cwd=elsewhere)
            self.assertIn(KB_ID, explained.stdout)

        run([python, "-m", "pip", "install", "--no-index", "--no-deps", self.wheel], env=clean_env(), cwd=elsewhere)
        check_installed()
        run([python, "-m", "pip", "uninstall", "-y", "gpupeer"], env=clean_env(), cwd=elsewhere)
        gone = subprocess.run([python, "-c", "import gpupeer"], env=clean_env(), cwd=elsewhere,
                              capture_output=True, text=True, check=False)
        self.assertNotEqual(gone.returncode, 0, "uninstall left the package behind")
        # `pip install .`, with pip's build isolation: the backend needs nothing from an index.
        run([python, "-m", "pip", "install", "--no-index", "--no-deps", "--no-cache-dir", ROOT],
            env=clean_env(GPUPEER_BUILD_DIR=BUILD), cwd=elsewhere)
        check_installed()


@unittest.skipUnless(os.path.isfile(os.path.join(BUILD, "libgpupeer_c.so")) and os.path.dirname(BUILD) == ROOT,
                     "no libgpupeer_c.so in a build folder of this checkout (%s)" % BUILD)
class Editable(unittest.TestCase):
    def test_pip_install_e_runs_the_checkouts_python_and_build(self):
        with tempfile.TemporaryDirectory() as tmp:
            venv = os.path.join(tmp, "venv")
            run([sys.executable, "-m", "venv", venv])
            python = os.path.join(venv, "bin", "python")
            run([python, "-m", "pip", "install", "--no-index", "--no-deps", "--no-cache-dir", "-e", ROOT],
                env=clean_env(GPUPEER_BUILD_DIR=BUILD), cwd=tmp)
            seen = json.loads(run([python, "-c", "import gpupeer, json; print(json.dumps([gpupeer.__file__, "
                                   "gpupeer.library_path]))"], env=clean_env(), cwd=tmp).stdout)
            self.assertEqual(seen[0], os.path.join(ROOT, "python", "gpupeer", "__init__.py"))
            self.assertEqual(os.path.dirname(seen[1]), os.path.join(ROOT, "build") if os.path.isfile(
                os.path.join(ROOT, "build", "libgpupeer_c.so")) else BUILD)
            site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
            self.assertFalse(os.path.exists(os.path.join(site, "gpupeer")), "the package was copied, not linked")


class Backend(unittest.TestCase):
    def test_a_build_folder_without_the_library_is_named(self):
        with tempfile.TemporaryDirectory() as empty:
            done = subprocess.run(
                [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import gpupeer_backend; "
                 "gpupeer_backend.build_wheel(sys.argv[2])", os.path.join(ROOT, "python", "backend"), empty],
                env=clean_env(GPUPEER_BUILD_DIR=empty), capture_output=True, text=True, check=False)
            self.assertNotEqual(done.returncode, 0)
            self.assertIn("no %s" % os.path.join(empty, "libgpupeer_c.so"), done.stderr)
            self.assertEqual(os.listdir(empty), [])

    def test_an_editable_install_refuses_a_build_outside_the_checkout(self):
        with tempfile.TemporaryDirectory() as elsewhere:
            done = subprocess.run(
                [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import gpupeer_backend; "
                 "gpupeer_backend.build_editable(sys.argv[2])", os.path.join(ROOT, "python", "backend"), elsewhere],
                env=clean_env(GPUPEER_BUILD_DIR=elsewhere), capture_output=True, text=True, check=False)
            self.assertNotEqual(done.returncode, 0)
            self.assertIn("an editable install loads the library from %s/build" % ROOT, done.stderr)
            self.assertEqual(os.listdir(elsewhere), [])


if __name__ == "__main__":
    unittest.main()
