#!/usr/bin/env python3
"""scripts/gpu.sh run end to end on a machine without GPUs, with stand-ins for nvidia-smi and for
the gpupeer binary that replay kept logs: the steps each suite runs, the files it writes, and the
figures results_from_log.py makes of them.

Run by ctest (label cpu) or directly: python3 tests/scripts/gpu_sh_test.py
"""
import json
import os
import shutil
import subprocess
import tempfile
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import results_meta  # noqa: E402
KEPT = os.path.join(ROOT, "bench", "results", "h200x2")

NVIDIA_SMI = """#!/bin/bash
case "$*" in
  *index,name,pci*) printf 'index, name, pci.bus_id, driver_version, memory.total [MiB]\\n'
    printf '0, NVIDIA H200, 00000000:00:06.0, 580.159.04, 143771 MiB\\n1, NVIDIA H200, 00000000:00:07.0, 580.159.04, 143771 MiB\\n' ;;
  *query-gpu=index*) printf '0\\n1\\n' ;;
  *query-gpu=name*) printf 'NVIDIA H200\\nNVIDIA H200\\n' ;;
  *) echo "stand-in nvidia-smi $*" ;;
esac
"""

# Replays a kept log's output (without its "$ " line and exit line) for coll and bench.
GPUPEER = """#!/bin/bash
replay() { tail -n +2 "$1" | grep -v '^\\[exit'; }
case "$1" in
  coll) replay {kept}/2026-11-22-collectives/g2-all_reduce-graph.log ;;
  bench) replay {kept}/2026-11-22-transfer/transfer-bench.log ;;
  *) echo "stand-in gpupeer $*" ;;
esac
"""


class GpuSh(unittest.TestCase):
    def run_suite(self, suite, *args):
        tmp = tempfile.mkdtemp(prefix="gpu_sh_test.")
        self.addCleanup(shutil.rmtree, tmp)
        os.makedirs(os.path.join(tmp, "bin"))
        os.makedirs(os.path.join(tmp, "build"))
        for path, text in ((os.path.join(tmp, "bin", "nvidia-smi"), NVIDIA_SMI),
                           (os.path.join(tmp, "build", "gpupeer"), GPUPEER.replace("{kept}", KEPT))):
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o755)
        out = os.path.join(tmp, "out")
        env = dict(os.environ, PATH=os.path.join(tmp, "bin") + os.pathsep + os.environ["PATH"], GPUPEER_COMMIT="abc1234")
        env.pop("CUDA_VISIBLE_DEVICES", None)
        done = subprocess.run([os.path.join(ROOT, "scripts", "gpu.sh"), suite, "--out", out, *args], cwd=tmp, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stdout)
        # Every suite writes each field that meta.json's schema requires.
        meta = json.loads(self.read(out, "meta.json"))
        self.assertEqual([k for k in results_meta.REQUIRED if meta.get(k) is None], [])
        self.assertEqual(results_meta.about_problems(meta["about"]), [])
        return out

    def read(self, out, name):
        with open(os.path.join(out, name)) as f:
            return f.read()

    def test_coll_writes_logs_meta_and_results(self):
        out = self.run_suite("coll", "--ops", "all_reduce,broadcast")
        steps = [line.split()[0] for line in self.read(out, "summary.txt").splitlines()]
        self.assertEqual(steps, ["g2-all_reduce-graph", "g2-all_reduce-eager", "g2-all_reduce-bf16-graph",
                                 "g2-broadcast-graph", "g2-broadcast-eager", "g2-all_reduce-small-graph"])
        self.assertIn("--datatype bfloat16", self.read(out, "g2-all_reduce-bf16-graph.log").splitlines()[0])
        self.assertTrue(self.read(out, "g2-broadcast-eager.log").startswith("$ build/gpupeer coll broadcast -b 8 -e 512M"))
        meta = json.loads(self.read(out, "meta.json"))
        self.assertEqual({k: meta[k] for k in results_meta.REQUIRED if k != "about"},
                         {"commit": "abc1234", "date": meta["date"], "machine": "h200x2", "gpu_model": "NVIDIA H200",
                          "gpu_count": 2, "driver": "580.159.04",
                          "command": "scripts/gpu.sh coll --gpus 2 --max 512M --ops all_reduce,broadcast"})
        self.assertRegex(meta["date"], r"^\d{4}-\d\d-\d\d$")
        records = [json.loads(line) for line in self.read(out, "results.jsonl").splitlines()]
        first = [r for r in records if r["log"] == "g2-all_reduce-graph.log" and r["bytes"] == 8 and r["unit"] == "us"]
        self.assertEqual([(r["value"], r["baseline"], r["baseline_value"]) for r in first],
                         [(2.45, "nccl_graph", 6.89), (2.45, "nccl_symmetric", 4.70)])
        self.assertEqual({(r["machine"], r["gpu_count"], r["driver"], r["commit"]) for r in records},
                         {("h200x2", 2, "580.159.04", "abc1234")})
        # The runs without P2P: two commands per operation in one log, the second by CUDA's staging.
        self.assertEqual(self.read(out, "no-p2p.log").count("$ env NCCL_P2P_DISABLE=1"), 6)

    def test_tune_forces_every_algorithm_twice(self):
        out = self.run_suite("tune", "--ops", "reduce")
        logs = sorted(n for n in os.listdir(out) if n.endswith(".log"))
        algos = ["ce", "chain", "oneshot", "pull", "relay", "split", "table"]
        self.assertEqual(logs, sorted(f"reduce-{a}-{p}.log" for a in algos for p in (1, 2)))
        self.assertIn("GPUPEER_ALGO=chain", self.read(out, "reduce-chain-1.log").splitlines()[0])
        self.assertNotIn("GPUPEER_ALGO", self.read(out, "reduce-table-2.log").splitlines()[0])

    def test_tune_across_processes_forces_what_the_scratch_serves(self):
        out = self.run_suite("tune", "--ops", "broadcast", "--procs", "2")
        logs = sorted(n for n in os.listdir(out) if n.endswith(".log"))
        algos = ["chain", "oneshot", "relay", "table"]
        self.assertEqual(logs, sorted(f"broadcast-{a}-{p}.log" for a in algos for p in (1, 2)))
        first = self.read(out, "broadcast-relay-1.log").splitlines()[0]
        self.assertIn("GPUPEER_ALGO=relay", first)
        self.assertIn("--procs 2", first)
        self.assertNotIn(" -g ", first)
        self.assertIn("in 2 processes", json.loads(self.read(out, "meta.json"))["about"])

    def test_procs_sweeps_reducing_operations_in_bf16_too(self):
        out = self.run_suite("procs", "--ops", "reduce,alltoall")
        steps = [line.split()[0] for line in self.read(out, "summary.txt").splitlines()]
        self.assertEqual(steps, ["ctest-rank", "p2-reduce-eager", "p2-reduce-graph", "p2-reduce-bf16-graph",
                                 "p2-alltoall-eager", "p2-alltoall-graph"])
        first = self.read(out, "p2-reduce-bf16-graph.log").splitlines()[0]
        self.assertIn("--procs 2", first)
        self.assertIn("--datatype bfloat16", first)
        self.assertIn("-e 256M", first)

    def test_tests_and_bench_run_their_steps(self):
        out = self.run_suite("tests")
        steps = [line.split()[0] for line in self.read(out, "summary.txt").splitlines()]
        for name in ("ctest-gpu", "snapshot", "topo", "check", "doctor", "doctor-p2p-disabled", "explain-seed"):
            self.assertIn(name, steps)
        self.assertIn("--devices 1,0", self.read(out, "check-json.log").splitlines()[0])
        out = self.run_suite("bench")
        records = [json.loads(line) for line in self.read(out, "results.jsonl").splitlines()]
        batch = [r for r in records if r["metric"] == "bench batch_4k GPU0->GPU1"]
        self.assertEqual({(r["value"], r["baseline_value"]) for r in batch}, {(18.66, 2372.38)})

    def test_refuses_an_unknown_suite_or_option(self):
        for args in (["bogus"], ["coll", "--bogus"]):
            done = subprocess.run([os.path.join(ROOT, "scripts", "gpu.sh"), *args], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
            self.assertEqual(done.returncode, 2, done.stdout)


if __name__ == "__main__":
    unittest.main()
