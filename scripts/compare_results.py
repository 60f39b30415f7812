#!/usr/bin/env python3
"""Compare a new results.jsonl with a kept one and flag the figures that got worse.

Usage: scripts/compare_results.py NEW [--against KEPT] [--time-threshold 0.15] [--rate-threshold 0.05]

NEW and KEPT are results.jsonl files or run folders holding one. Without --against, KEPT is the
newest bench/results/<machine>/<date>-<topic>/ of NEW's machine (its records' `machine`) and
topic (NEW's folder name after the date; --topic names another), NEW's own folder excepted.

Rows pair when they measure the same thing: the same metric, operation, mode, size, type,
library, route, rank, process and GPU counts and unit, and the same settings on the command
line (VAR=VALUE assignments, --datatype); repeated rows (two passes) count by their median.
A time (us) regresses when it grows by more than --time-threshold, a rate (GB/s, MB/s) when it
falls by more than --rate-threshold; the defaults are MSCCL++'s (check_perf_result.py). coll's
bus bandwidth is left out (it restates the time of its row), and so are test outcomes (tests,
errors). Beside each regression the change of the baseline measured in the same call: when
NCCL slowed down as much, the machine did, not gpupeer.

Exit status: 0 when nothing regressed, 1 when something did, 2 when nothing could be paired or
the files are missing. Debian's python3 only.
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIME_UNITS = ("us",)
RATE_UNITS = ("GB/s", "MB/s")
# The fields that say what a row measured (everything else is the figure or where it came from).
# The baseline is not one of them: a coll row is repeated per baseline with the same figure of
# gpupeer's, and a run without --baseline measures gpupeer all the same.
KEY_FIELDS = ("metric", "op", "mode", "bytes", "dtype", "library", "route", "ranks", "procs", "gpu_count", "unit")
ASSIGNMENT = re.compile(r"^[A-Z][A-Z0-9_]*=.")  # VAR= alone sets nothing
DATATYPE_FLAGS = ("-d", "--datatype")


def command_settings(command):
    """What on a command line changes the measurement but is not in the row: environment
    assignments (GPUPEER_ALGO=split) and the data type of `gpupeer coll`."""
    words = (command or "").split()
    settings = sorted(w for w in words if ASSIGNMENT.match(w))
    for flag, value in zip(words, words[1:]):
        if flag in DATATYPE_FLAGS:
            settings.append(f"datatype={value}")
    return tuple(settings)


def row_key(row):
    """(the row's identifying fields as (name, value) pairs, its command's settings)."""
    return tuple((f, row[f]) for f in KEY_FIELDS if row.get(f) is not None), command_settings(row.get("command"))


def load(path):
    """({key: (median value, {baseline: median baseline value})} of a results.jsonl's figures,
    its rows)."""
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    values, baselines = {}, {}
    for row in rows:
        if row.get("unit") not in TIME_UNITS + RATE_UNITS or not isinstance(row.get("value"), (int, float)):
            continue
        if row.get("metric", "").endswith(" busbw"):  # coll's bus bandwidth is its time, restated
            continue
        key = row_key(row)
        values.setdefault(key, []).append(row["value"])
        if row.get("baseline") and isinstance(row.get("baseline_value"), (int, float)):
            baselines.setdefault(key, {}).setdefault(row["baseline"], []).append(row["baseline_value"])
    return {k: (statistics.median(v), {b: statistics.median(x) for b, x in baselines.get(k, {}).items()})
            for k, v in values.items()}, rows


def results_file(path):
    return os.path.join(path, "results.jsonl") if os.path.isdir(path) else path


def kept_run(new_path, rows, topic, results_root):
    """The newest kept results.jsonl of the same machine and topic, or None."""
    machines = {r.get("machine") for r in rows if r.get("machine")}
    folder = os.path.basename(os.path.dirname(os.path.abspath(new_path)))
    topic = topic or re.sub(r"^\d{4}-\d\d-\d\d-", "", folder)
    if len(machines) != 1 or not topic:
        return None
    candidates = sorted(glob.glob(os.path.join(results_root, machines.pop(), f"????-??-??-{topic}", "results.jsonl")))
    candidates = [c for c in candidates if os.path.abspath(c) != os.path.abspath(new_path)]
    return candidates[-1] if candidates else None


def change(new, old):
    return (new - old) / old if old else 0.0


def compare(kept, new, time_threshold, rate_threshold):
    """(pairs compared, [(key, old, new, change, (baseline, its change) or None)] that regressed)."""
    pairs, regressions = 0, []
    for key in sorted(set(kept) & set(new), key=str):
        (old, old_base), (now, now_base) = kept[key], new[key]
        if not old:  # a figure of 0 has no relative change
            continue
        pairs += 1
        delta = change(now, old)
        worse = delta > time_threshold if dict(key[0])["unit"] in TIME_UNITS else -delta > rate_threshold
        if worse:
            both = sorted(b for b in set(old_base) & set(now_base) if old_base[b])
            base = (both[0], change(now_base[both[0]], old_base[both[0]])) if both else None
            regressions.append((key, old, now, delta, base))
    return pairs, regressions


def describe(key):
    fields = dict(key[0])
    parts = [fields.pop("metric")]
    parts += [f"{v} B" if f == "bytes" else f"{f} {v}" for f, v in fields.items() if f not in ("unit", "op", "mode")]
    return ", ".join(parts + list(key[1]))


def main(argv):
    parser = argparse.ArgumentParser(prog="scripts/compare_results.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("new", metavar="NEW", help="a results.jsonl or the run folder holding it")
    parser.add_argument("--against", metavar="KEPT", help="the results.jsonl (or run folder) to compare with")
    parser.add_argument("--topic", help="the kept run's topic when NEW's folder name does not say it (collectives)")
    parser.add_argument("--results", default=os.path.join(ROOT, "bench", "results"),
                        help="where kept runs are looked for (default: bench/results)")
    parser.add_argument("--time-threshold", type=float, default=0.15, help="largest growth of a time (0.15: +15%%)")
    parser.add_argument("--rate-threshold", type=float, default=0.05, help="largest fall of a rate (0.05: -5%%)")
    args = parser.parse_args(argv)
    new_path = results_file(args.new)
    if not os.path.isfile(new_path):
        print(f"compare: no {new_path}")
        return 2
    new, new_rows = load(new_path)
    kept_path = results_file(args.against) if args.against else kept_run(new_path, new_rows, args.topic, args.results)
    if not kept_path or not os.path.isfile(kept_path):
        print(f"compare: no kept run to compare {new_path} with (name one with --against, or its topic with --topic)")
        return 2
    kept, _ = load(kept_path)
    pairs, regressions = compare(kept, new, args.time_threshold, args.rate_threshold)
    print(f"compare: {os.path.relpath(new_path)} against {os.path.relpath(kept_path)}: {pairs} figures paired, "
          f"{len(set(new) - set(kept))} new only, {len(set(kept) - set(new))} kept only")
    if not pairs:
        return 2
    for key, old, now, delta, base in regressions:
        unit = dict(key[0])["unit"]
        base_text = f"; {base[0]} {base[1]:+.1%}" if base else ""
        print(f"  REGRESSION {describe(key)}: {old:g} -> {now:g} {unit} ({delta:+.1%}{base_text})")
    print(f"compare: {len(regressions)} regressions past +{args.time_threshold:.0%} time / "
          f"-{args.rate_threshold:.0%} rate")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
