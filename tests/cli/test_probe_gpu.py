"""ccdiag probe gpu|nvlink|p2p, the gpu collector and diagnose on its bundles,
through the fake libnvidia-ml.so.1 / libcuda.so.1 built in the test tree
(tests/fake_nvml) and selected with LD_LIBRARY_PATH, one scenario per test."""
import ctypes
import json
import os
import tempfile
import time
import unittest

from ccdiag_test import BUILD_DIR, FIXTURES, run, skip_unless

FAKE_NVML = os.path.join(BUILD_DIR, "fake-nvml")
FAKE_CUDA = os.path.join(BUILD_DIR, "fake-cuda")
skip_unless(os.path.exists(os.path.join(FAKE_NVML, "libnvidia-ml.so.1")), "fake NVML not built")


def real_library_present(soname):
    try:
        ctypes.CDLL(soname)
        return True
    except OSError:
        return False


def env(nvml=None, cuda=None, with_cuda=False):
    dirs = [FAKE_NVML] + ([FAKE_CUDA] if with_cuda or cuda is not None else [])
    e = {"LD_LIBRARY_PATH": ":".join(dirs)}
    if nvml is not None:
        e["CCDIAG_FAKE_NVML_SCENARIO"] = nvml
    if cuda is not None:
        e["CCDIAG_FAKE_CUDA_SCENARIO"] = cuda
    return e


def probe_json(args, rc, e, timeout=60):
    p = run(["probe"] + args + ["--json"], env=e, timeout=timeout)
    if p.returncode != rc:
        raise AssertionError(f"exit {p.returncode}, expected {rc}\nstdout:{p.stdout[-3000:]}\nstderr:{p.stderr[-3000:]}")
    doc = json.loads(p.stdout)
    assert doc["schema_version"] == 1 and doc["probe"] == args[0], doc.keys()
    return doc


def ids(doc):
    return [f["id"] for f in doc["findings"]]


def kinds(doc, kind):
    return [e for e in doc["evidence"] if e["kind"] == kind]


class NoNvml(unittest.TestCase):
    """This machine: no driver, no NVML. Everything says so cleanly."""

    def setUp(self):
        if real_library_present("libnvidia-ml.so.1"):
            self.skipTest("a real libnvidia-ml.so.1 is installed here")

    def test_probe_gpu_says_nvml_unavailable_and_exits_partial(self):
        p = run(["probe", "gpu"])
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("NVML: unavailable: libnvidia-ml.so.1 not found", p.stdout)
        self.assertEqual(p.stderr, "")
        doc = probe_json(["gpu"], 3, {})
        self.assertEqual(doc["status"], "partial")
        self.assertEqual(doc["unchecked"], [{"what": "NVML", "state": "skipped", "reason": "libnvidia-ml.so.1 not found"}])
        self.assertEqual(doc["findings"], [])

    def test_info_reports_nvml_not_found(self):
        p = run(["info", "--json"])
        self.assertEqual(p.returncode, 0)
        libs = {l["name"]: l for l in json.loads(p.stdout)["runtime_libraries"]}
        self.assertEqual(libs["NVML"]["status"], "not found")

    def test_probe_p2p_without_cuda_is_skipped_not_refused(self):
        if real_library_present("libcuda.so.1"):
            self.skipTest("a real libcuda.so.1 is installed here")
        doc = probe_json(["p2p"], 3, {})
        whats = [u["what"] for u in doc["unchecked"]]
        self.assertEqual(whats, ["NVML", "CUDA P2P test"])

    def test_probe_needs_a_subcommand(self):
        self.assertEqual(run(["probe"]).returncode, 2)
        self.assertEqual(run(["probe", "gpu", "--interval", "-1"]).returncode, 2)


class ProbeGpuScenarios(unittest.TestCase):
    def test_info_finds_the_fake_library(self):
        p = run(["info", "--json"], env=env())
        libs = {l["name"]: l for l in json.loads(p.stdout)["runtime_libraries"]}
        self.assertEqual(libs["NVML"]["status"], "found")

    def test_healthy_8gpu_nvswitch_node(self):
        doc = probe_json(["gpu", "--interval", "0.2"], 0, env("healthy"))
        self.assertEqual(doc["status"], "ok")
        devs = kinds(doc, "gpu.device")
        self.assertEqual([d["subject"]["gpu"] for d in devs],
                         ["0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                          "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"])
        self.assertEqual(len(kinds(doc, "nvlink.link")), 144)
        self.assertEqual(len(kinds(doc, "gpu.p2p")), 1)
        self.assertEqual(doc["unchecked"], [])
        p = run(["probe", "gpu", "--interval", "0"], env=env("healthy"))
        self.assertEqual(p.returncode, 0)
        self.assertIn("NVML: ok (driver 550.90.07", p.stdout)
        self.assertIn("0000:db:00.0  NVIDIA H100 80GB HBM3", p.stdout)
        self.assertIn("18/18", p.stdout)
        self.assertIn("Findings: none", p.stdout)

    def test_one_nvlink_down(self):
        doc = probe_json(["nvlink", "--interval", "0"], 1, env("nvlink_down"))
        self.assertEqual(ids(doc), ["nvlink.down"])
        self.assertEqual(doc["findings"][0]["subject"]["gpu"], "0000:2a:00.0")
        self.assertEqual({e["kind"] for e in doc["evidence"]}, {"gpu.nvml", "nvlink.link"})
        p = run(["probe", "nvlink", "--interval", "0"], env=env("nvlink_down"))
        self.assertIn("GPU 0000:2a:00.0: 16/18 links active, 4 remote end(s)", p.stdout)
        self.assertIn("link  4 DOWN", p.stdout)
        self.assertNotIn("link  3 active", p.stdout)  # healthy links only with --verbose
        p = run(["-v", "probe", "nvlink", "--interval", "0"], env=env("nvlink_down"))
        self.assertIn("link  3 active", p.stdout)

    def test_rising_replay_errors_between_two_samples(self):
        doc = probe_json(["nvlink", "--interval", "0.3"], 1, env("replay_rising"))
        self.assertEqual(ids(doc), ["nvlink.errors_rising"])
        self.assertIn("+37 replay", doc["findings"][0]["summary"])

    def test_nvml_init_that_never_returns_is_a_timeout_within_the_deadline(self):
        start = time.monotonic()
        p = run(["--timeout", "2", "probe", "gpu", "--json"], env=env("init_hang"), timeout=30)
        took = time.monotonic() - start
        self.assertLess(took, 2 + 1.5, f"took {took:.2f}s with --timeout 2")
        doc = json.loads(p.stdout)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(doc["unchecked"][0]["state"], "timeout")
        self.assertEqual(doc["unchecked"][0]["reason"], "nvmlInitWithFlags did not return within 2000 ms")
        self.assertEqual(ids(doc), ["gpu.nvml.unresponsive"])

    def test_gpu_lost(self):
        doc = probe_json(["gpu", "--interval", "0"], 1, env("gpu_lost"))
        self.assertIn("gpu.lost", ids(doc))
        p = run(["probe", "gpu", "--interval", "0"], env=env("gpu_lost"))
        self.assertIn("0000:5d:00.0  LOST", p.stdout)

    def test_ecc_errors(self):
        doc = probe_json(["gpu", "--interval", "0"], 1, env("ecc_errors"))
        self.assertEqual(sorted(ids(doc)), ["gpu.ecc.uncorrectable", "gpu.remap.pending"])

    def test_fabric_manager_not_running(self):
        doc = probe_json(["gpu", "--interval", "0"], 1, env("fabric_not_started"))
        self.assertEqual(ids(doc), ["gpu.fabric.not_started"])


class ProbeP2p(unittest.TestCase):
    def test_healthy_all_pairs_at_nvlink_speed(self):
        doc = probe_json(["p2p", "--size", "1048576"], 0, env("healthy", ""))
        cuda = [e for e in kinds(doc, "gpu.p2p") if e["data"]["source"] == "cuda"][0]
        pairs = cuda["data"]["pairs"]
        self.assertEqual(len(pairs), 28)
        for p in pairs:
            self.assertEqual(p["status"], "ok", p)
            self.assertEqual(p["expected_path"], "nvlink")
            self.assertGreater(p["bandwidth_gbps"], 40)
        p = run(["probe", "p2p", "--size", "1048576"], env=env("healthy", ""))
        self.assertIn("CUDA P2P copies", p.stdout)
        self.assertIn("NVML P2P status", p.stdout)

    def test_slow_pair_at_pcie_speed_where_nvlink_is_expected(self):
        doc = probe_json(["p2p", "--size", "4194304"], 1, env("healthy", "slow_pair=0-1"))
        self.assertEqual(ids(doc), ["gpu.p2p.slow"])
        f = doc["findings"][0]
        self.assertEqual((f["fields"]["a"], f["fields"]["b"]), ("0000:18:00.0", "0000:2a:00.0"))

    def test_copy_that_never_completes_is_a_per_pair_timeout(self):
        start = time.monotonic()
        doc = probe_json(["p2p", "--size", "1048576", "--pair-timeout", "1"], 1, env("healthy", "hang_pair=2-3"))
        self.assertLess(time.monotonic() - start, 15)
        cuda = [e for e in kinds(doc, "gpu.p2p") if e["data"]["source"] == "cuda"][0]
        hung = [p for p in cuda["data"]["pairs"] if p["status"] == "timeout"]
        self.assertEqual([(p["a"], p["b"]) for p in hung], [("0000:3a:00.0", "0000:5d:00.0")])
        self.assertEqual("cuMemcpyPeerAsync 0000:3a:00.0 -> 0000:5d:00.0 did not complete within 1000 ms", hung[0]["reason"])
        self.assertEqual(ids(doc), ["gpu.p2p.copy_hang"])
        self.assertEqual([s["cause"] for s in doc["findings"][0]["supports"]][0], "nvlink_down_or_degraded")

    def test_pcie_pair_whose_copy_never_completes_points_to_iommu_or_acs(self):
        # Case 012 (NVIDIA/nccl#257): PCIe-only box, the driver reports peer access between GPUs behind one
        # switch, but peer writes never arrive (VT-d on); NCCL hangs at the first collective.
        doc = probe_json(["p2p", "--size", "1048576", "--pair-timeout", "1"], 1,
                         env("pcie_only", "pcie=24,hang_pair=0-1"))
        cuda = [e for e in kinds(doc, "gpu.p2p") if e["data"]["source"] == "cuda"][0]
        by_pair = {(p["a"], p["b"]): p for p in cuda["data"]["pairs"]}
        hung = by_pair[("0000:18:00.0", "0000:2a:00.0")]
        self.assertEqual((hung["expected_path"], hung["status"]), ("pcie", "timeout"))
        # 1 MiB at 24 GB/s plus the 2 us a copy costs to launch
        self.assertAlmostEqual(by_pair[("0000:18:00.0", "0000:3a:00.0")]["bandwidth_gbps"], 22.9, delta=0.2)
        self.assertEqual(ids(doc), ["gpu.p2p.copy_hang"])
        causes = [s["cause"] for s in doc["findings"][0]["supports"]]
        self.assertEqual(causes[:2], ["iommu_blocks_p2p", "pcie_acs_p2p_blocked"])

    def test_refuses_gpus_in_use_unless_forced(self):
        p = run(["probe", "p2p"], env=env("busy", ""))
        self.assertEqual(p.returncode, 2)
        err = p.stderr.strip().splitlines()
        self.assertEqual(len(err), 1, p.stderr)
        self.assertTrue(err[0].startswith("ccdiag: error: probe p2p: GPU(s) in use"), err[0])
        self.assertIn("0000:18:00.0 (pid 4100)", err[0])
        self.assertIn("--force", err[0])
        self.assertEqual(p.stdout, "")
        probe_json(["p2p", "--force", "--size", "1048576"], 0, env("busy", ""))

    def test_single_gpu_runs_a_local_copy(self):
        doc = probe_json(["p2p", "--force", "--size", "1048576"], 3, {"LD_LIBRARY_PATH": FAKE_CUDA,
                                                                     "CCDIAG_FAKE_CUDA_SCENARIO": "gpus=1"})
        cuda = [e for e in kinds(doc, "gpu.p2p") if e["data"]["source"] == "cuda"][0]
        self.assertEqual(cuda["data"]["pairs"][0]["expected_path"], "local")
        self.assertEqual(cuda["data"]["pairs"][0]["status"], "ok")


class CollectAndDiagnose(unittest.TestCase):
    def collect(self, scenario, tmp):
        out = os.path.join(tmp, "bundle")
        p = run(["collect", "--out", out], env=env(scenario), timeout=60)
        self.assertIn(p.returncode, (0, 3), p.stderr)
        with open(os.path.join(out, "evidence.json")) as f:
            return out, json.load(f)

    def diagnose(self, bundle):
        p = run(["diagnose", bundle, "--json"])
        return p.returncode, json.loads(p.stdout)

    def test_gpu_lost_bundle_diagnoses_gpu_fell_off_bus(self):
        with tempfile.TemporaryDirectory() as tmp:
            out, ev = self.collect("gpu_lost", tmp)
            self.assertEqual(len([e for e in ev["evidence"] if e["kind"] == "gpu.device"]), 8)
            rc, doc = self.diagnose(out)
            self.assertEqual(rc, 1)
            self.assertEqual(doc["verdict"]["root_cause"], "gpu_fell_off_bus")
            self.assertEqual(doc["verdict"]["culprit"]["gpu"], "0000:5d:00.0")

    def test_nvlink_down_bundle_diagnoses_nvlink_down_or_degraded(self):
        with tempfile.TemporaryDirectory() as tmp:
            out, _ = self.collect("nvlink_down", tmp)
            rc, doc = self.diagnose(out)
            self.assertEqual(doc["verdict"]["root_cause"], "nvlink_down_or_degraded")
            self.assertEqual(doc["verdict"]["culprit"]["gpu"], "0000:2a:00.0")

    def test_ecc_and_fabric_bundles(self):
        for scenario, cause in (("ecc_errors", "gpu_ecc_or_memory_fault"),
                                ("fabric_not_started", "fabric_manager_not_running")):
            with tempfile.TemporaryDirectory() as tmp:
                out, _ = self.collect(scenario, tmp)
                _, doc = self.diagnose(out)
                self.assertEqual(doc["verdict"]["root_cause"], cause, scenario)

    def test_healthy_bundle_has_no_gpu_findings_and_hardware_checked(self):
        with tempfile.TemporaryDirectory() as tmp:
            out, ev = self.collect("healthy", tmp)
            nv = [e for e in ev["evidence"] if e["kind"] == "gpu.nvml"]
            self.assertEqual(nv[0]["availability"]["state"], "ok")
            _, doc = self.diagnose(out)
            self.assertFalse([f for f in doc["findings"] if f["id"].startswith(("gpu.", "nvlink."))])
            self.assertEqual({s["layer"]: s["outcome"] for s in doc["chain"]}["hardware"], "clear")

    def test_collect_with_init_hang_stays_within_timeout(self):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.monotonic()
            p = run(["--timeout", "3", "collect", "--out", os.path.join(tmp, "b")], env=env("init_hang"), timeout=30)
            self.assertLess(time.monotonic() - start, 3 + 1.5)
            with open(os.path.join(tmp, "b", "evidence.json")) as f:
                ev = json.load(f)
            nv = [e for e in ev["evidence"] if e["kind"] == "gpu.nvml"][0]
            self.assertEqual(nv["availability"]["state"], "timeout")
            self.assertEqual(p.returncode, 3)

    def test_collect_with_root_tree_does_not_consult_nvml(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = os.path.join(FIXTURES, "sysroots", "container-dev-shm-64mb")
            out = os.path.join(tmp, "b")
            run(["--root", root, "collect", "--out", out], env=env("gpu_lost"))
            with open(os.path.join(out, "evidence.json")) as f:
                ev = json.load(f)
            self.assertEqual([e for e in ev["evidence"] if e["kind"] == "gpu.device"], [])
            self.assertIn("NVML", [u["what"] for u in ev["unchecked"]])


if __name__ == "__main__":
    unittest.main()
