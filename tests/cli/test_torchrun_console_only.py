"""torchrun consoles as a user has them when nothing else was kept (no
--tee, no --log-dir), from real runs (tests/fixtures/torch/, torch 2.15.0,
gloo): rank 2 calling sys.exit(1) or failing an assert (the table names it first with exit code 1,
ranks 1 and 3 print "Connection closed by peer", rank 2 prints nothing); a
--master-port already taken; a --master-addr that does not resolve; a second
node that never joined the rendezvous; GLOO_SOCKET_IFNAME naming an interface that does not exist;
a rank of WORLD_SIZE never launched (per-rank logs, no torchrun); torchrun stopped by a SIGTERM from outside; a DDP error every rank raised alike."""
import json
import os
import shutil
import tempfile
import unittest

from ccdiag_test import FIXTURES, run_json

CONSOLE = os.path.join(FIXTURES, "torch", "sys_exit_console_only", "console.log")


def console_with(test, source, insert_at, own_lines):
    """A temporary copy of the console `source` with `own_lines` inserted before line `insert_at`."""
    with open(source) as f:
        lines = f.read().splitlines(keepends=True)
    d = tempfile.mkdtemp(prefix="ccdiag-console-")
    test.addCleanup(shutil.rmtree, d, True)
    path = os.path.join(d, "console.log")
    with open(path, "w") as f:
        f.writelines(lines[:insert_at] + own_lines + lines[insert_at:])
    return path


def verdict(path):
    doc, _ = run_json(["diagnose", "--log", path])
    v = doc["verdict"]
    return v["root_cause"], (v.get("culprit") or {}).get("rank"), v["confidence"], doc


class ConsoleOnly(unittest.TestCase):
    def test_a_rank_that_exited_first_without_an_error_is_the_dead_rank(self):
        # Before: insufficient_evidence at 0.00 ("the first worker to exit was
        # rank 2 ... (it raised; its own log says why)" as context only).
        cause, rank, conf, doc = verdict(CONSOLE)
        self.assertEqual((cause, rank), ("rank_process_died", 2), doc["verdict"])
        self.assertLessEqual(conf, 0.6)  # a symptom: why it exited is not in the console
        ids = [f["id"] for f in doc["findings"]]
        self.assertIn("torchrun.root_cause", ids)

    def test_its_own_traceback_makes_it_the_scripts_error(self):
        # The same console with a traceback of rank 2's own before the table:
        # then it raised, and the new reading must not claim it just exited.
        own = ["[rank2]: Traceback (most recent call last):\n",
               '[rank2]:   File "/srv/job/train.py", line 20, in <module>\n',
               "[rank2]:     batch = next(it)\n",
               "[rank2]: KeyError: 'labels'\n"]
        cause, rank, _, doc = verdict(console_with(self, CONSOLE, 0, own))
        self.assertEqual(rank, 2, doc["verdict"])
        self.assertEqual(cause, "user_code_bug", doc["verdict"])


class RaisesConsoleOnly(unittest.TestCase):
    def test_the_first_rank_to_raise_a_plain_exception_is_the_scripts_error(self):
        # Rank 2's AssertionError, then torchrun's table with rank 2 first. Before: user_code_bug 0.30 (leading
        # candidate); the table's first failure with a plain Python exception of its own votes too (x4).
        cause, rank, conf, doc = verdict(os.path.join(FIXTURES, "torch", "raises_console_only", "console.log"))
        self.assertEqual((cause, rank), ("user_code_bug", 2), doc["verdict"])
        self.assertGreaterEqual(conf, 0.6)


class AllRanksRaise(unittest.TestCase):
    def test_the_same_error_on_every_rank_names_no_single_rank(self):
        # Every rank raised the same ValueError and exited with code 1. Before: user_code_bug with rank 3, one
        # of four identical exit lines picked at random.
        cause, rank, _, doc = verdict(os.path.join(FIXTURES, "torch", "all_raise_console_only", "console.log"))
        self.assertEqual(cause, "user_code_bug", doc["verdict"])
        self.assertIsNone(rank, doc["verdict"])


class DDPUnusedParameters(unittest.TestCase):
    def test_the_same_ddp_error_on_every_rank_names_no_single_rank(self):
        # A real torchrun (2 ranks, --tee off) of a DDP model with a parameter the loss never uses: both ranks
        # raise "Expected to have finished reduction in the prior iteration ..." word for word. Before:
        # user_code_bug with rank 1 (rank 0's identical raise was relabelled a cascade of rank 1's).
        cause, rank, _, doc = verdict(os.path.join(FIXTURES, "torch", "ddp_unused_params", "console.log"))
        self.assertEqual(cause, "user_code_bug", doc["verdict"])
        self.assertIsNone(rank, doc["verdict"])
        raised = [f for f in doc["findings"] if f["id"] == "python.exception"]
        self.assertEqual(sorted((f.get("subject") or {}).get("rank") for f in raised), [0, 1])
        self.assertTrue(all(f["role"] == "symptom" for f in raised), raised)


class PortInUse(unittest.TestCase):
    def test_a_taken_master_port_is_no_network_interface_problem(self):
        # A real torchrun whose --master-port was already taken. Before: wrong_network_interface 0.19 (the
        # DistNetworkError read as an unreachable rendezvous).
        cause, _, conf, doc = verdict(os.path.join(FIXTURES, "torch", "port_in_use", "console.log"))
        self.assertEqual(cause, "rendezvous_port_in_use", doc["verdict"])
        self.assertEqual(doc["verdict"]["layer"], "system-config")
        self.assertGreaterEqual(conf, 0.4)
        self.assertIn("ss -ltnp", json.dumps(doc["next_steps"]))


class MasterAddrUnresolvable(unittest.TestCase):
    def test_a_rendezvous_name_that_does_not_resolve_is_said(self):
        # A real torchrun given a --master-addr that does not resolve: c10d retries with "gai error: -2 - Name
        # or service not known" warnings. Before: insufficient_evidence 0.00 with "find the odd rank out".
        cause, _, conf, doc = verdict(os.path.join(FIXTURES, "torch", "master_addr_unresolvable", "console.log"))
        self.assertEqual(cause, "hostname_not_resolvable", doc["verdict"])
        self.assertEqual(doc["verdict"]["layer"], "system-config")
        self.assertIn("getent", json.dumps(doc["next_steps"]))


class RendezvousTimeout(unittest.TestCase):
    def test_a_node_that_never_joined_is_no_interface_verdict(self):
        # A real torchrun --nnodes 2 started on one node: RendezvousTimeoutError. Before: wrong_network_interface
        # 0.20 (read as bootstrap_unreachable x40) with "sample RDMA counters" as the first step.
        cause, _, conf, doc = verdict(os.path.join(FIXTURES, "torch", "rendezvous_timeout", "console.log"))
        self.assertEqual(cause, "insufficient_evidence", doc["verdict"])
        self.assertLess(conf, 0.15)
        steps = json.dumps(doc["next_steps"])
        self.assertNotIn("probe rdma", steps)
        self.assertIn("MASTER_ADDR", steps)


class WorldSizeMissingRank(unittest.TestCase):
    """Two real processes started by hand with WORLD_SIZE=3 (rank 2 never launched), 15 s timeout: rank 0, the
    store host, timed out "waiting for clients. 2/3 clients joined"; rank 1 timed out waiting for rank 0's gloo
    address key."""
    LOGS = [os.path.join(FIXTURES, "torch", "world_size_missing_rank", f"rank{r}.log") for r in (0, 1)]

    def test_the_rank_that_never_joined_is_named_not_the_store_host(self):
        # Before: straggler_or_timeout_too_short with rank 0 as the culprit (rank 1 waited for rank 0's key,
        # read as rank 0 reaching init late; rank 0 was waiting for rank 2 in the store).
        doc, _ = run_json(["diagnose", "--log", self.LOGS[0], "--log", self.LOGS[1]])
        v = doc["verdict"]
        self.assertNotEqual(v["root_cause"], "straggler_or_timeout_too_short", v)
        self.assertEqual((v.get("culprit") or {}).get("rank"), 2, v)
        self.assertLess(v["confidence"], 0.5)  # not launched, dead before, or unreachable: the logs cannot tell
        ids = [f["id"] for f in doc["findings"]]
        self.assertIn("tree.store_clients_missing", ids)
        self.assertNotIn("tree.store_key_never_set", ids)
        self.assertIn("MASTER_ADDR", json.dumps(doc["next_steps"]))

    def test_the_store_hosts_log_alone_names_no_rank(self):
        # Rank 0 alone: one rank is absent but the logs do not say which.
        doc, _ = run_json(["diagnose", "--log", self.LOGS[0]])
        v = doc["verdict"]
        self.assertIsNone((v.get("culprit") or {}).get("rank"), v)
        self.assertNotIn("tree.store_clients_missing", [f["id"] for f in doc["findings"]])


class MasterPortMismatch(unittest.TestCase):
    LOGS = [os.path.join(FIXTURES, "torch", "master_port_mismatch", f"rank{r}.log") for r in (0, 1)]

    def test_a_store_client_failing_on_loopback_is_no_interface_problem(self):
        # Two processes started by hand on one host, MASTER_ADDR=127.0.0.1, rank 0 with MASTER_PORT 29621
        # (it hosts the store: "1/2 clients joined"), rank 1 with 29622 (its client timed out connecting to
        # (127.0.0.1, 29622)). Before: wrong_network_interface at 0.30, read off the unreachable rendezvous;
        # no interface, firewall or name resolution stands between a process and its own loopback.
        doc, _ = run_json(["diagnose", "--log", self.LOGS[0], "--log", self.LOGS[1]])
        v = doc["verdict"]
        self.assertEqual(v["root_cause"], "bootstrap_unreachable", v)
        self.assertLessEqual(v["confidence"], 0.6)
        self.assertIn("tree.store_target_local", [f["id"] for f in doc["findings"]])
        self.assertIn("MASTER_ADDR", json.dumps(doc["next_steps"]))
        for alt in doc.get("alternatives", []):
            self.assertLess(alt.get("confidence", alt.get("score", 0)), 0.1, alt)


class AgentSignalled(unittest.TestCase):
    def test_a_torchrun_stopped_from_outside_is_not_the_scripts_error(self):
        # A real torchrun (2 ranks, healthy all_reduce loop) sent SIGTERM after 12 s: "Received 15 death signal,
        # shutting down workers", then the agent's SignalException. Before: user_code_bug as the leading
        # candidate (the SignalException read as a script exception).
        doc, _ = run_json(["diagnose", "--log", os.path.join(FIXTURES, "torch", "agent_sigterm", "console.log")])
        v = doc["verdict"]
        self.assertEqual(v["root_cause"], "insufficient_evidence", v)
        self.assertNotIn("user_code_bug", json.dumps(doc.get("alternatives", [])))
        self.assertIn("stopped from outside", v["summary"])
        self.assertIn("signal 15", doc["next_steps"][0]["action"])
        ids = [f["id"] for f in doc["findings"]]
        self.assertIn("torchelastic.agent_signalled", ids)
        self.assertNotIn("python.exception", ids)

    def test_a_worker_failure_before_the_signal_still_decides(self):
        # The same console with rank 1's own KeyError before the agent's signal: the script's error is the
        # cause, the signal only how the job ended.
        own = ["[rank1]: Traceback (most recent call last):\n",
               '[rank1]:   File "/srv/job/long.py", line 7, in <module>\n',
               "[rank1]:     warmup = cfg['warmup_steps']\n",
               "[rank1]: KeyError: 'warmup_steps'\n"]
        path = console_with(self, os.path.join(FIXTURES, "torch", "agent_sigterm", "console.log"), 7, own)
        doc, _ = run_json(["diagnose", "--log", path])
        self.assertNotIn("stopped from outside", doc["verdict"]["summary"])
        self.assertEqual(doc["verdict"]["root_cause"], "user_code_bug", doc["verdict"])


class GlooInterfaceMissing(unittest.TestCase):
    def test_an_interface_gloo_cannot_find_is_the_interface_setting(self):
        # A real torchrun (2 ranks) with GLOO_SOCKET_IFNAME=nosuch0: every rank fails in init_process_group
        # with Gloo's "Unable to find address for: nosuch0". Before: user_code_bug 0.15 (the gloo enforce
        # failure read as the script's own error).
        cause, rank, _, doc = verdict(os.path.join(FIXTURES, "torch", "gloo_iface_missing", "console.log"))
        self.assertEqual(cause, "wrong_network_interface", doc["verdict"])
        self.assertEqual(doc["verdict"]["layer"], "system-config")
        self.assertIsNone(rank, doc["verdict"])  # both ranks failed alike
        self.assertIn("GLOO_SOCKET_IFNAME", json.dumps(doc["next_steps"]))


if __name__ == "__main__":
    unittest.main()
