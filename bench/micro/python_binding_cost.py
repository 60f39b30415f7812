#!/usr/bin/env python3
"""Host time the Python binding adds to an eager collective call (ctypes over libgpupeer_c.so).

Method (as bench/micro/launch_cost.cu): median over 30 windows of 200 calls, GPUs synchronised
between windows so no queue fills; microseconds per call.

Without a GPU (any machine): the binding against a stub C function of the same signature as
gpupeer_rank_comm_run that returns at once, on an array that exposes __cuda_array_interface__
(and a torch CPU tensor's path where torch is present is not timed: it refuses CPU tensors):
  ctypes_call     the bare ctypes call with arguments already extracted
  fastcall_call   the same through gpupeer._fastcall (python/csrc/fastcall.cpp), where built
  binding         RankCommunicator.all_reduce(x) end to end: extraction, checks, stream, and
                  the call through _fastcall (binding_ctypes: through ctypes)
With --gpu (PyTorch with CUDA): the same on real communicators, all-reduce of 8 bytes (rank_*: a
one-rank RankCommunicator; comm_*: a two-GPU Communicator, a tensor per GPU, where there are two):
  direct        the C API call with arguments already extracted, the way the package calls it
                (C++ call + fastcall_call)
  python        comm.all_reduce(...) on torch tensors, current stream, the tensor read in C
                (torch_call_path: _torchcall.torch_run, at::Tensor read in C++, where
                python/csrc/build_torchcall.py built it for this torch; else _fastcall.torch_run);
                fastcall: the same through _fastcall.torch_run (torch's methods called from C);
                python_path: read in Python, as without either
  gap           median over pairs of adjacent windows of python - direct (paired: the machine's
                noise hits both alike)
  added         gap + fastcall_call: what the binding costs beyond calling C++
Prints one JSON line.

    PYTHONPATH=python /usr/bin/python3 bench/micro/python_binding_cost.py [--gpu]
"""

import argparse
import ctypes
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import gpupeer  # noqa: E402
from gpupeer import _lib, rank  # noqa: E402
from gpupeer import _tensors as tensors  # noqa: E402

WINDOWS, CALLS = 30, 200
STUB = "int gpupeer_rank_comm_run(void* c, int op, const void* s, void* r, unsigned long n, int t, int o," \
       " int root, void* st, void* e) { return 0; }\n"


def window_us(fn, sync):
    """One window: microseconds per call of CALLS calls of fn, after sync()."""
    sync()
    start = time.perf_counter()
    for _ in range(CALLS):
        fn()
    return (time.perf_counter() - start) / CALLS * 1e6


def per_call_us(fn, sync=lambda: None):
    samples = [window_us(fn, sync) for _ in range(WINDOWS)]
    sync()
    return round(statistics.median(samples), 3)


def paired_us(first, second, sync):
    """Medians of `first`, `second` and of their difference per pair of windows, each window
    right after the other's, so that both see the same state of a noisy machine (us per call)."""
    pairs = [(window_us(first, sync), window_us(second, sync)) for _ in range(WINDOWS)]
    sync()
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    gap = [y - x for x, y in pairs]
    return tuple(round(statistics.median(v), 3) for v in (a, b, gap))


def stub_function(tmp):
    source, library = os.path.join(tmp, "stub.c"), os.path.join(tmp, "libstub.so")
    with open(source, "w") as f:
        f.write(STUB)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", library, source], check=True)
    fn = ctypes.CDLL(library).gpupeer_rank_comm_run
    fn.restype, fn.argtypes = _lib._SIGNATURES["gpupeer_rank_comm_run"]
    return fn


def cpu_figures(stub):
    class CudaArray:  # what CuPy or Numba hand over, without needing a GPU
        device = type("Device", (), {"id": 0})()
        __cuda_array_interface__ = {"shape": (2,), "typestr": "<f4", "data": (0x7F0000000000, False),
                                    "strides": None, "version": 3}

    comm = object.__new__(gpupeer.RankCommunicator)
    comm._handle, comm._err = 1, _lib.ErrorSlot()
    comm.rank, comm.world_size, comm.device, comm.transport = 0, 2, 0, "stub"
    x, err, p = CudaArray(), comm._err.address, 0x7F0000000000
    address = ctypes.cast(stub, ctypes.c_void_p).value
    saved = rank._call, rank._RUN
    figures = {"ctypes_call": per_call_us(lambda: stub(1, 0, p, p, 2, 0, 0, 0, 0, err))}
    try:
        rank._call, rank._RUN = _lib._through_ctypes, stub
        figures["binding_ctypes"] = per_call_us(lambda: comm.all_reduce(x))
        if _lib._fastcall is not None:
            run10 = _lib._fastcall.run10
            figures["fastcall_call"] = per_call_us(lambda: run10(address, 1, 0, p, p, 2, 0, 0, 0, 0, err))
            rank._call, rank._RUN = run10, address
            figures["binding"] = per_call_us(lambda: comm.all_reduce(x))
    finally:
        rank._call, rank._RUN = saved
        comm._handle = None  # nothing to destroy
    return figures


def gpu_figures():
    import torch

    figures = {}
    sync = torch.cuda.synchronize
    if _lib.has("gpupeer_rank_comm_init"):
        torch.cuda.set_device(0)
        solo = gpupeer.init(0, 1, gpupeer.get_unique_id(), device=0)
        x = torch.ones(2, device="cuda:0")
        stream = torch.cuda.current_stream().cuda_stream
        err = solo._err.address
        call, target = rank._call, rank._RUN
        ptr, handle = x.data_ptr(), solo._handle
        direct = lambda: call(target, handle, 0, ptr, ptr, 2, 0, 0, 0, stream, err)  # noqa: E731
        solo.all_reduce(x)  # sets up the C path for torch tensors
        figures["rank_direct"], figures["rank_python"], figures["rank_gap"] = paired_us(
            direct, lambda: solo.all_reduce(x), sync)
        figures["torch_call_path"] = tensors.torch_call_path
        fastcall = tensors.fastcall_for_torch(torch) if tensors.torch_call_path == "_torchcall" else None
        if fastcall is not None:
            # The same call with the tensor read through torch's methods (python/csrc/fastcall.cpp).
            fast = solo._fast
            solo._fast = (fastcall.torch_run, fast[1])
            figures["rank_fastcall"] = per_call_us(lambda: solo.all_reduce(x), sync)
            solo._fast = fast
        else:
            figures["torchcall_skipped"] = tensors.torch_call_skipped
        fast, solo._fast = solo._fast, False  # the tensor read in Python instead of C
        figures["rank_python_path"] = per_call_us(lambda: solo.all_reduce(x), sync)
        solo._fast = fast
        solo.destroy()
    if torch.cuda.device_count() >= 2:
        comm = gpupeer.Communicator([0, 1])
        xs = [torch.ones(2, device="cuda:%d" % r) for r in range(2)]
        send = (ctypes.c_void_p * 2)(*[t.data_ptr() for t in xs])
        streams = (ctypes.c_void_p * 2)(*[torch.cuda.current_stream(r).cuda_stream for r in range(2)])
        addresses = ctypes.addressof(send), ctypes.addressof(streams)
        from gpupeer import communicator

        call, target, err, handle = communicator._call, communicator._RUN, comm._err.address, comm._handle

        def sync_both():
            torch.cuda.synchronize(0)
            torch.cuda.synchronize(1)

        direct = lambda: call(target, handle, 0, addresses[0], addresses[0], 2, 0, 0, 0, addresses[1], err)  # noqa: E731
        comm.all_reduce(xs)  # sets up the C path for torch tensors
        figures["comm_direct"], figures["comm_python"], figures["comm_gap"] = paired_us(
            direct, lambda: comm.all_reduce(xs), sync_both)
        comm.destroy()
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpu", action="store_true", help="also time real communicators (needs torch + CUDA)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            stub = stub_function(tmp)
        except (OSError, subprocess.CalledProcessError) as e:  # no C compiler here
            stub, figures = None, {"stub": "not built: %s" % e}
        if stub is not None:
            figures = cpu_figures(stub)
    if args.gpu:
        figures.update(gpu_figures())
        for kind in ("rank", "comm"):
            if kind + "_python" in figures:
                call = figures.get("fastcall_call", figures.get("ctypes_call"))
                if call is not None:  # the paired difference where measured
                    gap = figures.get(kind + "_gap", figures[kind + "_python"] - figures[kind + "_direct"])
                    figures[kind + "_added"] = round(gap + call, 3)
    figures.update(date=datetime.date.today().isoformat(), machine=platform.node(),
                   python=platform.python_version(), cpu=platform.processor() or platform.machine(), unit="us/call")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
