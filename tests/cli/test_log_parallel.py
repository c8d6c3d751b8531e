"""`diagnose --log` with several files extracts each file's log facts on its
own core (src/pipeline/ingest_logs.cpp) and must give byte-identical output to
one core: the real incidents of the corpus as 40 log files (plain and gzipped),
stdin among them, run normally and pinned to one CPU with sched_setaffinity
(the process counts the CPUs it may use). A file that cannot be read is still
named in the one-line error, whichever thread met it."""
import glob
import gzip
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from ccdiag_test import BIN, SOURCE_DIR

CASES = os.path.join(SOURCE_DIR, "tests", "corpus", "cases")


def run_pinned(args, cpus, stdin=None):
    return subprocess.run([BIN] + args, capture_output=True, text=True, timeout=120, input=stdin,
                          preexec_fn=lambda: os.sched_setaffinity(0, cpus))


@unittest.skipUnless(len(os.sched_getaffinity(0)) >= 2, "needs two CPUs to run in parallel")
class ParallelLogFacts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ccdiag-par-")
        cls.files = []
        for i, path in enumerate(sorted(glob.glob(os.path.join(CASES, "*.json")))[:40]):
            with open(path) as f:
                case = json.load(f)
            text = "\n".join(case["evidence_logs"]) + "\n"
            out = os.path.join(cls.tmp, f"{case['id']}.log" + (".gz" if i % 3 == 0 else ""))
            with (gzip.open(out, "wt") if out.endswith(".gz") else open(out, "w")) as f:
                f.write(text)
            cls.files.append(out)
        cls.all_cpus = os.sched_getaffinity(0)
        cls.one_cpu = {min(cls.all_cpus)}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def args(self, files):
        out = ["diagnose", "--json"]
        for f in files:
            out += ["--log", f]
        return out

    def test_same_report_on_all_cpus_and_on_one(self):
        args = self.args(self.files)
        par = run_pinned(args, self.all_cpus)
        seq = run_pinned(args, self.one_cpu)
        self.assertEqual(par.returncode, seq.returncode, par.stderr)
        self.assertEqual(par.stdout, seq.stdout)
        doc = json.loads(par.stdout)
        self.assertEqual(len(doc["inputs"]), len(self.files))

    def test_stdin_keeps_its_place(self):
        with open(self.files[1]) as f:
            text = f.read()
        args = self.args(self.files[:5] + ["-"] + self.files[5:12])
        par = run_pinned(args, self.all_cpus, stdin=text)
        seq = run_pinned(args, self.one_cpu, stdin=text)
        self.assertEqual(par.returncode, seq.returncode, par.stderr)
        self.assertEqual(par.stdout, seq.stdout)

    def test_an_unreadable_file_is_named(self):
        bad = os.path.join(self.tmp, "missing.log")
        p = run_pinned(self.args(self.files[:6] + [bad] + self.files[6:9]), self.all_cpus)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("missing.log", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)


if __name__ == "__main__":
    unittest.main()
