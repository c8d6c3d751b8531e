"""`ccdiag diagnose --explain`: every rule hypothesis (rule, cause, ratio,
evidence key, culprit, why) and the odds arithmetic per cause, in text and as
the report's `explain` object (docs/diagnose.md, docs/decision-tree.md §2)."""
import math
import os
import unittest

from ccdiag_test import SOURCE_DIR, run, run_json

SCENARIOS = os.path.join(SOURCE_DIR, "tests", "scenarios")


def bundles(name):
    d = os.path.join(SCENARIOS, name, "bundles")
    return [os.path.join(d, h) for h in sorted(os.listdir(d))]


class Explain(unittest.TestCase):
    def test_json_explain_object_and_its_arithmetic(self):
        doc, _ = run_json(["diagnose", *bundles("pcie-link-x8-gen3"), "--explain", "--json"], expect_rc=1)
        self.assertEqual(doc["verdict"]["root_cause"], "pcie_link_degraded")
        ex = doc["explain"]
        rules = {h["rule"] for h in ex["hypotheses"]}
        self.assertIn("pcie_state", rules)      # the tree's own rule fired on the collector's shape
        self.assertIn("finding_support", rules)  # and the pcie finding voted
        for h in ex["hypotheses"]:
            for k in ("rule", "cause", "ratio", "evidence_key", "culprit", "why", "known_cause", "counted"):
                self.assertIn(k, h)
        # One observation, one piece of evidence: the rule and the finding share the key; one of them counts.
        same = [h for h in ex["hypotheses"] if h["cause"] == "pcie_link_degraded" and h["evidence_key"] == "pcie.link_downtrained"]
        self.assertGreaterEqual(len(same), 2)
        self.assertEqual(sum(h["counted"] for h in same), 1)
        # The arithmetic: odds = prior odds x the factors; confidence = odds / total x unchecked factor (cap 0.98).
        total = 1 + sum(c["odds"] for c in ex["causes"] if c["candidate"])
        self.assertAlmostEqual(ex["total_odds"], total, places=6)
        for c in ex["causes"]:
            self.assertAlmostEqual(c["prior_odds"], c["prior"] / (1 - c["prior"]), places=9)
            self.assertAlmostEqual(math.log(c["odds"]), math.log(c["prior_odds"]) + sum(math.log(f["ratio"]) for f in c["factors"]),
                                   places=6)
            if c["candidate"]:
                self.assertAlmostEqual(c["confidence"], min(0.98, c["odds"] / total * ex["unchecked_factor"]), places=6)
        top = ex["causes"][0]
        self.assertEqual(top["cause"], "pcie_link_degraded")
        self.assertAlmostEqual(doc["verdict"]["confidence"], round(top["confidence"], 3), places=3)
        self.assertEqual(ex["unknown_causes"], [])

    def test_text_explain_section(self):
        p = run(["diagnose", *bundles("pcie-link-x8-gen3"), "--explain"])
        self.assertEqual(p.returncode, 1, p.stderr)
        out = p.stdout
        self.assertIn("Explain: rule hypotheses", out)
        self.assertIn("Explain: odds per cause", out)
        self.assertRegex(out, r"pcie_state\s+pcie_link_degraded\s+x40\s+key=pcie\.link_downtrained")
        self.assertRegex(out, r"pcie_link_degraded\s+prior [0-9.]+ -> odds [0-9.e-]+ x 60 \[pcie\.link_downtrained\] = [0-9.]+ -> confidence 0\.\d{3}")

    def test_markdown_carries_the_section_in_a_code_block(self):
        p = run(["diagnose", *bundles("pcie-link-x8-gen3"), "--explain", "--markdown"])
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("```\n\nExplain: rule hypotheses", p.stdout)

    def test_without_explain_nothing_changes(self):
        doc, _ = run_json(["diagnose", *bundles("pcie-link-x8-gen3"), "--json"], expect_rc=1)
        self.assertNotIn("explain", doc)
        p = run(["diagnose", *bundles("pcie-link-x8-gen3")])
        self.assertNotIn("Explain:", p.stdout)

    def test_counter_evidence_only_is_listed_but_no_candidate(self):
        doc, _ = run_json(["diagnose", *bundles("driver-p2p-bug-blockers-ruled-out"), "--explain", "--json"], expect_rc=1)
        causes = {c["cause"]: c for c in doc["explain"]["causes"]}
        self.assertIn("iommu_blocks_p2p", causes)  # the IOMMU is off: a ratio below 1
        self.assertTrue(any(f["ratio"] < 1 for f in causes["iommu_blocks_p2p"]["factors"]))

    def test_the_trace_environment_variable_is_gone(self):
        for d, _, files in os.walk(os.path.join(SOURCE_DIR, "src")):
            for f in files:
                with open(os.path.join(d, f), errors="replace") as fh:
                    self.assertNotIn("CCDIAG_TREE_TRACE", fh.read(), f)


if __name__ == "__main__":
    unittest.main()
