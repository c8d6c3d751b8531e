"""Safety of the capture: the target is never left stopped or traced — when
ccdiag is SIGKILLed at every phase of a capture and at random moments, when
threads start and exit during the capture, when a thread is in D state, when
the target is already traced, when the leader is a zombie, when the target is
job-control stopped."""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from stacks_helpers import (BUILD_DIR, Target, all_functions, assert_running_untraced, can_ptrace,  # noqa: E402
                            functions, run, skip_unless, thread_states, wait_group_exited)
from ccdiag_test import BIN  # noqa: E402

DRIVER = os.path.join(BUILD_DIR, "test-programs", "capture_kill_driver")

skip_unless(can_ptrace(), "ptrace of own children is not allowed here (yama ptrace_scope >= 2 and not root)")


class StacksSafety(unittest.TestCase):
    def test_killed_at_every_phase_leaves_target_running(self):
        with Target("many_threads", 100) as t:
            for phase in ("seized", "interrupted", "stopped", "copied", "detaching"):
                # The driver runs the capture as `ccdiag stacks` does, killing
                # the capture child at `phase` (tests/drivers/).
                p = subprocess.run([DRIVER, str(t.pid), phase], capture_output=True, text=True, timeout=60)
                self.assertEqual(p.returncode, 2, (phase, p.stdout, p.stderr))
                self.assertIn("capture child died", p.stdout)
                assert_running_untraced(self, t.pid, settle=0.2)
            # And without a kill the same driver completes: the kill is what failed above.
            p = subprocess.run([DRIVER, str(t.pid), "never"], capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_sigkill_of_the_whole_tool_at_random_moments(self):
        rng = random.Random(1234)
        with Target("many_threads", 100) as t:
            for _ in range(15):
                p = subprocess.Popen([BIN, "stacks", str(t.pid), "--json"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
                time.sleep(rng.uniform(0.0, 0.08))
                try:
                    os.killpg(p.pid, signal.SIGKILL)  # ccdiag and its capture child
                except ProcessLookupError:
                    pass
                # On an overloaded host a SIGKILLed process can sit runnable for
                # tens of seconds before it is scheduled to die (seen: 38 s with
                # SIGKILL pending and no CPU time used): wait for that, not less.
                p.wait(timeout=90)
                # The capture child (the tracer) dies of the same SIGKILL but on
                # its own schedule: the kernel detaches its tracees when it
                # exits, so check once every process of the group has exited.
                wait_group_exited(p.pid, timeout=90)
                assert_running_untraced(self, t.pid, settle=0.05)

    def test_threads_starting_and_exiting_during_capture(self):
        with Target("thread_churn") as t:
            for _ in range(5):
                p = run(["stacks", str(t.pid), "--json"])
                self.assertIn(p.returncode, (0, 3), p.stderr)
                doc = json.loads(p.stdout)
                creators = [th for th in doc["processes"][0]["threads"] if "creator" in functions(th)]
                self.assertEqual(len(creators), 4)
                assert_running_untraced(self, t.pid)

    def test_thread_in_d_state_is_bounded_and_reported(self):
        with Target("vfork_dstate", 3) as t:
            time.sleep(0.2)
            states = thread_states(t.pid)
            d_tids = [tid for tid, s in states.items() if s == "D"]
            if not d_tids:
                self.skipTest(f"no thread in D state: {states}")
            start = time.time()
            p = run(["stacks", str(t.pid), "--json"])
            elapsed = time.time() - start
            self.assertEqual(p.returncode, 3, p.stderr)  # partial: one thread not stopped
            doc = json.loads(p.stdout)
            proc = doc["processes"][0]
            d = [th for th in proc["threads"] if th["tid"] == d_tids[0]][0]
            self.assertEqual(d["capture"], "not_stopped")
            self.assertEqual(d["state"], "D")
            self.assertTrue(any("not stopped" in pr for pr in proc["problems"]), proc["problems"])
            if os.geteuid() == 0:  # /proc/.../stack is root-only
                self.assertIn("kernel_clone", d.get("kernel_stack", []), d)
                self.assertEqual(d["blocked_in"], "D in " + d["kernel_stack"][0])
            others = [th for th in proc["threads"] if th["tid"] != d_tids[0]]
            self.assertTrue(all(th["capture"] == "stopped" for th in others))
            self.assertLess(proc["pause_ms"], 250)
            self.assertLess(elapsed, 5)
            # After the vfork child exits the D thread runs on: never left in t/T.
            time.sleep(3.5)
            assert_running_untraced(self, t.pid)

    def test_already_traced_target_gives_clear_error(self):
        with Target("hang_mutex_deadlock") as t:
            holder = Target("ptrace_holder", t.pid)
            try:
                p = run(["stacks", str(t.pid)])
                self.assertEqual(p.returncode, 2)
                self.assertIn("ccdiag: error:", p.stderr)
                self.assertIn("Operation not permitted", p.stderr)
                self.assertIn(f"already traced by pid {holder.pid}", p.stderr)
            finally:
                holder.kill()
            assert_running_untraced(self, t.pid)

    def test_permission_denied_gives_hint_and_exit_2(self):
        setpriv = shutil.which("setpriv")
        if os.geteuid() != 0 or not setpriv:
            self.skipTest("needs root and setpriv to run ccdiag as another user")
        with Target("hang_mutex_deadlock") as t:
            p = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", BIN, "stacks", str(t.pid)],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("ccdiag: error:", p.stderr)
            self.assertIn("Operation not permitted", p.stderr)
            self.assertIn("CAP_SYS_PTRACE", p.stderr)
            self.assertNotIn("Traceback", p.stderr)
            assert_running_untraced(self, t.pid)

    def test_zombie_leader_captured_through_a_live_thread(self):
        with Target("zombie_leader") as t:
            time.sleep(0.1)
            self.assertEqual(thread_states(t.pid)[t.pid], "Z")
            p = run(["stacks", str(t.pid), "--json"])
            self.assertIn(p.returncode, (0, 3), p.stderr)
            doc = json.loads(p.stdout)
            fns = all_functions(doc["processes"][0])
            self.assertGreaterEqual(fns.count("worker_after_leader_exit"), 3)
            assert_running_untraced(self, t.pid)

    def test_job_control_stopped_target_stays_stopped(self):
        with Target("hang_mutex_deadlock") as t:
            os.kill(t.pid, signal.SIGSTOP)
            time.sleep(0.1)
            p = run(["stacks", str(t.pid), "--json"])
            self.assertIn(p.returncode, (0, 3), p.stderr)
            time.sleep(0.1)
            # A stop the user asked for is preserved, and nobody traces it.
            self.assertTrue(all(s == "T" for s in thread_states(t.pid).values()), thread_states(t.pid))
            os.kill(t.pid, signal.SIGCONT)
            assert_running_untraced(self, t.pid)


if __name__ == "__main__":
    unittest.main()
