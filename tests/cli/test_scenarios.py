"""Runs `ccdiag diagnose --json` on every scenario under tests/scenarios/ and
checks the verdict against its expected.json: root cause, layer, the culprit
fields it names (a subset of the verdict's culprit) and the exit code. Every
report is validated against docs/schema/report.schema.json. Prints an accuracy
table (ID, layer, culprit) so a regression shows which scenarios moved.

A scenario directory holds bundles/<host>/ (manifest.json, evidence.json,
raw/...) and/or logs/*.log, expected.json and a README.md telling the story.
"""
import glob
import json
import os
import unittest

from ccdiag_test import SOURCE_DIR, run_json

SCENARIOS = os.path.join(SOURCE_DIR, "tests", "scenarios")


def scenario_args(d):
    args = ["diagnose"]
    args += sorted(glob.glob(os.path.join(d, "bundles", "*")))
    for log in sorted(glob.glob(os.path.join(d, "logs", "*"))):
        args += ["--log", log]
    return args


def culprit_matches(expected, got):
    return all(got.get(k) == v for k, v in expected.items())


class ScenarioCorpus(unittest.TestCase):
    def test_corpus(self):
        names = sorted(n for n in os.listdir(SCENARIOS) if os.path.isdir(os.path.join(SCENARIOS, n)))
        self.assertGreaterEqual(len(names), 40, "the corpus must hold at least 40 scenarios")
        rows, failures = [], []
        for name in names:
            d = os.path.join(SCENARIOS, name)
            with open(os.path.join(d, "expected.json")) as f:
                exp = json.load(f)
            self.assertTrue(os.path.exists(os.path.join(d, "README.md")), name + ": README.md missing")
            doc, p = run_json(scenario_args(d))
            v = doc["verdict"]
            # "mechanism": the symptom a decomposed verdict stands for (verdict.mechanism).
            ok_id = v["root_cause"] == exp["root_cause"] and v.get("mechanism") == exp.get("mechanism")
            ok_layer = v.get("layer") == exp.get("layer")
            ok_culprit = culprit_matches(exp.get("culprit", {}), v.get("culprit", {}))
            ok_rc = p.returncode == exp["exit_code"]
            rows.append((name, ok_id, ok_layer, ok_culprit, ok_rc, v["root_cause"], v.get("confidence")))
            if not (ok_id and ok_layer and ok_culprit and ok_rc):
                failures.append(f"{name}: got {v['root_cause']}/{v.get('layer')} culprit={v.get('culprit')} "
                                f"rc={p.returncode}; expected {exp}")
            # A verdict names its evidence and what to do next.
            if v["root_cause"] not in ("no_problem_found",):
                self.assertTrue(doc["next_steps"], name + ": no next steps")
            self.assertEqual(len(doc["chain"]), 5, name + ": the walk covers every layer")
        print("\nscenario accuracy (id, layer, culprit, exit):")
        print(f"  {'scenario':<48} {'id':>3} {'lay':>3} {'cul':>3} {'rc':>3}  verdict (confidence)")
        for name, a, b, c, d, rc, conf in rows:
            mark = lambda x: "ok" if x else "XX"
            print(f"  {name:<48} {mark(a):>3} {mark(b):>3} {mark(c):>3} {mark(d):>3}  {rc} ({conf})")
        n = len(rows)
        for i, label in ((1, "id"), (2, "layer"), (3, "culprit"), (4, "exit")):
            print(f"  {label:<8} {sum(r[i] for r in rows)}/{n}")
        self.assertEqual(failures, [], "\n".join(failures))

    def test_every_catalogue_id_has_a_scenario(self):
        doc, _ = run_json(["diagnose", "--list-causes"], schema=None)
        ids = {c["id"] for c in doc}
        covered = set()
        for exp in glob.glob(os.path.join(SCENARIOS, "*", "expected.json")):
            with open(exp) as f:
                e = json.load(f)
                covered.add(e["root_cause"])
                if "mechanism" in e:
                    covered.add(e["mechanism"])
        self.assertEqual(sorted(ids - covered), [], "catalogue IDs without a scenario")

    def test_shared_cases_are_all_present(self):
        cases = [n for n in os.listdir(SCENARIOS) if n.startswith("case-")]
        self.assertEqual(len(cases), 7)

    def test_multi_host_and_contradictory_scenarios_exist(self):
        hosts = [len(glob.glob(os.path.join(SCENARIOS, n, "bundles", "*"))) for n in os.listdir(SCENARIOS)]
        self.assertGreaterEqual(max(hosts), 16)
        self.assertGreaterEqual(sum(1 for h in hosts if h >= 2), 8)
        self.assertGreaterEqual(len(glob.glob(os.path.join(SCENARIOS, "contradictory-*"))), 2)


if __name__ == "__main__":
    unittest.main()
