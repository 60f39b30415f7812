#!/usr/bin/env python3
"""A torch.distributed program (NCCL backend, one process per GPU) that knows nothing of gpupeer.

Run under torchrun as is, then with LD_PRELOAD naming libgpupeer_nccl.so: every collective at
sizes from 8 B up, send/receive in a ring, subgroups from new_group, an all-reduce captured in a
torch.cuda.graph and a few DDP training steps. Rank 0 writes one JSON line per check (name,
whether every element had the value it must have, and a digest of the result) and per timing;
compare_torch_runs.py tells whether two runs agree.
"""
import argparse
import hashlib
import json
import os
import sys

import torch
import torch.distributed as dist


def digest(t):
    return hashlib.sha256(t.detach().float().cpu().numpy().tobytes()).hexdigest()[:16]


def values(rank, n, dtype, offset=0):
    # Small integers: exact in every dtype used here, whatever the order of the sums.
    i = torch.arange(offset, offset + n, device="cuda", dtype=torch.int64)
    return ((rank + 1) * 3 + i % 29).to(dtype)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON lines written by rank 0")
    parser.add_argument("--max-bytes", type=int, default=64 << 20)
    parser.add_argument("--timing-iters", type=int, default=20)
    args = parser.parse_args()
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    records = []

    def check(name, got, want):
        ok = bool(torch.equal(got.float(), want.float()))
        flags = torch.tensor([0 if ok else 1], device="cuda")
        dist.all_reduce(flags)  # every rank's verdict
        records.append({"check": name, "ok": int(flags.item()) == 0, "digest": digest(got)})

    sizes = [8, 12, 1000, 4096, 49380, 1 << 20, (3 << 20) + 24]
    s = 16 << 20
    while s <= args.max_bytes:
        sizes.append(s)
        s *= 4
    for dtype in (torch.float32, torch.bfloat16):
        es = torch.tensor([], dtype=dtype).element_size()
        for size in sizes:
            n = max(world, size // es // world * world)  # divisible by the rank count
            tag = f"{str(dtype).split('.')[-1]} {n * es} B"
            x = values(rank, n, dtype)
            want = sum(values(r, n, dtype).float() for r in range(world))
            y = x.clone()
            dist.all_reduce(y)
            check(f"all_reduce {tag}", y, want)
            y = x.clone()
            dist.all_reduce(y, op=dist.ReduceOp.MAX)
            check(f"all_reduce max {tag}", y, values(world - 1, n, dtype))
            part = n // world
            out = torch.empty(n, device="cuda", dtype=dtype)
            dist.all_gather_into_tensor(out, x[:part])
            check(f"all_gather {tag}", out, torch.cat([values(r, part, dtype) for r in range(world)]))
            rs = torch.empty(part, device="cuda", dtype=dtype)
            dist.reduce_scatter_tensor(rs, x)
            check(f"reduce_scatter {tag}", rs, want[rank * part:(rank + 1) * part])
            root = n % world
            y = x.clone()
            dist.broadcast(y, src=root)
            check(f"broadcast {tag}", y, values(root, n, dtype))
            y = x.clone()
            dist.reduce(y, dst=root)
            if rank == root:
                check(f"reduce {tag}", y, want)
            else:
                check(f"reduce {tag}", y, y)  # only the root's result is defined
            a2a = torch.empty(n, device="cuda", dtype=dtype)
            dist.all_to_all_single(a2a, x)
            check(f"alltoall {tag}", a2a,
                  torch.cat([values(r, n, dtype)[rank * part:(rank + 1) * part] for r in range(world)]))
            got = torch.empty(n, device="cuda", dtype=dtype)
            ops = [dist.P2POp(dist.isend, x, (rank + 1) % world), dist.P2POp(dist.irecv, got, (rank - 1) % world)]
            for w in dist.batch_isend_irecv(ops):
                w.wait()
            check(f"sendrecv {tag}", got, values((rank - 1) % world, n, dtype))

    # Subgroups, as tensor and pipeline parallelism make them.
    evens = dist.new_group([r for r in range(world) if r % 2 == 0])
    odds = dist.new_group([r for r in range(world) if r % 2 == 1])
    mine = evens if rank % 2 == 0 else odds
    members = [r for r in range(world) if r % 2 == rank % 2]
    for n in (16, 1 << 20):
        y = values(rank, n, torch.float32)
        dist.all_reduce(y, group=mine)
        check(f"subgroup all_reduce {n * 4} B", y, sum(values(r, n, torch.float32) for r in members))

    # An all-reduce captured in a CUDA graph and replayed.
    n = 1 << 18
    static = values(rank, n, torch.float32)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            warm = static.clone()
            dist.all_reduce(warm)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        dist.all_reduce(static)
    static.copy_(values(rank, n, torch.float32))
    graph.replay()
    torch.cuda.synchronize()
    check("graph all_reduce 1 MiB", static, sum(values(r, n, torch.float32) for r in range(world)))

    # A few DDP steps on identical data: the parameters must come out alike everywhere.
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 16)).cuda()
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.125)
    g = torch.Generator(device="cuda").manual_seed(1 + rank)
    for _ in range(3):
        data = torch.randint(-4, 5, (64, 256), device="cuda", generator=g).float() / 4
        loss = ddp(data).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    every = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(every, flat)
    ok = all(torch.equal(every[0], e) for e in every)
    records.append({"check": "ddp parameters equal on every rank", "ok": ok, "digest": None})

    # Timings: all-reduce of float32, eager, per size.
    for size in [8, 4096, 1 << 20, 16 << 20, args.max_bytes]:
        n = max(1, size // 4)
        x = values(rank, n, torch.float32)
        for _ in range(3):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        dist.barrier()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(args.timing_iters):
            dist.all_reduce(x)
        end.record()
        torch.cuda.synchronize()
        us = start.elapsed_time(end) * 1000 / args.timing_iters
        t = torch.tensor([us], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        records.append({"timing": "all_reduce float32 eager", "bytes": n * 4, "us": round(float(t.item()), 2)})

    if rank == 0:
        with open(args.out, "w", encoding="utf-8") as f:
            for r in records:
                f.write(json.dumps({**r, "ranks": world, "preloaded": os.environ.get("LD_PRELOAD", "")}) + "\n")
        bad = [r["check"] for r in records if r.get("ok") is False]
        print(f"{len(records)} records, {len(bad)} failed checks" + (f": {bad[:5]}" if bad else ""))
    dist.barrier()
    # Not destroy_process_group: with torch 2.11 and NCCL 2.28.9 alone it hung in teardown for
    # minutes after every check had passed; the program's answer is written by then.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    raise SystemExit(main())
