"""gpupeer: GPU peer-to-peer inside one machine, from Python.

Diagnosis (dicts with the CLI's --json content): snapshot(), load_snapshot(path),
topology(snapshot=None), check(devices=None), check_ipc(device=None), doctor(snapshot=None),
explain(text_or_path).

Collectives on tensors exposing DLPack or __cuda_array_interface__ (PyTorch, CuPy, JAX,
Numba): Communicator(devices=[0, 1]) for one process driving several GPUs;
init(rank, world_size, unique_id) with get_unique_id() for one process per GPU;
gpupeer.torch.init_from_process_group(group) for torch.distributed programs.

Failures raise GpupeerError subclasses carrying the message, the API error name and the KB id.
"""

import sys

try:
    from . import _lib
except ImportError as _e:
    # `python -m gpupeer` imports the package before its __main__ can catch anything: the
    # reason alone (exit 4, as the binary's "could not do its work"), never a traceback. sys.argv[0]
    # is "-m" while Python looks the module up. An import in a program raises as ever.
    if sys.argv[:1] == ["-m"] and "gpupeer" in getattr(sys, "orig_argv", ["gpupeer"]):
        from ._terminal import terminal_safe

        if sys.stderr is not None:
            print(terminal_safe(str(_e)), file=sys.stderr)
        raise SystemExit(4) from None
    raise
from .communicator import Communicator
from .diagnosis import check, check_ipc, doctor, explain, load_snapshot, snapshot, topology
from .errors import (
    ArgumentTypeError,
    CommTimeoutError,
    CudaError,
    DataMismatchError,
    GpupeerError,
    InternalError,
    InvalidArgumentError,
    NcclError,
    NotFoundError,
    NvmlError,
    ParseError,
    SystemCallError,
    UnsupportedError,
)
from .rank import RankCommunicator, get_unique_id, init, init_with_all_gather

__version__ = _lib.lib.gpupeer_version().decode()
library_path = _lib.lib.path

__all__ = [
    "ArgumentTypeError", "CommTimeoutError", "Communicator", "CudaError", "DataMismatchError", "GpupeerError",
    "InternalError", "InvalidArgumentError", "NcclError", "NotFoundError", "NvmlError", "ParseError",
    "RankCommunicator", "SystemCallError", "UnsupportedError", "check", "doctor", "explain", "get_unique_id",
    "init", "init_with_all_gather", "load_snapshot", "snapshot", "topology",
]
