"""The vocabulary shared by both communicators: operations and reduction operators (c_api.h's
constants), and how many elements each operation reads and writes per rank (the library's rule,
gpupeer_collective_elements)."""

import ctypes

from . import _c_api, errors
from ._lib import error_from, lib

ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, BROADCAST = (_c_api.GPUPEER_ALL_REDUCE, _c_api.GPUPEER_ALL_GATHER,
                                                     _c_api.GPUPEER_REDUCE_SCATTER, _c_api.GPUPEER_BROADCAST)
REDUCE, ALL_TO_ALL, SEND_RECV = _c_api.GPUPEER_REDUCE, _c_api.GPUPEER_ALL_TO_ALL, _c_api.GPUPEER_SEND_RECV
OP_NAMES = {ALL_REDUCE: "all_reduce", ALL_GATHER: "all_gather", REDUCE_SCATTER: "reduce_scatter",
            BROADCAST: "broadcast", REDUCE: "reduce", ALL_TO_ALL: "all_to_all", SEND_RECV: "send_recv"}
REDOPS = {"sum": _c_api.GPUPEER_SUM, "prod": _c_api.GPUPEER_PROD, "min": _c_api.GPUPEER_MIN,
          "max": _c_api.GPUPEER_MAX, "avg": _c_api.GPUPEER_AVG}
# Operations whose output may be the input itself (out=None).
IN_PLACE_BY_DEFAULT = (ALL_REDUCE, BROADCAST, REDUCE)


def redop(op):
    code = REDOPS.get(op) if isinstance(op, str) else None
    if code is None:
        code = REDOPS.get(str(op).lower().rsplit(".", 1)[-1])  # also torch.distributed.ReduceOp.SUM
    if code is None:
        raise errors.InvalidArgumentError("op: one of %s, not %r" % (", ".join(REDOPS), op))
    return code


# (op, ranks) -> the send and receive elements per element of count, asked of the library once.
# Both are count or ranks x count, so they scale with count.
_PER_COUNT = {}


def _per_count(op, ranks):
    send, recv, err = ctypes.c_size_t(), ctypes.c_size_t(), ctypes.c_void_p()
    code = lib.gpupeer_collective_elements(op, 1, ranks, ctypes.addressof(send), ctypes.addressof(recv),
                                           ctypes.addressof(err))
    if code != 0:
        raise error_from(err.value, code)
    _PER_COUNT[op, ranks] = send.value, recv.value
    return send.value, recv.value


# Its address, for the C readers of torch tensors (python/csrc/tensor_call.hpp's countsFor).
ELEMENTS_FUNCTION = ctypes.cast(lib.gpupeer_collective_elements, ctypes.c_void_p).value


def counts(op, input_count, ranks, name="tensor"):
    """(count, output elements) for `op` on an input of `input_count` elements: count is the
    per-rank element count the library takes (NCCL's)."""
    send, recv = _PER_COUNT.get((op, ranks)) or _per_count(op, ranks)
    count, rest = divmod(input_count, send)
    if rest:
        raise errors.InvalidArgumentError("%s: %d elements do not split into %d equal chunks for %s"
                                          % (name, input_count, send, OP_NAMES[op]))
    return count, count * recv
