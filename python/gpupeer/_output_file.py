"""The file ``python -m gpupeer snapshot -o F`` writes, written as the binary writes it (the
library's writer, src/core/output_file.cpp): what the shell's ``>`` would do, without its damage.

A regular file is written to a temporary file beside it and renamed over it, so a failure (a full
disk) leaves the old one as it was, keeping its mode; a FIFO or a device (/dev/null) is written
where it is, never replaced; a file ``>`` would refuse is refused before anything is written."""

import itertools
import os
import stat

from . import errors

_counter = itertools.count()


def _error(kind, message):
    # Worded as the binary words a Status: "system: cannot write ...".
    return kind(message, text="%s: %s" % (kind.code_name, message))


def _cannot_write(path, error):
    return _error(errors.SystemCallError, "cannot write '%s': %s" % (path, error.strerror or error))


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _write_in_place(path, data, flags):
    fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC | flags, 0o666)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def _create_temporary_beside(path):
    # Named as the library names it, so that a long file name does not make it too long.
    folder = os.path.dirname(path)
    for _ in range(100):
        temp = os.path.join(folder, ".gpupeer-%d-%d.tmp" % (os.getpid(), next(_counter)))
        try:
            return temp, os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOCTTY | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(17, "a hundred stale temporary files", path)


def _replace_whole(file, data, old):
    temp, fd = _create_temporary_beside(file)
    try:
        try:
            _write_all(fd, data)
            if old is not None:
                try:  # only root (or an owner in the group) may; anyone else gets a file of their own
                    os.fchown(fd, old.st_uid, old.st_gid)
                except OSError:
                    pass
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, file)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def write_output_file(path, text):
    """Writes ``text`` (str, written as UTF-8) to ``path``. Raises InvalidArgumentError for an
    empty name or a folder, SystemCallError naming ``path`` for the rest."""
    if not path:
        raise _error(errors.InvalidArgumentError, "the output file name is empty")
    data = text.encode("utf-8")
    try:
        try:
            target = os.stat(path)
        except FileNotFoundError:
            if os.path.islink(path):  # a link to nothing: `>` creates the file it names
                _write_in_place(path, data, os.O_CREAT)
            else:
                _replace_whole(path, data, None)
            return
        if stat.S_ISDIR(target.st_mode):
            raise _error(errors.InvalidArgumentError, "cannot write '%s': it is a folder; give a file name" % path)
        if not stat.S_ISREG(target.st_mode):
            _write_in_place(path, data, 0)
            return
        file = os.path.realpath(path)  # replace the file a symbolic link names, not the link
        # Refused where `>` would be: opening it for writing asks the kernel what `>` asks.
        os.close(os.open(file, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC | os.O_NONBLOCK))
        _replace_whole(file, data, target)
    except OSError as e:
        raise _cannot_write(path, e) from None
