"""Real torchrun jobs (4 ranks, gloo on the CPU, rendezvous on 127.0.0.1) that
fail in the classic ways, diagnosed the way a user would: `ccdiag diagnose`
live while the job hangs, `collect` then `diagnose` on the bundle, and
post-mortem on the console, the per-rank logs (--log-dir) and the
flight-recorder dumps. Each must name the culprit rank and the cause; the
healthy job must not be called a problem.

Needs the torch venv of scripts/setup-torch.sh (skips with 77 without it)
and ptrace of sibling processes (root in CI). One job runs at a time: CTest
holds the torch_jobs resource lock for every file here."""
import json
import re
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_job import NPROC, TorchJob, require_torch, run, run_json  # noqa: E402

require_torch()

LIVE_TIMEOUT = "30"  # --timeout for live runs: a loaded 2-core CI host needs more than the default


def verdict(doc):
    v = doc.get("verdict") or {}
    culprit = v.get("culprit") or {}
    return v.get("root_cause"), culprit.get("rank"), v.get("confidence")


def describe(doc):
    v = doc.get("verdict") or {}
    lines = [json.dumps(v)[:600]]
    for f in doc.get("findings", [])[:12]:
        lines.append(f"  {f.get('id')} [{f.get('role')}] {f.get('summary', '')[:200]}")
    return "\n".join(lines)


class ScenarioTest(unittest.TestCase):
    """One job per class, run once in setUpClass; the tests read its outputs."""

    scenario = None
    culprit = 2
    causes = ()           # acceptable verdicts (the failure can honestly read as either)
    live = True           # the job hangs long enough to be captured live
    ready_ranks = range(NPROC)
    fr_causes = None      # verdicts `ccdiag fr` may give; None: same as `causes`
    logs_causes = None    # verdicts the console + rank logs may give; None: same as `causes`
    logs_culprit = True   # the console and rank logs alone can name the culprit
    fr_culprit = True     # the dumps alone can name the culprit
    live_culprit = True   # live and collected stacks can name the culprit
    logs_ambiguous = False  # ... but not tell the hang causes apart (see test_post_mortem_logs)
    tee = True            # torchrun --tee/--log-dir; False: the console is all there is

    @classmethod
    def setUpClass(cls):
        if cls.scenario is None:
            raise unittest.SkipTest("base class")
        cls.live_doc = cls.collect_doc = cls.ranks_doc = None
        cls.work = tempfile.mkdtemp(prefix="ccdiag-torch-test-")
        cls.job = TorchJob(cls.scenario, culprit=cls.culprit, tee=cls.tee)
        try:
            cls.job.wait_ready(cls.ready_ranks)
            if cls.live:
                cls.pids = cls.job.pids()
                cls.ranks_doc, cls.ranks_proc = run_json(["ranks"], schema=None, timeout=60)
                # Every rank's stacks (JSON) and the culprit's as text, while it hangs.
                cls.stacks_doc, _ = run_json(["--timeout", LIVE_TIMEOUT, "stacks"] + [str(p) for p in cls.pids.values()],
                                             schema="stacks.schema.json", timeout=120)
                cls.stacks_text = run(["--timeout", LIVE_TIMEOUT, "stacks", str(cls.pids[cls.culprit])],
                                      timeout=120).stdout
                cls.live_doc, cls.live_proc = run_json(["--timeout", LIVE_TIMEOUT, "diagnose"], timeout=120)
                cls.bundle = bundle = os.path.join(cls.work, "bundle")
                p = run(["--timeout", LIVE_TIMEOUT, "collect", "--out", bundle], timeout=120)
                assert p.returncode in (0, 1, 3), p.stderr
                cls.collect_doc, _ = run_json(["diagnose", bundle], timeout=120)
            cls.after_live()
            cls.job.wait_end(timeout=150)
        except BaseException:
            cls.job.kill()
            raise
        logs = [cls.job.console_path] + cls.job.rank_logs()
        args = ["diagnose"]
        for path in logs:
            args += ["--log", path]
        cls.logs_doc, cls.logs_proc = run_json(args, timeout=120)
        cls.fr_doc = None
        if cls.job.fr_dumps():
            cls.fr_doc, cls.fr_proc = run_json(["fr", cls.job.fr_dir()], schema="fr.schema.json", timeout=60)

    @classmethod
    def after_live(cls):
        """Called once the live captures are done (a job that runs until told to stop is told here)."""

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "job", None):
            cls.job.__exit__(None, None, None)

    def check(self, doc, causes, culprit=True, what=""):
        cause, rank, conf = verdict(doc)
        print(f"\n  [{self.scenario}] {what}: {cause} rank {rank} confidence {conf}", file=sys.stderr)
        self.assertIn(cause, causes, f"{what}: {describe(doc)}")
        if culprit:
            self.assertEqual(rank, self.culprit, f"{what}: {describe(doc)}")

    def test_live_diagnose(self):
        if not self.live:
            self.skipTest("the job does not hang")
        self.check(self.live_doc, self.causes, culprit=self.live_culprit, what="live diagnose")
        self.assertEqual(self.live_proc.returncode, 1)

    def test_collect_then_diagnose(self):
        if not self.live:
            self.skipTest("the job does not hang")
        self.check(self.collect_doc, self.causes, culprit=self.live_culprit, what="collect + diagnose")

    def test_ranks_match_torchrun_tree(self):
        if not self.live:
            self.skipTest("the job does not hang")
        ranks = [r for r in self.ranks_doc["ranks"] if r.get("pid") in self.pids.values()]
        self.assertEqual(sorted(r["rank"] for r in ranks), list(range(NPROC)), self.ranks_doc)
        # Nothing else of this job is listed as a rank (DataLoader workers inherit RANK).
        ours = [r for r in self.ranks_doc["ranks"] if r.get("launcher") == "torchrun"]
        self.assertEqual(len(ours), NPROC, json.dumps(ours)[:2000])

    def test_post_mortem_logs(self):
        if self.logs_ambiguous:
            # The console and the logs name the rank that never joined (the
            # only one that logged no collective timeout) but cannot tell
            # whether it skipped the collective, was stuck or was late.
            # When the agent stops the survivors while one of them is still
            # printing its timeout, that rank's timeout line never appears and
            # the logs cannot single the silent rank out (a real race): then
            # only an honest insufficient_evidence is acceptable, never a verdict.
            cause, rank, conf = verdict(self.logs_doc)
            print(f"\n  [{self.scenario}] console + rank logs: {cause} rank {rank} confidence {conf}", file=sys.stderr)
            self.assertIn(cause, (self.logs_causes or self.causes) + ("insufficient_evidence",),
                          describe(self.logs_doc))
            if cause != "insufficient_evidence":
                self.assertEqual(rank, self.culprit, describe(self.logs_doc))
            return
        self.check(self.logs_doc, self.logs_causes or self.causes, culprit=self.logs_culprit, what="console + rank logs")

    def test_flight_recorder(self):
        self.assertIsNotNone(self.fr_doc, "no flight-recorder dumps were written")
        self.check(self.fr_doc, self.fr_causes or self.causes, culprit=self.fr_culprit, what="ccdiag fr")
        # The cause's catalogue description that opens the verdict's summary
        # is generic ("a slow dataloader, checkpoint, GC, slow GPU"): not a
        # conclusion. Everything else (evidence, findings, steps) must not
        # name a GPU, NVLink or RDMA for a gloo job.
        doc = json.loads(json.dumps(self.fr_doc))
        summary = doc["verdict"].get("summary", "")
        if " Evidence: " in summary:
            doc["verdict"]["summary"] = summary[summary.index(" Evidence: "):]
        text = json.dumps(doc)
        for word in ("GPU", "RDMA", "nvidia-smi", "NVLink"):
            self.assertNotIn(word, text, "a GPU/RDMA conclusion for a gloo (CPU) job")


HOST_CODE = ("rank_stuck_in_host_code", "rank_skips_collective")


def main_thread(stacks_doc, pid):
    proc = next(p for p in stacks_doc["processes"] if p["pid"] == pid)
    return next(t for t in proc["threads"] if t["tid"] == pid), proc


class Healthy(ScenarioTest):
    scenario = "healthy"
    live = False

    def test_post_mortem_logs(self):
        cause, _, conf = verdict(self.logs_doc)
        print(f"\n  [healthy] console + rank logs: {cause} confidence {conf}", file=sys.stderr)
        # Logs alone cannot show health (docs/decision-tree.md): never a
        # problem, either healthy or "not enough to tell" at low confidence.
        self.assertIn(cause, ("no_problem_found", "insufficient_evidence"), describe(self.logs_doc))
        if cause == "insufficient_evidence":
            self.assertLessEqual(conf, 0.3, describe(self.logs_doc))
        self.assertIn(self.logs_proc.returncode, (0, 3))
        self.assertEqual(self.job.rc, 0)

    def test_flight_recorder(self):
        self.assertEqual(len(self.job.fr_dumps()), NPROC)
        cause, _, conf = verdict(self.fr_doc)
        print(f"\n  [healthy] ccdiag fr: {cause} confidence {conf}", file=sys.stderr)
        self.assertEqual(cause, "no_problem_found", describe(self.fr_doc))
        self.assertEqual(self.fr_proc.returncode, 0)
        self.assertTrue(any("gloo" in n for n in self.fr_doc["fr"]["notes"]), self.fr_doc["fr"])


class HealthyTraining(ScenarioTest):
    """A job that trains normally while it is diagnosed live. One snapshot of
    its stacks looks like a hang (some ranks in all_reduce, one computing);
    the ranks' wake-ups just before the capture show it runs. Nobody may be
    blamed, live or from the bundle."""
    scenario = "training"

    @classmethod
    def after_live(cls):
        with open(os.path.join(cls.job.out, "stop"), "w"):
            pass

    def check_running(self, doc, what):
        cause, rank, conf = verdict(doc)
        print(f"\n  [training] {what}: {cause} rank {rank} confidence {conf}", file=sys.stderr)
        self.assertIn(cause, ("no_problem_found", "insufficient_evidence"), f"{what}: {describe(doc)}")
        if cause == "insufficient_evidence":
            self.assertLessEqual(conf, 0.3, describe(doc))
        ids = [f["id"] for f in doc.get("findings", [])]
        self.assertIn("stacks.ranks_progressing", ids, f"{what}: {describe(doc)}")
        for bad in ("stacks.rank_outside_collective", "stacks.rank_in_different_collective",
                    "stacks.ranks_in_different_calls"):
            self.assertNotIn(bad, ids, f"{what}: {describe(doc)}")

    def test_live_diagnose(self):
        self.check_running(self.live_doc, "live diagnose")
        self.assertIn(self.live_proc.returncode, (0, 3))

    def test_collect_then_diagnose(self):
        self.check_running(self.collect_doc, "collect + diagnose")

    def test_stacks_census(self):
        ids = [f["id"] for f in self.stacks_doc["census"]["findings"]]
        self.assertIn("stacks.ranks_progressing", ids, json.dumps(self.stacks_doc["census"])[:3000])
        self.assertEqual(self.stacks_doc["census"]["odd_ranks_out"], [])

    def test_post_mortem_logs(self):
        cause, _, conf = verdict(self.logs_doc)
        self.assertIn(cause, ("no_problem_found", "insufficient_evidence"), describe(self.logs_doc))
        if cause == "insufficient_evidence":
            self.assertLessEqual(conf, 0.3, describe(self.logs_doc))
        self.assertEqual(self.job.rc, 0)

    def test_flight_recorder(self):
        cause, _, conf = verdict(self.fr_doc)
        self.assertEqual(cause, "no_problem_found", describe(self.fr_doc))


class SkipsCollective(ScenarioTest):
    logs_ambiguous = True
    scenario = "skip"
    causes = HOST_CODE
    fr_causes = HOST_CODE

    def test_python_thread_names(self):
        # scenario.py starts threading.Thread(name="ckpt-writer") on every rank.
        for rank, pid in self.pids.items():
            _, proc = main_thread(self.stacks_doc, pid)
            named = [t for t in proc["threads"] if (t.get("python") or {}).get("name") == "ckpt-writer"]
            self.assertEqual(len(named), 1, f"rank {rank}: {[(t['tid'], t['name'], t.get('python')) for t in proc['threads']]}")
            self.assertTrue(named[0]["name"], "the native (comm) name is kept beside the Python one")
        self.assertRegex(self.stacks_text, r'thread \d+ "ckpt-writer" \(native "[^"]+"\)', self.stacks_text[:3000])

    def test_census_names_group_and_frame(self):
        # The waiting ranks' c10d frames name their process group (the
        # default one here) and members; the odd rank's entry names the
        # frame where its stack parts from theirs.
        for rank in (0, 1, 3):
            t, _ = main_thread(self.stacks_doc, self.pids[rank])
            self.assertEqual((t.get("c10d") or {}).get("process_group"), "0", t.get("c10d"))
            self.assertEqual(t["c10d"]["pg_desc"], "default_pg")
            self.assertEqual(t["c10d"]["ranks"], [0, 1, 2, 3])
            self.assertEqual(t["c10d"]["op"], "all_reduce")
        odd = [f for f in self.live_doc["findings"] if f["id"] == "stacks.rank_outside_collective"]
        self.assertEqual(len(odd), 1, describe(self.live_doc))
        self.assertEqual(odd[0]["subject"].get("rank"), 2)
        self.assertIn("process group 0 (world, default_pg)", odd[0]["summary"])
        self.assertIn("stacks part at", odd[0]["summary"])
        self.assertIn("differs_at", odd[0]["fields"])
        self.assertIsNone(odd[0]["fields"]["seq"], "no sequence number is in the stacks: none is made up")


    def test_census_takes_seq_from_dumps_in_the_bundle(self):
        # The live bundle with the job's dumps added under raw/fr/: rank 2's
        # census entry now names the collective it never called, seq 4.
        import shutil
        dst = os.path.join(self.bundle, "raw", "fr")
        os.makedirs(dst, exist_ok=True)
        for f in self.job.fr_dumps():
            shutil.copy(f, dst)
        doc, _ = run_json(["diagnose", self.bundle], timeout=120)
        odd = [f for f in doc["findings"] if f["id"] == "stacks.rank_outside_collective"]
        self.assertEqual(len(odd), 1, describe(doc))
        self.assertEqual((odd[0]["fields"]["seq"], odd[0]["fields"]["seq_process_group"]), (4, "0"), odd[0]["fields"])
        self.assertIn("flight recorder: process group 0 (world, default_pg) seq 4", odd[0]["summary"])


class EarlyExit(ScenarioTest):
    """Rank 2 has one batch fewer: it leaves the loop and exits 0 while the
    others enter one more all_reduce. With gloo they fail at once (their
    ring neighbours' sockets close), so there is no hang to catch live;
    torchrun's failure table lists ranks 0, 1, 3 and names rank 1 as the
    root cause. The rank absent from the table is the culprit."""
    scenario = "early_exit"
    causes = ("rank_skips_collective",)
    # Whether rank 2's last all_reduce reads as completed in its dump is a race
    # in gloo's completion status (as in RankRaises): then it reads as late.
    fr_causes = ("rank_skips_collective", "straggler_or_timeout_too_short")
    live = False


class EarlyExitRank0(EarlyExit):
    """The same early exit by rank 0, whose roles (store host, first rank)
    must not decide the reading, and which torchrun's table cannot show as a
    gap: the job's ranks come from the --log-dir folders beside the console."""
    culprit = 0


class EarlyExitLastRank(EarlyExit):
    """The same early exit by the last rank: outside the range of the ranks
    the table lists."""
    culprit = 3


class RankRaises(ScenarioTest):
    """Rank 2 raises a KeyError in its own code between two steps; the agent
    stops the other three, which wait in the next all_reduce. The console
    names the exception; the dumps alone only show rank 2 missing from it,
    and whether its last all_reduce had completed when it dumped is a race
    in gloo's completion status (then it reads as not yet arrived)."""
    scenario = "raises"
    causes = ("user_code_bug",)
    fr_causes = ("rank_skips_collective", "rank_stuck_in_host_code", "straggler_or_timeout_too_short")
    live = False


class LateInit(ScenarioTest):
    """Rank 2 prepares for three timeouts before init_process_group; the
    others give up in it, waiting in the store for rank 2's gloo address key.
    Live, rank 2 sleeps outside any collective while the others wait in c10d.
    No collective ran, so the dumps have nothing to compare: never health."""
    scenario = "late_init"
    causes = HOST_CODE + ("straggler_or_timeout_too_short",)
    fr_causes = ("insufficient_evidence",)
    fr_culprit = False
    logs_causes = ("straggler_or_timeout_too_short", "rank_stuck_in_host_code")


class PointToPointDeadlock(ScenarioTest):
    """Ranks 2 and 3 exchange a tensor by hand, each receiving before it
    sends, so neither sends; ranks 0 and 1 wait for them in the next
    all_reduce. Live, every rank is blocked in a c10d wait, two of them in
    recv: a point-to-point exchange no side can complete. gloo records no
    send/recv in its flight recorder, so the dumps only show ranks 2 and 3
    missing from the all_reduce; the logs show timeouts on every rank."""
    scenario = "p2p_deadlock"
    causes = ("user_code_bug",)
    live_culprit = False  # two ranks (2 and 3) deadlock each other
    fr_causes = ("rank_skips_collective",)
    fr_culprit = False
    logs_causes = ("user_code_bug",)
    logs_ambiguous = True


class BusyRank(ScenarioTest):
    logs_ambiguous = True
    scenario = "busy"
    causes = ("rank_stuck_in_host_code", "rank_skips_collective", "straggler_or_timeout_too_short")


class BusyRank0(BusyRank):
    """The busy rank is rank 0: live stacks, the bundle, the logs and the
    dumps must name it as they name rank 2."""
    culprit = 0


class StuckInDataLoader(ScenarioTest):
    logs_ambiguous = True
    scenario = "dataloader"
    causes = HOST_CODE

    def test_workers_shown_under_their_rank(self):
        r2 = [r for r in self.ranks_doc["ranks"] if r.get("pid") == self.pids[2]]
        self.assertEqual(len(r2), 1)
        self.assertGreaterEqual(len(r2[0].get("workers", [])), 1, r2[0])


class RankKilled(ScenarioTest):
    scenario = "sigkill"
    causes = ("rank_process_died",)
    live = False


class RankKilledRank0(RankKilled):
    """The SIGKILLed rank is rank 0 (where the store lives)."""
    culprit = 0


class RankSegfaults(ScenarioTest):
    """Rank 2 crashes in native code (SIGSEGV, a bad pointer in an
    extension); the others fail in the next all_reduce."""
    scenario = "segv"
    causes = ("rank_process_died",)
    live = False


class RankExitsNonZero(ScenarioTest):
    """Rank 2 leaves through os._exit(3): no traceback, no signal, a non-zero
    exit code. Its death is the fact; the logs alone may read it as the
    script's own doing."""
    scenario = "exit_code"
    causes = ("rank_process_died",)
    logs_causes = ("rank_process_died", "user_code_bug")
    live = False


class RankSysExitConsoleOnly(ScenarioTest):
    """Rank 2 calls sys.exit(1) and torchrun runs without --tee or --log-dir,
    so the console is all there is: the agent's failure table (rank 2 first,
    exit code 1), the others' "Connection closed by peer" tracebacks, and no
    traceback of rank 2's own. It ended on its own and took its connections
    with it. When the agent stops the others before they notice (a race),
    the console holds the failure table alone: exit code 1 is what an
    uncaught exception leaves too, so the logs may lean to the script's own
    error; either way rank 2 is named."""
    scenario = "sys_exit"
    causes = ("rank_process_died",)
    logs_causes = ("rank_process_died", "user_code_bug")
    fr_causes = ("rank_skips_collective", "rank_process_died", "insufficient_evidence")
    fr_culprit = False
    live = False
    tee = False

    def test_post_mortem_logs(self):
        self.assertEqual(self.job.rank_logs(), [])
        super().test_post_mortem_logs()


class MonitoredBarrier(ScenarioTest):
    """Rank 2 never reaches a monitored_barrier: rank 0 reports "Rank 2 failed
    to pass monitoredBarrier", the others fail after it. The logs name rank 2
    (not rank 0, whose error it is); they cannot say whether it skipped the
    barrier, was stuck or late. Live, rank 2 sleeps in its own code."""
    scenario = "monitored_barrier"
    causes = HOST_CODE
    logs_causes = HOST_CODE + ("straggler_or_timeout_too_short",)
    fr_causes = HOST_CODE + ("straggler_or_timeout_too_short", "insufficient_evidence", "no_problem_found")
    fr_culprit = False

    def test_flight_recorder(self):
        # gloo records no monitored_barrier: every recorded collective completed. Clean dumps of a hung
        # job must not promise health (it read no_problem_found 0.9 before).
        super().test_flight_recorder()
        cause, _, conf = verdict(self.fr_doc)
        if cause == "no_problem_found":
            self.assertLessEqual(conf, 0.6, describe(self.fr_doc))


class OpMismatch(ScenarioTest):
    """Rank 2 all_gathers where the others all_reduce, on the same group. Live,
    every rank is still in its call (no wake-ups before the capture) and rank 2
    is in another collective than the three that agree. The logs see only
    timeouts on every rank."""
    scenario = "op_mismatch"
    causes = ("mismatched_collectives",)
    logs_causes = ("mismatched_collectives", "insufficient_evidence")
    logs_culprit = False


class SizeMismatch(ScenarioTest):
    scenario = "size_mismatch"
    causes = ("mismatched_collectives",)
    live = False
    logs_culprit = False  # gloo reports it on the rank that received the wrong size, not on the sender


class DtypeMismatch(SizeMismatch):
    scenario = "dtype_mismatch"


class WrongSubgroup(ScenarioTest):
    """Sub-groups {0,1} and {2,3}: rank 2 enters the world all_reduce while
    rank 3 waits for it in the {2,3} sub-group's; ranks 0 and 1 finish
    theirs and wait in the world one. Ranks 2 and 3 wait for each other."""
    scenario = "subgroup"
    causes = ("wrong_process_group", "rank_skips_collective")
    logs_ambiguous = True  # every rank times out: the logs single no one out

    def check_deadlock(self, doc, what):
        # Live the stacks show the two groups waiting on each other (rank 3
        # in {2,3}'s all_reduce for rank 2, rank 2 in the world's for rank 3)
        # but not which of the two issued the wrong call: the cause, both
        # ranks and both groups, and no single culprit. The dumps' history
        # does name rank 2 (test_flight_recorder).
        cause, rank, conf = verdict(doc)
        print(f"\n  [{self.scenario}] {what}: {cause} rank {rank} confidence {conf}", file=sys.stderr)
        self.assertEqual(cause, "wrong_process_group", describe(doc))
        self.assertIn(rank, (None, self.culprit), describe(doc))
        summary = doc["verdict"]["summary"]
        self.assertIn("process group 2 (ranks 2,3)", summary, describe(doc))
        self.assertIn("process group 0 (world, default_pg; ranks 0,1,2,3)", summary, describe(doc))

    def test_live_diagnose(self):
        self.check_deadlock(self.live_doc, "live diagnose")
        self.assertEqual(self.live_proc.returncode, 1)

    def test_collect_then_diagnose(self):
        self.check_deadlock(self.collect_doc, "collect + diagnose")


class Rank0Barrier(ScenarioTest):
    """Rank 0 alone sleeps (a rank-0-only checkpoint) before a barrier."""
    scenario = "rank0_barrier"
    culprit = 0
    causes = ("rank_stuck_in_host_code", "straggler_or_timeout_too_short")
    fr_causes = HOST_CODE + ("straggler_or_timeout_too_short",)
    # The logs show only that rank 0 never joined the barrier the others timed
    # out in: skipped, stuck and late read alike there (a weak leading
    # candidate names rank 0 with one of them), unlike the live stacks.
    logs_causes = HOST_CODE + ("straggler_or_timeout_too_short",)
    logs_ambiguous = True


class Straggler(ScenarioTest):
    """Rank 2 reaches the all_reduce 3 s after the others' timeout: by then
    the agent has stopped it, so no evidence shows it arriving; late, stuck
    and skipped read alike."""
    scenario = "straggler"
    causes = HOST_CODE + ("straggler_or_timeout_too_short",)
    logs_ambiguous = True


class DataLoaderWorkerDies(ScenarioTest):
    """A DataLoader worker of rank 2 is SIGKILLed; rank 2 raises
    "DataLoader worker (pid N) is killed by signal" and exits 1; the others
    wait in the next all_reduce until the agent stops them. The rank did not
    die of a signal (its worker did): the catalogue's honest cause is the
    exception on one rank, user_code_bug."""
    scenario = "dataloader_dies"
    causes = ("user_code_bug",)
    live = False
    # The dumps show only that rank 2 stopped issuing collectives, not why.
    fr_causes = HOST_CODE + ("insufficient_evidence",)

    def test_console_names_the_worker(self):
        worker = r"DataLoader worker \(pid\(?s?\)? ?\d+\)? (is killed by signal|exited unexpectedly)"
        raw = ""
        for path in [self.job.console_path] + self.job.rank_logs():
            with open(path, errors="replace") as f:
                raw += f.read()
        text = json.dumps(self.logs_doc)
        if not re.search(worker, raw):
            # torch's own race (seen once in 4 CI runs): rank 2 unpickled a batch whose shared-memory fd the
            # killed worker was to hand over and raised ConnectionResetError before its worker check, so no
            # line names the worker. The report must then quote what rank 2 did raise.
            self.assertIn("Connection reset by peer", raw, "the job failed some third way")
            self.assertIn("Connection reset by peer", text, describe(self.logs_doc))
            return
        self.assertRegex(text, worker, describe(self.logs_doc))


class MeshTensorParallel(ScenarioTest):
    """A 2-D DeviceMesh ("dp","tp") of 2x2 ([[0,1],[2,3]]): rank 2 skips one
    tp all_reduce and sleeps. Rank 3 waits for it in tp {2,3}, rank 0 in dp
    {0,2}, rank 1 in dp {1,3} (for rank 3). The verdicts name the dimension,
    not only a process-group number."""
    scenario = "mesh_tp"
    causes = HOST_CODE
    logs_ambiguous = True  # gloo's timeout lines name no group

    def test_flight_recorder_names_dimension(self):
        # The dumps show which call rank 2 missed first in its own program:
        # the tp one; its missing dp all_reduce is a consequence.
        summary = self.fr_doc["verdict"]["summary"]
        self.assertIn("tp dimension, DeviceMesh mesh_tp", summary, describe(self.fr_doc))
        self.assertNotIn("mesh_dp", summary, describe(self.fr_doc))

    def test_live_names_dimension(self):
        # Live, rank 2 is awaited in both dimensions (rank 3 in tp, rank 0 in
        # dp): the stacks cannot say which call it would have made first, so
        # the verdict names both, each with its members.
        summary = self.live_doc["verdict"]["summary"]
        self.assertIn("tp dimension, DeviceMesh mesh_tp; ranks 2,3", summary, describe(self.live_doc))
        self.assertIn("dp dimension, DeviceMesh mesh_dp; ranks 0,2", summary, describe(self.live_doc))
        t, _ = main_thread(self.stacks_doc, self.pids[3])
        self.assertEqual((t["c10d"]["pg_desc"], t["c10d"]["ranks"]), ("mesh_tp", [2, 3]), t.get("c10d"))
        t, _ = main_thread(self.stacks_doc, self.pids[1])
        self.assertEqual((t["c10d"]["pg_desc"], t["c10d"]["ranks"]), ("mesh_dp", [1, 3]), t.get("c10d"))


if __name__ == "__main__":
    unittest.main()
