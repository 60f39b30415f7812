"""One process driving several GPUs: gpupeer.Communicator on torch tensors (needs 2 GPUs)."""

from gpu_env import gpus, torch  # noqa: F401  (first: skips without torch or CUDA)

import pytest

import gpupeer
from reference import DTYPES, OPS, expected, output_for, rank_input

pytestmark = pytest.mark.skipif(gpus() < 2, reason="needs 2 GPUs")
COUNT = 8192


@pytest.fixture(scope="module")
def comm():
    c = gpupeer.Communicator(devices=[0, 1])
    yield c
    c.destroy()


def call(comm, op, xs, outs, root):
    if op == "all_reduce":
        return comm.all_reduce(xs, outs)
    if op == "all_gather":
        return comm.all_gather(xs, outs)
    if op == "reduce_scatter":
        return comm.reduce_scatter(xs, outs)
    if op == "broadcast":
        return comm.broadcast(xs, outs, root=root)
    if op == "reduce":
        return comm.reduce(xs, outs, root=root)
    return comm.all_to_all(xs, outs)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("in_place", [False, True], ids=["out_of_place", "in_place"])
def test_every_collective(comm, op, dtype, in_place):
    world, root = 2, 1
    if in_place and op not in ("all_reduce", "broadcast", "reduce"):
        pytest.skip("in place by views is covered by the process tests")
    xs = [rank_input(r, COUNT, dtype, "cuda:%d" % r) for r in range(world)]
    outs = None if in_place else [output_for(op, COUNT, world, dtype, "cuda:%d" % r) for r in range(world)]
    results = call(comm, op, xs, outs, root)
    for r in range(world):
        torch.cuda.synchronize(r)
        if op == "reduce" and r != root:
            continue
        assert torch.equal(results[r].flatten(), expected(op, r, world, COUNT, dtype, "cuda:%d" % r, root=root)), (op, r)


def test_send_recv_shifts_by_one(comm):
    xs = [rank_input(r, COUNT, torch.float32, "cuda:%d" % r) for r in range(2)]
    outs = [torch.zeros(COUNT, device="cuda:%d" % r) for r in range(2)]
    comm.send_recv(xs, outs)
    for r in range(2):
        torch.cuda.synchronize(r)
        assert torch.equal(outs[(r + 1) % 2].cpu(), xs[r].cpu())


def test_tensors_on_the_wrong_gpu_are_refused(comm):
    xs = [torch.ones(4, device="cuda:1"), torch.ones(4, device="cuda:0")]
    with pytest.raises(ValueError, match=r"tensors\[0\]: on GPU 1, rank 0 is GPU 0"):
        comm.all_reduce(xs)


def test_cpu_and_strided_tensors_are_refused(comm):
    with pytest.raises(TypeError, match=r"tensors\[0\]: a CUDA tensor is needed"):
        comm.all_reduce([torch.ones(4), torch.ones(4, device="cuda:1")])
    strided = [torch.ones(8, device="cuda:%d" % r)[::2] for r in range(2)]
    with pytest.raises(ValueError, match="not contiguous"):
        comm.all_reduce(strided)


def test_captured_in_one_graph_across_both_gpus(comm):
    """Capture on GPU 0's stream, fork GPU 1's stream from it with events (what the C++
    communicator documents), replay twice."""
    xs = [rank_input(r, COUNT, torch.float32, "cuda:%d" % r) for r in range(2)]
    outs = [torch.empty_like(x) for x in xs]
    streams = [torch.cuda.Stream(r) for r in range(2)]
    comm.all_reduce(xs, outs, streams=streams)  # warm-up
    for r in range(2):
        torch.cuda.synchronize(r)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.device(0), torch.cuda.graph(graph, stream=streams[0]):
        fork = torch.cuda.Event()
        fork.record(streams[0])
        streams[1].wait_event(fork)
        comm.all_reduce(xs, outs, streams=streams)
        join = torch.cuda.Event()
        join.record(streams[1])
        streams[0].wait_event(join)
    for _ in range(2):
        for o in outs:
            o.fill_(99)
        graph.replay()
        for r in range(2):
            torch.cuda.synchronize(r)
            assert torch.equal(outs[r], expected("all_reduce", r, 2, COUNT, torch.float32, "cuda:%d" % r))
