#!/usr/bin/env python3
"""A program that opens NCCL by path with ctypes and calls it on torch tensors, as vLLM's pynccl does.

Run under torchrun, one process per GPU, with --library naming libnccl.so.2 or libgpupeer_nccl.so
(vLLM's VLLM_NCCL_SO_PATH). The ranks agree on NCCL's unique id over a gloo group, then run
all-reduce, all-gather, reduce-scatter and broadcast on float32 and bfloat16 from 8 B to
--max-bytes, a send/receive ring, and an all-reduce captured in a torch.cuda.graph and replayed on
new inputs. Every element is checked; each rank prints one line per step and exits 1 if any
element was wrong. A step that does not end within --bound seconds dumps every thread's stack
and ends the process.
"""
import argparse
import ctypes
import faulthandler
import os
import sys

import torch
import torch.distributed as dist

NCCL_TYPES = {torch.float32: 7, torch.bfloat16: 9}
NCCL_SUM = 0


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_byte * 128)]


class Nccl:
    """The few functions of nccl.h this program calls, resolved from one library."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)  # RTLD_LOCAL, as ctypes and vLLM open it
        self.lib.ncclGetErrorString.restype = ctypes.c_char_p
        self.lib.ncclGetLastError.restype = ctypes.c_char_p
        for name in ("ncclGetUniqueId", "ncclCommInitRank", "ncclAllReduce", "ncclAllGather", "ncclReduceScatter",
                     "ncclBroadcast", "ncclSend", "ncclRecv", "ncclGroupStart", "ncclGroupEnd", "ncclCommDestroy",
                     "ncclGetVersion"):
            getattr(self.lib, name).restype = ctypes.c_int

    def __call__(self, name, *args):
        result = getattr(self.lib, name)(*args)
        if result != 0:
            why = self.lib.ncclGetLastError(None) or b""
            raise RuntimeError(f"{name}: {self.lib.ncclGetErrorString(result).decode()} ({why.decode()})")


def ptr(t):
    return ctypes.c_void_p(t.data_ptr())


def stream():
    return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)


def values(rank, n, dtype, salt=0):
    # Small integers: exact in bfloat16 too, whatever the order of the sums.
    i = torch.arange(n, device="cuda", dtype=torch.int64)
    return ((rank + 1) * 3 + (i + salt) % 29).to(dtype)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", required=True, help="the NCCL library to open by path")
    parser.add_argument("--max-bytes", type=int, default=64 << 20)
    parser.add_argument("--bound", type=float, default=60.0, help="seconds a step may take")
    parser.add_argument("--no-graph", action="store_true", help="leave out the captured all-reduce")
    args = parser.parse_args()
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    nccl = Nccl(args.library)
    version = ctypes.c_int()
    nccl("ncclGetVersion", ctypes.byref(version))
    uid = UniqueId()
    if rank == 0:
        nccl("ncclGetUniqueId", ctypes.byref(uid))
    shared = [bytes(uid.internal)]
    dist.broadcast_object_list(shared, src=0)
    ctypes.memmove(uid.internal, shared[0], 128)
    comm = ctypes.c_void_p()
    nccl("ncclCommInitRank", ctypes.byref(comm), world, uid, rank)
    wrong = 0

    def step(name, got, want):
        nonlocal wrong
        faulthandler.cancel_dump_traceback_later()
        torch.cuda.synchronize()
        bad = int((got.float() != want.float()).sum().item())
        wrong += bad
        print(f"rank {rank}: {name}: {bad} wrong", flush=True)
        faulthandler.dump_traceback_later(args.bound, exit=True)

    faulthandler.dump_traceback_later(args.bound, exit=True)
    print(f"rank {rank} of {world}: {args.library}, NCCL version {version.value}", flush=True)
    sizes = [8, 1000, 4096, 49380, 1 << 20]
    s = 4 << 20
    while s <= args.max_bytes:
        sizes.append(s)
        s *= 4
    for dtype, kind in NCCL_TYPES.items():
        for nbytes in sizes:
            n = max(1, nbytes // torch.tensor([], dtype=dtype).element_size())
            want_sum = sum(values(r, n, dtype) for r in range(world)).to(dtype)
            x = values(rank, n, dtype)
            nccl("ncclAllReduce", ptr(x), ptr(x), ctypes.c_size_t(n), kind, NCCL_SUM, comm, stream())
            step(f"all_reduce {dtype} {n}", x, want_sum)
            x = values(rank, n, dtype)
            out = torch.empty(n * world, dtype=dtype, device="cuda")
            nccl("ncclAllGather", ptr(x), ptr(out), ctypes.c_size_t(n), kind, comm, stream())
            step(f"all_gather {dtype} {n}", out, torch.cat([values(r, n, dtype) for r in range(world)]))
            big = torch.cat([values(rank, n, dtype, salt=q) for q in range(world)])
            out = torch.empty(n, dtype=dtype, device="cuda")
            nccl("ncclReduceScatter", ptr(big), ptr(out), ctypes.c_size_t(n), kind, NCCL_SUM, comm, stream())
            step(f"reduce_scatter {dtype} {n}", out, sum(values(r, n, dtype, salt=rank) for r in range(world)).to(dtype))
            root = world - 1
            x = values(rank, n, dtype)
            nccl("ncclBroadcast", ptr(x), ptr(x), ctypes.c_size_t(n), kind, root, comm, stream())
            step(f"broadcast {dtype} {n}", x, values(root, n, dtype))
    for nbytes in sizes:
        n = max(1, nbytes // 4)
        x, out = values(rank, n, torch.float32), torch.empty(n, device="cuda")
        nccl("ncclGroupStart")
        nccl("ncclSend", ptr(x), ctypes.c_size_t(n), 7, (rank + 1) % world, comm, stream())
        nccl("ncclRecv", ptr(out), ctypes.c_size_t(n), 7, (rank - 1) % world, comm, stream())
        nccl("ncclGroupEnd")
        step(f"send/recv ring {n}", out, values((rank - 1) % world, n, torch.float32))
    if not args.no_graph:
        n = 4096
        x = torch.empty(n, device="cuda")
        graph = torch.cuda.graph_pool_handle()
        g = torch.cuda.CUDAGraph()
        capture = torch.cuda.Stream()
        capture.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(capture):  # warm up on the capture stream, as vLLM does
            x.copy_(values(rank, n, torch.float32))
            nccl("ncclAllReduce", ptr(x), ptr(x), ctypes.c_size_t(n), 7, NCCL_SUM, comm, stream())
        torch.cuda.current_stream().wait_stream(capture)
        step("all_reduce before capture", x, sum(values(r, n, torch.float32) for r in range(world)))
        with torch.cuda.graph(g, pool=graph, stream=capture):
            nccl("ncclAllReduce", ptr(x), ptr(x), ctypes.c_size_t(n), 7, NCCL_SUM, comm, stream())
        for replay in range(3):
            x.copy_(values(rank, n, torch.float32, salt=replay))
            g.replay()
            step(f"graph replay {replay}", x, sum(values(r, n, torch.float32, salt=replay) for r in range(world)))
        # NCCL's ncclCommDestroy waits until every graph that captured one of its calls is gone.
        del g
        torch.cuda.synchronize()
    nccl("ncclCommDestroy", comm)
    faulthandler.cancel_dump_traceback_later()
    print(f"rank {rank}: {wrong} wrong", flush=True)
    dist.destroy_process_group()
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
