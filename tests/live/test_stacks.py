"""ccdiag stacks attaches for real to programs that hang the way ranks hang,
and the frames name the functions they hang in. After every capture the
target must still run, with no thread stopped or traced."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from stacks_helpers import (Target, all_functions, assert_running_untraced, can_ptrace, functions,  # noqa: E402
                            run, skip_unless)
from ccdiag_test import validate  # noqa: E402

skip_unless(can_ptrace(), "ptrace of own children is not allowed here (yama ptrace_scope >= 2 and not root)")


def stacks(*pids, extra=(), rc=(0,)):
    p = run(["stacks"] + [str(x) for x in pids] + list(extra) + ["--json"], timeout=60)
    if p.returncode not in rc:
        raise AssertionError(f"exit {p.returncode}\nstdout:{p.stdout[-3000:]}\nstderr:{p.stderr[-3000:]}")
    doc = json.loads(p.stdout)
    validate(doc, "stacks.schema.json")
    return doc, p


class StacksLive(unittest.TestCase):
    def test_mutex_deadlock_both_threads_in_pthread_mutex_lock(self):
        with Target("hang_mutex_deadlock") as t:
            doc, _ = stacks(t.pid)
            proc = doc["processes"][0]
            self.assertEqual(proc["pid"], t.pid)
            by_name = {th["name"]: th for th in proc["threads"]}
            for name, fn in (("deadlock-a", "lock_a_then_b"), ("deadlock-b", "lock_b_then_a")):
                fns = functions(by_name[name])
                self.assertIn(fn, fns)
                self.assertTrue(any("pthread_mutex_lock" in f or "lll_lock_wait" in f for f in fns), fns)
                self.assertEqual(by_name[name]["syscall"], "futex")
                # The program's own frames carry file:line from its -g build.
                own = [f for f in by_name[name]["frames"] if f["function"] == fn][0]
                self.assertTrue(own["file"].endswith("hang_mutex_deadlock.c"), own)
                self.assertGreater(own["line"], 0)
            main = [th for th in proc["threads"] if th["tid"] == t.pid][0]
            self.assertEqual(main["role"], "main")
            self.assertIn("main", functions(main))
            self.assertLess(proc["pause_ms"], 200)
            assert_running_untraced(self, t.pid)

    def test_recv_on_silent_peer(self):
        with Target("hang_recv_silent_peer", blocked=True) as t:
            doc, _ = stacks(t.pid)
            proc = doc["processes"][0]
            main = proc["threads"][0]
            self.assertIn("wait_for_peer", functions(main))
            self.assertIn(main["syscall"], ("recvfrom", "read"))
            self.assertIn("socket:[", main["blocked_in"])
            self.assertTrue(proc["activity"].startswith("in recv on a socket"), proc["activity"])
            self.assertIn("wait_for_peer", proc["activity"])
            assert_running_untraced(self, t.pid)

    def test_spin_loop_is_captured_and_keeps_running(self):
        with Target("spin_loop") as t:
            doc, _ = stacks(t.pid)
            main = doc["processes"][0]["threads"][0]
            self.assertEqual(main["capture"], "stopped")
            self.assertIn("spin_forever", functions(main))
            self.assertIn("main", functions(main))
            assert_running_untraced(self, t.pid)
            with open(f"/proc/{t.pid}/stat") as f:
                self.assertIn(f.read().rsplit(")", 1)[1].split()[0], "R")

    def test_100_threads_every_thread_complete(self):
        with Target("many_threads", 100) as t:
            doc, _ = stacks(t.pid)
            proc = doc["processes"][0]
            self.assertEqual(len(proc["threads"]), 100)
            expect = {0: "park_cond", 1: "park_sleep", 2: "park_pipe", 3: "park_epoll", 4: "park_recv", 5: "heartbeat"}
            for th in proc["threads"]:
                fns = functions(th)
                self.assertEqual(th["capture"], "stopped", th)
                if th["name"].startswith("worker-"):
                    i = int(th["name"].split("-")[1])
                    self.assertIn(expect[i % 6], fns, (th["name"], fns))
                    self.assertIn("thread_main", fns)
                    # Outermost frame is the clone root: the walk reached the end.
                    self.assertTrue(any("clone" in f for f in fns[-2:]), fns[-3:])
            deep = [th for th in proc["threads"] if th["name"] == "deep-recursion"][0]
            self.assertGreaterEqual(functions(deep).count("recurse_then_wait"), 200)
            self.assertLess(proc["pause_ms"], 200)  # design target 20 ms: bench/stacks measures it; loaded CI must not flake
            assert_running_untraced(self, t.pid)

    def test_200_threads(self):
        with Target("many_threads", 200) as t:
            doc, _ = stacks(t.pid, extra=["--no-lines"])
            proc = doc["processes"][0]
            self.assertEqual(len(proc["threads"]), 200)
            self.assertTrue(all(th["capture"] == "stopped" for th in proc["threads"]))
            self.assertTrue(all(f["file"] is None for f in proc["threads"][0]["frames"]))
            assert_running_untraced(self, t.pid)

    def test_nccl_like_thread_roles(self):
        with Target("nccl_like_rank", "collective", blocked=True) as t:
            doc, _ = stacks(t.pid)
            roles = {th["name"]: th["role"] for th in doc["processes"][0]["threads"]}
            self.assertEqual(roles["NCCL Progress"], "nccl_proxy_progress")
            self.assertEqual(roles["pt_nccl_watchdg"], "pytorch_watchdog")
            self.assertTrue(doc["processes"][0]["activity"].startswith("in cudaStreamSynchronize"), doc["processes"][0]["activity"])
            assert_running_untraced(self, t.pid)

    def test_census_names_the_odd_rank_out(self):
        targets = [Target("nccl_like_rank", "collective", blocked=True) for _ in range(3)] + [Target("nccl_like_rank", "host", blocked=True)]
        try:
            doc, _ = stacks(*[t.pid for t in targets])
            census = doc["census"]
            self.assertEqual(len(census["groups"]), 2)
            self.assertEqual(len(census["groups"][0]["members"]), 3)
            odd = census["odd_ranks_out"]
            self.assertEqual([o["pid"] for o in odd], [targets[3].pid])
            ids = [f["id"] for f in census["findings"]]
            self.assertIn("stacks.rank_outside_collective", ids)
            for t in targets:
                assert_running_untraced(self, t.pid)
        finally:
            for t in targets:
                t.kill()

    def test_census_of_a_running_job_names_nobody(self):
        # Three ranks caught in their collective and one in host code: the shape of a hang. But the three
        # complete a collective every 2 ms: their main threads kept waking before the capture, the job runs.
        targets = [Target("nccl_like_rank", "running") for _ in range(3)] + [Target("nccl_like_rank", "host", blocked=True)]
        try:
            doc, _ = stacks(*[t.pid for t in targets])
            by_pid = {p["pid"]: p for p in doc["processes"]}
            for t in targets[:3]:
                self.assertGreaterEqual(by_pid[t.pid]["progress"]["wakeups"], 3, by_pid[t.pid].get("progress"))
            self.assertLess(by_pid[targets[3].pid]["progress"]["wakeups"], 3, by_pid[targets[3].pid].get("progress"))
            census = doc["census"]
            ids = [f["id"] for f in census["findings"]]
            self.assertIn("stacks.ranks_progressing", ids)
            self.assertNotIn("stacks.rank_outside_collective", ids)
            self.assertEqual(census["odd_ranks_out"], [])
            text = run(["stacks"] + [str(t.pid) for t in targets], timeout=60).stdout
            self.assertIn("the job is running", text)
            self.assertIn("main thread before the capture: woke", text)
            for t in targets:
                assert_running_untraced(self, t.pid)
        finally:
            for t in targets:
                t.kill()

    def test_child_of_dead_parent(self):
        with Target("orphan_child") as t:
            child = int(t.ready_line.split()[-1])
            t.extra_pids.append(child)
            doc, _ = stacks(child)
            self.assertIn("child_park", all_functions(doc["processes"][0]))
            assert_running_untraced(self, child)

    def test_text_output(self):
        with Target("hang_mutex_deadlock") as t:
            p = run(["stacks", str(t.pid)])
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("lock_a_then_b", p.stdout)
            self.assertIn("paused", p.stdout)

    def test_same_pid_twice_is_captured_once(self):
        with Target("spin_loop") as t:
            doc, _ = stacks(t.pid, t.pid)
            self.assertEqual([p["pid"] for p in doc["processes"]], [t.pid])
            self.assertEqual(doc["errors"], [])
            assert_running_untraced(self, t.pid)

    def test_bad_pid_is_an_input_error(self):
        p = run(["stacks", "999999999"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("ccdiag: error:", p.stderr)
        p = run(["stacks"])
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    unittest.main()
