"""collect -> bundle -> diagnose with real stuck processes: three "ranks" wait
in ncclAllReduce -> cudaStreamSynchronize and one is stuck in its dataloader.
The bundle holds ranks.process and stacks.process evidence (no secret from the
environment), and diagnose turns the stack census into a finding that names
the odd rank and supports rank_stuck_in_host_code."""
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from stacks_helpers import Target, assert_running_untraced, can_ptrace, run, skip_unless  # noqa: E402
from ccdiag_test import run_json, validate  # noqa: E402

skip_unless(can_ptrace(), "ptrace of own children is not allowed here (yama ptrace_scope >= 2 and not root)")

RUN_ID = f"ccdiag-test-{os.getpid()}"


class RankEnv:
    def __init__(self, rank):
        self.rank = rank

    def __enter__(self):
        self.saved = dict(os.environ)
        os.environ.update({"RANK": str(self.rank), "WORLD_SIZE": "4", "LOCAL_RANK": str(self.rank),
                           "TORCHELASTIC_RUN_ID": RUN_ID, "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMIBUNDLESECRET",
                           "NCCL_RAS_AUTH_TOKEN": "bundle-token-do-not-store"})

    def __exit__(self, *exc):
        os.environ.clear()
        os.environ.update(self.saved)


class StacksBundle(unittest.TestCase):
    def test_collect_then_diagnose_names_the_odd_rank(self):
        targets = []
        out = tempfile.mkdtemp(prefix="ccdiag-stacks-bundle-")
        try:
            for r in range(4):
                with RankEnv(r):
                    targets.append(Target("nccl_like_rank", "host" if r == 2 else "collective", blocked=True))
            p = run(["collect", "--out", os.path.join(out, "b"), "--timeout", "20"], timeout=120)
            self.assertIn(p.returncode, (0, 3), p.stderr)
            with open(os.path.join(out, "b", "evidence.json")) as f:
                text = f.read()
            for secret in ("wJalrXUtnFEMIBUNDLESECRET", "bundle-token-do-not-store"):
                self.assertNotIn(secret, text)
            doc = json.loads(text)
            items = doc["evidence"] if isinstance(doc, dict) else doc
            ours = {t.pid for t in targets}
            ranks = [e for e in items if e["kind"] == "ranks.process" and e["subject"].get("pid") in ours]
            stacks = [e for e in items if e["kind"] == "stacks.process" and e["subject"].get("pid") in ours]
            self.assertEqual(len(ranks), 4)
            self.assertEqual(len(stacks), 4)
            for e in ranks:
                self.assertEqual(e["data"]["env"]["TORCHELASTIC_RUN_ID"], RUN_ID)
            for t in targets:
                assert_running_untraced(self, t.pid)
            # The same census live, over the ranks stacks --ranks discovers.
            p = run(["stacks", "--ranks", "--json", "--no-lines"], timeout=120)
            self.assertIn(p.returncode, (0, 3), p.stderr)
            live = json.loads(p.stdout)
            validate(live, "stacks.schema.json")
            got = {pr["pid"]: pr["rank"] for pr in live["processes"] if pr["pid"] in ours}
            self.assertEqual(got, {t.pid: r for r, t in enumerate(targets)})
            odd = [o for o in live["census"]["odd_ranks_out"] if o["pid"] in ours]
            self.assertEqual([(o["pid"], o["rank"]) for o in odd], [(targets[2].pid, 2)])
            report, _ = run_json(["diagnose", os.path.join(out, "b")], timeout=120)
            odd = [f for f in report["findings"] if f["id"] == "stacks.rank_outside_collective"]
            self.assertTrue(odd, [f["id"] for f in report["findings"]])
            self.assertEqual(odd[0]["subject"]["rank"], 2)
            self.assertEqual(odd[0]["subject"]["pid"], targets[2].pid)
            # Three ranks agreeing is enough to name the cause and the culprit.
            self.assertEqual(report["verdict"]["root_cause"], "rank_stuck_in_host_code")
            self.assertEqual(report["verdict"]["culprit"]["rank"], 2)
        finally:
            for t in targets:
                t.kill()
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
