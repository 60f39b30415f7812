"""One process, several GPUs: gpupeer.Communicator over gpupeer::Communicator.

Each operation takes one tensor per rank (rank i on devices[i]) and runs on each tensor's
current stream (torch/CuPy) or on `streams=` (one per rank).
"""

import ctypes

from . import _lib, _ops, errors
from . import _tensors as tensors
from ._lib import lib
from ._collective_path import TENSOR_PER_RANK, checked_buffers, run_in_c
from ._tensors import DTYPE, PTR

_call, _RUN = _lib.run_entry("gpupeer_comm_run")


class Communicator:
    """Collectives between the GPUs `devices` of this process (2 to 8, each once).

    Enables P2P between every pair, or works without it and says why (``transport``).
    Operations are stream-ordered, need no synchronisation between them and can be captured
    in one CUDA graph spanning every rank's stream. One thread at a time.
    """

    def __init__(self, devices):
        devices = list(devices)
        if not all(isinstance(d, int) for d in devices):
            raise errors.ArgumentTypeError("devices: a list of device ordinals (ints)")
        for d in devices:
            _lib.int_arg(d, "devices")
        array = (ctypes.c_int * len(devices))(*devices)
        handle, err = ctypes.c_void_p(), ctypes.c_void_p()
        code = lib.gpupeer_comm_create(array, len(devices), ctypes.addressof(handle), ctypes.addressof(err))
        if code != 0:
            raise _lib.error_from(err.value, code)
        self._handle = handle.value
        self._err = _lib.ErrorSlot()
        self.devices = devices
        self.world_size = len(devices)
        self.transport = lib.gpupeer_comm_transport(self._handle).decode()
        # Argument arrays reused by every call.
        self._send = (ctypes.c_void_p * self.world_size)()
        self._recv = (ctypes.c_void_p * self.world_size)()
        self._streams = (ctypes.c_void_p * self.world_size)()
        self._addresses = [ctypes.addressof(a) for a in (self._send, self._recv, self._streams)]

    def __repr__(self):
        return "<gpupeer.Communicator on GPUs %s: %s>" % (self.devices, self.transport)

    # The eager call on torch tensors in C: (torch_run_many, its state for this communicator);
    # None until its first call, False where it cannot be had.
    _fast = None

    def _torch_runner(self):
        # Decided once per communicator, at its first call (as RankCommunicator's).
        module = tensors.torch_fast_module()
        if module is None or not isinstance(_RUN, int) or not self._handle:
            return False
        return module.torch_run_many, (_RUN, _ops.ELEMENTS_FUNCTION, self._handle, tuple(self.devices),
                                       self._err.address)

    def _per_rank(self, values, name):
        if not isinstance(values, (list, tuple)) or len(values) != self.world_size:
            raise errors.InvalidArgumentError("%s: a list with one entry per rank (%d)" % (name, self.world_size))
        return values

    def _collective(self, op, inputs, outputs, redop, root, streams):
        # Torch tensors on the current streams go through C; what that declines (None), and
        # every other array, goes through the checks both communicators share, where every
        # error is worded.
        if streams is None:
            result = run_in_c(self, op, inputs, outputs, redop, root)
            if result is not None:
                return result
        if not self._handle:
            raise errors.InvalidArgumentError("comm: this communicator was destroyed")
        inputs = self._per_rank(inputs, "tensors")
        if outputs is not None:
            outputs = self._per_rank(outputs, "outs")
        sends, recvs, count = checked_buffers(op, inputs, outputs, root, self.world_size, self.devices,
                                              TENSOR_PER_RANK)
        if streams is not None:
            streams = self._per_rank(streams, "streams")
        for i in range(self.world_size):
            self._send[i] = sends[i][PTR]
            self._recv[i] = recvs[i][PTR] if recvs[i] is not None else None
            self._streams[i] = tensors.stream_handle(None if streams is None else streams[i], sends[i])
        code = _call(_RUN, self._handle, op, self._addresses[0], self._addresses[1], count, sends[0][DTYPE], redop, root,
                     self._addresses[2], self._err.address)
        if code != 0:
            self._err.raise_for(code)
        return inputs if outputs is None else outputs

    def all_reduce(self, tensors, outs=None, op="sum", streams=None):
        """outs[r] (default: tensors[r], in place) = the reduction of every rank's tensor."""
        return self._collective(_ops.ALL_REDUCE, tensors, outs, _ops.redop(op), 0, streams)

    def all_gather(self, tensors, outs, streams=None):
        """outs[r] (world_size x the input's elements) = every rank's tensor in rank order."""
        return self._collective(_ops.ALL_GATHER, tensors, outs, 0, 0, streams)

    def reduce_scatter(self, tensors, outs, op="sum", streams=None):
        """outs[r] = chunk r of the reduction of every rank's tensor (world_size chunks)."""
        return self._collective(_ops.REDUCE_SCATTER, tensors, outs, _ops.redop(op), 0, streams)

    def broadcast(self, tensors, outs=None, root=0, streams=None):
        """outs[r] (default: tensors[r]) = tensors[root]."""
        return self._collective(_ops.BROADCAST, tensors, outs, 0, _lib.int_arg(root, "root"), streams)

    def reduce(self, tensors, outs=None, op="sum", root=0, streams=None):
        """outs[root] (default: tensors[root]) = the reduction; other ranks' outs may be None."""
        return self._collective(_ops.REDUCE, tensors, outs, _ops.redop(op), _lib.int_arg(root, "root"), streams)

    def all_to_all(self, tensors, outs, streams=None):
        """Chunk q of outs[r] = chunk r of tensors[q] (world_size chunks)."""
        return self._collective(_ops.ALL_TO_ALL, tensors, outs, 0, 0, streams)

    def send_recv(self, tensors, outs, streams=None):
        """outs[(r + 1) % world_size] = tensors[r]: every rank sends to the next."""
        return self._collective(_ops.SEND_RECV, tensors, outs, 0, 0, streams)

    def check_barriers(self):
        """After synchronising the streams: raises CommTimeoutError naming a rank that did not
        arrive at a barrier within 10 s."""
        code = lib.gpupeer_comm_check_barriers(self._handle, self._err.address)
        if code != 0:
            self._err.raise_for(code)

    def destroy(self):
        handle, self._handle, self._fast = self._handle, None, False
        if handle:
            lib.gpupeer_comm_destroy(handle)

    def __del__(self):
        if getattr(self, "_handle", None) and lib is not None:
            self.destroy()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()
