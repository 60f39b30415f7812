"""The examples run and agree with torch.distributed."""

from gpu_env import gpus, torch  # noqa: F401  (first: skips without torch or CUDA)

import os
import subprocess
import sys

import pytest

from gpupeer import _lib

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ENV = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))


def example(name, *args):
    return subprocess.run([sys.executable, os.path.join(REPO, "examples", name), *args], capture_output=True,
                          text=True, env=ENV, timeout=300, check=False)


@pytest.mark.skipif(not _lib.has("gpupeer_rank_comm_init"), reason="built without the one-process-per-GPU communicator")
@pytest.mark.parametrize("world", [2, 4])
def test_data_parallel_step_matches_torch_distributed(world):
    run = example("data_parallel_step.py", "--world-size", str(world))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "same weights" in run.stdout


def test_p2p_health_check_runs():
    run = example("p2p_health_check.py")
    # 0 healthy, 5 warnings, 1 error findings: each is a report; a crash is not.
    assert run.returncode in (0, 1, 5), run.stdout + run.stderr
    assert "doctor:" in run.stdout and "Traceback" not in run.stderr
