"""ccdiag isolate: the round-by-round flow through --results (each test's nccl-tests output written as a
file, as the printed commands do), the JSON form, and bad input. The planner itself is checked against a
simulator at 8, 64 and 1,024 hosts in tests/unit/perf_isolate_sim.cpp."""
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from ccdiag_test import run  # noqa: E402

HEADER = ("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
          "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)\n")


def nccl_output(hosts, busbw):
    """An all_reduce_perf -b 4G -e 4G output over `hosts` (one rank each) with this busbw."""
    n = len(hosts)
    alg = busbw / (2.0 * (n - 1) / n)
    t = 4294967296 / 1e9 / alg * 1e6
    lines = ["# Collective test starting: all_reduce_perf", "# Using devices"]
    lines += ["#  Rank %2d Group  0 Pid %6d on %10s device  0 [0000:18:00] NVIDIA H100 80GB HBM3" % (i, 1000 + i, h) for i, h in enumerate(hosts)]
    row = "%12d  %12d  %8s  %6s  %6s  %7.1f  %6.2f  %6.2f     N/A  %7.1f  %6.2f  %6.2f     N/A\n" % (
        4294967296, 1073741824, "float", "sum", "-1", t, alg, busbw, t, alg, busbw)
    return "\n".join(lines) + "\n#\n" + HEADER + row + "# Out of bounds values : 0 OK\n"


class IsolateFlow(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.res = os.path.join(self.tmp, "res")
        os.mkdir(self.res)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def plan(self, *extra, rc):
        p = run(["isolate", "gpu[001-016]", "--results", self.res, "--json"] + list(extra))
        self.assertEqual(p.returncode, rc, p.stdout[-2000:] + p.stderr)
        return json.loads(p.stdout)

    def run_round(self, doc, bad_host, bad_rail):
        """Writes each pending test's output: slow (21 GB/s) when it includes the bad NIC, else 47."""
        tests = doc["rounds"][-1]["tests"]
        for t in tests:
            self.assertEqual(t["outcome"], "pending")
            self.assertIn("NCCL_ALGO=Ring", t["command"])
            self.assertIn("> %s/%s.txt" % (self.res, t["id"]), t["command"])
            slow = bad_host in t["hosts"] and t["rail"] == bad_rail
            with open(os.path.join(self.res, t["id"] + ".txt"), "w") as f:
                f.write(nccl_output(t["hosts"], 21.3 if slow else 47.1))
        return len(tests)

    def test_finds_bad_nic_in_three_rounds(self):
        doc = self.plan(rc=0)
        self.assertEqual(doc["rounds"][0]["name"], "rails")
        rounds = 0
        while doc["conclusion"]["kind"] == "pending":
            self.run_round(doc, "gpu011", 3)
            rounds += 1
            doc = json.loads(run(["isolate", "gpu[001-016]", "--results", self.res, "--json"]).stdout)
        self.assertEqual(rounds, 3)
        self.assertEqual(doc["conclusion"]["kind"], "culprit_nic")
        self.assertEqual(doc["conclusion"]["hosts"], ["gpu011"])
        self.assertEqual(doc["conclusion"]["rail"], 3)
        self.assertIn("mlx5_3", doc["conclusion"]["summary"])
        self.assertLessEqual(len(doc["rounds"]), doc["round_bound"])
        p = run(["isolate", "gpu[001-016]", "--results", self.res])
        self.assertEqual(p.returncode, 1)
        self.assertIn("Conclusion: culprit_nic", p.stdout)

    def test_bisect_mode_and_mpirun_lines(self):
        p = run(["isolate", "gpu[001-016]", "--mode", "bisect", "--launcher", "mpirun", "--nics", "mlx5_0,mlx5_1,mlx5_2,mlx5_5"])
        self.assertEqual(p.returncode, 0)
        self.assertIn("mpirun -np 16 -N 1 -H gpu001:1,gpu002:1", p.stdout)
        self.assertIn("NCCL_IB_HCA==mlx5_5:1", p.stdout)
        self.assertIn("Then: ccdiag isolate 'gpu[001-016]' --results isolate-results --mode bisect", p.stdout)

    def test_healthy_fleet_not_reproduced(self):
        doc = self.plan(rc=0)
        self.run_round(doc, "none", -1)
        doc = self.plan(rc=0)
        self.assertEqual(doc["conclusion"]["kind"], "not_reproduced")

    def test_a_crashed_test_counts_as_failed(self):
        doc = self.plan(rc=0)
        self.run_round(doc, "none", -1)
        with open(os.path.join(self.res, "r1-rail2.txt"), "w") as f:
            f.write("gpu004: Test timeout (180s) common.cu:412\n")
        doc = self.plan(rc=0)
        self.assertIn("rail(s) 2", doc["decisions"][0])
        self.assertEqual(doc["rounds"][-1]["name"], "pairs")


class IsolateBadInput(unittest.TestCase):
    def test_errors(self):
        for args in (["isolate", "gpu[001"], ["isolate", "gpu001"], ["isolate", "a,b", "--mode", "x"],
                     ["isolate", "a,b", "--results", "/nonexistent"], ["isolate", "a;rm,b"]):
            p = run(args)
            self.assertEqual(p.returncode, 2, args)
            self.assertTrue(p.stderr.startswith("ccdiag: error:"), p.stderr)


if __name__ == "__main__":
    unittest.main()
