"""`ccdiag probe pcie|rdma|kernel|config` and `diagnose --root` on the
hardware fixture sysroots (tests/fixtures/sysroots, see generate.py there),
plus the live no-RDMA case of a machine without RDMA NICs."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from ccdiag_test import BIN, FIXTURES, HARDWARE_SYSROOT_VERDICTS, run, run_json

SYSROOTS = os.path.join(FIXTURES, "sysroots")

EXPECTED = HARDWARE_SYSROOT_VERDICTS


def root(scenario):
    return os.path.join(SYSROOTS, scenario)


def ids(doc):
    return [f["id"] for f in doc["findings"]]


class DiagnoseFixtures(unittest.TestCase):
    def test_every_fixture_gets_its_verdict(self):
        # Every hardware tree (one with a sys/ directory) has an expected verdict;
        # /proc-only trees belong to the ranks and foundation tests.
        trees = [d for d in os.listdir(SYSROOTS) if os.path.isdir(os.path.join(root(d), "sys"))]
        self.assertEqual(sorted(EXPECTED), sorted(trees))
        for scenario, (cause, culprit) in EXPECTED.items():
            with self.subTest(scenario=scenario):
                doc, p = run_json(["--root", root(scenario), "diagnose"])
                self.assertEqual(doc["verdict"]["root_cause"], cause, doc["verdict"]["summary"])
                for k, v in culprit.items():
                    self.assertEqual(doc["verdict"]["culprit"].get(k), v, k)
                if cause == "no_problem_found":
                    self.assertIn(p.returncode, (0, 3))
                else:
                    self.assertEqual(p.returncode, 1)

    def test_collected_bundle_diagnoses_the_same(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "b")
            p = run(["--root", root("ib-port-down"), "collect", "--out", out])
            self.assertIn(p.returncode, (0, 3), p.stderr)
            with open(os.path.join(out, "evidence.json")) as f:
                ev = json.load(f)
            kinds = {e["kind"] for e in ev["evidence"]}
            for k in ("pcie.link", "pcie.aer", "pcie.acs", "host.iommu", "rdma.port", "rdma.counters", "rdma.qp",
                      "net.netdev", "host.memlock", "host.peermem", "host.fabric_manager"):
                self.assertIn(k, kinds)
            doc, p = run_json(["diagnose", out], expect_rc=1)
            self.assertEqual(doc["verdict"]["root_cause"], "nic_port_down")


class ProbeCommands(unittest.TestCase):
    def test_rdma_here_is_cleanly_unavailable(self):
        if os.path.isdir("/sys/class/infiniband") and os.listdir("/sys/class/infiniband"):
            self.skipTest("this host has RDMA devices")
        p = run(["probe", "rdma", "--interval", "0"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("RDMA subsystem absent", p.stdout)
        self.assertEqual(p.stderr, "")
        doc, p = run_json(["probe", "rdma", "--interval", "0"], expect_rc=0)
        port = [e for e in doc["evidence"] if e["kind"] == "rdma.port"][0]
        self.assertEqual(port["availability"]["state"], "unavailable")
        self.assertTrue(all(u["state"] == "skipped" for u in doc["unchecked"]))

    def test_rdma_in_a_fresh_network_namespace(self):
        unshare = shutil.which("unshare")
        if not unshare or subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode != 0:
            self.skipTest("unshare -rn (user + network namespace) not permitted here")
        p = subprocess.run([unshare, "-rn", BIN, "probe", "rdma", "--interval", "0", "--json"],
                           capture_output=True, text=True, timeout=60)
        self.assertIn(p.returncode, (0, 3), p.stderr)
        doc = json.loads(p.stdout)
        qp = [e for e in doc["evidence"] if e["kind"] == "rdma.qp"][0]
        # No RDMA device is visible in a new namespace: either no NETLINK_RDMA or an empty list.
        self.assertTrue(qp["availability"]["state"] == "unavailable" or qp["data"]["count"] == 0)

    def test_pcie_acs(self):
        doc, _ = run_json(["--root", root("acs-enabled-on-switch"), "probe", "pcie"], expect_rc=1)
        acs = [f for f in doc["findings"] if f["id"] == "pcie.acs_redirect"]
        self.assertEqual(len(acs), 4)
        self.assertIn("ReqRedir+ CmpltRedir+", acs[0]["fields"]["acs_ctl"])
        doc, _ = run_json(["--root", root("acs-unknown-not-root"), "probe", "pcie"], expect_rc=3)
        self.assertNotIn("pcie.acs_redirect", ids(doc))
        self.assertIn("PCIe ACS", [u["what"] for u in doc["unchecked"]])
        p = run(["--root", root("acs-enabled-on-switch"), "probe", "pcie"])
        self.assertIn("ACSCtl: SrcValid+ TransBlk+ ReqRedir+", p.stdout)

    def test_rdma_counters_rising(self):
        doc, _ = run_json(["--root", root("roce-counters-rising"), "probe", "rdma", "--interval", "5"], expect_rc=1)
        counters = [e for e in doc["evidence"] if e["kind"] == "rdma.counters" and e["subject"]["nic"] == "mlx5_5"][0]
        self.assertEqual(counters["data"]["interval_s"], 5.0)
        self.assertEqual(counters["data"]["counters"]["link_downed"]["delta"], 2)
        self.assertAlmostEqual(counters["data"]["hw_counters"]["local_ack_timeout_err"]["per_s"], 96 / 5)
        self.assertEqual(doc["verdict"]["root_cause"], "nic_link_flapping")

    def test_kernel_since(self):
        doc, _ = run_json(["--root", root("xid-48-double-bit-ecc"), "probe", "kernel"], expect_rc=1)
        self.assertIn("kernel.xid", ids(doc))
        # Boot at @1764475200; the Xid is 81234 s later. A window after it drops it.
        doc, _ = run_json(["--root", root("xid-48-double-bit-ecc"), "probe", "kernel", "--since", "@1764557000"],
                          expect_rc=0)
        self.assertNotIn("kernel.xid", ids(doc))
        doc, _ = run_json(["--root", root("xid-48-double-bit-ecc"), "probe", "kernel", "--since", "@1764556000"],
                          expect_rc=1)
        self.assertIn("kernel.xid", ids(doc))
        p = run(["--root", root("xid-48-double-bit-ecc"), "probe", "kernel", "--since", "yesterday"])
        self.assertEqual(p.returncode, 2)
        self.assertTrue(p.stderr.startswith("ccdiag: error: --since: bad --since value"), p.stderr)

    def test_kernel_log_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "kern.json")
            with open(log, "w") as f:
                f.write(json.dumps({"MESSAGE": "NVRM: Xid (PCI:0000:9e:00): 74, pid=48246, name=python, NVLink: fatal "
                                               "error detected on link 14(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
                                    "__REALTIME_TIMESTAMP": "1764500000000000", "PRIORITY": "4"}) + "\n")
            doc, _ = run_json(["--kernel-log", log, "probe", "kernel"], expect_rc=1)
            self.assertEqual(doc["verdict"]["root_cause"], "gpu_xid_nvlink_fault")

    def test_config(self):
        doc, _ = run_json(["--root", root("container-memlock-64k"), "probe", "config"], expect_rc=1)
        self.assertEqual(ids(doc).count("host.memlock_low"), 8)
        doc, _ = run_json(["--root", root("hgx-h100-healthy"), "probe", "config"], expect_rc=0)
        self.assertEqual(doc["verdict"]["root_cause"], "no_problem_found")

    def test_bad_input(self):
        p = run(["probe", "nvlinkz"])
        self.assertEqual(p.returncode, 2)
        p = run(["--root", "/nonexistent/ccdiag-root", "probe", "pcie"])
        self.assertEqual(p.returncode, 2)
        self.assertTrue(p.stderr.startswith("ccdiag: error: "), p.stderr)
        p = run(["probe", "rdma", "--interval", "-1"])
        self.assertEqual(p.returncode, 2)
        p = run(["--kernel-log", "/nonexistent/kern.log", "probe", "kernel"])
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
        self.assertTrue(p.stderr.startswith("ccdiag: error: /nonexistent/kern.log: cannot open"), p.stderr)


if __name__ == "__main__":
    unittest.main()
