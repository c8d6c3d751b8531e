"""Ranks of two jobs on one host (two small jobs on a shared node) are counted
apart by `ccdiag stacks`: the census is taken per job (the rendezvous address,
port and torchelastic run id every rank of a launch shares), so two rank 0s
never make one group and one job's majority never decides the other's odd
rank out. Real processes with a launcher's environment, captured live."""
import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from stacks_helpers import can_ptrace, run, skip_unless  # noqa: E402

skip_unless(can_ptrace(), "ptrace of own children is not allowed here (yama ptrace_scope >= 2 and not root)")

# Job A: rank 1 reads a pipe nobody writes while rank 0 sleeps. Job B: both
# ranks sleep. Mixed, the three sleepers were the majority and job A's rank 1
# the odd one out of four; apart, each job has two ranks in two states (A)
# or one state (B).
SLEEP = "import time; time.sleep(120)"
READ = "import os; r, w = os.pipe(); os.read(r, 1)"


class TwoJobsOnOneHost(unittest.TestCase):
    def setUp(self):
        self.procs = []
        for port, codes in (("29561", (SLEEP, READ)), ("29562", (SLEEP, SLEEP))):
            for rank, code in enumerate(codes):
                env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=str(rank),
                           LOCAL_RANK=str(rank), WORLD_SIZE="2", LOCAL_WORLD_SIZE="2")
                self.procs.append(subprocess.Popen([sys.executable, "-c", code], env=env))
        time.sleep(1.0)  # past interpreter start-up, into the blocking call

    def tearDown(self):
        for p in self.procs:
            p.kill()
            p.wait()

    def test_census_is_taken_per_job(self):
        p = run(["stacks", "--json"] + [str(x.pid) for x in self.procs], timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        doc = json.loads(p.stdout)
        ranks = sorted((q["pid"], q.get("rank")) for q in doc["processes"])
        self.assertEqual([r for _, r in ranks], [0, 1, 0, 1])
        lines = doc["census"]["lines"]
        self.assertTrue(lines and all(line.startswith("job 127.0.0.1:2956") for line in lines), lines)
        # No group mixes the jobs: no "2 ranks (0,0)" or "3 ranks (0,0,1)".
        for line in lines:
            self.assertNotIn("(0,0", line, lines)
        self.assertTrue(any(line.startswith("job 127.0.0.1:29562/: 2 ranks (0,1)") for line in lines), lines)


if __name__ == "__main__":
    unittest.main()
