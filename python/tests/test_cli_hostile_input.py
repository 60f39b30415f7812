"""Hostile input to python -m gpupeer and the API: a clear one-line error with the documented exit
code (docs/bad-inputs.md), never a traceback, and no control character of its own on a terminal."""

import os
import subprocess
import sys

import pytest

import gpupeer
from gpupeer._terminal import terminal_safe
from conftest import REPO, data

ENV = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
SNAPSHOT = data("snapshot_hgx_h100_8gpu.json")
PEER_MESSAGE = b"peer access is not supported between these two devices"


def module(*args, stdin=None, env=None, **popen):
    """python -m gpupeer with `args` (str or bytes, as a shell gives them)."""
    return subprocess.run([sys.executable, "-m", "gpupeer", *args], capture_output="stdout" not in popen,
                          env=dict(ENV, **(env or {})), input=stdin, check=False, **popen)


def one_line_error(run):
    """Standard error of `run` as text, checked to be one line and no traceback."""
    err = run.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    return err


def test_a_device_that_is_not_a_number_is_a_usage_error():
    run = module("check", "-d", "zero")
    assert run.returncode == 2
    assert "'zero' is not a device number" in one_line_error(run)


def test_words_that_are_not_utf8_are_matched_as_the_binary_reads_them():
    run = module("explain", b"\xff\xfe " + PEER_MESSAGE)
    assert run.returncode == 0, run.stderr
    assert b"Traceback" not in run.stderr


def test_standard_input_that_is_not_utf8_or_holds_nul_is_read_whole():
    run = module("explain", "-", stdin=b"\xff\xfe\x00 junk\n\xc3 " + PEER_MESSAGE + b"\n")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(b"1 known failure matched in 2 lines"), run.stdout
    assert b"line 2: \\xc3 peer access" in run.stdout


def test_closed_standard_input_is_a_usage_error():
    run = subprocess.run("exec %s -m gpupeer explain - <&-" % sys.executable, shell=True, capture_output=True,
                         env=ENV, check=False)
    assert run.returncode == 2
    assert "standard input is closed" in one_line_error(run)


def test_a_log_with_escapes_c1_bytes_and_bad_utf8_is_shown_escaped(tmp_path):
    log = tmp_path / "hostile.log"
    log.write_bytes(b"\xff " + PEER_MESSAGE + b" \x1b]0;owned\x07 \x08\x08 \x9b31m \xc2\x9b2J\n")
    run = module("explain", "--file", str(log))
    assert run.returncode == 0, run.stderr
    for raw in (b"\x1b", b"\x07", b"\x08", b"\x9b31m", b"\xc2\x9b"):
        assert raw not in run.stdout, run.stdout
    # Escape sequences are taken out before matching; the other controls are shown.
    assert b"line 1: \\xff peer access" in run.stdout and b"owned" not in run.stdout
    assert b"\\x08\\x08 \\x9b31m \\u009b2J" in run.stdout


def test_a_folder_as_log_is_named():
    run = module("explain", "--file", REPO)
    assert run.returncode == 2
    assert "is a folder" in one_line_error(run)


@pytest.mark.parametrize("target, code, words", [
    ("folder", 2, "it is a folder"),
    ("missing/out.json", 4, "No such file or directory"),
])
def test_output_in_a_folder_or_a_missing_folder_is_one_error(tmp_path, target, code, words):
    (tmp_path / "folder").mkdir()
    run = module("snapshot", "--snapshot", SNAPSHOT, "-o", str(tmp_path / target))
    assert run.returncode == code
    assert words in one_line_error(run)


def test_closed_standard_output_is_one_error():
    run = subprocess.run("exec %s -m gpupeer explain '%s' >&-" % (sys.executable, PEER_MESSAGE.decode()),
                         shell=True, capture_output=True, env=ENV, check=False)
    assert run.returncode == 4
    assert one_line_error(run) == "gpupeer: error: cannot write standard output: Bad file descriptor\n"


@pytest.mark.parametrize("args", [["explain", PEER_MESSAGE.decode()], ["--help"], ["--version"],
                                  ["snapshot", "--snapshot", SNAPSHOT]])
def test_full_standard_output_is_one_error(args):
    with open("/dev/full", "wb") as full:
        run = module(*args, stdout=full, stderr=subprocess.PIPE)
    assert run.returncode == 4
    assert one_line_error(run) == "gpupeer: error: cannot write standard output: No space left on device\n"


@pytest.mark.parametrize("library", ["not-a-library.so", "missing.so", "."])
def test_a_library_that_cannot_be_loaded_is_one_error(tmp_path, library):
    (tmp_path / "not-a-library.so").write_text("this is no ELF file\n")
    path = str(tmp_path / library)
    run = module("explain", "x", env={"GPUPEER_LIBRARY": path})
    assert run.returncode == 4
    assert "GPUPEER_LIBRARY=" + path in one_line_error(run)
    # In a program the import raises, as any import that fails.
    run = subprocess.run([sys.executable, "-c", "import gpupeer"], capture_output=True, text=True,
                         env=dict(ENV, GPUPEER_LIBRARY=path), check=False)
    assert "ImportError: gpupeer: GPUPEER_LIBRARY=" + path in run.stderr


def test_terminal_safe_shows_every_control_character():
    assert terminal_safe("a\x1b[2J\x07\x7f\tb\n") == "a\\x1b[2J\\x07\\x7f\tb\n"
    assert terminal_safe("\u009b31m \u0085") == "\\u009b31m \\u0085"
    assert terminal_safe(b"\xff\x9b ok \xc3\xa9".decode("utf-8", "surrogateescape")) == "\\xff\\x9b ok \u00e9"
    assert terminal_safe("\ud800") == "\\ud800"
    assert terminal_safe("plain \u00e9\u4e2d") == "plain \u00e9\u4e2d"


def test_file_names_echoed_by_the_cli_are_shown_escaped(tmp_path):
    run = module("topo", "--snapshot", b"/nonexistent/\x1b[31mred\xff.json")
    assert run.returncode == 2
    assert "/nonexistent/\\x1b[31mred\\xff.json" in one_line_error(run)
    out = tmp_path / "snap\x1b]0;owned\x07.json"
    run = module("snapshot", "--snapshot", SNAPSHOT, "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert b"\x1b" not in run.stdout and b"snap\\x1b]0;owned\\x07.json" in run.stdout
    run = module(b"\x1b[2Jcommand")
    assert run.returncode == 2 and b"\x1b" not in run.stderr
