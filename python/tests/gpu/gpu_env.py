"""Imported first by every GPU test module: skips the module, saying why, where PyTorch or a
CUDA device is missing; keeps NVLink multicast off in anything the tests start."""

import os

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("PyTorch sees no CUDA device", allow_module_level=True)
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")


def gpus():
    return torch.cuda.device_count()
