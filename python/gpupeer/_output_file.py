"""The file ``python -m gpupeer snapshot -o F`` and ``report -o F`` write, written by the library's
writer (src/core/output_file.cpp, through gpupeer_write_output_file), the one the binary uses:
what the shell's ``>`` would do, without its damage.

A regular file is written to a temporary file beside it and renamed over it, so a failure (a full
disk) leaves the old one as it was, keeping its mode; a FIFO or a device (/dev/null) is written
where it is, never replaced; a file ``>`` would refuse is refused before anything is written."""

import ctypes

from . import _lib, errors


def write_output_file(path, text):
    """Writes ``text`` (str, written as UTF-8; bytes as they are) to ``path``. Raises
    InvalidArgumentError for an empty name or a folder, SystemCallError naming ``path`` for the
    rest, as the binary words them."""
    if not _lib.has("gpupeer_write_output_file"):
        raise errors.UnsupportedError("%s has no gpupeer_write_output_file: rebuild it" % _lib.lib.path)
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape")
    err = ctypes.c_void_p()
    code = _lib.lib.gpupeer_write_output_file(_lib.path_bytes(path, "path"), data, len(data),
                                              ctypes.addressof(err))
    if code != 0:
        raise _lib.error_from(err.value, code)
