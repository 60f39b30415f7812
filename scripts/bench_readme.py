#!/usr/bin/env python3
"""Write bench/README.md from the results.jsonl files under bench/results/<machine>/<run>/.

Usage: scripts/bench_readme.py           (rewrites bench/README.md)
       scripts/bench_readme.py --check   (exit 1 where bench/README.md or a results.jsonl is stale)
Both exit 1 where a run's meta.json does not follow scripts/results_meta.py's schema.

Per machine: the runs (what each measured, commit, date, a link), the newest
`<date>-collectives` run as one table per operation (gpupeer against each baseline of the same
call, eager and in CUDA graphs), the newest all-reduce from PyTorch (bench/torch_collectives.py)
per rank count and type, and every bench and micro-benchmark figure with its baseline. Debian's python3 only.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

from results_meta import meta_problems

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")
README = os.path.join(ROOT, "bench", "README.md")
OPS = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv"]


def size_text(n):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def load_runs():
    """{machine: [(run name, meta, records)]}, runs in name order (the date leads the name)."""
    machines = {}
    for path in sorted(glob.glob(os.path.join(RESULTS, "*", "*", "results.jsonl"))):
        run_dir = os.path.dirname(path)
        meta = json.load(open(os.path.join(run_dir, "meta.json"), encoding="utf-8"))
        records = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
        machine = os.path.basename(os.path.dirname(run_dir))
        machines.setdefault(machine, []).append((os.path.basename(run_dir), meta, records))
    return machines


def ratio(base, ours):
    return f"{base / ours:.2f}x" if base and ours else "-"


def coll_tables(run, records):
    """One table per operation: each size's first record per (mode, baseline), table's choice only."""
    cells, algos = {}, {}
    for r in records:
        if r.get("unit") != "us" or not r.get("baseline") or "GPUPEER_ALGO" in r["command"]:
            continue
        key = (r["op"], r["bytes"])
        cells.setdefault(key, {}).setdefault((r["mode"], r["baseline"]), (r["value"], r["baseline_value"], r["log"]))
        algos.setdefault(key, r["algo"])
    out = []
    for op in OPS:
        sizes = sorted(b for (o, b) in cells if o == op)
        if not sizes:
            continue
        columns = sorted({c for b in sizes for c in cells[(op, b)]}, key=lambda c: (c[0] != "graph", c[1]))
        logs = sorted({v[2] for b in sizes for v in cells[(op, b)].values()})
        out.append(f"#### {op} (" + ", ".join(f"[{log}]({run}/{log})" for log in logs) + ")\n")
        head = ["size", "algo"] + [f"{mode}: gpupeer us / {base} us" for mode, base in columns]
        out.append("| " + " | ".join(head) + " |")
        out.append("| " + " | ".join(["---"] * len(head)) + " |")
        for b in sizes:
            row = [size_text(b), algos[(op, b)]]
            for c in columns:
                v = cells[(op, b)].get(c)
                row.append(f"{v[0]:.2f} / {v[1]:.2f} ({ratio(v[1], v[0])})" if v and v[1] else "-")
            out.append("| " + " | ".join(row) + " |")
        out.append("")
    return out


OUTCOME_UNITS = ("tests", "errors", "elements")  # test runs' outcomes: no figure of speed, no baseline


TORCH_LIBRARIES = ("gpupeer", "gpupeer_reg", "nccl", "symm_one_shot", "symm_two_shot")


def torch_tables(run, records):
    """bench/torch_collectives.py's newest rows per rank count: one table per rank count and
    type, the libraries' times side by side (NCCL's from the baseline of the same run)."""
    rows = [r for r in records if r["metric"].startswith("torch ")]
    out = []
    for ranks in sorted({r["ranks"] for r in rows}):
        mine = [r for r in rows if r["ranks"] == ranks]
        newest = max(r["date"] for r in mine)
        mine = [r for r in mine if r["date"] == newest]
        cell = {(r["dtype"], r["mode"], r["bytes"], r["library"]): r for r in mine}
        for r in mine:
            cell.setdefault((r["dtype"], r["mode"], r["bytes"], "nccl"), {"value": r["baseline_value"]})
        logs = sorted({r["log"] for r in mine})
        for dtype in sorted({r["dtype"] for r in mine}):
            out.append(f"#### {ranks} processes, {dtype}, commit {mine[0]['commit']} (" +
                       ", ".join(f"[{log}]({run}/{log})" for log in logs) + ")\n")
            head = ["size"] + [f"{mode}: {lib} us" for mode in ("graph", "eager") for lib in TORCH_LIBRARIES]
            head += ["graph: NCCL / gpupeer"]
            out += ["| " + " | ".join(head) + " |", "| " + " | ".join(["---"] * len(head)) + " |"]
            for b in sorted({r["bytes"] for r in mine if r["dtype"] == dtype}):
                row = [size_text(b)]
                for mode in ("graph", "eager"):
                    for lib in TORCH_LIBRARIES:
                        v = cell.get((dtype, mode, b, lib))
                        row.append(f"{v['value']:.2f}" if v and v.get("value") else "-")
                ours, nccl = cell.get((dtype, "graph", b, "gpupeer")), cell.get((dtype, "graph", b, "nccl"))
                row.append(ratio(nccl["value"], ours["value"]) if ours and nccl else "-")
                out.append("| " + " | ".join(row) + " |")
            out.append("")
    return out


def bench_table(run, records):
    # bench testcases and the micro-benchmarks
    rows = [r for r in records if "op" not in r and r["unit"] not in OUTCOME_UNITS and
            not r["metric"].startswith("torch ")]
    if not rows:
        return []
    out = [f"#### {run}\n", "| testcase, pair | value | baseline | ratio | log |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        base = f"{r['baseline']}: {r['baseline_value']} {r['unit']}" if r["baseline_value"] else "-"
        better = ratio(r["baseline_value"], r["value"]) if r["unit"] == "us" else ratio(r["value"], r["baseline_value"])
        metric = r["metric"][6:] if r["metric"].startswith("bench ") else r["metric"]
        out.append(f"| {metric} | {r['value']} {r['unit']} | {base} | "
                   f"{better if r['baseline_value'] else '-'} | [{r['log']}]({run}/{r['log']}) |")
    return out + [""]


def outcome_table(run, records):
    rows = [r for r in records if r["unit"] in OUTCOME_UNITS]
    if not rows:
        return []
    # One line per log and outcome: the NCCL program's per-rank counts are summed over its ranks.
    lines = {}
    for i, r in enumerate(rows):
        key = (r["log"], r["metric"]) if r["unit"] == "elements" else (r["log"], r["metric"], i)
        lines[key] = lines.get(key, 0) + r["value"]
    out = [f"#### {run}\n", "| log | outcome | value |", "| --- | --- | --- |"]
    out += [f"| [{key[0]}]({run}/{key[0]}) | {key[1]} | {value} |" for key, value in lines.items()]
    return out + [""]


def render():
    out = ["# Measurements", "",
           "Generated by `scripts/bench_readme.py` from `bench/results/<machine>/<date>-<topic>/results.jsonl`",
           "(made from the logs beside them by `scripts/results_from_log.py`); do not edit by hand.",
           "Each figure comes from one log, which starts with its exact command; baselines ran in the same",
           "call. Method: [docs/measurement-method.md](../docs/measurement-method.md); how to make a run:",
           "[docs/gpu-machine.md](../docs/gpu-machine.md). Ratios are the baseline's time / gpupeer's",
           "(above 1.00x gpupeer is faster) or gpupeer's rate / the baseline's.", ""]
    for machine, runs in sorted(load_runs().items()):
        newest = runs[-1][1]
        out += [f"## {machine}: {newest['gpu_model']}, driver {newest['driver']}", "",
                "| run | date | commit | what it measured | figures |", "| --- | --- | --- | --- | --- |"]
        for name, meta, records in runs:
            out.append(f"| [{name}](results/{machine}/{name}/) | {meta['date']} | {meta['commit']} | {meta['about']} | "
                       f"{len(records)} |")
        out.append("")
        coll = [r for r in runs if r[0].endswith("-collectives")]
        if coll:
            name, meta, records = coll[-1]
            gpus = max(r.get("gpu_count") or 0 for r in records)
            out += [f"### Collectives on {gpus} GPUs against NCCL ({name}, commit {meta['commit']})", "",
                    "Float, sum; `graph`: 20 operations captured in one CUDA graph, replayed 10 times; `eager`: 5 warm-up",
                    "and 20 timed back-to-back operations; `nccl_symmetric`: NCCL in graphs with symmetric windows.", ""]
            out += coll_tables(f"results/{machine}/{name}", records)
        torch = [r for r in runs if any(x["metric"].startswith("torch ") for x in r[2])]
        if torch:
            name, meta, records = torch[-1]
            out += [f"### All-reduce from PyTorch, one process per GPU ({name})", "",
                    "`bench/torch_collectives.py`: gpupeer (`gpupeer_reg`: on a registered buffer), torch.distributed",
                    "(NCCL) and PyTorch SymmetricMemory's one-shot and two-shot kernels in the same run; `graph`: 20",
                    "calls captured in one CUDA graph, replayed 10 times; every result checked (0 wrong).", ""]
            out += torch_tables(f"results/{machine}/{name}", records)
        bench = [line for name, _, records in runs for line in bench_table(f"results/{machine}/{name}", records)]
        if bench:
            out += ["### Bandwidth, latency and host costs (`gpupeer bench`: median per pair; micro-benchmarks)", ""]
            out += bench
        outcomes = [line for name, _, records in runs for line in outcome_table(f"results/{machine}/{name}", records)]
        if outcomes:
            out += ["### Test runs (googletest and ctest: tests passed or failed; compute-sanitizer: errors; the NCCL program: wrong elements over its ranks)", ""]
            out += outcomes
    return "\n".join(out).rstrip("\n") + "\n"


def parse_args(argv):
    # argparse, so that --help (or a mistyped option) prints help instead of rewriting the page.
    parser = argparse.ArgumentParser(prog="scripts/bench_readme.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 where bench/README.md or a results.jsonl is stale")
    return parser.parse_args(argv)


def meta_errors():
    """One line per field of a meta.json that breaks the schema."""
    out = []
    for path in sorted(glob.glob(os.path.join(RESULTS, "*", "*", "meta.json"))):
        run_dir = os.path.dirname(path)
        try:
            meta = json.load(open(path, encoding="utf-8"))
        except ValueError as e:
            out.append(f"{os.path.relpath(path, ROOT)}: not JSON: {e}")
            continue
        out += [f"{os.path.relpath(path, ROOT)}: {p}" for p in meta_problems(meta, run_dir)]
    return out


def main(argv):
    args = parse_args(argv)
    errors = meta_errors()
    if errors:
        print("results: meta.json files that break the schema in scripts/results_meta.py:")
        print("\n".join("  " + e for e in errors))
        return 1
    text = render()
    if args.check:
        runs = sorted(glob.glob(os.path.join(RESULTS, "*", "*", "")))
        stale = subprocess.call([sys.executable, os.path.join(ROOT, "scripts", "results_from_log.py"), "--check"] + runs)
        if open(README, encoding="utf-8").read() != text:
            print("results: bench/README.md is not what scripts/bench_readme.py makes of bench/results")
            stale = 1
        if stale == 0:
            print(f"results: bench/README.md and {len(runs)} results.jsonl files are up to date")
        return stale
    with open(README, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
