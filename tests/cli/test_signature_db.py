"""The built-in signatures' Hyperscan database is compiled at build time and
embedded in the binary (tools/sigdb): `logs` uses it instead of compiling
~150 patterns per run, and finds exactly what a database compiled at run
time finds."""
import json
import os
import tempfile
import unittest

from ccdiag_test import FIXTURES, run

EXAMPLES = os.path.join(FIXTURES, "logs", "signature_examples.tsv")

# A user signature that matches nothing in the examples: with it the
# signature set differs from the built-in one, so the database must be
# compiled at run time.
NEVER = [{"id": "site.never_matches", "layer": "nccl", "severity": "info", "role": "context",
          "pattern": "ccdiag-sigdb-test-never-seen-[0-9]{40}", "summary": "never"}]


def example_lines():
    lines = []
    with open(EXAMPLES) as f:
        for row in f:
            if row.startswith("#") or "\t" not in row:
                continue
            lines.append(row.rstrip("\n").split("\t", 1)[1])
    return lines


def findings(doc):
    return sorted((f["id"], json.dumps(f.get("provenance", []), sort_keys=True)) for f in doc["findings"])


class EmbeddedSignatureDatabase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.log = os.path.join(cls._tmp.name, "examples.log")
        with open(cls.log, "w") as f:
            f.write("\n".join(example_lines()) + "\n")
        cls.sigs = os.path.join(cls._tmp.name, "never.json")
        with open(cls.sigs, "w") as f:
            json.dump(NEVER, f)

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def logs_json(self, *extra):
        p = run(["logs", self.log, "--json"] + list(extra))
        self.assertIn(p.returncode, (0, 1), p.stderr)
        return json.loads(p.stdout)

    def test_builtin_signatures_use_the_embedded_database(self):
        doc = self.logs_json()
        self.assertEqual(doc["logs"]["stats"]["prefilter"], "prebuilt")

    def test_user_signatures_are_compiled_at_run_time(self):
        doc = self.logs_json("--signatures", self.sigs)
        self.assertEqual(doc["logs"]["stats"]["prefilter"], "compiled")

    def test_embedded_and_run_time_databases_find_the_same(self):
        embedded = self.logs_json()
        compiled = self.logs_json("--signatures", self.sigs)
        self.assertGreater(len(embedded["findings"]), 100)
        self.assertEqual(findings(embedded), findings(compiled))
        self.assertEqual(embedded["logs"]["stats"]["matched_lines"], compiled["logs"]["stats"]["matched_lines"])


if __name__ == "__main__":
    unittest.main()
