"""python -m gpupeer snapshot -o F writes F as the binary does: a full disk leaves the old file,
a FIFO stays a FIFO, a replaced file keeps its mode, a folder or a file the user cannot write is
refused by name, with the binary's exit codes and never a traceback."""

import json
import os
import resource
import signal
import stat
import subprocess
import sys
import tempfile
import threading

import pytest

from conftest import REPO, data

SNAPSHOT = data("snapshot_hgx_h100_8gpu.json")


def snapshot_to(path, **popen):
    return subprocess.run([sys.executable, "-m", "gpupeer", "snapshot", "--snapshot", SNAPSHOT, "-o", path],
                          capture_output=True, text=True, check=False,
                          env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python")), **popen)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def full_disk():
    # Every write past 4 KiB fails with EFBIG (SIGXFSZ ignored so that it returns): the snapshot
    # is larger, stderr's line is not.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def test_full_disk_leaves_the_old_file(tmp_path):
    out = tmp_path / "kept.json"
    out.write_text("old contents")
    run = snapshot_to(str(out), preexec_fn=full_disk)
    assert run.returncode == 4, run.stderr
    assert "gpupeer: error: system: cannot write '%s': File too large" % out in run.stderr
    assert "Traceback" not in run.stderr
    assert read(out) == "old contents"
    assert os.listdir(tmp_path) == ["kept.json"], "a temporary file was left behind"


def test_fifo_is_written_in_place_not_replaced(tmp_path):
    fifo = str(tmp_path / "snapshot.fifo")
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(read(fifo)))  # opening waits for the writer
    reader.start()
    run = snapshot_to(fifo)
    reader.join()
    assert run.returncode == 0, run.stderr
    assert json.loads(received[0])["schema"] == "gpupeer.snapshot"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a regular file"


def test_replaced_file_keeps_its_mode(tmp_path):
    out = tmp_path / "private.json"
    out.write_text("old contents")
    out.chmod(0o600)
    run = snapshot_to(str(out))
    assert run.returncode == 0, run.stderr
    assert json.loads(read(out))["schema"] == "gpupeer.snapshot"
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600


@pytest.mark.parametrize("name", ["", "folder"])
def test_empty_name_or_folder_is_refused_by_name(tmp_path, name):
    target = str(tmp_path) if name else ""
    run = snapshot_to(target)
    assert run.returncode == 2, run.stderr
    assert ("cannot write '%s': it is a folder" % target if name else "file name is empty") in run.stderr
    assert "Traceback" not in run.stderr and run.stdout == ""
    assert os.listdir(tmp_path) == []


def test_file_the_user_cannot_write_is_refused():
    # As `>` refuses: root's file, 0644, written by another user (nobody, where the test runs as
    # root, since root may write any file).
    as_root = os.geteuid() == 0
    folder = tempfile.mkdtemp()  # not under pytest's 0700 folder, which nobody cannot enter
    try:
        os.chmod(folder, 0o755)
        out = os.path.join(folder, "theirs.json")
        with open(out, "w", encoding="utf-8") as f:
            f.write("old contents")
        os.chmod(out, 0o644 if as_root else 0o444)
        run = snapshot_to(out, **({"user": 65534, "group": 65534, "extra_groups": []} if as_root else {}))
        if as_root and "Permission denied" in run.stderr and out not in run.stderr:
            pytest.skip("nobody cannot run Python on this checkout: " + run.stderr[-300:])
        assert run.returncode == 4, run.stderr
        assert "cannot write '%s': Permission denied" % out in run.stderr
        assert "Traceback" not in run.stderr
        assert read(out) == "old contents"
        assert os.listdir(folder) == ["theirs.json"]
    finally:
        for name in os.listdir(folder):
            os.unlink(os.path.join(folder, name))
        os.rmdir(folder)
