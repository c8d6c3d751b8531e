"""ccdiag perf: verdicts on fixture results and bundles (tests/fixtures/perf, README there), the JSON
contract (report.schema.json plus perf{}), baselines, flight-recorder input, and bad input."""
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from ccdiag_test import FIXTURES, run, run_json  # noqa: E402

P = os.path.join(FIXTURES, "perf")
S = os.path.join(P, "scenario")
B = os.path.join(P, "bundles")


def perf(*args, rc):
    doc, p = run_json(["perf"] + list(args), expect_rc=rc)
    return doc, p


class PerfVerdicts(unittest.TestCase):
    def test_healthy_ring_ok_exit_0(self):
        doc, _ = perf(os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), "--bundle", os.path.join(B, "hgx-healthy"), rc=0)
        r = doc["perf"]["results"][0]
        self.assertEqual(r["status"], "ok")
        self.assertAlmostEqual(r["expected"]["nominal"], 236.9, delta=0.5)
        self.assertAlmostEqual(r["plateau"]["value"], 231.95, delta=0.01)
        self.assertEqual(doc["verdict"]["root_cause"], "no_problem_found")
        self.assertEqual(doc["perf"]["topology"][0]["host"], "gpu-node-017")

    def test_downtrained_nic_below_expected_names_the_link(self):
        doc, _ = perf(os.path.join(S, "all_reduce_perf-2x8-nic-x8.txt"), "--bundle", os.path.join(B, "nic-x8"), rc=1)
        r = doc["perf"]["results"][0]
        self.assertEqual(r["status"], "below_expected")
        self.assertIn("mlx5_3 PCIe link downtrained", r["bottleneck"])
        self.assertGreater(r["shortfall"], 0.5)
        self.assertEqual(doc["verdict"]["root_cause"], "pcie_link_degraded")
        self.assertEqual(doc["verdict"]["culprit"].get("nic"), "mlx5_3")
        self.assertEqual(doc["findings"][0]["id"], "perf.below_expected")

    def test_no_gdr_below_expected(self):
        doc, _ = perf(os.path.join(S, "all_reduce_perf-2x8-nogdr.txt"), "--bundle", os.path.join(B, "no-gdr"), rc=1)
        r = doc["perf"]["results"][0]
        self.assertEqual(r["status"], "below_expected")
        self.assertEqual(r["bottleneck_cause"], "gpudirect_rdma_module_missing")
        self.assertEqual(doc["verdict"]["root_cause"], "gpudirect_rdma_module_missing")

    def test_corruption_first_text_and_json(self):
        doc, _ = perf(os.path.join(S, "all_reduce_perf-2x8-wrong.txt"), os.path.join(S, "all_reduce_perf-2x8-wrong.json"), rc=1)
        self.assertEqual([f["id"] for f in doc["findings"][:2]], ["perf.data_corruption"] * 2)
        self.assertEqual(doc["findings"][0]["severity"], "critical")
        self.assertEqual(doc["perf"]["results"][1]["wrong"], 12)
        p = run(["perf", os.path.join(S, "all_reduce_perf-2x8-wrong.txt")])
        self.assertEqual(p.returncode, 1)
        self.assertIn("DATA CORRUPTION: 6 wrong elements", p.stdout)

    def test_real_outputs_every_format_unjudged_is_not_healthy(self):
        doc, _ = perf(os.path.join(P, "real"), rc=0)
        res = {os.path.basename(r["file"]): r for r in doc["perf"]["results"]}
        self.assertEqual(len(res), 6)
        self.assertEqual(res["nccl-tests-old-error-column-2gpu.txt"]["error_column"], "error")
        self.assertEqual(res["perftest-ib_write_bw-postlist-gbits.txt"]["nic"], "ib0")
        self.assertTrue(all(r["status"] == "unjudged" for r in res.values()))
        # nothing could be judged: said under unchecked, not "healthy" at full confidence
        self.assertGreaterEqual(len(doc["unchecked"]), 6)
        self.assertLess(doc["verdict"]["confidence"], 0.7)

    def test_markdown(self):
        p = run(["perf", os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), "--bundle", os.path.join(B, "hgx-healthy"), "--markdown"])
        self.assertEqual(p.returncode, 0)
        self.assertIn("## Collective performance", p.stdout)
        self.assertIn("| ok |", p.stdout)


class PerfBaseline(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_save_then_regression(self):
        base = os.path.join(self.tmp, "b.json")
        perf(os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), "--save-baseline", base, rc=0)
        with open(base) as f:
            b = json.load(f)
        self.assertEqual(b["format"], "ccdiag-perf-baseline")
        self.assertEqual(b["entries"][0]["key"], "all_reduce/16r2h/8589934592")
        self.assertEqual(b["versions"]["nccl_tests"], "2.19.6")
        # second save merges samples
        perf(os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), "--save-baseline", base, rc=0)
        with open(base) as f:
            self.assertEqual(len(json.load(f)["entries"][0]["samples"]), 2)
        doc, _ = perf(os.path.join(S, "all_reduce_perf-2x8-slower.txt"), "--baseline", base, rc=1)
        r = doc["perf"]["results"][0]
        self.assertEqual(r["status"], "regression")
        self.assertAlmostEqual(r["baseline"]["median"], 231.95, delta=0.01)
        doc, _ = perf(os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), "--baseline", base, rc=0)
        self.assertEqual(doc["perf"]["results"][0]["status"], "ok")

    def test_refuses_to_overwrite_other_files(self):
        other = os.path.join(self.tmp, "notes.txt")
        with open(other, "w") as f:
            f.write("my notes\n")
        p = run(["perf", os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), "--save-baseline", other])
        self.assertEqual(p.returncode, 2)
        with open(other) as f:
            self.assertEqual(f.read(), "my notes\n")
        p = run(["perf", os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), "--baseline", other])
        self.assertEqual(p.returncode, 2)
        self.assertIn("not JSON", p.stderr)


class PerfBadInput(unittest.TestCase):
    def test_errors_are_one_line_exit_2(self):
        tmp = tempfile.mkdtemp()
        try:
            junk = os.path.join(tmp, "junk.txt")
            with open(junk, "w") as f:
                f.write("hello\n")
            for args in (["perf", "/nonexistent/x.txt"], ["perf", junk], ["perf"], ["perf", os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), "--bundle", tmp]):
                p = run(args)
                self.assertEqual(p.returncode, 2, args)
                self.assertTrue(p.stderr.startswith("ccdiag: error:") or "required" in p.stderr or "nothing to read" in p.stderr, p.stderr)
                self.assertLessEqual(len(p.stderr.strip().splitlines()), 2)
            # one good file and one bad: partial (3) unless a problem was found
            p = run(["perf", os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), junk])
            self.assertEqual(p.returncode, 3)
        finally:
            shutil.rmtree(tmp)


class PerfFlightRecorder(unittest.TestCase):
    def test_fr_healthy_dumps_name_nobody(self):
        fr = os.path.join(FIXTURES, "fr", "healthy")
        if not os.path.isdir(fr):
            self.skipTest("no healthy FR fixture")
        doc, _ = perf("--fr", fr, rc=0)
        self.assertEqual(doc["perf"]["fr"]["culprits"], [])
        self.assertFalse(any(c["slow"] for c in doc["perf"]["fr"]["communicators"]))
        # one communicator only: nothing to compare it with, which is said, not called healthy
        if len(doc["perf"]["fr"]["communicators"]) < 3:
            self.assertTrue(any("flight-recorder" in u["what"] for u in doc["unchecked"]))
            self.assertLess(doc["verdict"]["confidence"], 0.7)


if __name__ == "__main__":
    unittest.main()
