#!/usr/bin/env python3
"""All-reduce from PyTorch, one process per GPU, by gpupeer and by the two things a PyTorch user
has instead, measured in the same run on the same GPUs:

  gpupeer        gpupeer.torch.init_from_process_group(), comm.all_reduce(x) in place, x from
                 PyTorch's caching allocator (through gpupeer's scratch)
  gpupeer_reg    the same on a slice of a buffer registered once (comm.register_buffer): the
                 peers read and write it directly where that is faster (2 GPUs: from 64 MiB)
  nccl           torch.distributed.all_reduce(x) (the NCCL process group)
  symm_one_shot  torch.ops.symm_mem.one_shot_all_reduce on a SymmetricMemory buffer
  symm_two_shot  torch.ops.symm_mem.two_shot_all_reduce_ on a SymmetricMemory buffer, in place

Each library, data type (bf16, fp32), mode (eager; graph: 20 calls captured in one CUDA graph,
replayed 10 times) and size (8 B to --max by factors of 4, plus an odd size): time per call
from CUDA events on the rank's stream after a barrier, the slowest rank's; then one more call on
inputs no timed call used, every element checked against the exact sum (small integers, exact
in both types). A wrong element makes the run exit 1. NVLink multicast stays off
(NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1). SymmetricMemory's one-shot kernel is
timed up to --symm-one-shot-max (it moves every byte to every peer).

Prints a table and writes one JSON object per line to --out (commit, date, machine, command,
library, dtype, mode, bytes, us, busbw_gbs, wrong; every library's row of a size measured in
the same run).

    python3 bench/torch_collectives.py [--gpus N] [--max 256M] [--dtypes bf16,fp32] [--out FILE]
"""

import argparse
import datetime
import json
import os
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

LIBRARIES = ("gpupeer", "gpupeer_reg", "nccl", "symm_one_shot", "symm_two_shot")
DTYPES = {"bf16": "bfloat16", "fp32": "float32"}
ITERS, WARMUP, REPLAYS = 20, 5, 10


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def sizes_up_to(largest):
    sizes, b = [largest], 8
    while b <= largest:
        sizes.append(b)
        b *= 4
    sizes.append(3 * (1 << 20) + 24)  # not a power of two, not a multiple of every rank count's chunk
    return sorted(set(sizes))


def bus_bandwidth(nbytes, us, world):
    return nbytes / (us * 1e-6) / 1e9 * 2 * (world - 1) / world if us > 0 else 0.0


class Runner:
    """One rank: the libraries' calls on this rank's GPU, timed and checked."""

    def __init__(self, torch, dist, rank, world, largest):
        import gpupeer.torch
        import torch.distributed._symmetric_memory as symm_mem

        self.torch, self.dist, self.rank, self.world = torch, dist, rank, world
        self.device = torch.device("cuda", rank)
        self.stream = torch.cuda.Stream(self.device)
        self.comm = gpupeer.torch.init_from_process_group()
        self.group = dist.group.WORLD.group_name
        self.symm = {}
        self.registered = {}
        self.largest = largest
        self.symm_mem = symm_mem

    def symmetric(self, dtype):
        """This rank's SymmetricMemory buffer of `dtype`, made (collectively) on first use."""
        if dtype not in self.symm:
            t = self.torch
            buf = self.symm_mem.empty(self.largest // t.tensor([], dtype=dtype).element_size() + 64, dtype=dtype,
                                      device=self.device)
            self.symm_mem.rendezvous(buf, self.group)
            self.symm[dtype] = buf
        return self.symm[dtype]

    def registered_buffer(self, dtype):
        """This rank's buffer of `dtype` registered with gpupeer, made (collectively) on first use."""
        if dtype not in self.registered:
            t = self.torch
            buf = t.empty(self.largest // t.tensor([], dtype=dtype).element_size() + 64, dtype=dtype,
                          device=self.device)
            self.comm.register_buffer(buf)
            self.registered[dtype] = buf
        return self.registered[dtype]

    def tensor(self, library, dtype, count):
        if library.startswith("symm"):
            return self.symmetric(dtype)[:count]
        if library == "gpupeer_reg":
            return self.registered_buffer(dtype)[:count]
        return self.torch.empty(count, dtype=dtype, device=self.device)

    def call(self, library, x):
        t = self.torch
        if library.startswith("gpupeer"):
            self.comm.all_reduce(x)
            return x
        if library == "nccl":
            self.dist.all_reduce(x)
            return x
        if library == "symm_one_shot":
            return t.ops.symm_mem.one_shot_all_reduce(x, "sum", self.group)
        t.ops.symm_mem.two_shot_all_reduce_(x, "sum", self.group)
        return x

    def fill(self, x, salt):
        """Rank r's input of `salt`: small integers whose sum over the ranks is exact."""
        t = self.torch
        i = t.arange(x.numel(), device=self.device, dtype=t.int64)
        x.copy_(((i * 7 + self.rank * 13 + salt * 5) % 17 - 8).to(x.dtype))

    def expected(self, count, dtype, salt):
        t = self.torch
        i = t.arange(count, device=self.device, dtype=t.int64)
        total = sum(((i * 7 + r * 13 + salt * 5) % 17 - 8) for r in range(self.world))
        return total.to(dtype)

    def slowest(self, value):
        v = self.torch.tensor([value], device=self.device, dtype=self.torch.float64)
        self.dist.all_reduce(v, op=self.dist.ReduceOp.MAX)
        return float(v.item())

    def time_call(self, library, x, graph):
        """Microseconds per call (this rank's stream), zeros in x so that repeated sums stay finite."""
        t = self.torch
        x.zero_()
        with t.cuda.stream(self.stream):
            for _ in range(WARMUP):
                self.call(library, x)
            self.stream.synchronize()
            start, stop = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            calls = ITERS
            if graph:
                g = t.cuda.CUDAGraph()
                with t.cuda.graph(g, stream=self.stream):
                    for _ in range(ITERS):
                        self.call(library, x)
                g.replay()
                self.stream.synchronize()
                self.dist.barrier()
                start.record(self.stream)
                for _ in range(REPLAYS):
                    g.replay()
                stop.record(self.stream)
                calls = ITERS * REPLAYS
            else:
                self.dist.barrier()
                start.record(self.stream)
                for _ in range(ITERS):
                    self.call(library, x)
                stop.record(self.stream)
            self.stream.synchronize()
        return start.elapsed_time(stop) * 1000.0 / calls

    def wrong_after(self, library, x, dtype, salt):
        """Elements wrong in one call on fresh inputs (salt no timed call used)."""
        t = self.torch
        self.fill(x, salt)
        t.cuda.synchronize(self.device)
        with t.cuda.stream(self.stream):
            out = self.call(library, x)
        self.stream.synchronize()
        return int((out.float() != self.expected(x.numel(), dtype, salt).float()).sum().item())

    def measure(self, library, dtype, nbytes, graph, salt):
        count = max(1, nbytes // self.torch.tensor([], dtype=dtype).element_size())
        try:
            x = self.tensor(library, dtype, count)
            us = self.time_call(library, x, graph)
            wrong = self.wrong_after(library, x, dtype, salt)
            error = ""
        except Exception as e:  # a library that refuses a size is a row, not the end of the run
            us, wrong, error = 0.0, 0, "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:160])
            self.torch.cuda.synchronize(self.device)
        failed = self.slowest(1.0 if error else 0.0)
        us = self.slowest(us)
        wrong = int(self.slowest(float(wrong)))
        return {"count": count, "us": us, "wrong": wrong, "error": error if failed else ""}


def worker(rank, world, port, args, queue):
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world,
                           device_id=torch.device("cuda", rank))
    runner = Runner(torch, dist, rank, world, args.max)
    rows, salt = [], 0
    for name in args.dtypes:
        dtype = getattr(torch, DTYPES[name])
        for nbytes in sizes_up_to(args.max):
            for graph in (False, True):
                for library in LIBRARIES:
                    if library == "symm_one_shot" and nbytes > args.symm_one_shot_max:
                        continue
                    salt = salt % 16 + 1
                    r = runner.measure(library, dtype, nbytes, graph, salt)
                    r.update(library=library, dtype=name, mode="graph" if graph else "eager", bytes=nbytes)
                    rows.append(r)
                    if rank == 0:
                        print("%-13s %-4s %-5s %11d  %10.2f us  %7.1f GB/s  wrong %d %s" % (
                            library, name, r["mode"], nbytes, r["us"], bus_bandwidth(nbytes, r["us"], world),
                            r["wrong"], r["error"]), flush=True)
    dist.barrier()
    for buf in runner.registered.values():
        runner.comm.deregister_buffer(buf)
    runner.comm.destroy()
    dist.destroy_process_group()
    if rank == 0:
        queue.put(rows)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def machine_name(torch, world):
    model = torch.cuda.get_device_name(0).replace("NVIDIA ", "").split()[0].lower()
    return "%sx%d" % (model, world)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpus", type=int, default=0, help="processes, one per GPU (default: every GPU)")
    p.add_argument("--max", default="256M", help="largest size in bytes (default 256M)")
    p.add_argument("--dtypes", default="bf16,fp32", help="bf16, fp32 or both (default)")
    p.add_argument("--symm-one-shot-max", default="16M", help="largest size for SymmetricMemory's one-shot kernel")
    p.add_argument("--out", default="", help="JSON lines file (default: none)")
    args = p.parse_args()
    args.max = parse_size(args.max)
    args.symm_one_shot_max = parse_size(args.symm_one_shot_max)
    args.dtypes = [d for d in args.dtypes.split(",") if d]
    for d in args.dtypes:
        if d not in DTYPES:
            p.error("--dtypes: %s is not bf16 or fp32" % d)
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    import torch
    import torch.multiprocessing as mp

    world = args.gpus or torch.cuda.device_count()
    if world < 2:
        sys.exit("torch_collectives: needs 2 GPUs or more, %d visible" % torch.cuda.device_count())
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=worker, args=(r, world, port, args, queue)) for r in range(world)]
    for proc in procs:
        proc.start()
    rows = queue.get(timeout=3600)
    for proc in procs:
        proc.join(timeout=120)
    if any(proc.exitcode != 0 for proc in procs):
        sys.exit("torch_collectives: a rank failed (exit codes %s)" % [proc.exitcode for proc in procs])
    # GPUPEER_COMMIT first: a checkout carried to another machine may hold a .git of another commit.
    commit = os.environ.get("GPUPEER_COMMIT", "")
    if not commit:
        try:
            commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True,
                                    text=True).stdout.strip()
        except OSError:
            pass
    meta = {"commit": commit, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": machine_name(torch, world), "command": " ".join(sys.argv), "torch": torch.__version__,
            "world": world}
    if args.out:
        with open(args.out, "w") as f:
            for r in rows:
                f.write(json.dumps(dict(meta, busbw_gbs=round(bus_bandwidth(r["bytes"], r["us"], world), 2), **r)) + "\n")
    wrong = sum(r["wrong"] for r in rows)
    print("torch_collectives: %d rows, %d wrong elements, %d errors" % (
        len(rows), wrong, sum(1 for r in rows if r["error"])))
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
