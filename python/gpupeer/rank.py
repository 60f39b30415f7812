"""One process per GPU: gpupeer.init / get_unique_id over gpupeer::RankCommunicator."""

import ctypes
import sys

from . import _c_api, _lib, _ops, errors
from . import _tensors as tensors
from ._lib import lib
from ._collective_path import ONE_RANK, checked_buffers, run_in_c
from ._tensors import COUNT, CURRENT_STREAM, DEVICE, DTYPE, PTR, buffer

UNIQUE_ID_BYTES = _c_api.GPUPEER_UNIQUE_ID_BYTES
_REDOPS = _ops.REDOPS
_call, _RUN = _lib.run_entry("gpupeer_rank_comm_run")


def _require(name):
    if not _lib.has(name):
        raise errors.UnsupportedError(
            "%s was built without the one-process-per-GPU communicator (%s missing)" % (lib.path, name))


def get_unique_id():
    """A fresh communicator id (bytes): make it on one rank, hand it to every rank (a file, a
    store, MPI), and pass it to gpupeer.init on each."""
    _require("gpupeer_get_unique_id")
    out, err = ctypes.create_string_buffer(UNIQUE_ID_BYTES), ctypes.c_void_p()
    code = lib.gpupeer_get_unique_id(out, ctypes.addressof(err))
    if code != 0:
        raise _lib.error_from(err.value, code)
    return out.raw


def _device_or_current(device):
    if device is not None:
        return _lib.int_arg(device, "device")
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return torch.cuda.current_device()  # torch's runtime, not the library's, knows it
    return -1


def _ints(rank, world_size, timeout_ms):
    # Checked here: ctypes would cut 2**32 + 5 to 5 without a word. The library checks the rest
    # (rank below world_size, world_size at least 1).
    return (_lib.int_arg(rank, "rank"), _lib.int_arg(world_size, "world_size"),
            0 if timeout_ms is None else _lib.int_arg(timeout_ms, "timeout_ms", 0))


def init(rank, world_size, unique_id, device=None, timeout_ms=None):
    """Joins communicator `unique_id` as `rank` of `world_size` on GPU `device` (default: torch's
    current device, else the thread's current one). Returns when every rank has joined, or
    raises CommTimeoutError naming the ranks missing."""
    _require("gpupeer_rank_comm_init")
    rank, world_size, timeout_ms = _ints(rank, world_size, timeout_ms)
    if not isinstance(unique_id, (bytes, bytearray)) or len(unique_id) != UNIQUE_ID_BYTES:
        raise errors.InvalidArgumentError("unique_id: the %d bytes of gpupeer.get_unique_id()" % UNIQUE_ID_BYTES)
    handle, err = ctypes.c_void_p(), ctypes.c_void_p()
    code = lib.gpupeer_rank_comm_init(world_size, bytes(unique_id), rank, _device_or_current(device),
                                      timeout_ms or 0, ctypes.addressof(handle), ctypes.addressof(err))
    if code != 0:
        raise _lib.error_from(err.value, code)
    return RankCommunicator(handle.value)


def init_with_all_gather(rank, world_size, all_gather, device=None, timeout_ms=None):
    """Like init, with `all_gather(blob: bytes) -> list of every rank's bytes` carrying the
    start-up exchange (a framework's process group or store) instead of gpupeer's socket."""
    _require("gpupeer_rank_comm_init_all_gather")
    rank, world_size, timeout_ms = _ints(rank, world_size, timeout_ms)
    callback = gather_callback(all_gather, world_size)
    handle, err = ctypes.c_void_p(), ctypes.c_void_p()
    code = lib.gpupeer_rank_comm_init_all_gather(world_size, rank, callback, None, _device_or_current(device),
                                                 timeout_ms or 0, ctypes.addressof(handle), ctypes.addressof(err))
    if code != 0:
        raise _lib.error_from(err.value, code)
    comm = RankCommunicator(handle.value)
    # The library calls it again for every register_buffer and deregister_buffer: it must live
    # as long as the communicator (a collected ctypes callback is a jump into freed memory).
    comm._all_gather = callback
    return comm


def gather_callback(all_gather, world_size):
    """The C callback (gpupeer_all_gather_fn) over a Python `all_gather(blob) -> [bytes]`: it
    writes every rank's blob in rank order, or returns 1 with the reason in `message`, which the
    library puts in the error init raises."""

    def gather(_user, blob, size, out, message):
        try:
            blobs = all_gather(ctypes.string_at(blob, size))
            if len(blobs) != world_size or any(len(b) != size for b in blobs):
                raise ValueError("all_gather returned %d blobs, %d of %d bytes expected" % (len(blobs), world_size, size))
            ctypes.memmove(out, b"".join(blobs), size * world_size)
            return 0
        except Exception as e:  # must not cross into C
            text = repr(e).encode()[:1023]
            ctypes.memmove(message, text + b"\0", len(text) + 1)
            return 1

    return _lib.ALL_GATHER_FN(gather)


class RankCommunicator:
    """This process's rank of a communicator with one process per GPU.

    Every rank calls the same operations in the same order with the same sizes (NCCL's
    contract). Operations run on the caller's current stream (torch/CuPy) or `stream=`, need no
    synchronisation between them, and can be captured in a CUDA graph. One thread at a time.
    """

    # The eager call on torch tensors in C: (torch_run, its state for this communicator); None
    # until its first call, False where it cannot be had.
    _fast = None

    def __init__(self, handle):
        self._handle = handle
        self._err = _lib.ErrorSlot()
        self.rank = lib.gpupeer_rank_comm_rank(handle)
        self.world_size = lib.gpupeer_rank_comm_ranks(handle)
        self.device = lib.gpupeer_rank_comm_device(handle)
        self.transport = lib.gpupeer_rank_comm_transport(handle).decode()

    def __repr__(self):
        return "<gpupeer.RankCommunicator rank %d of %d on GPU %d: %s>" % (
            self.rank, self.world_size, self.device, self.transport)

    def _live(self):
        if not self._handle:
            raise errors.InvalidArgumentError("comm: this communicator was destroyed")
        return self._handle

    def _buffer(self, x, name):
        buf = buffer(x, name)
        if buf[DEVICE] != self.device:
            raise errors.InvalidArgumentError("%s: on GPU %d, this rank drives GPU %d" % (name, buf[DEVICE], self.device))
        return buf

    def _torch_runner(self):
        # Decided once per communicator, at its first call: one made before torch was imported
        # reads torch tensors in Python.
        module = tensors.torch_fast_module()
        if module is None or not isinstance(_RUN, int) or not self._handle:
            return False
        return module.torch_run, (_RUN, _ops.ELEMENTS_FUNCTION, self._handle, self.device, self.world_size,
                                  self._err.address)

    def _collective(self, op, tensor, out, redop, root, stream):
        # Torch tensors on the current stream go through C; what C declines (None), and every
        # other array, goes through the checks both communicators share, where every error is
        # worded.
        if stream is None:
            result = run_in_c(self, op, tensor, out, redop, root)
            if result is not None:
                return result
        sends, recvs, count = checked_buffers(op, (tensor,), None if out is None else (out,), root, self.world_size,
                                              (self.device,), ONE_RANK)
        send = sends[0]
        stream = send[CURRENT_STREAM](send[DEVICE]) if stream is None else tensors.stream_handle(stream, send)
        if not self._handle:
            self._live()
        code = _call(_RUN, self._handle, op, send[PTR], recvs[0][PTR], count, send[DTYPE], redop, root, stream,
                     self._err.address)
        if code != 0:
            self._err.raise_for(code)
        return tensor if out is None else out

    def all_reduce(self, tensor, out=None, op="sum", stream=None):
        """out (default: tensor, in place) = the reduction of every rank's tensor."""
        # The most frequent eager call goes straight to C (as _collective does): one Python
        # frame less on every call.
        fast = self._fast
        if fast and stream is None and op == "sum":
            code = fast[0](fast[1], _ops.ALL_REDUCE, tensor, out, 0, 0)
            if code == 0:
                return tensor if out is None else out
            if code is not None:
                self._err.raise_for(code)
        return self._collective(_ops.ALL_REDUCE, tensor, out, _REDOPS.get(op) if op in _REDOPS else _ops.redop(op), 0,
                                stream)

    def all_gather(self, tensor, out, stream=None):
        """out (world_size x tensor's elements) = every rank's tensor, in rank order. In place
        when tensor is out's chunk of this rank."""
        return self._collective(_ops.ALL_GATHER, tensor, out, 0, 0, stream)

    def reduce_scatter(self, tensor, out, op="sum", stream=None):
        """out = this rank's chunk of the reduction of every rank's tensor (world_size chunks)."""
        return self._collective(_ops.REDUCE_SCATTER, tensor, out, _ops.redop(op), 0, stream)

    def broadcast(self, tensor, out=None, root=0, stream=None):
        """out (default: tensor) = the root's tensor."""
        return self._collective(_ops.BROADCAST, tensor, out, 0, _lib.int_arg(root, "root"), stream)

    def reduce(self, tensor, out=None, op="sum", root=0, stream=None):
        """The root's out (default: tensor) = the reduction of every rank's tensor; other ranks'
        out is not written."""
        return self._collective(_ops.REDUCE, tensor, out, _ops.redop(op), _lib.int_arg(root, "root"), stream)

    def all_to_all(self, tensor, out, stream=None):
        """Chunk q of rank r's out = chunk r of rank q's tensor (world_size chunks)."""
        return self._collective(_ops.ALL_TO_ALL, tensor, out, 0, 0, stream)

    def send(self, tensor, peer, stream=None):
        """Sends tensor to rank `peer`, which calls recv with this rank."""
        buf = self._buffer(tensor, "tensor")
        stream, handle = tensors.stream_handle(stream, buf), self._live()
        code = lib.gpupeer_rank_comm_send(handle, buf[PTR], buf[COUNT], buf[DTYPE], _lib.int_arg(peer, "peer"), stream, self._err.address)
        if code != 0:
            self._err.raise_for(code)

    def recv(self, tensor, peer, stream=None):
        """Receives into tensor what rank `peer` sends."""
        buf = self._buffer(tensor, "tensor")
        stream, handle = tensors.stream_handle(stream, buf), self._live()
        code = lib.gpupeer_rank_comm_recv(handle, buf[PTR], buf[COUNT], buf[DTYPE], _lib.int_arg(peer, "peer"), stream, self._err.address)
        if code != 0:
            self._err.raise_for(code)
        return tensor

    def group(self):
        """``with comm.group(): comm.send(...); comm.recv(...)`` issues them together, so a cycle
        of sends and receives cannot deadlock."""
        return _Group(self)

    def check_error(self):
        """After synchronising the stream: raises CommTimeoutError naming the rank that did not
        arrive, or InvalidArgumentError for a call that differed between ranks."""
        self._call(lib.gpupeer_rank_comm_check_error)

    def register_buffer(self, tensor):
        """Registers the tensor's memory so that large collectives on it read the peers' memory
        directly where that was measured faster, and says how the peers reach it: "cuda-ipc"
        (cudaMalloc memory, PyTorch's caching allocator by default, also a tensor inside a larger
        segment), "cumem-fd" (cuMem memory: PyTorch's expandable_segments:True, a
        gpupeer.torch.mem_pool(), ncclMemAlloc), "same-process" or "none" (one rank). Collective:
        every rank registers its tensor of the same role in the same order (ncclCommRegister's
        rule); see docs/multi-process.md."""
        _require("gpupeer_rank_comm_register_buffer")
        buf = self._buffer(tensor, "tensor")
        code = lib.gpupeer_rank_comm_register_buffer(self._live(), buf[PTR], buf[COUNT] * tensors.ELEMENT_BYTES[buf[DTYPE]],
                                                     self._err.address)
        if code != 0:
            self._err.raise_for(code)
        if not _lib.has("gpupeer_rank_comm_registration_mechanism"):
            return None
        how = lib.gpupeer_rank_comm_registration_mechanism(self._live(), buf[PTR])
        return how.decode() if how else None

    def deregister_buffer(self, tensor):
        """Undoes register_buffer(tensor); collective, after every operation on it completed."""
        _require("gpupeer_rank_comm_deregister_buffer")
        code = lib.gpupeer_rank_comm_deregister_buffer(self._live(), self._buffer(tensor, "tensor")[PTR], self._err.address)
        if code != 0:
            self._err.raise_for(code)

    def abort(self):
        """Makes every wait of this communicator give up now (from any thread)."""
        lib.gpupeer_rank_comm_abort(self._live())

    def destroy(self):
        """Frees this rank's memory; never waits for other ranks. Also on garbage collection."""
        handle, self._handle, self._fast = self._handle, None, False
        if handle:
            lib.gpupeer_rank_comm_destroy(handle)

    def _call(self, fn):
        code = fn(self._live(), self._err.address)
        if code != 0:
            self._err.raise_for(code)

    def __del__(self):
        if getattr(self, "_handle", None) and lib is not None:
            self.destroy()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()


class _Group:
    def __init__(self, comm):
        self.comm = comm

    def __enter__(self):
        self.comm._call(lib.gpupeer_rank_comm_group_start)
        return self.comm

    def __exit__(self, kind, value, traceback):
        if kind is None:
            self.comm._call(lib.gpupeer_rank_comm_group_end)
        else:
            try:
                self.comm._call(lib.gpupeer_rank_comm_group_end)
            except errors.GpupeerError:
                pass  # the exception already leaving the block says more
        return False
