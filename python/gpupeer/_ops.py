"""The vocabulary shared by both communicators: operations, reduction operators, and how many
elements each operation reads and writes per rank (c_api.h's numbering)."""

from . import errors

ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, BROADCAST, REDUCE, ALL_TO_ALL, SEND_RECV = range(7)
OP_NAMES = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all", "send_recv"]
REDOPS = {"sum": 0, "prod": 1, "min": 2, "max": 3, "avg": 4}
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
