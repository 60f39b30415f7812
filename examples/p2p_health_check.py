#!/usr/bin/env python3
"""P2P health check: what gpupeer's doctor says about this machine, the topology, and (with two
GPUs or more) a data check of every ordered pair. Exit 0 healthy, 1 errors, 5 warnings only,
3 no GPU.

    PYTHONPATH=python python3 examples/p2p_health_check.py [--snapshot FILE]
"""

import argparse
import sys

import gpupeer


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshot", help="diagnose this snapshot file instead of this machine")
    args = parser.parse_args()

    snap = gpupeer.load_snapshot(args.snapshot) if args.snapshot else gpupeer.snapshot()
    gpus = snap["gpus"]
    if not gpus:
        print("no GPU visible; doctor's reason:", gpupeer.doctor(snap)["verdict"])
        return 3
    for g in gpus:
        print("GPU%d %s %s" % (g["index"], g["name"], g["pciBusId"]))

    topo = gpupeer.topology(args.snapshot or None)
    print("topology: %d GPUs, pairs by path: %s" % (len(gpus), _path_counts(topo)))

    report = gpupeer.doctor(args.snapshot or None, gpu_actions=not args.snapshot)
    print("doctor:", report["verdict"])
    for f in report["findings"]:
        print("  [%s] %s%s" % (f["severity"], f["title"], "  (KB %s)" % f["kbId"] if f["kbId"] else ""))
    if "check" in report:
        c = report["check"]
        print("data check: %d passed, %d failed, %d skipped" % (c["passed"], c["failed"], c["skipped"]))
    for gbps in report.get("copyEngineGBps", []):
        print("  GPU%d -> GPU%d %.0f GB/s by copy engine" % (gbps["src"], gbps["dst"], gbps["gbps"]))
    return {"error": 1, "warning": 5}.get(report["worst"], 0)


def _path_counts(topo):
    counts = {}
    for row in topo.get("pairs", []):
        key = "%s (P2P %s)" % (row["path"], row["p2p"])
        counts[key] = counts.get(key, 0) + 1
    return ", ".join("%s x%d" % kv for kv in sorted(counts.items())) or "n/a"


if __name__ == "__main__":
    sys.exit(main())
