"""Jobs launched with torch.multiprocessing.spawn (mp.spawn), not torchrun:
its parent stops the other workers and raises for the first one that failed
("process 2 terminated with signal SIGKILL", "-- Process 2 terminated with
the following error:" and that worker's traceback). The consoles in
tests/fixtures/torch/mpspawn_*/ are from real runs of tests/torch/mpspawn_job.py
(torch 2.15.0, gloo, 4 processes, rank 2 the culprit)."""
import os
import unittest

from ccdiag_test import FIXTURES, run_json


def verdict(name):
    doc, _ = run_json(["diagnose", "--log", os.path.join(FIXTURES, "torch", name, "console.log")])
    v = doc["verdict"]
    return v["root_cause"], (v.get("culprit") or {}).get("rank"), v["confidence"]


class MpSpawnConsoles(unittest.TestCase):
    def test_a_worker_killed_by_sigkill_is_the_dead_rank(self):
        cause, rank, conf = verdict("mpspawn_sigkill")
        self.assertEqual((cause, rank), ("rank_process_died", 2))
        self.assertLessEqual(conf, 0.6)  # a symptom: why it was killed is not in the console

    def test_the_traceback_after_the_marker_is_that_workers_own(self):
        # Before: user_code_bug at 0.3 with no rank (the KeyError line has no
        # rank prefix, and the spawn parent's own ProcessRaisedException was
        # read as the script's exception).
        cause, rank, conf = verdict("mpspawn_raises")
        self.assertEqual((cause, rank), ("user_code_bug", 2))
        self.assertGreaterEqual(conf, 0.5)

    def test_a_worker_that_timed_out_waiting_is_no_culprit(self):
        # Rank 2 skipped an all_reduce; mp.spawn reports rank 0, whose gloo
        # recv timed out first. Rank 0 waited: it is not blamed, and nothing
        # here names rank 2.
        cause, rank, conf = verdict("mpspawn_skip")
        self.assertNotEqual(rank, 0)
        self.assertNotEqual(cause, "user_code_bug")
        self.assertLess(conf, 0.3)


if __name__ == "__main__":
    unittest.main()
