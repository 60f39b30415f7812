"""Stand-ins for GPU arrays, for checking arguments where there is no GPU: they expose
__cuda_array_interface__ (as CuPy and Numba do) and say which device they are on."""

import types

import gpupeer


class FakeCudaArray:
    def __init__(self, count, typestr="<f4", device=0, ptr=0x7F0000000000, strides=None, shape=None):
        self._cai = {"shape": shape or (count,), "typestr": typestr, "data": (ptr, False), "strides": strides,
                     "version": 3}
        self.device = types.SimpleNamespace(id=device)

    @property
    def __cuda_array_interface__(self):
        return self._cai


def detached_rank_comm(rank=0, world_size=2, device=0):
    """A RankCommunicator with no library handle: every Python-side check runs, and a call that
    passes them all stops at "this communicator was destroyed"."""
    from gpupeer import _lib

    comm = object.__new__(gpupeer.RankCommunicator)
    comm._handle, comm._err = None, _lib.ErrorSlot()
    comm.rank, comm.world_size, comm.device, comm.transport = rank, world_size, device, "none"
    return comm
