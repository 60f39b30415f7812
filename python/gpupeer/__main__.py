"""python -m gpupeer doctor|topo|check|explain|snapshot: the CLI's commands, for machines where
only the Python package is installed. Same output and exit codes as the ``gpupeer`` binary:
0 ok, 1 failed check / error finding / nothing matched, 2 usage or bad input, 3 not applicable
(no GPU), 4 error; doctor 5 for warnings only."""

import argparse
import sys

from . import diagnosis, errors

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NOT_APPLICABLE, EXIT_ERROR, EXIT_WARNINGS = 0, 1, 2, 3, 4, 5


def _format(args):
    return diagnosis.JSON if args.json else diagnosis.TEXT


def _doctor(args):
    document, worst = diagnosis.render_doctor(args.snapshot, not args.no_gpu_actions, _format(args))
    sys.stdout.write(document)
    return {"error": EXIT_FAILED, "warning": EXIT_WARNINGS}.get(worst, EXIT_OK)


def _topo(args):
    sys.stdout.write(diagnosis.render_topology(args.snapshot, _format(args)))
    return EXIT_OK


def _check(args):
    devices = [int(d) for d in args.devices.split(",")] if args.devices else None
    document, failed = diagnosis.render_check(devices, args.size_mib, _format(args))
    sys.stdout.write(document)
    return EXIT_FAILED if failed else EXIT_OK


def _explain(args):
    if bool(args.text) == bool(args.file):
        print("gpupeer explain: give either the error text, -f LOG, or - to read standard input", file=sys.stderr)
        return EXIT_USAGE
    if args.file == "-" or args.text == ["-"]:
        document, matches = diagnosis.render_explain(sys.stdin.read(), args.kb, args.top, _format(args), False)
    elif args.file:
        document, matches = diagnosis.render_explain(args.file, args.kb, args.top, _format(args), True)
    else:
        document, matches = diagnosis.render_explain(" ".join(args.text), args.kb, args.top, _format(args), False)
    sys.stdout.write(document)
    return EXIT_OK if matches else EXIT_FAILED


def _snapshot(args):
    import json

    document = diagnosis.load_snapshot(args.snapshot) if args.snapshot else diagnosis.snapshot()
    text = json.dumps(document, indent=2) + "\n"
    if args.output:
        with open(args.output, "w") as out:
            out.write(text)
        print("snapshot written to %s" % args.output)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def parser():
    p = argparse.ArgumentParser(prog="python -m gpupeer", description=__doc__.split("\n\n")[0])
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
    c.set_defaults(run=_check)

    e = sub.add_parser("explain", help="explain an error message or a log")
    e.add_argument("text", nargs="*", help="the error message (words are joined), or - for stdin")
    e.add_argument("-f", "--file", help="read this log file (- for stdin)")
    e.add_argument("--kb", action="append", default=[], help="also load KB entries from this directory")
    e.add_argument("--json", action="store_true")
    e.add_argument("--top", type=int, default=5, help="show at most N matches (0 = all)")
    e.set_defaults(run=_explain)

    s = sub.add_parser("snapshot", help="the machine's snapshot as JSON")
    s.add_argument("--snapshot", help="check and print this snapshot file instead")
    s.add_argument("-o", "--output", help="write it to this file")
    s.set_defaults(run=_snapshot)
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except errors.GpupeerError as e:
        print("gpupeer: error: %s" % e.text, file=sys.stderr)
        if isinstance(e, (errors.InvalidArgumentError, errors.ArgumentTypeError, errors.ParseError,
                          errors.NotFoundError)):
            return EXIT_USAGE
        return EXIT_NOT_APPLICABLE if isinstance(e, errors.UnsupportedError) else EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
