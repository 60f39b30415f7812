#!/usr/bin/env python3
"""Whether two runs of torch_program.py agree: every check passed in both and their digests match."""
import argparse
import json
import sys


def read(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("plain", help="JSON lines of the run without the library")
    parser.add_argument("preloaded", help="JSON lines of the run with it")
    args = parser.parse_args()
    a = {r["check"]: r for r in read(args.plain) if "check" in r}
    b = {r["check"]: r for r in read(args.preloaded) if "check" in r}
    problems = []
    if a.keys() != b.keys():
        problems.append(f"different checks: {sorted(a.keys() ^ b.keys())[:5]}")
    for name in sorted(a.keys() & b.keys()):
        if not a[name]["ok"] or not b[name]["ok"]:
            problems.append(f"{name}: wrong values ({'without' if not a[name]['ok'] else 'with'} the library)")
        elif a[name]["digest"] != b[name]["digest"]:
            problems.append(f"{name}: results differ between the runs")
    for p in problems:
        print(p)
    print(f"{len(a)} checks compared, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
