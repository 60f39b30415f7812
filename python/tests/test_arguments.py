"""Argument checking of the collectives, before anything reaches a GPU: errors are ValueError or
TypeError subclasses that name the argument."""

import numpy as np
import pytest

import gpupeer
from fake_arrays import FakeCudaArray, detached_rank_comm
from gpupeer import _lib, _ops, _tensors

DESTROYED = "this communicator was destroyed"


def test_a_cuda_array_interface_is_read():
    buf = _tensors.buffer(FakeCudaArray(12, "<f2", device=3, shape=(3, 4)), "tensor")
    assert buf[:4] == (0x7F0000000000, 12, _tensors.FLOAT16, 3)
    assert _tensors.stream_handle(None, buf) == 0  # not CuPy or torch: the default stream


def test_a_host_array_by_dlpack_is_refused():
    with pytest.raises(gpupeer.ArgumentTypeError, match="tensor: a CUDA array is needed"):
        _tensors.buffer(np.arange(4, dtype=np.float32), "tensor")


def test_something_that_is_not_a_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="tensor: a GPU tensor .* not list"):
        detached_rank_comm().all_reduce([1.0, 2.0])


def test_strided_arrays_are_refused_as_not_contiguous():
    strided = FakeCudaArray(4, "<f4", strides=(8,))
    with pytest.raises(ValueError, match="tensor: not contiguous"):
        detached_rank_comm().all_reduce(strided)
    # A unit dimension's stride does not matter.
    _tensors.buffer(FakeCudaArray(4, "<f4", shape=(1, 4), strides=(999, 4)), "tensor")


def test_unsupported_element_types_are_named():
    with pytest.raises(TypeError, match="tensor: element type '<c8'"):
        detached_rank_comm().all_reduce(FakeCudaArray(4, "<c8"))


def test_a_tensor_on_another_gpu_is_refused():
    with pytest.raises(ValueError, match="tensor: on GPU 1, this rank drives GPU 0"):
        detached_rank_comm(device=0).all_reduce(FakeCudaArray(4, device=1))


def test_out_must_match_type_and_size():
    comm = detached_rank_comm(world_size=2)
    with pytest.raises(TypeError, match="out: element type float64 differs from the input's float32"):
        comm.all_reduce(FakeCudaArray(4), out=FakeCudaArray(4, "<f8"))
    with pytest.raises(ValueError, match="out: 4 elements, 8 expected"):
        comm.all_gather(FakeCudaArray(4), FakeCudaArray(4))
    with pytest.raises(ValueError, match="out: 4 elements, 2 expected"):
        comm.reduce_scatter(FakeCudaArray(4), FakeCudaArray(4))


def test_chunked_operations_need_divisible_inputs():
    with pytest.raises(ValueError, match="tensor: 5 elements do not split into 2 equal chunks for reduce_scatter"):
        detached_rank_comm().reduce_scatter(FakeCudaArray(5), FakeCudaArray(2))
    with pytest.raises(ValueError, match="all_to_all"):
        detached_rank_comm(world_size=4).all_to_all(FakeCudaArray(6), FakeCudaArray(6))


def test_element_counts_are_the_librarys():
    # (count the library takes, output elements) of 12 input elements over 4 ranks.
    expected = {_ops.ALL_REDUCE: (12, 12), _ops.ALL_GATHER: (12, 48), _ops.REDUCE_SCATTER: (3, 3),
                _ops.BROADCAST: (12, 12), _ops.REDUCE: (12, 12), _ops.ALL_TO_ALL: (3, 12), _ops.SEND_RECV: (12, 12)}
    assert sorted(expected) == sorted(_ops.OP_NAMES)
    for op, answer in expected.items():
        assert _ops.counts(op, 12, 4) == answer, _ops.OP_NAMES[op]
    with pytest.raises(gpupeer.InvalidArgumentError, match="op: 7 is not a collective operation"):
        _ops.counts(7, 12, 4)
    with pytest.raises(gpupeer.InvalidArgumentError, match="ranks: 0"):
        _ops.counts(_ops.ALL_REDUCE, 12, 0)


def test_functions_a_build_may_lack_are_functions_of_the_header():
    assert _lib._OPTIONAL <= set(_lib._SIGNATURES)


def test_reduction_operators_are_checked():
    with pytest.raises(ValueError, match="op: one of sum, prod, min, max, avg, not 'median'"):
        detached_rank_comm().all_reduce(FakeCudaArray(4), op="median")


def test_stream_must_be_a_handle_or_a_stream_object():
    with pytest.raises(TypeError, match="stream"):
        detached_rank_comm().all_reduce(FakeCudaArray(4), stream="fast")


def test_valid_calls_pass_every_check():
    comm = detached_rank_comm(world_size=2)
    x = FakeCudaArray(8)
    for call in (
        lambda: comm.all_reduce(x, op="MAX".lower()),
        lambda: comm.all_reduce(x, out=FakeCudaArray(8), stream=7),
        lambda: comm.all_gather(FakeCudaArray(4), x),
        lambda: comm.reduce_scatter(x, FakeCudaArray(4), op="avg"),
        lambda: comm.broadcast(x, root=1),
        lambda: comm.reduce(x, op="min", root=1),
        lambda: comm.all_to_all(x, FakeCudaArray(8)),
        lambda: comm.send(x, peer=1),
        lambda: comm.recv(x, peer=1),
    ):
        with pytest.raises(gpupeer.InvalidArgumentError, match=DESTROYED):
            call()


def test_one_process_communicator_checks_devices_before_any_gpu():
    with pytest.raises(gpupeer.InvalidArgumentError, match="2 to 8 GPUs, not 1"):
        gpupeer.Communicator(devices=[0])
    with pytest.raises(gpupeer.InvalidArgumentError, match="appears twice"):
        gpupeer.Communicator(devices=[0, 0])
    with pytest.raises(gpupeer.ArgumentTypeError, match="devices"):
        gpupeer.Communicator(devices=["0", "1"])


def test_init_checks_the_unique_id():
    with pytest.raises((gpupeer.InvalidArgumentError, gpupeer.UnsupportedError), match="unique_id|built without"):
        gpupeer.init(0, 2, b"short")


def test_the_all_gather_callback_writes_blobs_in_rank_order_or_says_why():
    import ctypes

    from gpupeer import rank

    blob, out, message = ctypes.create_string_buffer(b"r1", 2), ctypes.create_string_buffer(6), \
        ctypes.create_string_buffer(1024)
    args = (None, ctypes.addressof(blob), 2, ctypes.addressof(out), ctypes.addressof(message))
    seen = []
    good = rank.gather_callback(lambda b: seen.append(b) or [b"r0", b, b"r2"], 3)
    assert good(*args) == 0 and out.raw == b"r0r1r2" and seen == [b"r1"]
    short = rank.gather_callback(lambda b: [b"r0", b], 3)
    assert short(*args) == 1
    assert b"all_gather returned 2 blobs, 3 of 2 bytes expected" in message.value
    failing = rank.gather_callback(lambda b: 1 / 0, 3)
    assert failing(*args) == 1 and b"ZeroDivisionError" in message.value
