"""python -m gpupeer prints what the gpupeer binary prints, with the same exit codes."""

import os
import signal
import subprocess
import sys

import pytest

from conftest import REPO, data

ENV = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))


# Every GPU hidden, so that "no GPU" answers are the same on a GPU machine.
NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}


def module(*args, stdin=None, env=None):
    return subprocess.run([sys.executable, "-m", "gpupeer", *args], capture_output=True, text=True,
                          env=dict(ENV, **(env or {})), input=stdin, check=False)


def binary(cli, *args, stdin=None, env=None):
    return subprocess.run([cli, *args], capture_output=True, text=True, env=dict(os.environ, **(env or {})),
                          input=stdin, check=False)


def without_elapsed_time(text):
    # doctor's line "What was checked: ... (0.6 s)" carries the elapsed time.
    return [line.rsplit(" (", 1)[0] if line.endswith(" s)") else line for line in text.splitlines()]


@pytest.mark.parametrize("args", [
    ["topo", "--snapshot", data("snapshot_hgx_h100_8gpu.json")],
    ["topo", "--json", "--snapshot", data("snapshot_pcie_4gpu_two_switches.json")],
    ["doctor", "--json", "--snapshot", data("snapshot_consumer_2gpu_no_p2p.json")],
    ["doctor", "--snapshot", data("snapshot_degraded_nvlink_pcie.json")],
    ["explain", "CUDA error: peer access is not supported between these two devices"],
    ["explain", "--json", "--file", data("benign_log.txt")],
])
def test_module_mirrors_the_binary(cli, args):
    ours, theirs = module(*args), binary(cli, *args)
    assert ours.returncode == theirs.returncode, (ours.stderr, theirs.stderr)
    if args[0] == "doctor" and "--json" not in args:
        assert without_elapsed_time(ours.stdout) == without_elapsed_time(theirs.stdout)
    else:
        assert ours.stdout == theirs.stdout


# What needs no GPU, with the GPUs hidden: standard output, standard error and exit code the same.
@pytest.mark.parametrize("args", [
    ["--version"],
    ["snapshot", "--json", "--snapshot", data("snapshot_h200_2gpu_captured.json")],
    ["snapshot", "--json", "--snapshot", data("snapshot_mig_one_gpu.json")],
    ["snapshot", "--snapshot", data("snapshot_h200_2gpu_captured.json")],
    ["snapshot", "--snapshot", data("snapshot_consumer_2gpu_no_p2p.json")],
    ["snapshot"],
    ["topo"],
    ["topo", "--json"],
    ["check"],
    ["doctor"],
    ["doctor", "--json"],
    ["doctor", "--no-gpu-actions"],
    ["doctor", "--snapshot", data("snapshot_mig_one_gpu.json")],
    ["doctor", "--snapshot", data("snapshot_consumer_2gpu_no_p2p.json")],
    ["topo", "--snapshot", "/nonexistent/snapshot.json"],
    ["snapshot", "--json", "--snapshot", "/nonexistent/snapshot.json"],
    ["doctor", "--snapshot", data("benign_log.txt")],
    ["explain"],
    ["explain", "nothing known here"],
    ["explain", "-f", data("benign_log.txt")],
    ["explain", "word", "--file", data("benign_log.txt")],
    ["check", "-d", "zero"],
    ["check", "-d", ""],
    ["check", "-d", "0,,1"],
    ["check", "-d", "0,0"],
    ["check", "-d", "-1"],
    ["check", "-d", "99999999999"],
    ["check", "--size-mib", "0"],
    ["check", "--ipc"],
    ["check", "--ipc", "--json"],
    ["check", "--ipc", "-d", "0"],
    ["check", "--ipc", "-d", "0,0"],
    ["check", "--ipc", "-d", "x"],
    ["explain", "--file", os.path.dirname(data("benign_log.txt"))],
    ["topo", "--snapshot", ""],
    ["snapshot", "--snapshot", ""],
    ["--bogus"],
])
def test_module_mirrors_the_binary_without_gpus(cli, args):
    ours, theirs = module(*args, env=NO_GPU), binary(cli, *args, env=NO_GPU)
    assert (ours.returncode, ours.stderr) == (theirs.returncode, theirs.stderr)
    assert without_elapsed_time(ours.stdout) == without_elapsed_time(theirs.stdout)
    assert " at src/" not in ours.stderr


def test_module_doctor_without_gpus_is_not_applicable():
    # The binary's exit 3, not the 1 of its "no driver" finding.
    assert module("doctor", env=NO_GPU).returncode == 3


def test_explain_reads_standard_input(cli):
    text = "NCCL WARN Cuda failure 'peer access is not supported between these two devices'\n"
    ours, theirs = module("explain", "-", stdin=text), binary(cli, "explain", "-", stdin=text)
    assert ours.returncode == theirs.returncode
    assert ours.stdout == theirs.stdout


def test_bad_input_is_a_usage_error():
    run = module("topo", "--snapshot", "/nonexistent/snapshot.json")
    assert run.returncode == 2
    assert "gpupeer: error: not-found" in run.stderr and "/nonexistent/snapshot.json" in run.stderr
    assert module("explain").returncode == 2


def test_module_into_a_closed_pipe_ends_quietly_as_the_binary(cli):
    # A reader that stopped early (| head): both end by SIGPIPE, with nothing on standard error.
    args = ["topo", "--snapshot", data("snapshot_hgx_h100_8gpu.json")]
    for command, env in (([sys.executable, "-m", "gpupeer", *args], ENV), ([cli, *args], os.environ)):
        read_end, write_end = os.pipe()
        os.close(read_end)
        run = subprocess.run(command, stdout=write_end, stderr=subprocess.PIPE, text=True, env=env, check=False)
        os.close(write_end)
        assert (run.returncode, run.stderr) == (-signal.SIGPIPE, ""), command


@pytest.mark.parametrize("args", [
    ["--snapshot", data("snapshot_degraded_nvlink_pcie.json")],
    ["--snapshot", data("snapshot_h200_2gpu_captured.json"), "--title", "two H200",
     "--results", data("results_h200x2_bench.jsonl"), data("results_h200x4_all_reduce_graph.json"),
     "--results", data("results_records_h200x2.jsonl"), "skipped.jsonl"],
    ["--snapshot", data("snapshot_h200_2gpu_captured.json"), "--results", "/nonexistent/results.jsonl"],
    ["--snapshot", "/nonexistent/snapshot.json"],
])
def test_module_report_writes_the_binarys_page(cli, args, tmp_path):
    """The same page, byte for byte, the same lines on both outputs and the same exit code; each
    run in a folder of its own, writing page.html there (relative names, as a user types them)."""
    runs, pages = [], []
    for name, command, env in (("module", [sys.executable, "-m", "gpupeer"], ENV), ("binary", [cli], os.environ)):
        folder = tmp_path / name
        folder.mkdir()
        # A results file with a line that looks like JSON but is neither result: a warning.
        with open(data("results_h200x2_bench.jsonl"), encoding="utf-8") as f:
            first_result = next(line for line in f if line.startswith("{"))
        (folder / "skipped.jsonl").write_text(first_result + '{"neither": "bench nor record"}\n')
        runs.append(subprocess.run([*command, "report", *args, "-o", "page.html"], capture_output=True, text=True,
                                   env=env, cwd=folder, check=False))
        pages.append((folder / "page.html").read_bytes() if (folder / "page.html").exists() else None)
    ours, theirs = runs
    assert (ours.returncode, ours.stdout, ours.stderr) == (theirs.returncode, theirs.stdout, theirs.stderr)
    assert pages[0] == pages[1]
    if "skipped.jsonl" in args:  # every file read, the skipped line said once on standard error
        assert ours.returncode == 0, ours.stderr
        assert "(2 GPU(s), 16 bench result(s), 1 collective table(s), 3 record(s))" in ours.stdout, ours.stdout
        assert ours.stderr.count("gpupeer report: ") == 1, ours.stderr
    if ours.returncode == 0:
        assert ours.stdout.startswith("report written to page.html (") and b"<html" in pages[0].lower()
