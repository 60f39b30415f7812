"""Exceptions of gpupeer: one class per library error code, all under GpupeerError.

Each carries what the C++ library's Status carries: the message, the API error name
(``cudaErrorPeerAccessUnsupported``), the knowledge-base id that explains it, the call and
where in gpupeer it failed. Classes for bad arguments also derive from ValueError or
TypeError, so ``except ValueError`` works as Python users expect.
"""

from . import _c_api


class GpupeerError(Exception):
    """A gpupeer failure.

    Attributes: ``code`` (int, ``gpupeer_code`` of c_api.h), ``code_name`` ("invalid-argument"),
    ``message``, ``api_error`` (the CUDA/NVML/NCCL error name or ""), ``api_error_text``,
    ``kb_id`` (run ``gpupeer explain``/``python -m gpupeer explain`` on it, or ""), ``call``,
    ``location`` (file:line in gpupeer), ``text`` (the whole one-line description).
    """

    code = _c_api.GPUPEER_INTERNAL
    code_name = "internal"

    def __init__(self, message, *, api_error="", api_error_text="", kb_id="", call="", location="", text=""):
        super().__init__(text or message)
        self.message = message
        self.api_error = api_error
        self.api_error_text = api_error_text
        self.kb_id = kb_id
        self.call = call
        self.location = location
        self.text = text or message


class InvalidArgumentError(GpupeerError, ValueError):
    code, code_name = _c_api.GPUPEER_INVALID_ARGUMENT, "invalid-argument"


class ArgumentTypeError(GpupeerError, TypeError):
    """An argument of the wrong kind (not a tensor, a CPU tensor where a GPU one is needed)."""

    code, code_name = _c_api.GPUPEER_INVALID_ARGUMENT, "invalid-argument"


class NotFoundError(GpupeerError, LookupError):
    code, code_name = _c_api.GPUPEER_NOT_FOUND, "not-found"


class ParseError(GpupeerError, ValueError):
    code, code_name = _c_api.GPUPEER_PARSE, "parse"


class UnsupportedError(GpupeerError):
    """The machine cannot do this (no GPU, no P2P): not a failure of gpupeer."""

    code, code_name = _c_api.GPUPEER_UNSUPPORTED, "unsupported"


class CudaError(GpupeerError):
    code, code_name = _c_api.GPUPEER_CUDA, "cuda"


class NvmlError(GpupeerError):
    code, code_name = _c_api.GPUPEER_NVML, "nvml"


class NcclError(GpupeerError):
    code, code_name = _c_api.GPUPEER_NCCL, "nccl"


class SystemCallError(GpupeerError, OSError):
    code, code_name = _c_api.GPUPEER_SYSTEM, "system"


class DataMismatchError(GpupeerError):
    code, code_name = _c_api.GPUPEER_DATA_MISMATCH, "data-mismatch"


class CommTimeoutError(GpupeerError, TimeoutError):
    """A bounded wait ran out: a rank did not arrive (the message names it)."""

    code, code_name = _c_api.GPUPEER_TIMEOUT, "timeout"


class InternalError(GpupeerError):
    code, code_name = _c_api.GPUPEER_INTERNAL, "internal"


BY_CODE = {
    cls.code: cls
    for cls in (
        InvalidArgumentError,
        NotFoundError,
        ParseError,
        UnsupportedError,
        CudaError,
        NvmlError,
        NcclError,
        SystemCallError,
        DataMismatchError,
        CommTimeoutError,
        InternalError,
    )
}
