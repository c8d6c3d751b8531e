"""At 1,024 ranks the text report still fits a screen with the culprit on
top: identical findings of many ranks are grouped into one line with a
compressed rank list; --json keeps every finding plus the groups; -v lists
every finding."""
import json
import os
import tempfile
import unittest

from ccdiag_test import run, run_json

CULPRIT = 517


def write_job(base):
    """128 hosts x 8 ranks of NCCL INFO + torch watchdog lines; rank 517's NIC
    fails first (a real net_ib.cc wording), every other rank times out."""
    paths = []
    for r in range(1024):
        host, lr = f"node{r // 8 + 1:03d}", r % 8
        lines = [f"{host}:{4000 + lr}:{4100 + lr} [{lr}] NCCL INFO Bootstrap : Using eth0:10.0.{r // 8}.{lr + 1}<0>",
                 f"{host}:{4000 + lr}:{4100 + lr} [{lr}] NCCL INFO NET/IB : Using [0]mlx5_{lr}:1/IB ; OOB eth0:10.0.{r // 8}.1<0>"]
        if r == CULPRIT:
            lines.append(f"{host}:{4000 + lr}:{4200 + lr} [{lr}] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion "
                         "from peer 10.0.70.3<53111> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid "
                         "::ffff:10.0.64.6 remoteGids ::ffff:10.0.70.3 hca mlx5_5")
        lines.append(f"[rank{r}]:[E1201 03:12:{10 + r % 40:02d}.123456 {4000 + lr} ProcessGroupNCCL.cpp:632] [Rank {r}] "
                     "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4242, OpType=ALLREDUCE, "
                     "NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran for 600031 milliseconds before timing out.")
        os.makedirs(os.path.join(base, host), exist_ok=True)
        path = os.path.join(base, host, f"rank{r}.log")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        paths.append(path)
    return paths


class ThousandRanks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.args = ["diagnose"]
        for p in write_job(cls._tmp.name):
            cls.args += ["--log", p]

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def test_text_fits_a_screen_with_the_culprit_on_top(self):
        p = run(self.args, timeout=120)
        self.assertEqual(p.returncode, 1, p.stderr)
        lines = p.stdout.splitlines()
        self.assertLessEqual(len(lines), 50, p.stdout)
        self.assertTrue(lines[0].startswith("verdict: "), lines[0])
        self.assertIn("node065", lines[1])
        grouped = [l for l in lines if "watchdog timeout" in l and "x1023:" in l]  # finding lines
        self.assertEqual(len(grouped), 1, p.stdout)
        self.assertIn("ranks 0-516,518-1023 (1023)", grouped[0])

    def test_json_keeps_every_finding_and_the_groups(self):
        doc, _ = run_json(self.args, expect_rc=1, timeout=120)
        self.assertGreaterEqual(len(doc["findings"]), 1024)
        groups = doc["finding_groups"]
        self.assertEqual(sum(g["count"] for g in groups), len(doc["findings"]))
        self.assertLess(len(groups), 10)
        biggest = max(groups, key=lambda g: g["count"])
        self.assertEqual(biggest["count"], 1023)
        self.assertEqual(biggest["ranks"], "0-516,518-1023")

    def test_a_directory_given_to_log_reads_every_log_under_it(self):
        files, _ = run_json(self.args, expect_rc=1, timeout=120)
        tree, _ = run_json(["diagnose", "--log", self._tmp.name], expect_rc=1, timeout=120)
        self.assertEqual(tree["verdict"]["root_cause"], files["verdict"]["root_cause"])
        self.assertEqual(len(tree["findings"]), len(files["findings"]))

    def test_verbose_lists_every_finding(self):
        p = run(["-v"] + self.args, timeout=120)
        self.assertGreater(len(p.stdout.splitlines()), 1024)


if __name__ == "__main__":
    unittest.main()
