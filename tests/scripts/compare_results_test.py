#!/usr/bin/env python3
"""scripts/compare_results.py on two small results files with known answers: which figures pair,
which regress past the thresholds, the exit status, and how the kept run is found.

Run by ctest (label cpu) or directly: python3 tests/scripts/compare_results_test.py
"""
import contextlib
import io
import os
import shutil
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import compare_results  # noqa: E402

KEPT = os.path.join(ROOT, "tests", "data", "results_compare_kept.jsonl")
NEW = os.path.join(ROOT, "tests", "data", "results_compare_new.jsonl")


def run(*args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = compare_results.main(list(args))
    return status, out.getvalue()


class Compare(unittest.TestCase):
    def test_pairs_by_what_was_measured(self):
        kept, _ = compare_results.load(KEPT)
        new, _ = compare_results.load(NEW)
        pairs, regressions = compare_results.compare(kept, new, 0.15, 0.05)
        # 1 KiB and 1 MiB by the table, 1 MiB forced to split (its own pair: GPUPEER_ALGO), ce_write,
        # pingpong; the test outcome, the bus bandwidth and the rows of one file only are left out.
        self.assertEqual(pairs, 5)
        found = [(dict(k[0])["metric"], dict(k[0]).get("bytes"), old, now) for k, old, now, _, _ in regressions]
        # 1 KiB: +14%, inside 15%; split: median 51 -> 56, +9.8%; pingpong got faster.
        self.assertEqual(found, [("all_reduce graph time", 1048576, 20.0, 23.5),
                                 ("bench ce_write GPU0->GPU1", None, 400.0, 379.0)])
        self.assertEqual(regressions[0][4], ("nccl_graph", 0.0))  # NCCL did not move: gpupeer did

    def test_exit_status(self):
        status, text = run(NEW, "--against", KEPT)
        self.assertEqual(status, 1, text)
        self.assertEqual(text.count("REGRESSION"), 2, text)
        self.assertEqual(run(NEW, "--against", KEPT, "--time-threshold", "0.2", "--rate-threshold", "0.06")[0], 0)
        self.assertEqual(run(KEPT, "--against", KEPT)[0], 0)
        self.assertEqual(run(NEW, "--against", os.path.join(ROOT, "bench", "results", "h200x2",
                                                             "2026-11-22-host-and-link-floors"))[0], 2)  # no pair
        self.assertEqual(run(os.path.join(ROOT, "no-such-results.jsonl"), "--against", KEPT)[0], 2)

    def test_finds_the_newest_kept_run_of_the_machine_and_topic(self):
        tmp = tempfile.mkdtemp(prefix="compare_results_test.")
        self.addCleanup(shutil.rmtree, tmp)
        for run_dir, source in (("h200x2/2026-11-20-collectives", NEW), ("h200x2/2026-11-21-collectives", KEPT),
                                ("h200x4/2026-11-22-collectives", NEW), ("out/2026-11-23-collectives", NEW)):
            os.makedirs(os.path.join(tmp, run_dir))
            shutil.copy(source, os.path.join(tmp, run_dir, "results.jsonl"))
        new = os.path.join(tmp, "out", "2026-11-23-collectives")
        status, text = run(new, "--results", tmp)  # against 2026-11-21 (the newest h200x2 run), not 11-20
        self.assertEqual(status, 1, text)
        self.assertIn("h200x2/2026-11-21-collectives", text)
        os.rename(new, os.path.join(tmp, "out", "coll"))  # a folder name without the topic
        self.assertEqual(run(os.path.join(tmp, "out", "coll"), "--results", tmp)[0], 2)
        self.assertEqual(run(os.path.join(tmp, "out", "coll"), "--results", tmp, "--topic", "collectives")[0], 1)


if __name__ == "__main__":
    unittest.main()
