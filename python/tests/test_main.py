"""python -m gpupeer prints what the gpupeer binary prints, with the same exit codes."""

import os
import subprocess
import sys

import pytest

from conftest import REPO, data

ENV = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))


def module(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "gpupeer", *args], capture_output=True, text=True, env=ENV,
                          input=stdin, check=False)


def binary(cli, *args, stdin=None):
    return subprocess.run([cli, *args], capture_output=True, text=True, input=stdin, check=False)


@pytest.mark.parametrize("args", [
    ["topo", "--snapshot", data("snapshot_hgx_h100_8gpu.json")],
    ["topo", "--json", "--snapshot", data("snapshot_pcie_4gpu_two_switches.json")],
    ["doctor", "--json", "--snapshot", data("snapshot_consumer_2gpu_no_p2p.json")],
    ["doctor", "--snapshot", data("snapshot_degraded_nvlink_pcie.json")],
    ["explain", "CUDA error: peer access is not supported between these two devices"],
    ["explain", "--json", "-f", data("benign_log.txt")],
])
def test_module_mirrors_the_binary(cli, args):
    ours, theirs = module(*args), binary(cli, *args)
    assert ours.returncode == theirs.returncode, (ours.stderr, theirs.stderr)
    if args[0] == "doctor" and "--json" not in args:
        # The last line but one carries the elapsed time.
        strip = lambda text: [line.rsplit(" (", 1)[0] for line in text.splitlines()]
        assert strip(ours.stdout) == strip(theirs.stdout)
    else:
        assert ours.stdout == theirs.stdout


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
