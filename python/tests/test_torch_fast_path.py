"""The eager call on torch tensors read in C (python/csrc/fastcall.cpp's torch_run, and the checks it
shares with python/csrc/torchcall.cpp in tensor_call.hpp), against a stand-in
torch module and a C function that records what it was called with: every argument reaches C as
the Python path would pass it, and every call it declines is answered by the Python path's
error."""

import ctypes
import sys
import types

import pytest

import gpupeer
from fake_arrays import detached_rank_comm
from recorder import address, build_recorder
from gpupeer import _lib, _ops, _tensors, communicator, rank

if _lib._fastcall is None or not hasattr(_lib._fastcall, "torch_run"):
    pytest.skip("gpupeer._fastcall is not built (CPython headers missing)", allow_module_level=True)



class Dtype:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


class Tensor:
    """What torch_run reads of a torch.Tensor."""

    def __init__(self, count, dtype="float32", device=0, ptr=0x7F0000001000, contiguous=True, cuda=True):
        self.dtype = getattr(FAKE_TORCH, dtype)
        self.is_cuda, self.device = cuda, "cuda:%d" % device if cuda else "cpu"
        self._count, self._device, self._ptr, self._contiguous = count, device, ptr, contiguous

    def is_contiguous(self):
        return self._contiguous

    def data_ptr(self):
        return self._ptr

    def numel(self):
        return self._count

    def get_device(self):
        return self._device if self.is_cuda else -1  # torch's answer for host tensors

    def stride(self):
        return (2,)


FAKE_TORCH = types.ModuleType("torch")
for _name in ("float32", "float16", "bfloat16", "float64", "int8", "uint8", "int32", "int64"):
    setattr(FAKE_TORCH, _name, Dtype(_name))
FAKE_TORCH.complex64 = Dtype("complex64")
FAKE_TORCH.Tensor = Tensor
FAKE_TORCH.nn = types.SimpleNamespace(Parameter=type("Parameter", (Tensor,), {}))
STREAM_BASE = 0x5000
FAKE_TORCH._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: STREAM_BASE + device)


@pytest.fixture
def recorder(tmp_path, monkeypatch):
    lib = build_recorder(tmp_path)
    monkeypatch.setitem(sys.modules, "torch", FAKE_TORCH)
    monkeypatch.setattr(_tensors, "_torch_fast_module", None)
    monkeypatch.setenv("GPUPEER_NO_TORCHCALL", "1")  # _fastcall's reader is the one under test here
    monkeypatch.setattr(_tensors, "_torch_dtype_codes", {})
    monkeypatch.setattr(_tensors, "_torch_stream", None)
    monkeypatch.setattr(rank, "_RUN", address(lib))
    monkeypatch.setattr(rank, "_call", _lib._fastcall.run10)
    yield lib
    _tensors._EXTRACTORS.pop(Tensor, None)
    for comm in LIVE:  # their handle is made up: nothing to destroy
        comm._handle = None
    LIVE.clear()


LIVE = []


def live_comm(world_size=2, device=0):
    """A communicator whose handle passes the Python path's checks (the recorder ignores it)."""
    comm = detached_rank_comm(world_size=world_size, device=device)
    comm._handle = 0x1234
    LIVE.append(comm)
    return comm


def call_of(lib):
    return list(lib.recorded()[:10])


def test_every_operation_reaches_c_with_the_python_paths_arguments(recorder):
    comm = live_comm(world_size=2, device=1)
    x, gathered = Tensor(8, "bfloat16", device=1, ptr=0x10000), Tensor(16, "bfloat16", device=1, ptr=0x20000)
    half, shuffled = Tensor(4, "bfloat16", device=1, ptr=0x30000), Tensor(8, "bfloat16", device=1, ptr=0x40000)
    cases = [  # call, what it returns, (op, send, recv, count, redop, root) as C receives them
        (lambda: comm.all_reduce(x), x, (0, 0x10000, 0x10000, 8, 0, 0)),
        (lambda: comm.all_reduce(x, op="max"), x, (0, 0x10000, 0x10000, 8, 3, 0)),
        (lambda: comm.all_gather(x, gathered), gathered, (1, 0x10000, 0x20000, 8, 0, 0)),
        (lambda: comm.reduce_scatter(x, half, op="avg"), half, (2, 0x10000, 0x30000, 4, 4, 0)),
        (lambda: comm.broadcast(x, root=1), x, (3, 0x10000, 0x10000, 8, 0, 1)),
        (lambda: comm.reduce(x, op="min", root=1), x, (4, 0x10000, 0x10000, 8, 2, 1)),
        (lambda: comm.all_to_all(x, shuffled), shuffled, (5, 0x10000, 0x40000, 4, 0, 0)),
    ]
    for calls, (call, returned, (op, send, recv, count, redop, root)) in enumerate(cases, start=1):
        assert call() is returned
        assert recorder.recorded_calls() == calls
        assert call_of(recorder) == [0x1234, op, send, recv, count, _tensors.BFLOAT16, redop, root, STREAM_BASE + 1,
                                     comm._err.address]
    assert comm._fast, "the calls above took the C path"


def test_what_c_declines_gets_the_python_paths_error_and_nothing_is_called(recorder):
    comm = live_comm(world_size=2)
    cases = [
        (lambda: comm.all_reduce(Tensor(4, contiguous=False)), ValueError, "tensor: not contiguous"),
        (lambda: comm.all_reduce(Tensor(4, cuda=False)), TypeError, "tensor: a CUDA tensor is needed, this one is on cpu"),
        (lambda: comm.all_reduce(Tensor(4, "complex64")), TypeError, "tensor: element type torch.complex64"),
        (lambda: comm.all_reduce(Tensor(4, device=1)), ValueError, "tensor: on GPU 1, this rank drives GPU 0"),
        (lambda: comm.all_gather(Tensor(4), Tensor(4)), ValueError, "out: 4 elements, 8 expected"),
        (lambda: comm.all_reduce(Tensor(4), out=Tensor(4, "float64")), TypeError, "out: element type float64"),
        (lambda: comm.reduce_scatter(Tensor(5), Tensor(2)), ValueError, "do not split into 2 equal chunks"),
        (lambda: comm.all_gather(Tensor(4), None), ValueError, "out: all_gather needs an output tensor"),
        (lambda: comm.all_reduce(Tensor(4), op="median"), ValueError, "op: one of sum"),
    ]
    for call, kind, message in cases:
        with pytest.raises(kind, match=message):
            call()
    assert comm._fast, "the C path was set up and declined each call"
    assert recorder.recorded_calls() == 0


def test_the_counts_in_c_are_the_library_rules(recorder, monkeypatch):
    # A rule unlike any operation's (3 elements sent and 2 received per element of count): the
    # call below reaches C with these counts only if C asks the function the state carries.
    recorder.set_elements_per_count(3, 2)
    monkeypatch.setattr(_ops, "ELEMENTS_FUNCTION", address(recorder, "gpupeer_collective_elements"))
    comm = live_comm()
    x, out = Tensor(6, ptr=0x10000), Tensor(4, ptr=0x20000)
    assert comm.all_reduce(x, out) is out
    assert recorder.recorded_calls() == 1 and call_of(recorder)[2:5] == [0x10000, 0x20000, 2]
    # 7 does not split into chunks of 3: C declines, and the Python path's rule (the library's
    # own) finds 4 elements where all_reduce writes 7.
    with pytest.raises(gpupeer.InvalidArgumentError, match="out: 4 elements, 7 expected"):
        comm.all_reduce(Tensor(7), out)
    assert recorder.recorded_calls() == 1


def test_an_explicit_stream_and_a_destroyed_communicator_take_the_python_path(recorder):
    comm = live_comm()
    x = Tensor(4)
    comm.all_reduce(x, stream=77)
    assert call_of(recorder)[8] == 77
    comm._handle = None
    comm._fast = False  # what destroy() leaves
    with pytest.raises(gpupeer.InvalidArgumentError, match="this communicator was destroyed"):
        comm.all_reduce(x)
    assert recorder.recorded_calls() == 1


def test_a_failing_call_raises_the_code_s_exception(recorder):
    recorder.set_answer(3)
    with pytest.raises(gpupeer.GpupeerError):
        live_comm().all_reduce(Tensor(4))
    assert recorder.recorded_calls() == 1


def test_setup_refuses_wrong_arguments():
    with pytest.raises(TypeError, match="setup_torch"):
        _lib._fastcall.setup_torch(object, {}, len)
    with pytest.raises(TypeError, match="torch_run\\(state"):
        _lib._fastcall.torch_run(1, 2)
    with pytest.raises(TypeError, match="state: 6-tuple"):
        _lib._fastcall.torch_run((1, 2), 0, None, None, 0, 0)


def live_multi_comm(recorder, monkeypatch, devices=(0, 1)):
    """A one-process Communicator over the recorder's gpupeer_comm_run (made-up handle)."""
    comm = object.__new__(gpupeer.Communicator)
    comm._handle, comm._err = 0x1234, _lib.ErrorSlot()
    comm.devices, comm.world_size, comm.transport = list(devices), len(devices), "none"
    comm._send, comm._recv, comm._streams = [(ctypes.c_void_p * len(devices))() for _ in range(3)]
    comm._addresses = [ctypes.addressof(a) for a in (comm._send, comm._recv, comm._streams)]
    monkeypatch.setattr(communicator, "_RUN", address(recorder, "gpupeer_comm_run"))
    monkeypatch.setattr(communicator, "_call", _lib._fastcall.run10)
    recorder.set_list_ranks(len(devices))
    LIVE.append(comm)
    return comm


def multi_call_of(recorder, ranks):
    lists = recorder.recorded_lists()
    arrays = [[lists[k * 8 + i] for i in range(ranks)] for k in range(3)]
    scalars = call_of(recorder)
    return [scalars[0], scalars[1], scalars[4], scalars[5], scalars[6], scalars[7], scalars[9]] + arrays


def test_a_tensor_per_rank_reaches_c_as_the_python_path_passes_it(recorder, monkeypatch):
    comm = live_multi_comm(recorder, monkeypatch, devices=(0, 1, 2))
    xs = [Tensor(6, "float16", device=r, ptr=0x10000 * (r + 1)) for r in range(3)]
    gathered = [Tensor(18, "float16", device=r, ptr=0x100000 * (r + 1)) for r in range(3)]
    chunks = [Tensor(2, "float16", device=r, ptr=0x200000 * (r + 1)) for r in range(3)]
    same = [Tensor(6, "float16", device=r, ptr=0x300000 * (r + 1)) for r in range(3)]
    cases = [
        lambda: comm.all_reduce(xs, op="max"),
        lambda: comm.all_reduce(xs, same),
        lambda: comm.all_gather(xs, gathered),
        lambda: comm.reduce_scatter(xs, chunks, op="avg"),
        lambda: comm.broadcast(xs, root=2),
        lambda: comm.reduce(xs, [None, same[1], None], op="min", root=1),
        lambda: comm.all_to_all(xs, same),
        lambda: comm.send_recv(xs, same),
    ]
    for i, call in enumerate(cases):
        comm._fast = None  # C, set up at the first call
        fast_result = call()
        assert comm._fast and recorder.recorded_calls() == 2 * i + 1, "case %d took the C path" % i
        through_c = multi_call_of(recorder, 3)
        comm._fast = False  # the Python path
        assert call() == fast_result  # the same tensors (a list literal is made anew per call)
        assert multi_call_of(recorder, 3) == through_c, "case %d" % i
    assert through_c[-1] == [STREAM_BASE, STREAM_BASE + 1, STREAM_BASE + 2]


def test_a_tensor_per_rank_that_c_declines_gets_the_python_paths_error(recorder, monkeypatch):
    comm = live_multi_comm(recorder, monkeypatch)
    xs = [Tensor(4, device=0), Tensor(4, device=1)]
    cases = [
        (lambda: comm.all_reduce([Tensor(4, device=0), Tensor(4, device=0)]), gpupeer.InvalidArgumentError,
         r"tensors\[1\]: on GPU 0, rank 1 is GPU 1"),
        (lambda: comm.all_reduce([Tensor(4, device=0), Tensor(5, device=1)]), gpupeer.InvalidArgumentError,
         r"tensors\[1\]: 5 elements of float32, tensors\[0\] has 4"),
        (lambda: comm.all_reduce(xs[:1]), gpupeer.InvalidArgumentError, "one entry per rank"),
        (lambda: comm.all_gather(xs, [Tensor(8, device=0), Tensor(7, device=1)]), gpupeer.InvalidArgumentError,
         r"outs\[1\]"),
        (lambda: comm.all_gather(xs, None), gpupeer.InvalidArgumentError, "needs output tensors"),
        (lambda: comm.reduce(xs, [Tensor(4, device=0), None], root=1), gpupeer.ArgumentTypeError, r"outs\[1\]"),
        (lambda: comm.all_reduce([Tensor(4, device=0, contiguous=False), xs[1]]), gpupeer.InvalidArgumentError,
         "not contiguous"),
    ]
    for call, kind, message in cases:
        with pytest.raises(kind, match=message):
            call()
    assert comm._fast, "the C path was set up and declined each call"
    assert recorder.recorded_calls() == 0
