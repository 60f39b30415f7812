#!/usr/bin/env python3
""".githooks/commit-msg on messages with known answers, and scripts/install_git_hooks.sh in a
fresh git repository, in a folder that is no checkout, and in a copy inside another repository.
Touches only temporary folders.

Run by ctest (label cpu) or directly: python3 tests/scripts/commit_msg_hook_test.py
"""
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOOK = os.path.join(ROOT, ".githooks", "commit-msg")
INSTALL = os.path.join(ROOT, "scripts", "install_git_hooks.sh")
# git that reads no configuration but the repository's own.
GIT_ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
GIT_ENV.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")


class Hook(unittest.TestCase):
    def check(self, message):
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".msg", delete=False) as f:
            f.write(message)
        self.addCleanup(os.unlink, f.name)
        return subprocess.run([HOOK, f.name], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).returncode

    def test_subject_of_at_most_72_characters(self):
        self.assertEqual(self.check("kb: split kb.hpp by role\n\nWhy, and what was checked.\n"), 0)
        self.assertEqual(self.check("x" * 72 + "\n"), 0)
        self.assertEqual(self.check("é" * 72), 0)  # characters, not bytes
        self.assertEqual(self.check("x" * 73 + "\n\nbody\n"), 1)
        self.assertEqual(self.check("fixup! " + "x" * 72 + "\n"), 0)

    def test_empty_or_run_on_subject(self):
        self.assertEqual(self.check(""), 1)
        self.assertEqual(self.check("\n  \n# Please enter the commit message\n"), 1)
        self.assertEqual(self.check("first half of a subject\nand the rest\n"), 1)
        self.assertEqual(self.check("# comment\n\nkb: change\n# comment\n\nbody\n"), 0)


class Install(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="commit_msg_hook_test.")
        self.addCleanup(shutil.rmtree, self.tmp)

    def tree(self, path):
        """A copy of the install script and the hook at `path`, as a checkout would hold them."""
        os.makedirs(os.path.join(path, "scripts"))
        shutil.copy(INSTALL, os.path.join(path, "scripts"))
        shutil.copytree(os.path.join(ROOT, ".githooks"), os.path.join(path, ".githooks"))
        return path

    def git(self, cwd, *args):
        return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)

    def install(self, path):
        return subprocess.run([os.path.join(path, "scripts", "install_git_hooks.sh")], env=GIT_ENV).returncode

    def test_a_checkout_gets_the_hook_and_it_rejects_a_long_subject(self):
        repo = self.tree(os.path.join(self.tmp, "repo"))
        self.git(repo, "init", "-q")
        self.assertEqual(self.install(repo), 0)
        self.assertEqual(self.git(repo, "config", "core.hooksPath").stdout.strip(), ".githooks")
        self.assertEqual(self.git(repo, "commit", "-q", "--allow-empty", "-m", "x" * 73).returncode, 1)
        self.assertEqual(self.git(repo, "commit", "-q", "--allow-empty", "-m", "tests: a short subject").returncode, 0)

    def test_no_checkout_or_a_copy_inside_another_repository_is_left_alone(self):
        plain = self.tree(os.path.join(self.tmp, "plain"))
        self.assertEqual(self.install(plain), 0)
        outer = os.path.join(self.tmp, "outer")
        os.makedirs(outer)
        self.git(outer, "init", "-q")
        inner = self.tree(os.path.join(outer, "vendor", "gpupeer"))
        self.assertEqual(self.install(inner), 0)
        self.assertEqual(self.git(outer, "config", "core.hooksPath").returncode, 1)  # not set


if __name__ == "__main__":
    unittest.main()
