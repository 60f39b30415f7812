#!/usr/bin/env python3
"""Known-answer tests of scripts/results_from_log.py and scripts/bench_readme.py on kept logs.

Run by ctest (label cpu) or directly: python3 tests/scripts/results_from_log_test.py
"""
import os
import contextlib
import io
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_readme  # noqa: E402
import results_from_log  # noqa: E402
import results_meta  # noqa: E402

RESULTS = os.path.join(ROOT, "bench", "results")


def log(machine, run, name):
    return os.path.join(RESULTS, machine, run, name)


class CollTable(unittest.TestCase):
    def test_graph_row_against_both_baselines(self):
        recs = results_from_log.parse_log(log("h200x2", "2026-11-22-collectives", "g2-all_reduce-graph.log"))
        first = [r for r in recs if r["bytes"] == 8]
        times = {r["baseline"]: (r["value"], r["baseline_value"]) for r in first if r["unit"] == "us"}
        self.assertEqual(times, {"nccl_graph": (2.45, 6.89), "nccl_symmetric": (2.45, 4.70)})
        busbw = [r for r in first if r["unit"] == "GB/s"]
        self.assertEqual(len(busbw), 1)
        self.assertEqual((busbw[0]["baseline"], busbw[0]["op"], busbw[0]["mode"]), ("nccl_graph", "all_reduce", "graph"))
        last = [r for r in recs if r["bytes"] == 536870912 and r["unit"] == "GB/s"][0]
        self.assertEqual((last["algo"], last["value"], last["baseline_value"]), ("ce", 359.48, 315.13))

    def test_several_commands_in_one_log(self):
        recs = results_from_log.parse_log(log("h200x4", "2026-11-22-no-p2p", "no-p2p-g2.log"))
        gather = [r for r in recs if r["op"] == "all_gather" and r["bytes"] == 268435456 and r["unit"] == "us"]
        self.assertEqual([(r["value"], r["baseline"]) for r in gather], [(2952.57, "nccl"), (4150.66, None)])
        self.assertIn("GPUPEER_STAGING=cuda", gather[1]["command"])
        self.assertTrue(all(r["gpu_count"] == 2 for r in recs))

    def test_forced_algorithm_without_baseline(self):
        recs = results_from_log.parse_log(log("h200x2", "2026-11-22-large-messages", "all_reduce-split-1.log"))
        row = [r for r in recs if r["bytes"] == 33554432 and r["unit"] == "us"][0]
        self.assertEqual((row["algo"], row["value"], row["baseline"]), ("split", 105.38, None))

    def test_a_failed_size_is_a_record_not_a_figure(self):
        recs = results_from_log.parse_log(log("h200x2", "2026-11-28-shared-gpus", "p3-shared-reduce-bf16-avg-graph.log"))
        self.assertEqual([(r["metric"], r["bytes"], r["value"], r["procs"]) for r in recs],
                         [("reduce graph failed", 8, 1, 3)])


class NcclProgram(unittest.TestCase):
    def test_each_rank_wrong_elements_as_a_figure(self):
        recs = results_from_log.parse_log(log("h200x4", "2026-11-27-nccl-api", "program-p4-table-1.log"))
        wrong = {r["rank"]: r["value"] for r in recs if r["metric"] == "nccl program wrong elements"}
        self.assertEqual(wrong, {0: 0, 1: 0, 2: 0, 3: 32768})
        self.assertTrue(all(r["checks"] == 480 and r["ranks"] == 4 for r in recs))


class BenchTable(unittest.TestCase):
    def test_batch_against_its_loop_and_staged_against_cuda(self):
        recs = results_from_log.parse_log(log("h200x2", "2026-11-22-transfer", "transfer-bench.log"))
        by = {r["metric"]: r for r in recs}
        batch = by["bench batch_4k GPU0->GPU1"]
        self.assertEqual((batch["value"], batch["baseline"], batch["baseline_value"]), (18.66, "loop", 2372.38))
        staged = by["bench staged GPU0->GPU1"]
        self.assertEqual((staged["value"], staged["baseline"], staged["baseline_value"]), (52.88, "ce_no_p2p", 38.02))
        self.assertEqual(by["bench h2d host->GPU0"]["value"], 54.13)


class MicroBenchmarks(unittest.TestCase):
    def test_launch_cost_and_ce_sm_mix(self):
        run = "2026-11-22-host-and-link-floors"
        records = results_from_log.parse_log(log("h200x2", run, "launch-cost-1.log"))
        self.assertEqual(len(records), 20)  # "barriers: ok" and the header are not figures
        cost = {r["metric"]: r["value"] for r in records}
        self.assertEqual(cost["launch_cost gpupeer all-reduce of nothing, out of place"], 0.814)
        self.assertEqual(cost["launch_cost launch: two GPUs from two threads"], 4.167)
        mix = {r["metric"]: r["value"] for r in results_from_log.parse_log(log("h200x2", run, "ce-sm-mix-64M.log"))}
        self.assertEqual(mix["ce_sm_mix 64 MiB copy engine alone, both ways"], 367.5)
        self.assertEqual(mix["ce_sm_mix 64 MiB SM push alone, one way"], 348.9)


class JsonLines(unittest.TestCase):
    def test_python_binding_cost_against_the_c_api_call(self):
        recs = results_from_log.parse_log(log("h100x1", "2026-11-25-gpu-tests", "python-binding-cost.log"))
        self.assertEqual([(r["metric"], r["value"], r["baseline"], r["baseline_value"]) for r in recs],
                         [("python binding per eager all_reduce", 2.171, "C API call", 0.944)])

    def test_explain_speed_runs_against_the_baseline_median(self):
        objects = [(cmd, {"topic": "explain-speed", "binary": b, "log": "benign", "mb_per_s": v})
                   for cmd, b, v in (("x", "build", 200.0), ("x", "baseline", 50.0), ("x", "build", 210.0),
                                     ("x", "baseline", 70.0), ("x", "baseline", 60.0))]
        recs = results_from_log.json_line_records(objects + [("x", {"other": 1})])
        self.assertEqual([(r["metric"], r["value"], r["baseline_value"]) for r in recs],
                         [("explain benign log throughput", 200.0, 60.0),
                          ("explain benign log throughput", 210.0, 60.0)])


class TorchRows(unittest.TestCase):
    def row(self, library, us, dtype="bf16", mode="graph", nbytes=8, wrong=0, error=""):
        return {"commit": "abc1234", "date": "2026-11-27T01:00:00+00:00", "command": "bench/torch_collectives.py",
                "world": 2, "library": library, "dtype": dtype, "mode": mode, "bytes": nbytes, "us": us,
                "wrong": wrong, "error": error}

    def test_every_library_but_nccl_against_nccl_of_its_own_size_type_and_mode(self):
        rows = [self.row("gpupeer", 2.5), self.row("nccl", 6.0), self.row("nccl", 9.0, mode="eager"),
                self.row("gpupeer", 8.0, mode="eager", wrong=3), self.row("symm_two_shot", 6.3),
                self.row("gpupeer_reg", 0.0, error="RuntimeError: refused")]
        recs = results_from_log.torch_records(rows)
        self.assertEqual([(r["metric"], r["value"], r["baseline_value"], r["wrong"], r["ranks"]) for r in recs],
                         [("torch all_reduce gpupeer bf16 graph 8 B", 2.5, 6.0, 0, 2),
                          ("torch all_reduce gpupeer bf16 eager 8 B", 8.0, 9.0, 3, 2),
                          ("torch all_reduce symm_two_shot bf16 graph 8 B", 6.3, 6.0, 0, 2)])
        self.assertTrue(all(r["commit"] == "abc1234" and r["unit"] == "us" for r in recs))


class Outcomes(unittest.TestCase):
    def test_sanitizer_errors_by_tool_and_tests_passed(self):
        run = "2026-11-25-compute-sanitizer"
        recs = results_from_log.parse_log(log("h100x2", run, "sanitize-racecheck.log"))
        self.assertEqual([(r["metric"], r["value"]) for r in recs],
                         [("gtest passed", 16), ("compute-sanitizer racecheck errors", 832)])
        recs = results_from_log.parse_log(log("h100x2", run, "sanitize-memcheck.log"))
        self.assertEqual([(r["metric"], r["value"]) for r in recs],
                         [("gtest passed", 16), ("compute-sanitizer memcheck errors", 0)])

    def test_ctest_and_gtest_failures(self):
        lines = ["ctest -L gpu", "98% tests passed, 2 tests failed out of 80", "build/tests/gpupeer_gpu_tests",
                 "[  PASSED  ] 3 tests.", "[  FAILED  ] 1 test, listed below:", "[  FAILED  ] Suite.Name (8 ms)"]
        recs = [results_from_log.outcome_record(cmd, line) for cmd, line in
                [(lines[0], lines[1]), (lines[2], lines[3]), (lines[2], lines[4]), (lines[2], lines[5])]]
        self.assertEqual(recs[0], {"command": "ctest -L gpu", "metric": "ctest passed", "value": 78, "unit": "tests",
                                   "failed": 2, "total": 80, "baseline": None, "baseline_value": None})
        self.assertEqual([(r["metric"], r["value"]) for r in recs[1:3]], [("gtest passed", 3), ("gtest failed", 1)])
        self.assertIsNone(recs[3])


class Pages(unittest.TestCase):
    def test_machine_facts(self):
        facts = results_meta.machine_facts(os.path.join(RESULTS, "h200x4", "2026-11-22-collectives"))
        self.assertEqual(facts, {"date": "2026-11-22", "gpu_model": "NVIDIA H200", "gpu_count": 4,
                                 "driver": "580.159.04"})
        # nvidia-smi's default table, as some runs kept it
        facts = results_meta.machine_facts(os.path.join(RESULTS, "h100x2", "2026-11-25-multi-process-timing"))
        self.assertEqual(facts, {"date": "2026-11-25", "gpu_model": "NVIDIA H100 80GB HBM3", "gpu_count": 2,
                                 "driver": "580.159.04"})


class MetaSchema(unittest.TestCase):
    RUN = os.path.join(RESULTS, "h200x4", "2026-11-22-collectives")

    def meta(self, **changes):
        meta = {"commit": "6af5db5", "date": "2026-11-22", "machine": "h200x4", "gpu_model": "NVIDIA H200",
                "gpu_count": 4, "driver": "580.159.04", "command": results_meta.PER_LOG,
                "about": "Every collective against NCCL.", "files": {"g4-*.log": "coll"}}
        meta.update(changes)
        return {k: v for k, v in meta.items() if v is not None}

    def test_a_complete_meta_passes(self):
        self.assertEqual(results_meta.meta_problems(self.meta(), self.RUN), [])

    def test_each_broken_field_is_named(self):
        problems = results_meta.meta_problems(
            self.meta(driver=None, commit="HEAD", date="2026-11-23", machine="h200x2", gpu_count="4", extra=1,
                      files={"nothing-*.log": "absent"}), self.RUN)
        self.assertEqual([p.split(":")[0] for p in problems],
                         ["driver", "extra", "commit", "date", "machine", "gpu_count", "files", "date", "gpu_count"])

    def test_facts_must_agree_with_machine_txt(self):
        self.assertEqual(results_meta.meta_problems(self.meta(gpu_model="NVIDIA H100"), self.RUN),
                         ["gpu_model: 'NVIDIA H100' but machine.txt says 'NVIDIA H200'"])

    def test_about_is_one_short_sentence_without_commit_ids(self):
        self.assertEqual(results_meta.about_problems("Every collective, 8 B-512 MiB, against NCCL 2.28.3."), [])
        for about in ("Two sentences. Here the second.", "No full stop", "Built at 6af5db5 on 4 GPUs.",
                      "x" * 200 + "."):
            self.assertEqual(len(results_meta.about_problems(about)), 1, about)

    def test_sizes(self):
        self.assertEqual([bench_readme.size_text(n) for n in (8, 1536, 2048, 1 << 20, 3 << 29)],
                         ["8 B", "1536 B", "2 KiB", "1 MiB", "1536 MiB"])


class Help(unittest.TestCase):
    def test_bench_readme_help_prints_help_and_writes_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            page = os.path.join(tmp, "README.md")
            with open(page, "w", encoding="utf-8") as f:
                f.write("left alone\n")
            saved, bench_readme.README = bench_readme.README, page
            out = io.StringIO()
            try:
                with contextlib.redirect_stdout(out), self.assertRaises(SystemExit) as done:
                    bench_readme.main(["--help"])
            finally:
                bench_readme.README = saved
            self.assertEqual(done.exception.code, 0)
            self.assertIn("usage: scripts/bench_readme.py", out.getvalue())
            self.assertIn("--check", out.getvalue())
            self.assertEqual(open(page, encoding="utf-8").read(), "left alone\n")

    def test_results_from_log_help_is_not_a_run_folder(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), self.assertRaises(SystemExit) as done:
            results_from_log.main(["--help"])
        self.assertEqual(done.exception.code, 0)
        self.assertIn("RUN_DIR", out.getvalue())


if __name__ == "__main__":
    unittest.main()
