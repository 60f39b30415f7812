"""The vocabulary shared by both communicators: operations, reduction operators (c_api.h's
constants), and how many elements each operation reads and writes per rank."""

from . import _c_api, errors

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


def counts(op, input_count, ranks, name="tensor"):
    """(count, output elements) for `op` on an input of `input_count` elements: count is the
    per-rank element count the library takes (NCCL's)."""
    if op in (REDUCE_SCATTER, ALL_TO_ALL):
        if input_count % ranks:
            raise errors.InvalidArgumentError(
                "%s: %d elements do not split into %d equal chunks for %s" % (name, input_count, ranks, OP_NAMES[op]))
        count = input_count // ranks
        return count, (count if op == REDUCE_SCATTER else input_count)
    if op == ALL_GATHER:
        return input_count, input_count * ranks
    return input_count, input_count
