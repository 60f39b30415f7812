"""Loads libgpupeer_c.so and declares the C API's functions (include/gpupeer/c_api.h).

Where the library is looked for: $GPUPEER_LIBRARY where it is set (that file and no other: a
wrong value is an ImportError naming it, never another library quietly), else, first found
wins, the package's own folder (an installed copy, scripts/install_python.sh), then
<checkout>/build and <checkout>/build-*/ (running from the source tree with PYTHONPATH=python).
"""

import ctypes
import glob
import os

from . import _c_api, errors

_HERE = os.path.dirname(os.path.abspath(__file__))
_NAME = "libgpupeer_c.so"

ALL_GATHER_FN = _c_api.gpupeer_all_gather_fn

# Every function of c_api.h with its ctypes types (_c_api.py, generated from the header). Those
# named here may be missing from a library build: a call of one says so (rank.py's _require).
_SIGNATURES = _c_api.SIGNATURES
_OPTIONAL = frozenset((
    "gpupeer_get_unique_id", "gpupeer_rank_comm_init", "gpupeer_rank_comm_init_all_gather",
    "gpupeer_rank_comm_destroy", "gpupeer_rank_comm_rank", "gpupeer_rank_comm_ranks", "gpupeer_rank_comm_device",
    "gpupeer_rank_comm_transport", "gpupeer_rank_comm_run", "gpupeer_rank_comm_send", "gpupeer_rank_comm_recv",
    "gpupeer_rank_comm_group_start", "gpupeer_rank_comm_group_end", "gpupeer_rank_comm_check_error",
    "gpupeer_rank_comm_abort", "gpupeer_rank_comm_register_buffer", "gpupeer_rank_comm_deregister_buffer",
    "gpupeer_rank_comm_registration_mechanism", "gpupeer_mem_alloc", "gpupeer_mem_free",
    "gpupeer_snapshot_text", "gpupeer_report"))

EXPECTED_C_API_VERSION = _c_api.GPUPEER_C_API_VERSION


def candidates():
    """The paths tried, in order."""
    if os.environ.get("GPUPEER_LIBRARY"):
        return [os.environ["GPUPEER_LIBRARY"]]
    found = []
    found.append(os.path.join(_HERE, _NAME))
    checkout = os.path.dirname(os.path.dirname(_HERE))
    found.append(os.path.join(checkout, "build", _NAME))
    found.extend(sorted(glob.glob(os.path.join(checkout, "build-*", _NAME))))
    return found


def _open(path):
    named = "GPUPEER_LIBRARY=%s" % path if os.environ.get("GPUPEER_LIBRARY") else path
    if not os.path.isfile(path):
        raise ImportError("gpupeer: %s is not a file; set GPUPEER_LIBRARY to the path of %s" % (named, _NAME))
    try:
        return ctypes.CDLL(path)
    except OSError as e:  # not a library, another architecture, a library it needs missing
        reason = str(e)
        if reason.startswith(path + ": "):
            reason = reason[len(path) + 2:]
        raise ImportError("gpupeer: %s cannot be loaded as %s: %s" % (named, _NAME, reason)) from None


def _load():
    tried = candidates()
    if os.environ.get("GPUPEER_LIBRARY"):
        lib, path = _open(tried[0]), tried[0]
    else:
        path = next((p for p in tried if os.path.isfile(p)), None)
        if path is None:
            raise ImportError(
                "gpupeer: %s not found (tried %s); build it with scripts/install_python.sh or set GPUPEER_LIBRARY"
                % (_NAME, ", ".join(tried))
            )
        lib = _open(path)
    for name, (restype, argtypes) in _SIGNATURES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            if name not in _OPTIONAL:
                raise ImportError("gpupeer: %s lacks %s: rebuild it" % (path, name)) from None
            continue
        fn.restype, fn.argtypes = restype, argtypes
    if lib.gpupeer_c_api_version() != EXPECTED_C_API_VERSION:
        raise ImportError(
            "gpupeer: %s has C API version %d, this package expects %d"
            % (path, lib.gpupeer_c_api_version(), EXPECTED_C_API_VERSION)
        )
    lib.path = path
    return lib


lib = _load()


def load_beside_library(name, file_name, library_path=None):
    """The extension module gpupeer.<name> from the file `file_name` beside the library
    (`library_path`, default the loaded one's): (module, path, None); (None, path, None) where
    the file is not there; (None, path, the ImportError's text) where it does not import."""
    import importlib.util

    path = os.path.join(os.path.dirname(library_path or lib.path), file_name)
    if not os.path.isfile(path):
        return None, path, None
    try:
        spec = importlib.util.spec_from_file_location("gpupeer." + name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError as e:  # built for another Python, or against other libraries
        return None, path, str(e)
    return module, path, None


# gpupeer._fastcall (python/csrc/fastcall.cpp), or None: the eager call then goes through ctypes.
_fastcall = None if os.environ.get("GPUPEER_NO_FASTCALL") else load_beside_library("_fastcall", "_fastcall.abi3.so")[0]


def _through_ctypes(function, *args):
    return function(*args)


def run_entry(name):
    """(call, target) for a C API function with run10's signature: call(target, *ten_args) runs
    it, through gpupeer._fastcall where it was built, else through ctypes."""
    if not has(name):
        return _through_ctypes, None
    function = getattr(lib, name)
    if _fastcall is None:
        return _through_ctypes, function
    return _fastcall.run10, ctypes.cast(function, ctypes.c_void_p).value


def has(name):
    """Whether this build of the library has `name` (the one-process-per-GPU entries may be absent)."""
    return hasattr(lib, name)


def _text(raw):
    # A byte that is not UTF-8 (in a file name) as \xNN: printable anywhere, and what the binary
    # shows for it.
    return raw.decode("utf-8", "backslashreplace") if raw else ""


def error_from(record, code):
    """The exception for a gpupeer_error* (freed here)."""
    if not record:
        return errors.BY_CODE.get(code, errors.InternalError)("gpupeer failed with code %d (no details)" % code)
    try:
        cls = errors.BY_CODE.get(lib.gpupeer_error_code(record), errors.InternalError)
        return cls(
            _text(lib.gpupeer_error_message(record)),
            api_error=_text(lib.gpupeer_error_api_name(record)),
            api_error_text=_text(lib.gpupeer_error_api_text(record)),
            kb_id=_text(lib.gpupeer_error_kb_id(record)),
            call=_text(lib.gpupeer_error_call(record)),
            location=_text(lib.gpupeer_error_location(record)),
            text=_text(lib.gpupeer_error_text(record)),
        )
    finally:
        lib.gpupeer_error_free(record)


class ErrorSlot:
    """A gpupeer_error* that C fills on failure, kept per object so a call allocates nothing."""

    __slots__ = ("cell", "address")

    def __init__(self):
        self.cell = ctypes.c_void_p()
        self.address = ctypes.addressof(self.cell)

    def raise_for(self, code):
        record, self.cell.value = self.cell.value, None
        raise error_from(record, code)


def call_for_string(fn, *args, extra=None):
    """Calls a C API function whose last arguments are (char** out, [extra output,]
    gpupeer_error**) and returns the string it produced, or raises its error. `extra` is a
    ctypes object for the output between them."""
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    tail = (ctypes.addressof(out),) + ((ctypes.addressof(extra),) if extra is not None else ())
    code = fn(*args, *tail, ctypes.addressof(err))
    if code != 0:
        raise error_from(err.value, code)
    try:
        # Bytes that are not UTF-8 (a log line shown as it was) are kept, as U+DC80..U+DCFF, for
        # the CLI to print as the binary prints them.
        return ctypes.string_at(out.value).decode("utf-8", "surrogateescape")
    finally:
        lib.gpupeer_string_free(out.value)


INT_MIN, INT_MAX = -(2**31), 2**31 - 1


def int_arg(value, name, low=INT_MIN, high=INT_MAX):
    """`value` checked to be an int from `low` to `high` (by default a C int's range), for an
    argument that ctypes would otherwise cut to its C type without a word (2**32 + 5 read as 5)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise errors.ArgumentTypeError("%s: an int, not %s" % (name, type(value).__name__))
    if not low <= value <= high:
        raise errors.InvalidArgumentError("%s: %d is out of range (%d to %d)" % (name, value, low, high))
    return value


def path_bytes(path, name):
    """A path (str, bytes or os.PathLike) as the bytes the C API takes; a str that no file name
    can hold (a lone surrogate that did not come from undecodable bytes) and a NUL byte, which
    would end the name early in C, are refused by name."""
    try:
        raw = os.fsencode(path)
    except UnicodeEncodeError as e:
        raise errors.InvalidArgumentError(
            "%s: %r at position %d cannot be part of a file name" % (name, e.object[e.start], e.start)) from None
    if b"\0" in raw:
        raise errors.InvalidArgumentError(
            "%s: a NUL byte at position %d cannot be part of a file name" % (name, raw.index(b"\0")))
    return raw


def text_bytes(text, name):
    """A str for a C string argument (a title, a footer line): UTF-8, with the bytes of a command
    line that was not UTF-8 (surrogateescape) given back as they were; a lone surrogate or a NUL
    byte is refused by name."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as e:
        raise errors.InvalidArgumentError(
            "%s: %r at position %d is a lone surrogate, not text" % (name, e.object[e.start], e.start)) from None
    if b"\0" in raw:
        raise errors.InvalidArgumentError("%s: a NUL byte at position %d" % (name, raw.index(b"\0")))
    return raw
