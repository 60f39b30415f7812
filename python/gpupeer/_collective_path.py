"""What both communicators do with a collective's tensors before the C call.

run_in_c: torch tensors on the current streams go to a C reader of torch tensors
(python/csrc), which calls the library itself or declines the call.

checked_buffers, for every call C declined and every other kind of array: each tensor is read first (whether it is a GPU tensor, contiguous, of an element type the
library has: what the C API cannot see), then checked against the others: on its rank's GPU,
one element type and count across the ranks, the counts the library's rule gives each output
(_ops.counts), and in place only where the operation allows it. The two communicators differ
only in how they name their tensors (Wording).
"""

from . import _ops, errors
from ._tensors import COUNT, DEVICE, DTYPE, TYPE_NAMES, buffer


def run_in_c(comm, op, inputs, outputs, redop, root):
    """The call through the C reader for communicator `comm`, whose _fast is None until its first
    call, then (run function, state) or False where no C reader can be had: the result, or None
    where the call is left to the Python path (no C reader, or it declined)."""
    fast = comm._fast
    if fast is None:
        fast = comm._fast = comm._torch_runner()
    if not fast:
        return None
    code = fast[0](fast[1], op, inputs, outputs, redop, root)
    if code is None:
        return None
    if code != 0:
        comm._err.raise_for(code)
    return inputs if outputs is None else outputs


class Wording:
    """How a communicator names its tensors in errors: `tensors` and `outs` are the argument
    names; per_rank: one tensor per rank of this process (indexed, "tensors[1]"), else the one
    tensor of this process's rank."""

    def __init__(self, tensors, outs, per_rank):
        self.tensors, self.outs, self.per_rank = tensors, outs, per_rank

    def name(self, argument, i):
        return "%s[%d]" % (argument, i) if self.per_rank else argument

    def elsewhere(self, name, device, i, expected):
        if self.per_rank:
            return "%s: on GPU %d, rank %d is GPU %d" % (name, device, i, expected)
        return "%s: on GPU %d, this rank drives GPU %d" % (name, device, expected)

    def needs_out(self, op):
        wanted = "output tensors" if self.per_rank else "an output tensor"
        return "%s: %s needs %s" % (self.outs, _ops.OP_NAMES[op], wanted)


ONE_RANK = Wording("tensor", "out", per_rank=False)
TENSOR_PER_RANK = Wording("tensors", "outs", per_rank=True)


def checked_buffers(op, inputs, outputs, root, ranks, devices, wording):
    """(sends, recvs, count) for `op` over `ranks` ranks in all: `inputs` holds one tensor per
    rank of this process, rank i's on GPU devices[i]; `outputs` as many, or None for in place
    (reduce's may be None but for the root's). sends and recvs are _tensors.buffer tuples (recvs
    None where the output is), count the per-rank count the library takes."""
    sends = []
    for i, x in enumerate(inputs):
        name = wording.name(wording.tensors, i)
        buf = buffer(x, name)
        if buf[DEVICE] != devices[i]:
            raise errors.InvalidArgumentError(wording.elsewhere(name, buf[DEVICE], i, devices[i]))
        first = sends[0] if sends else buf
        if buf[DTYPE] != first[DTYPE] or buf[COUNT] != first[COUNT]:
            raise errors.InvalidArgumentError("%s: %d elements of %s, %s has %d of %s" % (
                name, buf[COUNT], TYPE_NAMES[buf[DTYPE]], wording.name(wording.tensors, 0), first[COUNT],
                TYPE_NAMES[first[DTYPE]]))
        sends.append(buf)
    first = sends[0]
    count, out_count = _ops.counts(op, first[COUNT], ranks, wording.name(wording.tensors, 0))
    if outputs is None:
        if op not in _ops.IN_PLACE_BY_DEFAULT:
            raise errors.InvalidArgumentError(wording.needs_out(op))
        return sends, sends, count
    recvs = []
    for i, x in enumerate(outputs):
        if x is None and op == _ops.REDUCE and i != root:
            recvs.append(None)  # only the root's output is written
            continue
        name = wording.name(wording.outs, i)
        buf = buffer(x, name)
        if buf[DEVICE] != devices[i]:
            raise errors.InvalidArgumentError(wording.elsewhere(name, buf[DEVICE], i, devices[i]))
        if buf[DTYPE] != first[DTYPE]:
            raise errors.ArgumentTypeError("%s: element type %s differs from the input's %s"
                                           % (name, TYPE_NAMES[buf[DTYPE]], TYPE_NAMES[first[DTYPE]]))
        if buf[COUNT] != out_count:
            raise errors.InvalidArgumentError("%s: %d elements, %d expected" % (name, buf[COUNT], out_count))
        recvs.append(buf)
    return sends, recvs, count
