"""One process per rank through gpupeer.init / init_from_process_group: two and four processes
started with torch.multiprocessing, all sharing GPU 0 (correct, if slow: each barrier costs
about a millisecond when ranks share a GPU)."""

from gpu_env import gpus, torch  # noqa: F401  (first: skips without torch or CUDA)

import os

import pytest
import torch.multiprocessing as mp

import gpupeer
from gpupeer import _lib
from workers import worker

pytestmark = pytest.mark.skipif(not _lib.has("gpupeer_rank_comm_init"),
                                reason="libgpupeer_c.so built without the one-process-per-GPU communicator")


def run_ranks(world, how, tmp_path):
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    init_method = "file://" + os.path.join(str(tmp_path), "store")
    procs = [ctx.Process(target=worker, args=(r, world, init_method, how, results)) for r in range(world)]
    for p in procs:
        p.start()
    failures = {}
    for _ in procs:
        rank, found = results.get(timeout=240)
        failures[rank] = found
    for p in procs:
        p.join(timeout=60)
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
    assert failures == {r: [] for r in range(world)}, failures


@pytest.mark.parametrize("world", [2, 4])
def test_processes_through_unique_id(world, tmp_path):
    run_ranks(world, "unique_id", tmp_path)


def test_processes_through_a_process_group(tmp_path):
    run_ranks(2, "process_group", tmp_path)


@pytest.mark.skipif(gpus() < 2, reason="an NCCL process group needs a GPU per process")
def test_processes_through_an_nccl_process_group_register_buffers(tmp_path):
    run_ranks(2, "process_group_nccl", tmp_path)


def test_a_bad_unique_id_fails_with_a_clear_error():
    with pytest.raises(gpupeer.InvalidArgumentError, match="unique_id"):
        gpupeer.init(0, 2, b"x" * 5)
