"""Every sysroot fixture (tests/fixtures/sysroots) end to end: collected by
`ccdiag --root DIR collect --out BUNDLE`, then diagnosed from the bundle alone
(`ccdiag diagnose BUNDLE --json`), gives the verdict it is named after; the
healthy one gives no problem. No hand-written evidence: only what the
collectors write.

The same bundles check the evidence contract (ccdiag/evidence_kinds.hpp):
every kind the collectors wrote is registered, and every ok item's data
validates against its kind's schema (docs/schema/evidence-kinds.schema.json,
generated from the registry)."""
import json
import os
import shutil
import tempfile
import unittest

from ccdiag_test import FIXTURES, HARDWARE_SYSROOT_VERDICTS, SCHEMA_DIR, jsonschema, run, run_json, schema_validator

SYSROOTS = os.path.join(FIXTURES, "sysroots")

# fixture -> (verdict.root_cause, culprit fields that must match)
EXPECTED = {
    **HARDWARE_SYSROOT_VERDICTS,
    # A 64 MiB /dev/shm with no rank and no NCCL failure: weak alone by design
    # (docs/decision-tree.md, dev_shm_size), so the verdict stays undecided
    # with container_shm_too_small as the first alternative (LEADS below).
    "container-dev-shm-64mb": ("insufficient_evidence", {"host": "trainer-pod-7f9c"}),
    "ranks-mpirun-pip-nccl-dead-rank": ("rank_process_died", {"rank": 5, "pid": 7002}),
    "ranks-torchrun-2gpu-secrets": ("no_problem_found", {}),
    "ranks-torchrun-gloo-dataloader-zombie": ("rank_process_died", {"rank": 3, "pid": 2196}),
}
# fixture -> the leading alternative of an insufficient_evidence verdict
LEADS = {"container-dev-shm-64mb": "container_shm_too_small"}


def fixtures():
    return sorted(d for d in os.listdir(SYSROOTS) if os.path.isdir(os.path.join(SYSROOTS, d)))


class SysrootEndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ccdiag-e2e-")
        cls.bundles = {}
        for name in fixtures():
            out = os.path.join(cls.tmp, name)
            p = run(["--root", os.path.join(SYSROOTS, name), "collect", "--out", out], timeout=120)
            cls.bundles[name] = (out, p)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_every_fixture_has_an_expected_verdict(self):
        self.assertEqual(sorted(EXPECTED), fixtures())

    def test_collected_bundle_gives_the_named_verdict(self):
        for name, (cause, culprit) in sorted(EXPECTED.items()):
            with self.subTest(fixture=name):
                out, p = self.bundles[name]
                self.assertIn(p.returncode, (0, 3), p.stderr)
                doc, d = run_json(["diagnose", out])
                v = doc["verdict"]
                self.assertEqual(v["root_cause"], cause, v["summary"])
                for k, want in culprit.items():
                    self.assertEqual(v["culprit"].get(k), want, k)
                if name in LEADS:
                    self.assertEqual(doc["alternatives"][0]["root_cause"], LEADS[name])
                if cause == "no_problem_found":
                    self.assertIn(d.returncode, (0, 3))
                elif cause == "insufficient_evidence":
                    self.assertIn(d.returncode, (1, 3))  # 3: probes did not run and nothing reports a failure
                else:
                    self.assertEqual(d.returncode, 1)

    def test_rules_fire_on_collector_output(self):
        # The decision tree's own rules (not only the findings computed at
        # ingest) fire on what the collectors wrote: --explain names the rule.
        cases = {
            "gpu-link-downtrained-x8": ("pcie_state", "pcie_link_degraded"),
            "acs-enabled-on-switch": ("pcie_state", "pcie_acs_p2p_blocked"),
            "iommu-translating": ("pcie_state", "iommu_blocks_p2p"),
            "ib-port-down": ("rdma_state", "nic_port_down"),
            "roce-counters-rising": ("rdma_state", "nic_link_flapping"),
            "qp-error-rank5": ("rdma_state", "qp_error_state"),
            "container-memlock-64k": ("host_config", "memlock_limit_too_low"),
            "fabric-manager-stopped": ("host_config", "fabric_manager_not_running"),
            "no-gpudirect-module": ("host_config", "gpudirect_rdma_module_missing"),
        }
        for name, (rule, cause) in cases.items():
            with self.subTest(fixture=name):
                doc, _ = run_json(["diagnose", self.bundles[name][0], "--explain"])
                fired = {(h["rule"], h["cause"]) for h in doc["explain"]["hypotheses"] if h["ratio"] > 1}
                self.assertIn((rule, cause), fired)

    def test_collected_evidence_follows_the_registry(self):
        with open(os.path.join(SCHEMA_DIR, "evidence-kinds.schema.json")) as f:
            schema = json.load(f)
        registered = set(schema["x-registered-kinds"])
        for name in fixtures():
            out, _ = self.bundles[name]
            with open(os.path.join(out, "evidence.json")) as f:
                items = json.load(f)["evidence"]
            for e in items:
                with self.subTest(fixture=name, kind=e["kind"]):
                    self.assertIn(e["kind"], registered, "a collector wrote a kind the registry does not know")
                    if jsonschema is not None:
                        schema_validator(schema).validate(e)


class HandWrittenBundlesUseTheContract(unittest.TestCase):
    """Scenario and example bundles are written by hand: every item must be of
    a registered kind and in the shape its collector writes, or the rules
    would be tested on evidence no collector produces."""

    def test_scenario_and_example_bundles_validate(self):
        if jsonschema is None:
            self.skipTest("python3-jsonschema not installed")
        with open(os.path.join(SCHEMA_DIR, "evidence-kinds.schema.json")) as f:
            schema = json.load(f)
        registered = set(schema["x-registered-kinds"])
        src = os.path.dirname(os.path.dirname(SYSROOTS))
        roots = [os.path.join(src, "scenarios"), os.path.join(os.path.dirname(src), "examples", "bundles")]
        checked = 0
        for root in roots:
            for d, _, files in os.walk(root):
                if "evidence.json" not in files or "manifest.json" not in files:
                    continue
                with open(os.path.join(d, "evidence.json")) as f:
                    items = json.load(f)["evidence"]
                for e in items:
                    with self.subTest(bundle=os.path.relpath(d, src), kind=e["kind"]):
                        self.assertIn(e["kind"], registered)
                        schema_validator(schema).validate(e)
                        checked += 1
        self.assertGreater(checked, 100)


if __name__ == "__main__":
    unittest.main()
