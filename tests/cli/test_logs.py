"""ccdiag logs and diagnose --log on real-format logs: catalogue listing, the
16-rank first failure with cascades, real incident cases, stdin and .gz input,
--signatures extension, and input errors (exit 2, one line)."""
import gzip
import json
import os
import shutil
import tempfile
import unittest

from ccdiag_test import FIXTURES, run, run_json

LOGS = os.path.join(FIXTURES, "logs")
CASES = os.path.join(LOGS, "cases")


def by_id(doc, fid):
    return [f for f in doc["findings"] if f["id"] == fid]


class ListSignatures(unittest.TestCase):
    def test_json_catalogue(self):
        p = run(["logs", "--list-signatures", "--json"])
        self.assertEqual(p.returncode, 0, p.stderr)
        sigs = json.loads(p.stdout)
        self.assertGreaterEqual(len(sigs), 80)
        for s in sigs:
            for key in ("id", "layer", "severity", "role", "pattern", "summary", "supports"):
                self.assertIn(key, s)
            self.assertIn(s["role"], ("primary", "cascade", "symptom", "context"))
        ids = {s["id"] for s in sigs}
        self.assertEqual(len(ids), len(sigs))
        for must in ("nccl.ib.completion_error.retry_exceeded", "pytorch.watchdog.timeout", "kernel.xid",
                     "nccl.shm.extend_failed", "pytorch.collective_mismatch"):
            self.assertIn(must, ids)

    def test_docs_are_generated_from_the_catalogue(self):
        p = run(["logs", "--list-signatures", "--markdown"])
        self.assertEqual(p.returncode, 0)
        with open(os.path.join(LOGS, "..", "..", "..", "docs", "signatures.md")) as f:
            self.assertEqual(f.read(), p.stdout, "docs/signatures.md is stale: regenerate it")


class FirstFailure(unittest.TestCase):
    def check_16_ranks(self, doc):
        f0 = doc["findings"][0]
        self.assertEqual(f0["id"], "logs.first_failure")
        self.assertEqual(f0["subject"]["rank"], 5)
        self.assertEqual(doc["findings"][1]["id"], "nccl.ib.completion_error.retry_exceeded")
        cascade_ranks = set()
        for f in doc["findings"]:
            rank = f["subject"].get("rank")
            if rank is None or rank == 5 or f["role"] == "context":
                continue
            self.assertEqual(f["role"], "cascade", f)
            self.assertIn("rank 5", f["caused_by"])
            cascade_ranks.add(rank)
        self.assertEqual(len(cascade_ranks), 15)
        self.assertEqual(doc["logs"]["first_failure"]["subject"]["rank"], 5)

    def test_directory_of_rank_logs(self):
        doc, _ = run_json(["logs", os.path.join(LOGS, "ib_retry_exceeded_16_ranks")], expect_rc=1)
        self.check_16_ranks(doc)
        self.assertEqual(doc["verdict"]["culprit"].get("rank"), 5)

    def test_interleaved_stdout_on_stdin(self):
        with open(os.path.join(LOGS, "ib_retry_exceeded_16_ranks_interleaved.log")) as f:
            p = run(["logs", "-", "--json"], input=f.read())
        self.assertEqual(p.returncode, 1, p.stderr)
        self.check_16_ranks(json.loads(p.stdout))

    def test_gzip_and_text_output(self):
        d = tempfile.mkdtemp()
        try:
            src = os.path.join(LOGS, "ib_retry_exceeded_16_ranks_interleaved.log")
            gz = os.path.join(d, "job.log.gz")
            with open(src, "rb") as i, gzip.open(gz, "wb") as o:
                shutil.copyfileobj(i, o)
            p = run(["logs", gz])
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("First failure: ", p.stdout)
            self.assertIn("rank 5", p.stdout.split("First failure: ")[1].splitlines()[0])
            p = run(["logs", gz, "--markdown"])
            self.assertEqual(p.returncode, 1, p.stderr)
        finally:
            shutil.rmtree(d)


    def test_docker_json_file_log(self):
        """The file Docker's json-file driver writes (one {"log","stream","time"} object a line) reads as
        the lines the ranks wrote: the same first failure, culprit and cascades as the plain log."""
        d = tempfile.mkdtemp()
        try:
            src = os.path.join(LOGS, "ib_retry_exceeded_16_ranks_interleaved.log")
            path = os.path.join(d, "0123abcd-json.log")
            with open(src) as i, open(path, "w") as o:
                for n, line in enumerate(i):
                    o.write(json.dumps({"log": line, "stream": "stderr",
                                        "time": "2024-05-01T12:%02d:%02d.123456789Z" % (n // 60 % 60, n % 60)},
                                       separators=(",", ":")) + "\n")
            doc, _ = run_json(["logs", path], expect_rc=1)
            self.check_16_ranks(doc)
            plain, _ = run_json(["logs", src], expect_rc=1)
            self.assertEqual(sorted(f["id"] for f in doc["findings"]), sorted(f["id"] for f in plain["findings"]))
        finally:
            shutil.rmtree(d)


class Cases(unittest.TestCase):
    """Each real incident yields the findings its case file describes."""

    def logs(self, name):
        doc, _ = run_json(["logs", os.path.join(CASES, name)])
        return doc

    def test_dev_shm_full_in_pod(self):
        doc = self.logs("k8s_pod_dev_shm_64mb.log")
        self.assertEqual(doc["logs"]["first_failure"]["id"], "nccl.shm.extend_failed")
        self.assertTrue(any(f["role"] == "cascade" for f in doc["findings"]))
        d, _ = run_json(["diagnose", "--log", os.path.join(CASES, "k8s_pod_dev_shm_64mb.log")], expect_rc=1)
        self.assertEqual(d["verdict"]["root_cause"], "container_shm_too_small")

    def test_socket_ifname_names_no_interface(self):
        doc = self.logs("socket_ifname_nonexistent_interface.log")
        self.assertTrue(by_id(doc, "logs.socket_ifname_without_bootstrap"))
        self.assertTrue(by_id(doc, "nccl.socket.bad_address_family"))
        d, _ = run_json(["diagnose", "--log", os.path.join(CASES, "socket_ifname_nonexistent_interface.log")],
                        expect_rc=1)
        self.assertEqual(d["verdict"]["root_cause"], "wrong_network_interface")

    def test_collective_mismatch(self):
        doc = self.logs("lightning_log_dict_keys_differ.log")
        m = by_id(doc, "pytorch.collective_mismatch")[0]
        self.assertEqual(m["fields"]["op"], "BROADCAST")
        self.assertEqual(m["fields"]["seq"], 21)
        d, _ = run_json(["diagnose", "--log", os.path.join(CASES, "lightning_log_dict_keys_differ.log")],
                        expect_rc=1)
        self.assertEqual(d["verdict"]["root_cause"], "mismatched_collectives")

    def test_p2p_ipc_across_nodes(self):
        doc = self.logs("hostname_prefix_same_host_ipc.log")
        p = by_id(doc, "logs.p2p_edge_across_hosts")[0]
        self.assertEqual((p["fields"]["from_rank"], p["fields"]["to_rank"]), (6, 10))

    def test_silent_p2p_hang(self):
        doc = self.logs("intel_iommu_p2p_allreduce_hang.log")
        h = by_id(doc, "logs.silent_hang_after_init")[0]
        self.assertEqual(h["fields"]["p2p_capable_pairs"], ["0-1", "2-3"])

    def test_container_roce_enodev(self):
        doc = self.logs("container_roce_modify_qp_no_such_device.log")
        self.assertEqual(doc["logs"]["first_failure"]["id"], "nccl.ib.modify_qp_enodev")
        b = by_id(doc, "nccl.error_breadcrumb")[0]
        self.assertEqual(b["fields"]["result"], "ncclSystemError")
        d, _ = run_json(["diagnose", "--log", os.path.join(CASES, "container_roce_modify_qp_no_such_device.log")],
                        expect_rc=1)
        self.assertEqual(d["verdict"]["root_cause"], "unusable_hca_selected")

    def test_watchdog_stack(self):
        doc = self.logs("rank0_only_eval_watchdog_timeout.log")
        self.assertTrue(by_id(doc, "pytorch.watchdog.stack"))

    def test_diagnose_reports_topology_evidence(self):
        d, _ = run_json(["diagnose", "--log", os.path.join(LOGS, "ib_retry_exceeded_16_ranks_interleaved.log")],
                        expect_rc=1)
        self.assertEqual(d["verdict"]["culprit"].get("rank"), 5)
        self.assertEqual(d["findings"][0]["id"], "logs.first_failure")


class Signatures(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.d)

    def write(self, name, text):
        path = os.path.join(self.d, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_extra_signature_file(self):
        sig = self.write("site.json", json.dumps([{
            "id": "site.lustre.evicted", "layer": "system-config", "severity": "error", "role": "primary",
            "pattern": r"LustreError: .*evicted by (?P<server>\S+)", "summary": "Lustre client evicted by {server}",
            "supports": [{"cause": "rank_stuck_in_host_code", "weight": 4}]}]))
        log = self.write("node.log", "Apr 22 21:30:00 node7 kernel: LustreError: 167-0: this client was evicted by mds01\n")
        doc, _ = run_json(["logs", log, "--signatures", sig], expect_rc=1)
        f = by_id(doc, "site.lustre.evicted")[0]
        self.assertEqual(f["fields"]["server"], "mds01")
        self.assertEqual(f["summary"], "Lustre client evicted by mds01")
        listed = json.loads(run(["logs", "--list-signatures", "--json", "--signatures", sig]).stdout)
        self.assertIn("site.lustre.evicted", {s["id"] for s in listed})

    def test_bad_signature_files(self):
        log = os.path.join(CASES, "k8s_pod_dev_shm_64mb.log")
        for name, text in (("notjson.json", "{"), ("badre.json", '[{"id": "x", "pattern": "(unclosed"}]'),
                           ("dup.json", '[{"id": "kernel.xid", "pattern": "x"}]'),
                           ("badrole.json", '[{"id": "x", "pattern": "x", "role": "culprit"}]')):
            p = run(["logs", log, "--signatures", self.write(name, text)])
            self.assertEqual(p.returncode, 2, name)
            self.assertTrue(p.stderr.startswith("ccdiag: error: "), p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)


class InputErrors(unittest.TestCase):
    def test_missing_file(self):
        p = run(["logs", "/nonexistent/rank0.log"])
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.strip(), "ccdiag: error: /nonexistent/rank0.log: no such file or directory")

    def test_binary_garbage(self):
        d = tempfile.mkdtemp()
        try:
            path = os.path.join(d, "core")
            with open(path, "wb") as f:
                f.write(bytes(range(256)) * 64)
            p = run(["logs", path])
            self.assertEqual(p.returncode, 2)
            self.assertIn("binary data", p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1)
            p = run(["diagnose", "--log", path])
            self.assertEqual(p.returncode, 2)
        finally:
            shutil.rmtree(d)

    def test_no_input(self):
        p = run(["logs"])
        self.assertEqual(p.returncode, 2)

    def test_clean_log_exit_0(self):
        p = run(["logs", "-"], input="node1:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)


if __name__ == "__main__":
    unittest.main()
