"""PyTorch glue: a communicator from a torch.distributed process group, and the collectives as
torch.library custom ops so torch.compile keeps them in its graph.

Imported on demand (``import gpupeer.torch``); needs PyTorch.
"""

import itertools

import torch as _torch
import torch.distributed as _dist

from . import _lib, errors, rank

_communicators = {}  # id -> RankCommunicator, for the custom ops (which take plain ints)
_next_id = itertools.count(1)


def init_from_process_group(group=None, device=None, timeout_ms=None):
    """A gpupeer communicator over the ranks of a torch.distributed process group (default: the
    world), one process per GPU. The start-up exchange goes through the group itself
    (all_gather_object), so it works with gloo or nccl and needs no extra rendezvous. `device`
    defaults to torch.cuda.current_device(). Every rank of the group must call it."""
    if not _dist.is_initialized():
        raise errors.InvalidArgumentError("group: torch.distributed is not initialised (init_process_group first)")
    my_rank, world = _dist.get_rank(group), _dist.get_world_size(group)

    def all_gather(blob):
        blobs = [None] * world
        _dist.all_gather_object(blobs, blob, group=group)
        return blobs

    return rank.init_with_all_gather(my_rank, world, all_gather, device=device, timeout_ms=timeout_ms)


def mem_pool():
    """A torch.cuda.MemPool whose memory comes from gpupeer (gpupeer_mem_alloc): cuMem memory
    that register_buffer shares with the other processes as file descriptors, as NCCL's
    ncclMemAlloc memory is shared by ncclCommRegister. Tensors made under
    ``with torch.cuda.use_mem_pool(pool):`` come from it; register them with
    comm.register_buffer(tensor). PyTorch's own expandable segments
    (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) register the same way without a pool."""
    if not _lib.has("gpupeer_mem_alloc"):
        raise errors.UnsupportedError("mem_pool: %s has no gpupeer_mem_alloc (rebuild it)" % _lib.lib.path)
    allocator = _torch.cuda.memory.CUDAPluggableAllocator(_lib.lib.path, "gpupeer_mem_alloc", "gpupeer_mem_free")
    return _torch.cuda.MemPool(allocator.allocator())


def register(comm):
    """An int naming `comm` for the custom ops (torch.ops.gpupeer.*), which cannot take objects."""
    key = next(_next_id)
    _communicators[key] = comm
    return key


def _comm(key):
    try:
        return _communicators[key]
    except KeyError:
        raise errors.InvalidArgumentError("comm: %d is not a registered communicator (gpupeer.torch.register)" % key)


@_torch.library.custom_op("gpupeer::all_reduce_in_place", mutates_args=("tensor",))
def _all_reduce_in_place(tensor: _torch.Tensor, comm: int, op: str) -> None:
    _comm(comm).all_reduce(tensor, op=op)


@_all_reduce_in_place.register_fake
def _(tensor, comm, op):
    return None


@_torch.library.custom_op("gpupeer::all_reduce", mutates_args=())
def _all_reduce(tensor: _torch.Tensor, comm: int, op: str) -> _torch.Tensor:
    out = _torch.empty_like(tensor, memory_format=_torch.contiguous_format)
    _comm(comm).all_reduce(tensor, out=out, op=op)
    return out


@_all_reduce.register_fake
def _(tensor, comm, op):
    return _torch.empty_like(tensor, memory_format=_torch.contiguous_format)


@_torch.library.custom_op("gpupeer::all_gather", mutates_args=())
def _all_gather(tensor: _torch.Tensor, comm: int) -> _torch.Tensor:
    c = _comm(comm)
    out = tensor.new_empty((c.world_size * tensor.shape[0],) + tuple(tensor.shape[1:]) if tensor.dim() else (c.world_size,))
    c.all_gather(tensor, out)
    return out


@_all_gather.register_fake
def _(tensor, comm):
    n = _comm(comm).world_size
    return tensor.new_empty((n * tensor.shape[0],) + tuple(tensor.shape[1:]) if tensor.dim() else (n,))


def all_reduce(tensor, comm, op="sum", in_place=True):
    """all_reduce through the custom op (traceable by torch.compile without a graph break).
    `comm` is the int from register()."""
    if in_place:
        _torch.ops.gpupeer.all_reduce_in_place(tensor, comm, op)
        return tensor
    return _torch.ops.gpupeer.all_reduce(tensor, comm, op)


def all_gather(tensor, comm):
    """all_gather along dim 0 through the custom op; `comm` is the int from register()."""
    return _torch.ops.gpupeer.all_gather(tensor, comm)
