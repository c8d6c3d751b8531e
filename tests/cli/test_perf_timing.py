"""ccdiag perf --rings / --log: slow link, late rank and slow node from the profiler plugin's flight files
and NCCL INFO logs, on the scenarios of tests/fixtures/perf/timing/generate.py (docs/perf.md)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from ccdiag_test import FIXTURES, run, run_json  # noqa: E402

GEN = os.path.join(FIXTURES, "perf", "timing", "generate.py")


class Scenarios:
    """Each scenario generated once per test run, into one temporary directory."""
    tmp = None
    made = {}

    @classmethod
    def get(cls, name, seed=7):
        if cls.tmp is None:
            cls.tmp = tempfile.TemporaryDirectory(prefix="ccdiag-timing-")
        key = (name, seed)
        if key not in cls.made:
            out = os.path.join(cls.tmp.name, "%s-%d" % key)
            subprocess.run([sys.executable, GEN, out, name, "--seed", str(seed)], check=True)
            cls.made[key] = out
        return cls.made[key]


def perf(*args, rc):
    return run_json(["perf"] + list(args), expect_rc=rc)


def ids(doc):
    return [f["id"] for f in doc["findings"]]


class Rings(unittest.TestCase):
    def test_a_stray_byte_in_a_host_name_is_no_internal_error(self):
        # Found by perf_timing_fuzz: a log line whose host name holds a byte
        # that is not UTF-8 (a corrupted or mis-encoded log) made the JSON
        # output throw (exit 4, "invalid UTF-8 byte"). The text is repaired
        # (U+FFFD) like every other output of ccdiag.
        import glob
        import shutil
        src = Scenarios.get("log-straggler")
        with tempfile.TemporaryDirectory(prefix="ccdiag-timing-utf8-") as d:
            for f in glob.glob(os.path.join(src, "*.log")):
                shutil.copy(f, d)
            for name in ("rank1.log", "rank3.log"):
                path = os.path.join(d, name)
                with open(path, "rb") as fh:
                    data = fh.read()
                with open(path, "wb") as fh:
                    fh.write(data.replace(b"node0:", b"node\xff0:"))
            doc, _ = perf("--log", d, rc=1)
            self.assertIn("node\ufffd0", json.dumps(doc, ensure_ascii=False))

    def test_slow_nic_names_the_process_with_its_slow_channels(self):
        doc, _ = perf("--rings", Scenarios.get("ring-slow-link"), rc=1)
        r = doc["perf"]["rings"]
        self.assertEqual([c["process"] for c in r["culprits"]], ["node2:4009"])
        self.assertEqual(r["culprits"][0]["rank"], 9)
        self.assertEqual(sorted(c["channel"] for c in r["channels"] if c["slow"]), [1, 2, 5, 6])
        self.assertEqual(sum(c["slow"] for c in r["communicators"]), 2)
        self.assertEqual(r["late_arrivals"], [])
        link = [f for f in doc["findings"] if f["id"] == "perf.slow_link"]
        self.assertEqual(len(link), 1)
        self.assertEqual(link[0]["subject"]["host"], "node2")
        self.assertEqual(link[0]["subject"]["pid"], 4009)
        self.assertEqual(doc["verdict"]["root_cause"], "slow_link_or_nic")
        self.assertEqual(doc["verdict"]["culprit"]["host"], "node2")

    def test_arrival_skew_decoy_is_a_late_rank_not_a_link(self):
        doc, _ = perf("--rings", Scenarios.get("ring-skew"), rc=1)
        r = doc["perf"]["rings"]
        self.assertEqual(r["culprits"], [])
        self.assertFalse(any(c["slow"] for c in r["communicators"] + r["channels"]))
        self.assertEqual([l["process"] for l in r["late_arrivals"]], ["node1:4006"])
        self.assertLess(r["late_arrivals"][0]["own_ms"], r["late_arrivals"][0]["others_ms"])
        self.assertNotIn("perf.slow_link", ids(doc))
        self.assertEqual(doc["verdict"]["root_cause"], "straggler_or_timeout_too_short")

    def test_healthy_noisy_job_names_nobody(self):
        for seed in (1, 2, 3):
            doc, _ = perf("--rings", Scenarios.get("ring-healthy", seed), rc=0)
            r = doc["perf"]["rings"]
            self.assertEqual(r["culprits"], [], seed)
            self.assertEqual(r["late_arrivals"], [], seed)
            self.assertFalse(any(c["slow"] for c in r["communicators"] + r["channels"]), seed)
            self.assertTrue(any(c["compared"] for c in r["communicators"]), seed)

    def test_one_snapshot_compares_communicators_and_says_channels_need_more(self):
        doc, _ = perf("--rings", os.path.join(Scenarios.get("ring-slow-link"), "snap-0"), rc=1)
        r = doc["perf"]["rings"]
        self.assertEqual([c["process"] for c in r["culprits"]], ["node2:4009"])
        self.assertTrue(any("several snapshots" in n for n in r["notes"]))

    def test_text_and_markdown(self):
        p = run(["perf", "--rings", Scenarios.get("ring-slow-link")])
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("profiler rings:", p.stdout)
        self.assertIn("SLOW", p.stdout)
        self.assertIn("node2 pid 4009", p.stdout)
        m = run(["perf", "--rings", Scenarios.get("ring-slow-link"), "--markdown"])
        self.assertEqual(m.returncode, 1, m.stderr)
        self.assertIn("slow_link_or_nic", m.stdout)


class Logs(unittest.TestCase):
    def test_straggler_named_with_its_gpu(self):
        doc, _ = perf("--log", Scenarios.get("log-straggler"), rc=1)
        lg = doc["perf"]["logs"]
        self.assertEqual([l["process"] for l in lg["late_arrivals"]], ["node1:4006"])
        self.assertEqual(lg["late_arrivals"][0]["gpu"], "0000:3a:00.0")
        self.assertGreater(lg["late_arrivals"][0]["median_lag_ms"], 15)
        self.assertEqual(lg["resolution_ms"], 0.001)
        self.assertEqual(lg["collectives"], 180)
        self.assertNotIn("perf.slow_link", ids(doc))
        self.assertEqual(doc["verdict"]["root_cause"], "straggler_or_timeout_too_short")

    def test_slow_node_named(self):
        doc, _ = perf("--log", Scenarios.get("log-slow-host"), rc=1)
        lg = doc["perf"]["logs"]
        self.assertEqual([h["host"] for h in lg["late_hosts"]], ["node3"])
        self.assertEqual(ids(doc)[0], "perf.slow_host")

    def test_healthy_noise_and_one_long_pause_name_nobody(self):
        doc, _ = perf("--log", Scenarios.get("log-healthy"), rc=0)
        lg = doc["perf"]["logs"]
        self.assertEqual(lg["late_arrivals"], [])
        self.assertEqual(lg["late_hosts"], [])
        self.assertEqual(lg["collectives"], 180)

    def test_rings_and_logs_together(self):
        doc, _ = perf("--rings", Scenarios.get("ring-slow-link"), "--log", Scenarios.get("log-healthy"), rc=1)
        self.assertIn("rings", doc["perf"])
        self.assertIn("logs", doc["perf"])


class BadInput(unittest.TestCase):
    def one_line_error(self, args, rc=2):
        p = run(["perf"] + args)
        self.assertEqual(p.returncode, rc, p.stdout + p.stderr)
        lines = p.stderr.strip().splitlines()
        self.assertTrue(lines and all(l.startswith("ccdiag: error: ") for l in lines), p.stderr)
        return p

    def test_no_flight_files(self):
        with tempfile.TemporaryDirectory() as d:
            self.one_line_error(["--rings", d])

    def test_missing_path(self):
        self.one_line_error(["--rings", "/nonexistent/ccdiag-rings"])
        self.one_line_error(["--log", "/nonexistent/ccdiag.log"])

    def test_foreign_flight_file(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "ccdiag-nccl-1-00000000000000aa-0.fr"), "wb") as f:
                f.write(b"not a flight file" * 10)
            self.one_line_error(["--rings", d])

    def test_log_without_coll_lines_or_timestamps(self):
        with tempfile.TemporaryDirectory() as d:
            plain = os.path.join(d, "plain.log")
            with open(plain, "w") as f:
                f.write("just a training log\n")
            self.one_line_error(["--log", plain])
            # Timestamps stripped: the COLL lines cannot be timed.
            src = os.path.join(Scenarios.get("log-straggler"), "rank0.log")
            untimed = os.path.join(d, "untimed.log")
            with open(src) as f, open(untimed, "w") as g:
                for line in f:
                    g.write(line.split("] ", 1)[1])
            p = self.one_line_error(["--log", untimed])
            self.assertIn("timestamp", p.stderr)

    def test_one_bad_log_among_good_ones_is_partial(self):
        with tempfile.TemporaryDirectory() as d:
            plain = os.path.join(d, "plain.log")
            with open(plain, "w") as f:
                f.write("just a training log\n")
            p = run(["perf", "--log", Scenarios.get("log-healthy"), "--log", plain, "--json"])
            self.assertEqual(p.returncode, 3, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1)


if __name__ == "__main__":
    unittest.main()
