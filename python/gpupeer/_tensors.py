"""What a collective needs from a tensor: device pointer, element count, element type, GPU,
and the stream to run on. Works on anything exposing ``__cuda_array_interface__`` (CuPy,
Numba, JAX, PyTorch) or DLPack (``__dlpack__``), with a direct path for torch.Tensor.

The extractor is chosen once per Python type and cached, so an eager call pays a dict lookup
and a few attribute reads.
"""

import ctypes
import os
import sys

from . import _c_api, errors
from ._lib import _fastcall, lib, load_beside_library
from ._torch_build import torch_build_id

# c_api.h's element types.
FLOAT32, FLOAT16, BFLOAT16, FLOAT64 = (_c_api.GPUPEER_FLOAT32, _c_api.GPUPEER_FLOAT16, _c_api.GPUPEER_BFLOAT16,
                                       _c_api.GPUPEER_FLOAT64)
INT8, UINT8, INT32, INT64 = _c_api.GPUPEER_INT8, _c_api.GPUPEER_UINT8, _c_api.GPUPEER_INT32, _c_api.GPUPEER_INT64
FLOAT8_E4M3, FLOAT8_E5M2 = _c_api.GPUPEER_FLOAT8_E4M3, _c_api.GPUPEER_FLOAT8_E5M2
TYPE_NAMES = {FLOAT32: "float32", FLOAT16: "float16", BFLOAT16: "bfloat16", FLOAT64: "float64", INT8: "int8",
              UINT8: "uint8", INT32: "int32", INT64: "int64", FLOAT8_E4M3: "float8_e4m3fn", FLOAT8_E5M2: "float8_e5m2"}
ELEMENT_BYTES = {FLOAT32: 4, FLOAT16: 2, BFLOAT16: 2, FLOAT64: 8, INT8: 1, UINT8: 1, INT32: 4, INT64: 8,
                 FLOAT8_E4M3: 1, FLOAT8_E5M2: 1}

# __cuda_array_interface__ typestr (numpy's); bfloat16 and fp8 have none, they come by DLPack.
_TYPESTRS = {"<f4": FLOAT32, "<f2": FLOAT16, "<f8": FLOAT64, "|i1": INT8, "|u1": UINT8, "<i4": INT32,
             "<i8": INT64, "i1": INT8, "u1": UINT8}
# DLPack (type code, bits): kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLFloat8_e4m3fn 10,
# kDLFloat8_e5m2 12 (dlpack.h 1.1).
_DLPACK_TYPES = {(2, 32): FLOAT32, (2, 16): FLOAT16, (4, 16): BFLOAT16, (2, 64): FLOAT64, (0, 8): INT8,
                 (1, 8): UINT8, (0, 32): INT32, (0, 64): INT64, (10, 8): FLOAT8_E4M3, (12, 8): FLOAT8_E5M2}
_KDLCUDA, _KDLCUDA_MANAGED = 2, 13


# A tensor as the C API sees it: a tuple (kept a tuple: an eager call builds one or two, and a
# tuple costs a third of an object with slots)
# (pointer, element count, element type, device ordinal, current_stream(device) -> handle).
PTR, COUNT, DTYPE, DEVICE, CURRENT_STREAM = range(5)


def _default_stream(device):
    return 0


def _cupy_stream(device):
    return sys.modules["cupy"].cuda.get_current_stream().ptr


def _torch_codes(torch):
    codes = {torch.float32: FLOAT32, torch.float16: FLOAT16, torch.bfloat16: BFLOAT16, torch.float64: FLOAT64,
             torch.int8: INT8, torch.uint8: UINT8, torch.int32: INT32, torch.int64: INT64}
    for name, code in (("float8_e4m3fn", FLOAT8_E4M3), ("float8_e5m2", FLOAT8_E5M2)):
        if hasattr(torch, name):
            codes[getattr(torch, name)] = code
    return codes


_torch_dtype_codes = {}
_torch_stream = None


def _load_torch_tables(torch):
    """The dtype table and current-stream function both torch paths read, made once."""
    global _torch_dtype_codes, _torch_stream
    if not _torch_stream:
        _torch_dtype_codes, _torch_stream = _torch_codes(torch), torch._C._cuda_getCurrentRawStream


def _from_torch(x, name):
    code = _torch_dtype_codes.get(x.dtype)
    if code is None and not _torch_stream:
        _load_torch_tables(sys.modules["torch"])
        code = _torch_dtype_codes.get(x.dtype)
    if not x.is_cuda:
        raise errors.ArgumentTypeError("%s: a CUDA tensor is needed, this one is on %s" % (name, x.device))
    if code is None:
        raise errors.ArgumentTypeError("%s: element type %s is not supported (%s)" % (name, x.dtype, ", ".join(TYPE_NAMES.values())))
    if not x.is_contiguous():
        raise errors.InvalidArgumentError("%s: not contiguous (strides %s); pass x.contiguous()" % (name, x.stride()))
    return x.data_ptr(), x.numel(), code, x.get_device(), _torch_stream


def torch_fast_module():
    """The module that makes eager calls on torch tensors read in C, set up for the torch this
    process loaded: gpupeer._torchcall (python/csrc/torchcall.cpp, at::Tensor read in C++) where it
    was built for this very torch, else gpupeer._fastcall (python/csrc/fastcall.cpp, torch's methods
    called from C). Both have torch_run (one tensor: RankCommunicator) and torch_run_many (a
    tensor per rank: Communicator). None: torch is not loaded (yet), or neither module is
    there, or torch's raw current-stream function is missing. torch_call_path says which."""
    global _torch_fast_module, torch_call_path
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    if _torch_fast_module is None:
        if getattr(torch._C, "_cuda_getCurrentRawStream", None) is None:
            return None
        _load_torch_tables(torch)
        torchcall = _load_torchcall(torch)
        if torchcall is not None:
            torchcall.setup(_torch_dtype_codes)
            _torch_fast_module, torch_call_path = torchcall, "_torchcall"
        else:
            _torch_fast_module = fastcall_for_torch(torch)
            if _torch_fast_module is None:
                return None
            torch_call_path = "_fastcall"
    return _torch_fast_module


def fastcall_for_torch(torch):
    """gpupeer._fastcall set up to read this torch's tensors through their methods, or None."""
    if _fastcall is None or not hasattr(_fastcall, "torch_run_many"):
        return None
    _load_torch_tables(torch)
    _fastcall.setup_torch((torch.Tensor, torch.nn.Parameter), _torch_dtype_codes, _torch_stream)
    return _fastcall


_torch_fast_module = None
torch_call_path = "python"  # or "_torchcall", "_fastcall": how torch tensors reach the C API


def _load_torchcall(torch):
    """gpupeer._torchcall from beside the library where python/csrc/build_torchcall.py built it for
    this torch (its version and git revision), else None (torch_call_skipped says why)."""
    global torch_call_skipped
    import sysconfig

    file_name = "_torchcall" + sysconfig.get_config_var("EXT_SUFFIX")
    if os.environ.get("GPUPEER_NO_TORCHCALL") or os.environ.get("GPUPEER_NO_FASTCALL"):
        torch_call_skipped = "turned off by GPUPEER_NO_TORCHCALL or GPUPEER_NO_FASTCALL"
        return None
    module, path, error = load_beside_library("_torchcall", file_name, lib.path)
    if module is None:
        torch_call_skipped = ("%s does not import: %s" % (path, error) if error else
                              "not built: python3 python/csrc/build_torchcall.py makes %s" % path)
        return None
    want = torch_build_id(torch)
    if getattr(module, "torch_build", None) != want:
        torch_call_skipped = "%s is built for torch %s, this is torch %s" % (path, getattr(module, "torch_build", "?"),
                                                                           want)
        return None
    torch_call_skipped = None
    return module


torch_call_skipped = "torch not loaded yet"


def _pointer_device(ptr, name):
    device, err = ctypes.c_int(-1), ctypes.c_void_p()
    code = lib.gpupeer_pointer_device(ptr, ctypes.addressof(device), ctypes.addressof(err))
    if code != 0:
        from ._lib import error_from

        raise error_from(err.value, code)
    if device.value < 0:
        raise errors.ArgumentTypeError("%s: the array's memory is on the host, not on a GPU" % name)
    return device.value


def _contiguous(shape, strides, itemsize):
    expected = itemsize
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent != 1 and stride != expected:
            return False
        expected *= extent
    return True


def _count(shape):
    n = 1
    for extent in shape:
        n *= extent
    return n


def _from_cuda_array_interface(x, name):
    cai = x.__cuda_array_interface__
    code = _TYPESTRS.get(cai["typestr"])
    if code is None:
        raise errors.ArgumentTypeError("%s: element type %r is not supported" % (name, cai["typestr"]))
    shape, strides = tuple(cai["shape"]), cai.get("strides")
    if strides is not None and not _contiguous(shape, strides, ELEMENT_BYTES[code]):
        raise errors.InvalidArgumentError("%s: not contiguous (strides %s)" % (name, tuple(strides)))
    ptr = cai["data"][0] or 0
    device = getattr(getattr(x, "device", None), "id", None)  # CuPy says; others by the pointer
    if not isinstance(device, int):
        device = _pointer_device(ptr, name) if ptr else -1
    stream = _cupy_stream if type(x).__module__.startswith("cupy") else _default_stream
    return ptr, _count(shape), code, device, stream


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


def _from_dlpack(x, name):
    # The legacy "dltensor" capsule starts with a DLTensor. It is only read here and not
    # renamed, so when it is collected its destructor hands the tensor back to the producer;
    # the caller's object keeps the memory alive.
    capsule = x.__dlpack__()
    t = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    if t.device.device_type not in (_KDLCUDA, _KDLCUDA_MANAGED):
        raise errors.ArgumentTypeError("%s: a CUDA array is needed (DLPack device type %d)" % (name, t.device.device_type))
    code = _DLPACK_TYPES.get((t.dtype.code, t.dtype.bits)) if t.dtype.lanes == 1 else None
    if code is None:
        raise errors.ArgumentTypeError(
            "%s: DLPack element type (code %d, %d bits, %d lanes) is not supported"
            % (name, t.dtype.code, t.dtype.bits, t.dtype.lanes))
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides and not _contiguous(shape, [t.strides[i] * ELEMENT_BYTES[code] for i in range(t.ndim)],
                                     ELEMENT_BYTES[code]):
        raise errors.InvalidArgumentError("%s: not contiguous" % name)
    return (t.data or 0) + t.byte_offset, _count(shape), code, t.device.device_id, _default_stream


_EXTRACTORS = {}


def _extractor_for(kind):
    torch = sys.modules.get("torch")
    if torch is not None and issubclass(kind, torch.Tensor):
        return _from_torch
    if hasattr(kind, "__cuda_array_interface__"):
        return _from_cuda_array_interface
    if hasattr(kind, "__dlpack__"):
        return _from_dlpack
    return None


def buffer(x, name):
    """The buffer tuple of tensor `x`, or ArgumentTypeError/InvalidArgumentError naming `name`."""
    extract = _EXTRACTORS.get(type(x))
    if extract is None:
        extract = _extractor_for(type(x))
        if extract is None:
            raise errors.ArgumentTypeError(
                "%s: a GPU tensor (torch, CuPy, JAX, Numba: __cuda_array_interface__ or __dlpack__) is needed, not %s"
                % (name, type(x).__name__))
        _EXTRACTORS[type(x)] = extract
    return extract(x, name)


def stream_handle(stream, buf):
    """The cudaStream_t to run on: `stream` when given (an int, torch.cuda.Stream, cupy Stream
    or an object with __cuda_stream__), else the current stream of the tensor's framework
    (torch, CuPy), else the default stream (0)."""
    if stream is None:
        return buf[CURRENT_STREAM](buf[DEVICE])
    if isinstance(stream, int):
        return stream
    for attribute in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        value = getattr(stream, attribute, None)
        if isinstance(value, int):
            return value
    if hasattr(stream, "__cuda_stream__"):
        return stream.__cuda_stream__()[1]
    raise errors.ArgumentTypeError("stream: an int handle or a CUDA stream object, not %s" % type(stream).__name__)
