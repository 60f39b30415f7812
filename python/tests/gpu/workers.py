"""Code that runs in the processes the multi-process tests start (importable by spawn)."""

import gc
import os
import traceback

import torch
import torch.distributed as dist

import gpupeer
import gpupeer.torch
from reference import DTYPES, OPS, expected, output_for, rank_input

COUNT = 4096  # elements per rank: splits into chunks for every world size tested


def run_op(comm, op, x, out, root):
    if op == "all_reduce":
        return comm.all_reduce(x, out=out)
    if op == "all_gather":
        return comm.all_gather(x, out)
    if op == "reduce_scatter":
        return comm.reduce_scatter(x, out)
    if op == "broadcast":
        return comm.broadcast(x, out=out, root=root)
    if op == "reduce":
        return comm.reduce(x, out=out, root=root)
    if op == "all_to_all":
        return comm.all_to_all(x, out)
    raise ValueError(op)


def in_place_args(op, rank, world, dtype, device):
    """(input, output) arranged in place the NCCL way."""
    if op == "all_gather":
        out = output_for(op, COUNT, world, dtype, device)
        out[rank * COUNT:(rank + 1) * COUNT] = rank_input(rank, COUNT, dtype, device)
        return out[rank * COUNT:(rank + 1) * COUNT], out
    if op == "reduce_scatter":
        x = rank_input(rank, COUNT, dtype, device)
        chunk = COUNT // world
        return x, x[rank * chunk:(rank + 1) * chunk]
    x = rank_input(rank, COUNT, dtype, device)
    return x, None if op in ("all_reduce", "broadcast", "reduce") else output_for(op, COUNT, world, dtype, device)


def collectives(comm, rank, world, device):
    """Every collective, several dtypes, in and out of place; returns a list of failures."""
    failures, root = [], world - 1
    for dtype in DTYPES:
        for op in OPS:
            for in_place in (False, True):
                if in_place and op == "all_to_all":
                    continue  # NCCL has no in-place all-to-all either
                if in_place:
                    x, out = in_place_args(op, rank, world, dtype, device)
                else:
                    x, out = rank_input(rank, COUNT, dtype, device), output_for(op, COUNT, world, dtype, device)
                result = run_op(comm, op, x, out, root)
                torch.cuda.synchronize(device)
                want = expected(op, rank, world, COUNT, dtype, device, root=root)
                if op == "reduce" and rank != root:
                    continue  # only the root's output is defined
                if not torch.equal(result.flatten(), want):
                    failures.append("%s %s in_place=%s rank %d: got %s want %s" % (
                        op, dtype, in_place, rank, result.flatten()[:6].tolist(), want[:6].tolist()))
    # send/recv in a ring inside a group.
    x = rank_input(rank, COUNT, torch.float32, device)
    got = torch.zeros(COUNT, dtype=torch.float32, device=device)
    with comm.group():
        comm.send(x, peer=(rank + 1) % world)
        comm.recv(got, peer=(rank - 1) % world)
    torch.cuda.synchronize(device)
    if not torch.equal(got, rank_input((rank - 1) % world, COUNT, torch.float32, device)):
        failures.append("send/recv ring rank %d" % rank)
    comm.check_error()
    return failures


def graph_capture(comm, rank, world, device):
    """all_reduce captured in a CUDA graph with torch.cuda.graph, replayed twice."""
    x = rank_input(rank, COUNT, torch.float32, device)
    out = torch.empty_like(x)
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        comm.all_reduce(x, out=out)  # eager warm-up (allocations happen outside capture)
    torch.cuda.current_stream(device).wait_stream(side)
    torch.cuda.synchronize(device)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        comm.all_reduce(x, out=out)
    failures = []
    for replay in range(2):
        out.fill_(99)
        graph.replay()
        torch.cuda.synchronize(device)
        if not torch.equal(out, expected("all_reduce", rank, world, COUNT, torch.float32, device)):
            failures.append("graph replay %d rank %d: %s" % (replay, rank, out[:6].tolist()))
    comm.check_error()
    return failures


def registered(comm, rank, world, device):
    """all_reduce, all_gather and reduce_scatter on registered tensors of 2 MiB per rank, then
    the same tensors after deregistration. At this size registered calls still go through the
    scratch (registered buffers are read directly only where that is faster: from 32-64 MiB on
    2 ranks, src/ranks/zero_copy_rules.hpp); the direct path at every size is tested by the C++
    registered large calls, whose ranks set the threshold to 0."""
    count, failures = 512 * 1024, []
    x = rank_input(rank, count, torch.float32, device)
    outs = {op: output_for(op, count, world, torch.float32, device) for op in ("all_reduce", "all_gather",
                                                                            "reduce_scatter")}
    for t in [x] + list(outs.values()):
        comm.register_buffer(t)
    for phase in ("registered", "deregistered"):
        for op, out in outs.items():
            out.fill_(-1)
            run_op(comm, op, x, out, 0)
            torch.cuda.synchronize(device)
            want = expected(op, rank, world, count, torch.float32, device)
            if not torch.equal(out.flatten(), want):
                failures.append("%s %s rank %d: got %s want %s" % (phase, op, rank, out[:6].tolist(), want[:6].tolist()))
        if phase == "registered":
            for t in [x] + list(outs.values()):
                comm.deregister_buffer(t)
    comm.check_error()
    return failures


def registered_memory_kinds(comm, rank, world, device):
    """Registration of what torch users have, each checked by an all_gather of 32 MiB per rank
    and an all_reduce of 64 MiB on the registered tensors (sizes read directly on 2 ranks):
    tensors of the caching allocator, one inside a larger segment (cudaMalloc memory: CUDA IPC),
    tensors of a gpupeer.torch.mem_pool() and of expandable segments (cuMem memory: file
    descriptors). Returns the failures."""
    failures, count = [], 8 * 1024 * 1024

    def check(kind, want, make):
        x, gathered, summed = make()
        for t in (x, gathered, summed):
            how = comm.register_buffer(t)
            if how != want:
                failures.append("%s rank %d: registered by %r, expected %r" % (kind, rank, how, want))
        summed.copy_(rank_input(rank, 2 * count, torch.float32, device))
        comm.all_gather(x, gathered)
        comm.all_reduce(summed)
        torch.cuda.synchronize(device)
        for op, got, n in (("all_gather", gathered, count), ("all_reduce", summed, 2 * count)):
            want_values = expected(op, rank, world, n, torch.float32, device)
            if not torch.equal(got, want_values):
                wrong = int((got != want_values).sum())
                failures.append("%s %s rank %d: %d wrong elements" % (kind, op, rank, wrong))
        for t in (x, gathered, summed):
            comm.deregister_buffer(t)
        comm.check_error()

    def tensors():
        return (rank_input(rank, count, torch.float32, device),
                torch.empty(world * count, dtype=torch.float32, device=device),
                torch.empty(2 * count, dtype=torch.float32, device=device))

    def inside_a_segment():
        big = torch.empty(world * count + 4 * count + 2 * count + 1024, dtype=torch.float32, device=device)
        x = big[1024:1024 + count]
        x.copy_(rank_input(rank, count, torch.float32, device))
        return x, big[2 * count:2 * count + world * count], big[-2 * count:]

    check("caching allocator", "cuda-ipc", tensors)
    check("caching allocator, inside one segment", "cuda-ipc", inside_a_segment)
    pool = gpupeer.torch.mem_pool()
    with torch.cuda.use_mem_pool(pool):
        made = tensors()
    check("gpupeer.torch.mem_pool", "cumem-fd", lambda: made)
    del made
    torch.cuda.memory._set_allocator_settings("expandable_segments:True")
    torch.cuda.empty_cache()  # else the cached cudaMalloc segments of the checks above serve them
    try:
        check("expandable segments", "cumem-fd", tensors)
    finally:
        torch.cuda.memory._set_allocator_settings("expandable_segments:False")
    return failures


def compiled(comm, rank, world, device):
    """gpupeer's all_reduce inside torch.compile(fullgraph=True): no graph break."""
    key = gpupeer.torch.register(comm)

    def step(x):
        return gpupeer.torch.all_reduce(x * 2, key, in_place=False) + 1

    fn = torch.compile(step, fullgraph=True)
    x = rank_input(rank, COUNT, torch.float32, device)
    got = fn(x)
    torch.cuda.synchronize(device)
    want = expected("all_reduce", rank, world, COUNT, torch.float32, device) * 2 + 1
    return [] if torch.equal(got, want) else ["torch.compile rank %d: %s" % (rank, got[:6].tolist())]


def worker(rank, world, init_method, how, results):
    """One rank: joins by gpupeer.init (a unique id in a file), through a gloo process group
    (every process on GPU 0) or through an NCCL process group (one GPU per process), then runs
    the checks; puts (rank, failures) on `results`."""
    try:
        nccl = how == "process_group_nccl"
        device = rank if nccl else 0  # NCCL takes one GPU per rank; the others share GPU 0
        torch.cuda.set_device(device)
        dist.init_process_group("nccl" if nccl else "gloo", init_method=init_method, rank=rank, world_size=world)
        if how == "unique_id":
            blob = [gpupeer.get_unique_id() if rank == 0 else None]
            dist.broadcast_object_list(blob, src=0)
            comm = gpupeer.init(rank, world, blob[0], device=device)
        else:
            comm = gpupeer.torch.init_from_process_group()
            # Registration calls the all-gather given at start-up again: nothing may have
            # collected it meanwhile.
            gc.collect()
        failures = collectives(comm, rank, world, device)
        failures += graph_capture(comm, rank, world, device)
        failures += registered(comm, rank, world, device)
        failures += registered_memory_kinds(comm, rank, world, device)
        if how != "unique_id":
            failures += compiled(comm, rank, world, device)
        dist.barrier()
        comm.destroy()
        dist.destroy_process_group()
        results.put((rank, failures))
    except Exception:
        results.put((rank, [traceback.format_exc()]))
