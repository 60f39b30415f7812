"""Tensors from other frameworks: CuPy (__cuda_array_interface__, its current stream), JAX, and
any object that offers only DLPack. Run through a one-rank communicator, whose all-reduce is
a copy, and through the two-GPU communicator where there is one."""

from gpu_env import gpus, torch  # noqa: F401  (first: skips without torch or CUDA)

import os

import pytest

import gpupeer
from gpupeer import _lib

pytestmark = pytest.mark.skipif(not _lib.has("gpupeer_rank_comm_init"),
                                reason="libgpupeer_c.so built without the one-process-per-GPU communicator")


@pytest.fixture(scope="module")
def solo():
    torch.cuda.set_device(0)
    comm = gpupeer.init(0, 1, gpupeer.get_unique_id(), device=0)
    yield comm
    comm.destroy()


class DlpackOnly:
    """Exposes a tensor through __dlpack__ alone."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, stream=None):
        return self.tensor.__dlpack__()

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.int8], ids=str)
def test_dlpack_only_objects(solo, dtype):
    x = torch.arange(1000, device="cuda:0").to(dtype)
    out = torch.zeros_like(x)
    solo.all_reduce(DlpackOnly(x), out=DlpackOnly(out), stream=torch.cuda.current_stream())
    torch.cuda.synchronize()
    assert torch.equal(out, x)


def test_cupy_arrays(solo):
    cupy = pytest.importorskip("cupy")
    with cupy.cuda.Device(0):
        x = cupy.arange(4096, dtype=cupy.float32)
        out = cupy.zeros_like(x)
        solo.all_reduce(x, out=out)  # on CuPy's current stream
        cupy.cuda.get_current_stream().synchronize()
        assert bool((out == x).all())


def test_jax_arrays(solo):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jax = pytest.importorskip("jax")
    try:
        device = jax.devices("gpu")[0]
    except RuntimeError as e:
        pytest.skip("JAX sees no GPU: %s" % e)
    x = jax.device_put(jax.numpy.arange(2048, dtype=jax.numpy.float32), device).block_until_ready()
    out = torch.zeros(2048, device="cuda:0")
    solo.all_reduce(x, out=out, stream=0)
    torch.cuda.synchronize()
    assert torch.equal(out.cpu(), torch.arange(2048, dtype=torch.float32))


@pytest.mark.skipif(gpus() < 2, reason="needs 2 GPUs")
def test_cupy_on_the_two_gpu_communicator():
    cupy = pytest.importorskip("cupy")
    xs, outs = [], []
    for r in range(2):
        with cupy.cuda.Device(r):
            xs.append(cupy.full(1024, r + 1, dtype=cupy.float16))
            outs.append(cupy.zeros(1024, dtype=cupy.float16))
    with gpupeer.Communicator([0, 1]) as comm:
        comm.all_reduce(xs, outs, streams=[0, 0])
        for r in range(2):
            with cupy.cuda.Device(r):
                cupy.cuda.Device(r).synchronize()
                assert bool((outs[r] == 3).all())
