#!/usr/bin/env python3
"""Turn a GPU run's logs into results.jsonl: one JSON object per measured figure.

Usage: scripts/results_from_log.py RUN_DIR...   (writes RUN_DIR/results.jsonl)
       scripts/results_from_log.py --check RUN_DIR...   (exit 1 where a file is stale)

A run folder is bench/results/<machine>/<date>-<topic>/ holding the logs of scripts/gpu.sh (each
log starts with "$ COMMAND"), machine.txt (nvidia-smi's GPU list) and meta.json (the run's
commit, date, machine, GPUs and driver, which every record copies; its schema is in
scripts/results_meta.py). What is read:
`gpupeer coll` (one record per size and baseline: time in us; and busbw against the first
baseline), `gpupeer bench` (one record per pair: the median), bench/torch_collectives.py's JSON
lines files (one record per library, type, mode and size against torch.distributed), nccl-tests (one
record per size; with libgpupeer_nccl.so preloaded, against NCCL alone in the same run), the micro-benchmarks
launch_cost and ce_sm_mix, the JSON lines of scripts/explain_speed.sh and
bench/micro/python_binding_cost.py, and test runs' outcomes (googletest's and ctest's counts of
tests passed and failed, compute-sanitizer's error counts). Other logs are kept beside the results but not parsed.
Debian's python3 only.
"""
import argparse
import json
import os
import re
import statistics
import sys

# One process driving every GPU ("2 GPUs"), or one process per rank (coll --procs: "2 processes").
COLL_TITLE = re.compile(r"^# gpupeer coll (\w+)(?: --procs \d+)?: (\d+) (GPUs|processes)")
BENCH_TITLE = re.compile(r"^(\w+): .* \[(GB/s|us), median of \d+ samples\]$")
BENCH_PAIR = re.compile(r"^\s+(\S+->\S+)\s+(?:(loop|batch) )?median ([\d.]+)\s")
# bench testcases whose figure is an alternative to another testcase measured in the same call.
BENCH_BASELINE = {"staged": "ce_no_p2p", "staged_bidir": "ce_no_p2p"}
# The micro-benchmarks' rows (bench/micro): a name, two or more spaces, one or two numbers.
MICRO_ROW = re.compile(r"^(\S.*?)\s{2,}([\d.]+)(?:\s+([\d.]+))?$")
MICRO_SIZE = re.compile(r"^(\d+) MiB per direction")
# Outcomes of test runs: googletest's and ctest's summaries, compute-sanitizer's.
GTEST_SUMMARY = re.compile(r"^\[  (PASSED|FAILED)  \] (\d+) tests?(?:\.|, listed below)")
CTEST_SUMMARY = re.compile(r"^\d+% tests passed, (\d+) tests? failed out of (\d+)")
# tests/nccl_api/nccl_program.cpp: one line per rank.
PROGRAM_SUMMARY = re.compile(r"^rank (\d+) of (\d+): (\d+) checks, (\d+) wrong, (\d+) failed calls")
SANITIZER_SUMMARY = re.compile(r"^========= (?:ERROR SUMMARY: (\d+) errors?|RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?)")
SANITIZER_TOOL = re.compile(r"--tool[ =](\w+)")
# nccl-tests' rows (size, count, type, redop, root, then time, algbw, busbw, #wrong out of place
# and in place) and its binaries' names; NCCL's own runs and those with libgpupeer_nccl.so
# preloaded are told apart by GPUPEER_NCCL_ROUTE on the command line.
NCCL_TESTS_ROW = re.compile(r"^\s+(\d+)\s+(\d+)\s+\w+\s+\w+\s+-?\d+\s+([\d.]+)\s+[\d.]+\s+([\d.]+)\s+(\S+)"
                            r"\s+([\d.]+)\s+[\d.]+\s+([\d.]+)\s+(\S+)")
NCCL_TESTS_BINARY = re.compile(r"(\w+)_perf\b")
# The run's facts each record starts with, from meta.json; a record's own fields override them.
RUN_FACTS = ("commit", "date", "machine", "gpu_model", "gpu_count", "driver")


def coll_records(command, op, gpus, mode, header, row):
    """Records of one row of a coll table; `header` is the column line split at '|'."""
    groups = [g.split() for g in row.split("|")]
    # Baseline groups ("nccl us busbw #wrong ratio"), after the time and the in-place groups.
    named = [(i, h.split()[0]) for i, h in enumerate(header)
             if i >= 2 and h.split() and h.split()[0] not in ("inplace", "host")]
    size, algo = int(groups[0][0]), groups[0][5]
    # gpus: ("GPUs", n) for one process driving n GPUs; ("processes", n) for n ranks, one per
    # process, whose GPU count is the machine's (machine.txt).
    kind, n = gpus
    base = {"command": command, "op": op, "mode": mode, "bytes": size, "algo": algo}
    base.update({"gpu_count": n} if kind == "GPUs" else {"procs": n})
    if groups[1] == ["FAILED"]:  # the size did not complete: a record of that, no figure
        return [dict(base, metric=f"{op} {mode} failed", value=1, unit="sizes", baseline=None, baseline_value=None)]
    us, busbw = float(groups[1][0]), float(groups[1][2])
    baselines = [(n, groups[i]) for i, n in named if i < len(groups) and len(groups[i]) >= 2]
    out = []
    for name, g in baselines or [(None, None)]:
        out.append(dict(base, metric=f"{op} {mode} time", value=us, unit="us", baseline=name,
                        baseline_value=float(g[0]) if g else None))
    name, g = baselines[0] if baselines else (None, None)
    out.append(dict(base, metric=f"{op} {mode} busbw", value=busbw, unit="GB/s", baseline=name,
                    baseline_value=float(g[1]) if g else None))
    # coll --procs: the host's time to enqueue one eager operation.
    host = [i for i, h in enumerate(header) if h.split()[:1] == ["host"]]
    if host and mode == "eager" and host[0] < len(groups) and groups[host[0]]:
        out.append(dict(base, metric=f"{op} {mode} host time per operation", value=float(groups[host[0]][0]),
                        unit="us", baseline=None, baseline_value=None))
    return out


def nccl_tests_record(command, line):
    """One size of an nccl-tests run: the out-of-place time, the in-place one and both #wrong
    columns; the route names where the calls went (nccl: NCCL alone; table or gpupeer: with
    libgpupeer_nccl.so and that GPUPEER_NCCL_ROUTE). None for other lines."""
    binary = NCCL_TESTS_BINARY.search(command or "")
    m = NCCL_TESTS_ROW.match(line) if binary else None
    if not m:
        return None
    np_ = re.search(r"-np\s+(\d+)", command)
    g = re.search(r"-g\s+(\d+)", command)
    ranks = int(np_.group(1)) if np_ else int(g.group(1)) if g else None
    route = "nccl"
    if "libgpupeer_nccl.so" in command:
        r = re.search(r"GPUPEER_NCCL_ROUTE=(\w+)", command)
        route = r.group(1) if r else "table"
    if int(m.group(1)) == 0:  # sizes below the rank count: nothing moved
        return None
    # nccl-tests does not check some in-place runs ("N/A"): the out-of-place count then stands alone.
    wrong = [int(w) for w in (m.group(5), m.group(8)) if w.isdigit()]
    # -G N replays the calls as CUDA graphs (a graph per stream where one process drives every GPU).
    graphs = re.search(r"\s-G\s+([1-9]\d*)", command)
    mode = "graph" if graphs else "eager"
    return {"command": command, "metric": f"nccl-tests {binary.group(1)} {mode} time", "op": binary.group(1),
            "mode": mode, "bytes": int(m.group(1)), "ranks": ranks, "route": route,
            "value": float(m.group(3)), "in_place_value": float(m.group(6)), "unit": "us",
            "busbw": float(m.group(4)), "wrong": sum(wrong) if wrong else None,
            "baseline": None, "baseline_value": None}


def pair_nccl_tests(logged):
    """Each nccl-tests record with the library against NCCL alone at the same operation, rank
    count and size, from the log of the same run: the log whose name ends in -nccl where this
    one's ends in its route (final-p4-all_reduce-table.log against final-p4-all_reduce-nccl.log)."""
    def prefix(name):
        return name.rsplit("-", 1)[0]
    alone = {(prefix(n), r["op"], r["ranks"], r["bytes"]): r["value"] for n, r in logged
             if r.get("route") == "nccl" and r.get("metric", "").startswith("nccl-tests ")}
    for n, r in logged:
        if r.get("route") not in (None, "nccl") and r.get("metric", "").startswith("nccl-tests "):
            r["baseline"] = "NCCL alone"
            r["baseline_value"] = alone.get((prefix(n), r["op"], r["ranks"], r["bytes"]))


def micro_records(command, lines):
    """launch_cost: host us per call; ce_sm_mix: GB/s per direction, one way and both ways."""
    out, size = [], None
    for line in lines:
        m = MICRO_SIZE.match(line)
        if m:
            size = f"{m.group(1)} MiB"
            continue
        m = MICRO_ROW.match(line)
        if not m:
            continue
        if "gpupeer_launch_cost" in command:
            out.append({"command": command, "metric": f"launch_cost {m.group(1)}", "value": float(m.group(2)),
                        "unit": "us", "baseline": None, "baseline_value": None})
        elif "gpupeer_ce_sm_mix" in command and size and m.group(3):
            for way, value in (("one way", m.group(2)), ("both ways", m.group(3))):
                out.append({"command": command, "metric": f"ce_sm_mix {size} {m.group(1)}, {way}", "value": float(value),
                            "unit": "GB/s", "baseline": None, "baseline_value": None})
    return out


def parse_log(path):
    """Every record in one log, in order; a log may hold several commands."""
    text = open(path, encoding="utf-8", errors="replace").read().splitlines()
    if text and text[0].startswith("$ ") and ("gpupeer_launch_cost" in text[0] or "gpupeer_ce_sm_mix" in text[0]):
        return micro_records(text[0][2:], text[1:])
    records, command = [], None
    coll, header, bench = None, None, None
    bench_rows, objects = [], []
    for line in text:
        if line.startswith("$ "):
            command, coll, header, bench = line[2:], None, None, None
            continue
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except ValueError:
                obj = None
            if isinstance(obj, dict):
                objects.append((command, obj))
                continue
        m = COLL_TITLE.match(line)
        if m:
            mode = "graph" if "CUDA graph" in line else "eager"
            coll, header, bench = (m.group(1), (m.group(3), int(m.group(2))), mode), None, None
            continue
        if coll and line.startswith("#") and "size" in line and "|" in line:
            header = line.split("|")
            continue
        if coll and header and line.strip() and line.split()[0].isdigit() and "|" in line:
            records += coll_records(command, coll[0], coll[1], coll[2], header, line)
            continue
        m = BENCH_TITLE.match(line)
        if m:
            bench, coll = (m.group(1), m.group(2)), None
            continue
        row = nccl_tests_record(command, line)
        if row:
            records.append(row)
            continue
        outcome = outcome_record(command, line)
        if outcome:
            records.append(outcome)
            continue
        m = BENCH_PAIR.match(line) if bench else None
        if m:
            bench_rows.append((command, bench[0], bench[1], m.group(1), m.group(2), float(m.group(3))))
    return records + bench_records(bench_rows) + json_line_records(objects)


def outcome_record(command, line):
    """A test run's outcome as a record: tests passed or failed (googletest, ctest), errors
    compute-sanitizer reported, the NCCL program's wrong elements per rank. None where the line is no such summary."""
    m = GTEST_SUMMARY.match(line)
    if m:
        return {"command": command, "metric": f"gtest {m.group(1).lower()}", "value": int(m.group(2)), "unit": "tests",
                "baseline": None, "baseline_value": None}
    m = CTEST_SUMMARY.match(line)
    if m:
        failed, total = int(m.group(1)), int(m.group(2))
        return {"command": command, "metric": "ctest passed", "value": total - failed, "unit": "tests",
                "failed": failed, "total": total, "baseline": None, "baseline_value": None}
    m = PROGRAM_SUMMARY.match(line)
    if m:
        rank, ranks, checks, wrong, failed = (int(g) for g in m.groups())
        return {"command": command, "metric": "nccl program wrong elements", "value": wrong, "unit": "elements",
                "rank": rank, "ranks": ranks, "checks": checks, "failed_calls": failed, "baseline": None,
                "baseline_value": None}
    m = SANITIZER_SUMMARY.match(line)
    if m:
        tool = SANITIZER_TOOL.search(command or "")
        errors = m.group(1) if m.group(1) is not None else m.group(2)
        return {"command": command, "metric": f"compute-sanitizer {tool.group(1) if tool else 'memcheck'} errors",
                "value": int(errors), "unit": "errors", "baseline": None, "baseline_value": None}
    return None


def json_line_records(objects):
    """Records of the scripts that print a JSON object per measurement: scripts/explain_speed.sh
    (each run of the build's binary against the median of the baseline binary's runs on the same
    log, timed in the same call) and bench/micro/python_binding_cost.py (what the binding adds to
    an eager all-reduce against the C API call with its arguments in hand)."""
    out = []
    speeds = [(c, o) for c, o in objects if o.get("topic") == "explain-speed"]
    for command, o in speeds:
        if o.get("binary", "build") != "build":
            continue
        runs = [b["mb_per_s"] for _, b in speeds if b.get("binary") == "baseline" and b["log"] == o["log"]]
        base = round(statistics.median(runs), 3) if runs else None
        out.append({"command": command, "metric": f"explain {o['log']} log throughput", "value": o["mb_per_s"],
                    "unit": "MB/s", "baseline": "baseline binary" if base is not None else None,
                    "baseline_value": base})
    for command, o in objects:
        if "rank_added" in o:
            out.append({"command": command, "metric": "python binding per eager all_reduce", "value": o["rank_added"],
                        "unit": "us", "baseline": "C API call", "baseline_value": o.get("rank_direct")})
        if "comm_added" in o:
            out.append({"command": command, "metric": "python binding per eager all_reduce, one process on 2 GPUs",
                        "value": o["comm_added"], "unit": "us", "baseline": "C API call",
                        "baseline_value": o.get("comm_direct")})
    return out


def bench_records(rows):
    """One record per testcase and pair; a batch against its loop, staged against CUDA's staging."""
    by_key = {(r[1], r[3], r[4]): r[5] for r in rows}
    out = []
    for command, case, unit, pair, variant, value in rows:
        if variant == "loop":
            continue
        baseline, baseline_value = None, None
        if variant == "batch":
            baseline, baseline_value = "loop", by_key.get((case, pair, "loop"))
        elif case in BENCH_BASELINE:
            baseline = BENCH_BASELINE[case]
            baseline_value = by_key.get((baseline, pair, None))
        out.append({"command": command, "metric": f"bench {case} {pair}", "value": value, "unit": unit,
                    "baseline": baseline, "baseline_value": baseline_value})
    return out


def torch_records(rows):
    """bench/torch_collectives.py's rows (a JSON lines file of its own): one record per library,
    type, mode and size, against NCCL (torch.distributed) measured in the same run; each row
    names the commit it was built from."""
    nccl = {(r["dtype"], r["mode"], r["bytes"]): r["us"] for r in rows if r.get("library") == "nccl"}
    out = []
    for r in rows:
        if r.get("library") in (None, "nccl") or r.get("error"):
            continue
        out.append({"commit": r["commit"], "date": r["date"], "command": r["command"],
                    "metric": f"torch all_reduce {r['library']} {r['dtype']} {r['mode']} {r['bytes']} B",
                    "library": r["library"], "dtype": r["dtype"], "mode": r["mode"], "bytes": r["bytes"],
                    "ranks": r["world"], "value": r["us"], "unit": "us", "wrong": r["wrong"],
                    "baseline": "torch.distributed (NCCL)",
                    "baseline_value": nccl.get((r["dtype"], r["mode"], r["bytes"]))})
    return out


def run_lines(run_dir):
    """results.jsonl's text for one run folder."""
    meta = json.load(open(os.path.join(run_dir, "meta.json"), encoding="utf-8"))
    logged = []
    for name in sorted(os.listdir(run_dir)):
        path = os.path.join(run_dir, name)
        if name.endswith(".jsonl") and name != "results.jsonl":
            records = torch_records([json.loads(line) for line in open(path, encoding="utf-8") if line.strip()])
        elif name.endswith(".log"):
            records = parse_log(path)
        else:
            continue
        logged += [(name, rec) for rec in records]
    pair_nccl_tests(logged)
    lines = []
    for name, rec in logged:
        full = {key: meta[key] for key in RUN_FACTS}
        full.update(rec)
        full["log"] = name
        lines.append(json.dumps(full, sort_keys=False))
    return "".join(line + "\n" for line in lines)


def main(argv):
    # argparse, so that --help prints help instead of being taken for a run folder.
    parser = argparse.ArgumentParser(prog="scripts/results_from_log.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 where a results.jsonl is stale")
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="bench/results/<machine>/<date>-<topic>/")
    args = parser.parse_args(argv)
    check = args.check
    stale = 0
    for run_dir in args.run_dirs:
        text, path = run_lines(run_dir), os.path.join(run_dir, "results.jsonl")
        if check:
            if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
                print(f"results: {path} is not what scripts/results_from_log.py makes of the logs beside it")
                stale = 1
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"{path}: {text.count(chr(10))} records")
    return stale


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
