"""ccdiag ranks on fixture /proc trees: which processes are ranks, their
rank/GPU/NCCL version/launcher, and that no secret from an environment is
ever printed (text or JSON)."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from ccdiag_test import FIXTURES, run  # noqa: E402

TORCHRUN = os.path.join(FIXTURES, "sysroots", "ranks-torchrun-2gpu-secrets")
MPIRUN = os.path.join(FIXTURES, "sysroots", "ranks-mpirun-pip-nccl-dead-rank")
TORCH_TREE = os.path.join(FIXTURES, "sysroots", "ranks-torchrun-gloo-dataloader-zombie")
SECRETS = ["wJalrXUtnFEMI", "AKIAIOSFODNN7", "hf_SHOULDNEVERAPPEAR", "s3cr3t-value", "ghp_ABCDEFGH",
           "sk-SHOULDNEVER", "/home/alice", "--api-key"]


class RanksFixtures(unittest.TestCase):
    def test_torchrun_two_ranks_json(self):
        p = run(["ranks", "--root", TORCHRUN, "--json"])
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout)
        self.assertEqual(doc["host"], "node7")
        ranks = doc["ranks"]
        self.assertEqual([r["pid"] for r in ranks], [4101, 4102])
        self.assertEqual([r["rank"] for r in ranks], [0, 1])
        self.assertEqual([r["gpus"] for r in ranks], [[0], [1]])
        for r in ranks:
            self.assertEqual(r["world_size"], 2)
            self.assertEqual(r["nccl_version"], "2.21.5")
            self.assertEqual(r["launcher"], "torchrun")
            self.assertEqual(r["parent_comm"], "torchrun")
            self.assertIn("libtorch_cuda.so", r["torch_libraries"])
            self.assertEqual(r["env"]["MASTER_ADDR"], "10.0.0.7")
            self.assertEqual(r["env"]["NCCL_SOCKET_IFNAME"], "eth0")
            self.assertEqual(r["env"]["NCCL_RAS_AUTH_TOKEN"], "<redacted>")
            self.assertEqual(r["env"]["NCCL_TUNER_CONFIG"], "<redacted>")
            self.assertNotIn("AWS_SECRET_ACCESS_KEY", r["env"])
            self.assertNotIn("PATH", r["env"])
            self.assertEqual(r["exe"], "python3.10")

    def test_no_secret_in_any_output(self):
        for args in (["ranks"], ["ranks", "--json"]):
            p = run(args + ["--root", TORCHRUN])
            self.assertEqual(p.returncode, 0, p.stderr)
            for s in SECRETS:
                self.assertNotIn(s, p.stdout + p.stderr)

    def test_text_table(self):
        p = run(["ranks", "--root", TORCHRUN])
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.strip().splitlines()
        self.assertIn("RANK", lines[0])
        self.assertEqual(len(lines), 3)
        self.assertIn("2.21.5", lines[1])
        self.assertIn("torchrun", lines[1])

    def test_mpirun_pip_nccl_and_dead_rank(self):
        p = run(["ranks", "--root", MPIRUN, "--json"])
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout)
        ranks = doc["ranks"]
        # 7002 is orted's zombie child: a dead rank, its number the local rank
        # its live sibling (OMPI local rank 0 of 2, world rank 4) leaves free.
        self.assertEqual([r["pid"] for r in ranks], [7001, 7002])
        dead = ranks[1]
        self.assertFalse(dead["alive"])
        self.assertEqual(dead["state"], "Z")
        self.assertEqual((dead["rank"], dead["local_rank"], dead["rank_inferred"]), (5, 1, True))
        self.assertEqual(dead["exit_code"], 0)
        r = ranks[0]
        self.assertTrue(r["alive"])
        self.assertEqual(r["rank"], 4)
        self.assertEqual(r["local_rank"], 0)
        self.assertEqual(r["world_size"], 8)
        self.assertIsNone(r["nccl_version"])  # pip wheel: libnccl.so.2 carries no version
        self.assertIn("nvidia/nccl/lib/libnccl.so.2", r["nccl_library"])
        self.assertEqual(r["launcher"], "orted")
        self.assertEqual(r["gpus"], [3])
        self.assertEqual(r["nspid"], "40")

    def test_real_torchrun_tree_with_dataloader_workers_and_a_zombie(self):
        # Captured from a real job (tests/torch/scenario.py dataloader; torch
        # 2.15, gloo): the agent 2177 stopped, rank 3 SIGKILLed (a zombie), each
        # rank with 2 DataLoader workers that inherit RANK, plus kthreadd (2)
        # and a kernel thread (3) whose environ cannot be read.
        p = run(["ranks", "--root", TORCH_TREE, "--json"])
        self.assertEqual(p.returncode, 0, p.stderr)  # kernel threads are not "unreadable"
        doc = json.loads(p.stdout)
        self.assertEqual(doc["unreadable"], 0)
        ranks = doc["ranks"]
        self.assertEqual([(r["rank"], r["pid"]) for r in ranks], [(0, 2193), (1, 2194), (2, 2195), (3, 2196)])
        self.assertTrue(all(r["launcher"] == "torchrun" and r["ppid"] == 2177 for r in ranks))
        self.assertEqual(sorted(w["pid"] for w in ranks[2]["workers"]), [2241, 2248])
        self.assertTrue(all(w["comm"] == "pt_data_worker" for w in ranks[2]["workers"]))
        self.assertTrue(all(len(r.get("workers", [])) == 2 for r in ranks[:3]))
        dead = ranks[3]
        self.assertEqual((dead["alive"], dead["state"], dead["signal"], dead["rank_inferred"]), (False, "Z", "SIGKILL", True))
        text = run(["ranks", "--root", TORCH_TREE]).stdout
        self.assertIn("dead rank: killed by SIGKILL", text)
        self.assertIn("worker 2241 (pt_data_worker, S) of rank 2", text)

    def test_bad_root_is_an_input_error(self):
        p = run(["ranks", "--root", os.path.join(FIXTURES, "does-not-exist")])
        self.assertEqual(p.returncode, 2)
        self.assertIn("ccdiag: error:", p.stderr)

    def test_stacks_refuses_root_trees(self):
        p = run(["stacks", "--ranks", "--root", TORCHRUN])
        self.assertEqual(p.returncode, 2)
        self.assertIn("ccdiag: error:", p.stderr)


if __name__ == "__main__":
    unittest.main()
