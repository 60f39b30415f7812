"""python -m gpupeer doctor|topo|check|explain|snapshot|report: the CLI's commands, for machines where
only the Python package is installed. Same output and exit codes as the ``gpupeer`` binary:
0 ok, 1 failed check / error finding / nothing matched, 2 usage or bad input, 3 not applicable
(no GPU), 4 error; doctor 5 for warnings only."""

import argparse
import os
import re
import signal
import sys

from . import __version__, _output_file, diagnosis, errors
from ._terminal import terminal_safe

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NOT_APPLICABLE, EXIT_ERROR, EXIT_WARNINGS = 0, 1, 2, 3, 4, 5


def _format(args):
    return diagnosis.JSON if args.json else diagnosis.TEXT


class _StdoutError(Exception):
    """Standard output could not be written (closed, a full disk): its errno."""


def _write_bytes(data):
    stream = getattr(sys.stdout, "buffer", sys.stdout)
    if stream is None:  # started with standard output closed (>&-)
        raise _StdoutError(9)  # EBADF, what the binary's write gets
    try:
        stream.write(data)
    except BrokenPipeError:
        raise
    except OSError as e:
        raise _StdoutError(e.errno) from None


def _out(text, args=None):
    """Writes the library's document (or a line) as the binary writes it: byte for byte, text
    for people with its control characters shown (terminal_safe), JSON as it is."""
    if args is None or not args.json:
        text = terminal_safe(text)
    _write_bytes(text.encode("utf-8", "surrogateescape"))


def _err(text):
    if sys.stderr is not None:
        print(terminal_safe(text), file=sys.stderr)


def _doctor(args):
    document, worst = diagnosis.render_doctor(args.snapshot, not args.no_gpu_actions, _format(args))
    _out(document, args)
    return {diagnosis.NO_GPU: EXIT_NOT_APPLICABLE, "error": EXIT_FAILED, "warning": EXIT_WARNINGS}.get(worst, EXIT_OK)


def _no_gpu(prefix, error):
    # The binary's words for a machine without GPUs: the reason alone, no error code or source line.
    _err("%s: %s" % (prefix, error.message))
    return EXIT_NOT_APPLICABLE


def _topo(args):
    try:
        _out(diagnosis.render_topology(args.snapshot, _format(args)), args)
    except errors.UnsupportedError as e:
        return _no_gpu("gpupeer", e)
    return EXIT_OK


class _UsageError(Exception):
    """A bad argument found before the library is asked, with the binary's message."""


# A device number as the binary reads one (std::stoi of the whole item: spaces before, a sign).
_DEVICE_NUMBER = re.compile(r"\s*[+-]?\d+")


def _device_list(text):
    """-d as the binary reads it: None for every GPU; an item that is no number is a usage error
    in the binary's words (the numbers themselves are checked against the GPUs by the library)."""
    if text is None:
        return None
    if text == "":
        raise _UsageError("--devices: '' names no device\nRun with --help for more information.")
    devices = []
    for item in text.split(","):
        # In the binary's order and words (parseDeviceList, src/check/check_report.cpp), before the
        # machine is probed: a list that is wrong in itself is wrong with or without a GPU.
        if not _DEVICE_NUMBER.fullmatch(item) or not -2**31 <= int(item) < 2**31:
            raise _UsageError("gpupeer: error: invalid-argument: device list '%s': '%s' is not a device number"
                              % (text, item))
        if int(item) < 0:
            raise _UsageError("gpupeer: error: invalid-argument: device %d does not exist: device numbers start at 0"
                              % int(item))
        if int(item) in devices:
            raise _UsageError("gpupeer: error: invalid-argument: device %d is listed twice in '%s'" % (int(item), text))
        devices.append(int(item))
    return devices


def _check(args):
    # In the binary's order: --ipc ignores --size-mib, which is checked before the device list.
    if args.ipc:
        return _check_ipc(args, _device_list(args.devices))
    if not 1 <= args.size_mib <= 4096:
        raise _UsageError("gpupeer check: --size-mib must be between 1 and 4096")
    devices = _device_list(args.devices)
    try:
        document, failed = diagnosis.render_check(devices, args.size_mib, _format(args))
    except errors.UnsupportedError as e:
        return _no_gpu("gpupeer check", e)
    _out(document, args)
    return EXIT_FAILED if failed else EXIT_OK


def _check_ipc(args, devices):
    try:
        document, failed = diagnosis.render_check_ipc(devices, _format(args))
    except errors.UnsupportedError as e:
        return _no_gpu("gpupeer check --ipc", e)
    _out(document, args)
    return EXIT_FAILED if failed else EXIT_OK


def _standard_input():
    # Streamed by the library from the descriptor, as the binary streams it: any size, any bytes
    # (NUL, not UTF-8), never decoded here.
    try:
        os.fstat(0)
    except OSError:
        raise _UsageError("gpupeer explain: standard input is closed; give the text or --file LOG") from None
    return "/dev/stdin"


def _explain(args):
    if args.short_file is not None:  # -f is the sweeps' size factor in every subcommand of the binary
        _err("gpupeer explain: -f is the size factor of bench and coll sweeps; read a log with --file %s"
             % args.short_file)
        return EXIT_USAGE
    if not args.text and not args.file:
        _err("gpupeer explain: give the error text, --file LOG, or - to read standard input (see --help)")
        return EXIT_USAGE
    if args.text and args.file:
        _err("gpupeer explain: give either the error text or --file LOG, not both")
        return EXIT_USAGE
    if args.file == "-" or args.text == ["-"]:
        document, matches = diagnosis.render_explain(_standard_input(), args.kb, args.top, _format(args), True)
    elif args.file:
        if os.path.isdir(args.file):
            raise _UsageError("gpupeer explain: '%s' is a folder; give a log file" % args.file)
        document, matches = diagnosis.render_explain(args.file, args.kb, args.top, _format(args), True)
    else:
        # The words as the shell gave them: bytes that are not UTF-8 go to the library as they are.
        text = b" ".join(os.fsencode(word) for word in args.text)
        document, matches = diagnosis.render_explain(text, args.kb, args.top, _format(args), False)
    _out(document, args)
    return EXIT_OK if matches else EXIT_FAILED


def _snapshot(args):
    # The library's texts as they are, so that they are byte for byte the binary's.
    if args.output is not None:  # "" too, which the writer refuses, as the binary does
        _output_file.write_output_file(args.output, diagnosis.render_snapshot(args.snapshot))
        _out("snapshot written to %s\n" % args.output)
    elif args.json:
        _out(diagnosis.render_snapshot(args.snapshot), args)  # JSON as it is
    else:
        _out(diagnosis.render_snapshot_summary(args.snapshot))
    return EXIT_OK


def _report(args):
    # The binary's footer line, word for word, so that the two pages are the same bytes.
    generated_by = "gpupeer %s report from %s" % (__version__, args.snapshot or "the machine, probed")
    generated_by += "".join(", " + f for f in args.results)
    page, warnings, counts = diagnosis.render_report(args.snapshot, args.results, args.title, generated_by)
    for warning in warnings:
        _err("gpupeer report: %s" % warning)
    _output_file.write_output_file(args.output, page)
    _out("report written to %s (%d GPU(s), %d bench result(s), %d collective table(s), %d record(s))\n"
         % ((args.output,) + counts))
    return EXIT_OK


class _Parser(argparse.ArgumentParser):
    """argparse, writing --help and --version through _out (a failed write is said, not lost)
    and its errors with their control characters shown."""

    def _print_message(self, message, file=None):
        if not message:
            return
        if file is None or file is sys.stdout:
            _out(message)
        elif sys.stderr is not None:
            sys.stderr.write(terminal_safe(message))

    def exit(self, status=0, message=None):
        if status == 0:
            _flush()
        super().exit(status, message)


def parser():
    p = _Parser(prog="python -m gpupeer", description=__doc__.split("\n\n")[0])
    p.add_argument("--version", action="version", version="gpupeer " + __version__)
    sub = p.add_subparsers(dest="command", required=True)
    snapshot_help = "analyse this snapshot file instead of the machine; nothing on the machine is touched"

    d = sub.add_parser("doctor", help="say what is wrong with P2P here and what to do")
    d.add_argument("--json", action="store_true")
    d.add_argument("--no-gpu-actions", action="store_true", help="only the rules over the snapshot")
    d.add_argument("--snapshot", help=snapshot_help)
    d.set_defaults(run=_doctor)

    t = sub.add_parser("topo", help="topology matrix and P2P status of every pair")
    t.add_argument("--json", action="store_true")
    t.add_argument("--snapshot", help=snapshot_help)
    t.set_defaults(run=_topo)

    c = sub.add_parser("check", help="enable P2P and verify data on every ordered pair")
    c.add_argument("-d", "--devices", help="GPUs to check, e.g. 0,1,3 (default: all)")
    c.add_argument("--size-mib", type=int, default=32)
    c.add_argument("--json", action="store_true")
    c.add_argument("--ipc", action="store_true", help="check instead that a second process can share GPU memory "
                   "(cudaIpc handles, cuMem file descriptors)")
    c.set_defaults(run=_check)

    e = sub.add_parser("explain", help="explain an error message or a log")
    e.add_argument("text", nargs="*", help="the error message (words are joined), or - for stdin")
    e.add_argument("--file", help="read this log file (- for stdin)")
    e.add_argument("-f", dest="short_file", help=argparse.SUPPRESS)
    e.add_argument("--kb", action="append", default=[], help="also load KB entries from this directory")
    e.add_argument("--json", action="store_true")
    e.add_argument("--top", type=int, default=5, help="show at most N matches (0 = all)")
    e.set_defaults(run=_explain)

    s = sub.add_parser("snapshot", help="the machine's snapshot as JSON")
    s.add_argument("--snapshot", help="check and print this snapshot file instead")
    s.add_argument("--json", action="store_true", help="print the snapshot as JSON")
    s.add_argument("-o", "--output", help="write it to this file")
    s.set_defaults(run=_snapshot)

    r = sub.add_parser("report", help="one self-contained HTML page: topology, P2P, findings, bandwidth, collectives")
    r.add_argument("-o", "--output", default="gpupeer-report.html", help="the HTML file to write")
    r.add_argument("--results", nargs="+", action="extend", default=[],
                   help="results files: gpupeer bench --json lines, gpupeer coll -o or --json files, results records")
    r.add_argument("--title", help="page title (default: gpupeer report: <host>)")
    r.add_argument("--snapshot", help=snapshot_help)
    r.set_defaults(run=_report)
    return p


def _die_of_broken_pipe():
    # As the binary and git: a reader that stopped early (| head) ends us quietly by SIGPIPE, which
    # Python ignores and turns into BrokenPipeError.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)


def _flush():
    # Here, where a failure can still be caught, not at exit.
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as e:
        raise _StdoutError(e.errno) from None


def _forget_stdout():
    # What could not be written is dropped, so that Python's own flush at exit does not fail
    # again with a traceback of its own.
    if sys.stdout is not None:
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())
            os.close(null)
        except (OSError, ValueError):
            sys.stdout = None


def _refuse_before_parsing(argv):
    # As the binary: a first word that is an option of no command is named (argparse would only
    # say that a command is required).
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        raise _UsageError("gpupeer: unknown option '%s' (see --help)" % argv[0])


def _refuse_after_parsing(args):
    # An empty --snapshot would read as "not given" (probe the machine): refused as the binary
    # refuses it.
    if getattr(args, "snapshot", None) == "":
        raise _UsageError("--snapshot: an empty file name\nRun with --help for more information.")


def _run(argv):
    try:
        _refuse_before_parsing(sys.argv[1:] if argv is None else argv)
        args = parser().parse_args(argv)  # SystemExit: 2 on a bad command line, 0 after --help
        _refuse_after_parsing(args)
        code = args.run(args)
        _flush()
        return code
    except BrokenPipeError:
        _die_of_broken_pipe()
    except _StdoutError as e:
        _forget_stdout()
        _err("gpupeer: error: cannot write standard output: %s" % os.strerror(e.args[0] or 5))
        return EXIT_ERROR
    except _UsageError as e:
        _err(str(e))
        return EXIT_USAGE
    except errors.GpupeerError as e:
        usage = isinstance(e, (errors.InvalidArgumentError, errors.ArgumentTypeError, errors.ParseError,
                               errors.NotFoundError))
        not_applicable = isinstance(e, errors.UnsupportedError)
        text = e.text
        # As the binary: bad input and a machine that cannot do this are the user's to fix, said
        # without gpupeer's source line; gpupeer's own failures keep it, for a bug report.
        if (usage or not_applicable) and e.location and text.endswith(" at " + e.location):
            text = text[:-len(" at " + e.location)]
        _err("gpupeer: error: %s" % text)
        return EXIT_USAGE if usage else EXIT_NOT_APPLICABLE if not_applicable else EXIT_ERROR


def main(argv=None):
    if sys.stderr is None:  # started with standard error closed: its lines go nowhere, quietly
        sys.stderr = open(os.devnull, "w")
    return _run(argv)


if __name__ == "__main__":
    sys.exit(main())
