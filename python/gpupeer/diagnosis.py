"""Machine and diagnosis: the CLI's --json documents as Python dicts.

Each function returns what ``gpupeer <command> --json`` prints, parsed with json.loads, so a
script can move between the CLI and Python without relearning field names. A ``snapshot``
argument is a path to a snapshot file, a dict from snapshot()/load_snapshot(), or None to read
this machine. The ``render_*`` functions give the CLI's text for people instead.
"""

import ctypes
import json
import os

from . import _c_api, _lib, errors
from ._lib import lib

JSON, TEXT = _c_api.GPUPEER_FORMAT_JSON, _c_api.GPUPEER_FORMAT_TEXT


def _source(snapshot):
    """(path, json_text) for the C API's snapshot source."""
    if snapshot is None:
        return None, None
    if isinstance(snapshot, dict):
        return None, json.dumps(snapshot).encode()
    if isinstance(snapshot, (str, bytes, os.PathLike)):
        return _lib.path_bytes(snapshot, "snapshot"), None
    raise errors.ArgumentTypeError(
        "snapshot: a path, a dict from gpupeer.snapshot() or None, not %s" % type(snapshot).__name__)


def render_snapshot(path=None):
    """``gpupeer snapshot --json``'s text: of the snapshot file at `path` (checked), else of
    this machine."""
    return _lib.call_for_string(lib.gpupeer_snapshot_json, _lib.path_bytes(path, "path") if path else None, None)


def render_snapshot_summary(path=None):
    """What ``gpupeer snapshot`` prints without --json: a few lines on the host, the versions and
    each GPU, of the snapshot file at `path` (checked), else of this machine."""
    if not _lib.has("gpupeer_snapshot_text"):
        raise errors.UnsupportedError("%s has no gpupeer_snapshot_text: rebuild it" % lib.path)
    return _lib.call_for_string(lib.gpupeer_snapshot_text, _lib.path_bytes(path, "path") if path else None, None)


def snapshot():
    """This machine's snapshot (GPUs, links, PCIe, NUMA, driver, environment) as a dict.

    Never fails for lack of a GPU: what cannot be read is recorded as {"unknown": reason}.
    """
    return json.loads(render_snapshot())


def load_snapshot(path):
    """A snapshot file (from ``gpupeer snapshot -o FILE``), checked, as a dict.

    Raises NotFoundError for a missing file and ParseError naming the line or field that is wrong.
    """
    return json.loads(render_snapshot(path))


def render_topology(snapshot=None, format=TEXT):
    path, text = _source(snapshot)
    return _lib.call_for_string(lib.gpupeer_topology, path, text, format)


def topology(snapshot=None):
    """``gpupeer topo --json``: the path class of every pair (NV#, PIX, PXB, PHB, NODE, SYS) and
    its P2P status. UnsupportedError when the snapshot has no GPU."""
    return json.loads(render_topology(snapshot, JSON))


def render_check(devices=None, size_mib=32, format=TEXT):
    """(document, number of failed checks)."""
    if not isinstance(size_mib, int) or not 1 <= size_mib <= 4096:
        raise errors.InvalidArgumentError("size_mib: between 1 and 4096, not %r" % (size_mib,))
    if devices is None:
        array, count = None, 0
    else:
        devices = list(devices)
        if not all(isinstance(d, int) for d in devices):
            raise errors.ArgumentTypeError("devices: a list of device ordinals (ints)")
        for d in devices:
            _lib.int_arg(d, "devices")
        array, count = (ctypes.c_int * len(devices))(*devices), len(devices)
    failed = ctypes.c_int(0)
    document = _lib.call_for_string(lib.gpupeer_check, array, count, size_mib << 20, format, extra=failed)
    return document, failed.value


def render_check_ipc(devices=None, format=TEXT):
    """(document, number of ways of sharing that failed) of ``gpupeer check --ipc``: whether a
    second process can share memory of the first GPU of `devices` (None: GPU 0) by CUDA IPC
    handle and by cuMem file descriptor. Raises UnsupportedError without a GPU, its message the
    reason and what in the process's surroundings stands in the way."""
    if not _lib.has("gpupeer_check_ipc"):
        raise errors.UnsupportedError("%s has no gpupeer_check_ipc: rebuild it" % lib.path)
    if devices is None:
        array, count = None, 0
    else:
        devices = list(devices)
        for d in devices:
            _lib.int_arg(d, "devices")
        array, count = (ctypes.c_int * len(devices))(*devices), len(devices)
    failed = ctypes.c_int(0)
    document = _lib.call_for_string(lib.gpupeer_check_ipc, array, count, format, extra=failed)
    return document, failed.value


def check_ipc(device=None):
    """``gpupeer check --ipc --json`` as a dict: sharing GPU `device`'s memory (None: GPU 0)
    with a second process, each way with its outcome, why it failed and the KB entry."""
    return json.loads(render_check_ipc(None if device is None else [device], JSON)[0])


def check(devices=None, size_mib=32):
    """``gpupeer check --json``: enables P2P on every ordered pair of `devices` (default all)
    and verifies the bytes moved by copy engine and kernels. Needs GPUs."""
    return json.loads(render_check(devices, size_mib, JSON)[0])


NO_GPU = "no GPU"  # render_doctor's second value for a snapshot without GPUs
# gpupeer_doctor's *worst as render_doctor gives it.
_WORST = {_c_api.GPUPEER_DOCTOR_NO_GPU: NO_GPU, _c_api.GPUPEER_DOCTOR_NO_FINDING: None,
          _c_api.GPUPEER_SEVERITY_INFO: "info", _c_api.GPUPEER_SEVERITY_WARNING: "warning",
          _c_api.GPUPEER_SEVERITY_ERROR: "error"}


def render_doctor(snapshot=None, gpu_actions=True, format=TEXT):
    """(document, worst severity: None, "info", "warning" or "error"; NO_GPU when the snapshot
    has no GPU and no error was found, as the CLI then exits 3)."""
    path, text = _source(snapshot)
    worst = ctypes.c_int(_c_api.GPUPEER_DOCTOR_NO_FINDING)
    document = _lib.call_for_string(lib.gpupeer_doctor, path, text, 1 if gpu_actions else 0, format, extra=worst)
    return document, _WORST[worst.value]


def doctor(snapshot=None, gpu_actions=True):
    """``gpupeer doctor --json``: verdict, findings (worst first, each with its KB id and first
    workaround) and what was not run. On this machine (snapshot None) with `gpu_actions` it also
    runs the P2P data check and a copy-engine bandwidth per pair."""
    return json.loads(render_doctor(snapshot, gpu_actions, JSON)[0])


def render_report(snapshot=None, results=(), title=None, generated_by=""):
    """``gpupeer report``'s page: (HTML text, the results lines that were skipped, (GPUs, bench
    results, collective tables, records) on the page). `results` are paths of ``gpupeer bench
    --json`` lines, ``gpupeer coll`` JSON documents or results records; `title` None gives
    "gpupeer report: <host>"; `generated_by` is the footer line."""
    if not _lib.has("gpupeer_report"):
        raise errors.UnsupportedError("%s has no gpupeer_report: rebuild it" % lib.path)
    path, text = _source(snapshot)
    files = [_lib.path_bytes(f, "results") for f in results]
    array = (ctypes.c_char_p * len(files))(*files) if files else None
    out, skipped, err = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    counts = (ctypes.c_size_t * 4)()
    code = lib.gpupeer_report(path, text, array, len(files), _lib.text_bytes(title or "", "title"),
                              _lib.text_bytes(generated_by, "generated_by"),
                              ctypes.addressof(out), ctypes.addressof(skipped), counts, ctypes.addressof(err))
    if code != 0:
        raise _lib.error_from(err.value, code)
    try:
        # A title or file name that was not UTF-8 is on the page as the binary puts it, byte for
        # byte: kept as U+DC80..U+DCFF for the writer to give back.
        page = ctypes.string_at(out.value).decode("utf-8", "surrogateescape")
        warnings = ctypes.string_at(skipped.value).decode("utf-8", "surrogateescape").splitlines()
    finally:
        lib.gpupeer_string_free(out.value)
        lib.gpupeer_string_free(skipped.value)
    return page, warnings, tuple(counts)


def _is_log_file(text_or_path):
    if isinstance(text_or_path, os.PathLike):
        return True
    return isinstance(text_or_path, str) and "\n" not in text_or_path and os.path.isfile(text_or_path)


def _message_bytes(text):
    """An error message as the C API takes it: bytes as they are (the CLI's words, as the shell
    gave them), a str as UTF-8; a str that UTF-8 cannot hold (a lone surrogate) is refused by
    name."""
    if isinstance(text, bytes):
        if b"\0" in text:
            raise errors.InvalidArgumentError("text_or_path: a NUL byte at position %d; give a log with it as a path"
                                              % text.index(b"\0"))
        return text
    try:
        text = str(text).encode("utf-8")
    except UnicodeEncodeError as e:
        raise errors.InvalidArgumentError(
            "text_or_path: %r at position %d is a lone surrogate, not text"
            % (e.object[e.start], e.start)) from None
    return _message_bytes(text)


def render_explain(text_or_path, kb_dirs=(), top=5, format=TEXT, is_file=None):
    """(document, number of KB entries that matched). `text_or_path` may also be bytes: the
    message as the command line gave it."""
    if not isinstance(top, int) or top < 0:
        raise errors.InvalidArgumentError("top: a count of matches (0 = all), not %r" % (top,))
    _lib.int_arg(top, "top", 0, 2**63 - 1)
    if not isinstance(text_or_path, (str, bytes, os.PathLike)):
        raise errors.ArgumentTypeError(
            "text_or_path: an error message or a log path, not %s" % type(text_or_path).__name__)
    if isinstance(kb_dirs, (str, bytes, os.PathLike)):  # one folder, not a list of one-letter folders
        raise errors.ArgumentTypeError("kb_dirs: a list of KB folders, not one %s" % type(kb_dirs).__name__)
    dirs = [_lib.path_bytes(d, "kb_dirs") for d in kb_dirs]
    array = (ctypes.c_char_p * len(dirs))(*dirs) if dirs else None
    if _is_log_file(text_or_path) if is_file is None else is_file:
        text, path = None, _lib.path_bytes(text_or_path, "text_or_path")
    else:
        text, path = _message_bytes(text_or_path), None
        if not text.strip():
            raise errors.InvalidArgumentError("text_or_path: empty")
    matches = ctypes.c_size_t(0)
    document = _lib.call_for_string(lib.gpupeer_explain, text, path, array, len(dirs), top, format, extra=matches)
    return document, matches.value


def explain(text_or_path, kb_dirs=(), top=5):
    """``gpupeer explain --json``: which known failures an error message or a log file shows,
    ranked, each with its cause, dead ends and workarounds. `text_or_path` is the message, or a
    path to a log (any size, streamed). `kb_dirs` adds KB directories; `top` 0 means every match.
    """
    if isinstance(text_or_path, bytes):
        raise errors.ArgumentTypeError("text_or_path: an error message (str) or a log path, not bytes")
    return json.loads(render_explain(text_or_path, kb_dirs, top, JSON)[0])
