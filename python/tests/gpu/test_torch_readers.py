"""The two readers of torch tensors on real torch: gpupeer._torchcall (at::Tensor read in C++,
built by python/csrc/build_torchcall.py, which ctest's python_gpu runs first) and gpupeer._fastcall
(torch's methods called from C). Against a C function that records what it is handed: the
pointer, count, type and the current stream, on the default and on a side stream; the same
calls declined by both; and a real one-rank all-reduce through each."""

from gpu_env import torch  # noqa: F401  (first: skips without torch or CUDA)

import pytest

import gpupeer
from gpupeer import _ops, _tensors
from recorder import address, build_recorder


@pytest.fixture(scope="module")
def solo():
    torch.cuda.set_device(0)
    comm = gpupeer.init(0, 1, gpupeer.get_unique_id(), device=0)
    comm.all_reduce(torch.ones(2, device="cuda:0"))  # sets up the C path for torch tensors
    yield comm
    comm.destroy()


def readers(solo):
    """{name: module} of the readers present here, each set up for this torch."""
    out = {}
    if _tensors.torch_call_path == "_torchcall":
        out["_torchcall"] = _tensors.torch_fast_module()
    fastcall = _tensors.fastcall_for_torch(torch)
    if fastcall is not None:
        out["_fastcall"] = fastcall
    return out


def test_torchcall_is_taken_where_it_was_built(solo):
    if _tensors.torch_call_path != "_torchcall" and "not built" in (_tensors.torch_call_skipped or ""):
        pytest.skip(_tensors.torch_call_skipped)
    assert _tensors.torch_call_path == "_torchcall", _tensors.torch_call_skipped


@pytest.mark.parametrize("dtype,code", [("float32", 0), ("float16", 1), ("bfloat16", 2), ("int64", 7)])
def test_each_reader_hands_c_the_tensor_and_the_current_stream(solo, tmp_path, dtype, code):
    lib = build_recorder(tmp_path)
    x = torch.zeros(12, dtype=getattr(torch, dtype), device="cuda:0")
    out = torch.zeros(12, dtype=x.dtype, device="cuda:0")
    side = torch.cuda.Stream(device=0)
    state = (address(lib), _ops.ELEMENTS_FUNCTION, 0x1234, 0, 3, 0x99)
    for name, module in readers(solo).items():
        run = module.torch_run
        for stream in (torch.cuda.current_stream(0), side):
            with torch.cuda.stream(stream):
                assert run(state, 0, x, out, 4, 0) == 0, name
            got = list(lib.recorded()[:10])
            assert got == [0x1234, 0, x.data_ptr(), out.data_ptr(), 12, code, 4, 0, stream.cuda_stream, 0x99], name
            with torch.cuda.stream(stream):
                assert run(state, 2, x, torch.zeros(4, dtype=x.dtype, device="cuda:0"), 0, 0) == 0, name
            assert list(lib.recorded()[:10])[4] == 4, name  # reduce-scatter: 12 split over 3 ranks


def test_both_readers_decline_the_same_calls(solo, tmp_path):
    lib = build_recorder(tmp_path)
    state = (address(lib), _ops.ELEMENTS_FUNCTION, 0x1234, 0, 2, 0)
    x = torch.zeros(8, device="cuda:0")
    declined = [
        (0, x[::2], None),  # not contiguous
        (0, torch.zeros(8), None),  # on the host
        (0, torch.zeros(8, dtype=torch.complex64, device="cuda:0"), None),  # no such type in the library
        (0, x.as_subclass(type("Sub", (torch.Tensor,), {})), None),  # a subclass may read differently
        (0, x, torch.zeros(8, dtype=torch.float16, device="cuda:0")),  # types differ
        (1, x, torch.zeros(15, device="cuda:0")),  # all-gather's output is not ranks x the input
        (2, torch.zeros(7, device="cuda:0"), torch.zeros(3, device="cuda:0")),  # 7 does not split in 2
        (0, [1.0], None),  # not a tensor
    ]
    if torch.cuda.device_count() > 1:
        declined.append((0, torch.zeros(8, device="cuda:1"), None))  # not the communicator's GPU
    for name, module in readers(solo).items():
        for op, tensor, out in declined:
            assert module.torch_run(state, op, tensor, out, 0, 0) is None, (name, op, tensor, out)
    assert lib.recorded_calls() == 0


def test_a_real_all_reduce_through_each_reader(solo):
    x = torch.arange(1000, dtype=torch.float32, device="cuda:0")
    for name, module in readers(solo).items():
        saved = solo._fast
        solo._fast = (module.torch_run, saved[1])
        try:
            out = torch.full_like(x, -1.0)
            assert solo.all_reduce(x, out) is out
            torch.cuda.synchronize()
            assert torch.equal(out, x), name
        finally:
            solo._fast = saved


def test_each_reader_hands_c_a_tensor_per_rank_and_each_gpus_stream(solo, tmp_path):
    lib = build_recorder(tmp_path)
    devices = tuple(range(min(torch.cuda.device_count(), 2)))
    lib.set_list_ranks(len(devices))
    xs = [torch.zeros(10, dtype=torch.bfloat16, device="cuda:%d" % d) for d in devices]
    outs = [torch.zeros(10 * len(devices), dtype=torch.bfloat16, device="cuda:%d" % d) for d in devices]
    state = (address(lib, "gpupeer_comm_run"), _ops.ELEMENTS_FUNCTION, 0x1234, devices, 0x99)
    side = torch.cuda.Stream(device=0)
    for name, module in readers(solo).items():
        with torch.cuda.stream(side):  # GPU 0's current stream; GPU 1 keeps its own
            assert module.torch_run_many(state, 1, xs, outs, 0, 0) == 0, name
        lists = lib.recorded_lists()
        arrays = [[lists[k * 8 + i] for i in range(len(devices))] for k in range(3)]
        streams = [side.cuda_stream] + [torch.cuda.current_stream(d).cuda_stream for d in devices[1:]]
        assert arrays == [[x.data_ptr() for x in xs], [o.data_ptr() for o in outs], streams], name
        assert list(lib.recorded()[:10])[4:6] == [10, 2], name  # the count per rank, bfloat16
        if len(devices) > 1:  # each tensor must be on its rank's GPU
            assert module.torch_run_many(state, 1, xs[::-1], outs, 0, 0) is None, name
