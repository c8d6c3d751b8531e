"""`ccdiag analyze`: many bundles -> one verdict, the hosts that did not
answer, who is behind in the collective sequence, the stack census, the
per-host table; bad bundles listed, never fatal; progress only on a TTY."""
import json
import os
import pty
import shutil
import subprocess
import tempfile
import unittest

from ccdiag_test import BIN, run, run_json
from fleet_fixtures import gen_bundles


class AnalyzeXid79Fleet(unittest.TestCase):
    """16 hosts x 8 GPUs; gpu-node-0011's GPU 0000:5d:00.0 (rank 83) fell off the bus."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.dir = os.path.join(cls.tmp, "bundles")
        gen_bundles(cls.dir, 16, "xid79", culprit=10)
        # One host answered with a damaged bundle; one never answered.
        with open(os.path.join(cls.dir, "gpu-node-0005", "evidence.json"), "w") as f:
            f.write('{"evidence": [ {"kind": "host.iden')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def analyze_json(self):
        return run_json(["analyze", self.dir, "--hosts", "gpu-node-[0001-0017]"], expect_rc=1)

    def test_verdict_names_the_culprit_host_and_gpu(self):
        doc, _ = self.analyze_json()
        v = doc["verdict"]
        self.assertEqual(v["root_cause"], "gpu_fell_off_bus")
        self.assertEqual(v["culprit"]["host"], "gpu-node-0011")
        self.assertEqual(v["culprit"]["gpu"], "0000:5d:00.0")
        self.assertGreater(v["confidence"], 0.4)

    def test_hosts_that_did_not_answer_are_listed_not_fatal(self):
        doc, _ = self.analyze_json()
        na = {h["host"]: h for h in doc["fleet"]["not_answered"]}
        self.assertEqual(set(na), {"gpu-node-0005", "gpu-node-0017"})
        self.assertEqual(na["gpu-node-0005"]["status"], "bad_bundle")
        self.assertIn("malformed JSON", na["gpu-node-0005"]["reason"])
        self.assertEqual(na["gpu-node-0017"]["status"], "no_bundle")
        self.assertEqual(doc["fleet"]["hosts_answered"], 15)
        self.assertEqual(doc["fleet"]["hosts_total"], 17)
        self.assertIn("gpu-node-0011", doc["hosts"])
        self.assertNotIn("gpu-node-0005", doc["hosts"])

    def test_sequence_picture_shows_who_is_behind_and_who_is_missing(self):
        doc, _ = self.analyze_json()
        seqs = doc["fleet"]["sequences"]
        self.assertEqual(len(seqs), 1)
        sp = seqs[0]
        self.assertEqual(sp["process_group"], "0")
        self.assertEqual(sp["group_size"], 128)
        self.assertEqual(sp["front"], 88214)
        behind = [r for r in sp["ranks_not_at_front"] if r["state"] == "behind"]
        missing = sorted(r["rank"] for r in sp["ranks_not_at_front"] if r["state"] == "no_data")
        self.assertEqual([(r["rank"], r["host"], r["behind_by"]) for r in behind], [(83, "gpu-node-0011", 1)])
        # gpu-node-0005's bundle is unreadable: its ranks 32..39 are missing from the picture.
        self.assertEqual(missing, list(range(32, 40)))
        self.assertEqual(sp["at_front"], 128 - 1 - 8)

    def test_census_flags_the_odd_rank(self):
        doc, _ = self.analyze_json()
        census = doc["fleet"]["census"]
        self.assertEqual(len(census), 2)
        self.assertEqual(census[0]["count"], 119)
        self.assertFalse(census[0]["odd"])
        self.assertTrue(census[1]["odd"])
        self.assertEqual(census[1]["ranks"], [83])
        self.assertIn("cudaGetLastError", census[1]["signature"])

    def test_host_table(self):
        doc, _ = self.analyze_json()
        rows = {r["host"]: r for r in doc["fleet"]["host_table"]}
        c = rows["gpu-node-0011"]
        self.assertEqual(c["xids"], {"79": 1})
        self.assertEqual(c["fell_off_bus"], 1)
        self.assertEqual(c["gpus"], 8)
        self.assertEqual(c["gpu_model"], "NVIDIA H100 80GB HBM3")
        self.assertEqual((c["nvlink_active"], c["nvlink_total"]), (144, 144))
        self.assertEqual((c["nic_ports_active"], c["nic_ports"]), (8, 8))
        self.assertEqual(c["pcie_downtrained"], 0)
        self.assertEqual(rows["gpu-node-0001"]["xids"], {})
        self.assertEqual(rows["gpu-node-0017"]["status"], "no_bundle")
        self.assertIsNone(rows["gpu-node-0017"]["gpus"])  # absent, not zero

    def test_text_lists_the_sections_and_no_progress_without_a_tty(self):
        p = run(["analyze", self.dir, "--hosts", "gpu-node-[0001-0017]"])
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertTrue(p.stdout.startswith("verdict: gpu_fell_off_bus (hardware)"))
        for s in ("Hosts that did not answer (2)", "gpu-node-0017", "behind", "Stack census", "[odd]", "79×1"):
            self.assertIn(s, p.stdout)
        self.assertNotIn("\r", p.stderr)
        self.assertEqual(p.stderr, "")

    def test_progress_bar_on_a_tty(self):
        master, slave = pty.openpty()
        # Text output: a progress line is for a person at a terminal, never with --json.
        p = subprocess.Popen([BIN, "analyze", self.dir], stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        out, _ = p.communicate(timeout=120)
        seen = b""
        try:
            while True:
                chunk = os.read(master, 65536)
                if not chunk:
                    break
                seen += chunk
        except OSError:
            pass
        os.close(master)
        self.assertIn(b"analyze: [", seen)
        self.assertIn(b"16/16 bundles", seen)
        self.assertTrue(out.startswith(b"verdict:"), out[:100])  # stdout stays clean

    def test_markdown(self):
        p = run(["analyze", self.dir, "--markdown"])
        self.assertEqual(p.returncode, 1)
        self.assertIn("**Hosts that did not answer**", p.stdout)
        self.assertIn("**Stack census**", p.stdout)

    def test_html_is_self_contained_and_escaped(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "b")
            shutil.copytree(self.dir, d)
            m = os.path.join(d, "gpu-node-0002", "manifest.json")
            with open(m) as f:
                man = json.load(f)
            man["host"] = 'evil"<script>alert(1)</script>'
            with open(m, "w") as f:
                json.dump(man, f)
            html = os.path.join(tmp, "r.html")
            p = run(["analyze", d, "--html", html])
            self.assertEqual(p.returncode, 1, p.stderr)
            with open(html, encoding="utf-8") as f:
                text = f.read()
            head = text[text.index("<head>"):]
            self.assertTrue(head.split("\n")[1].startswith('<meta http-equiv="Content-Security-Policy"'))
            self.assertNotIn("<script>alert", text)
            self.assertIn("evil&quot;&lt;script&gt;alert(1)&lt;/script&gt;", text)
            self.assertNotIn("http://", text.replace("http-equiv", ""))
            self.assertNotIn("https://", text)
            self.assertIn('id="culprit"', text)
            self.assertIn("<b>gpu-node-0011</b>", text)
            # The data block parses and carries the same verdict.
            start = text.index('<script type="application/json" id="ccdiag-data">') + len('<script type="application/json" id="ccdiag-data">')
            data = json.loads(text[start:text.index("</script>", start)])
            self.assertEqual(data["verdict"]["root_cause"], "gpu_fell_off_bus")
            self.assertEqual([f for f in os.listdir(tmp) if f.endswith(".tmp")], [])


class AnalyzeEdges(unittest.TestCase):
    def test_healthy_fleet_exits_0(self):
        with tempfile.TemporaryDirectory() as tmp:
            gen_bundles(tmp, 4, "healthy")
            doc, _ = run_json(["analyze", tmp], expect_rc=0)
            self.assertEqual(doc["verdict"]["root_cause"], "no_problem_found")
            self.assertEqual(doc["fleet"]["sequences"][0]["behind"], 0)
            self.assertEqual(doc["fleet"]["differences"], [])

    def test_listed_hosts_without_bundles_make_it_partial(self):
        with tempfile.TemporaryDirectory() as tmp:
            gen_bundles(tmp, 2, "healthy")
            doc, _ = run_json(["analyze", tmp, "-w", "gpu-node-[0001-0003]"], expect_rc=3)
            self.assertEqual([h["host"] for h in doc["fleet"]["not_answered"]], ["gpu-node-0003"])

    def test_a_host_that_differs_is_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            gen_bundles(tmp, 4, "healthy")
            p = os.path.join(tmp, "gpu-node-0003", "evidence.json")
            with open(p) as f:
                ev = json.load(f)
            for e in ev["evidence"]:
                if e["kind"] == "host.versions":
                    e["data"]["nccl_version"] = "2.18.3"
            with open(p, "w") as f:
                json.dump(ev, f)
            doc, _ = run_json(["analyze", tmp], expect_rc=1)
            self.assertEqual(doc["verdict"]["root_cause"], "nccl_version_mismatch")
            diff = {d["attribute"]: d for d in doc["fleet"]["differences"]}
            self.assertEqual(diff["nccl_version"]["majority"], "2.21.5")
            self.assertEqual(diff["nccl_version"]["others"], [{"value": "2.18.3", "hosts": ["gpu-node-0003"]}])

    def test_no_readable_bundle_is_an_input_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "node1"))
            with open(os.path.join(tmp, "node1", "manifest.json"), "w") as f:
                f.write("not json")
            p = run(["analyze", tmp])
            self.assertEqual(p.returncode, 2)
            self.assertIn("ccdiag: error: analyze: no readable bundle among 1 host(s)", p.stderr)

    def test_missing_path_and_bad_hostlist_are_usage_errors(self):
        self.assertEqual(run(["analyze", "/nonexistent/bundles"]).returncode, 2)
        with tempfile.TemporaryDirectory() as tmp:
            gen_bundles(tmp, 1, "healthy")
            p = run(["analyze", tmp, "--hosts", "node[3-1]"])
            self.assertEqual(p.returncode, 2)
            self.assertIn("runs backwards", p.stderr)

    def test_tarball_bundles(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "src")
            gen_bundles(src, 3, "xid79", culprit=1)
            out = os.path.join(tmp, "tars")
            os.makedirs(out)
            for h in os.listdir(src):
                subprocess.run(["tar", "-czf", os.path.join(out, h + ".tar.gz"), "-C", src, h], check=True)
            doc, _ = run_json(["analyze", out], expect_rc=1)
            self.assertEqual(doc["verdict"]["culprit"]["host"], "gpu-node-0002")



WATCHDOG = ("[rank{r}]:[E0422 21:44:21.000003 4120{r} ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=88213, OpType=ALLREDUCE, NumelIn=25690112, NumelOut=25690112, "
            "Timeout(ms)=600000) ran for 600084 milliseconds before timing out.")
DESYNC = ["[rank0]:\t - To our best knowledge, ranks [5] are the lagging ranks that caused this timeout. "
          "They never joined any collectives",
          "[rank0]:\t - [0] Timeout at collective: ALLREDUCE, #88213"]


class AnalyzeNoDataVersusNeverJoined(unittest.TestCase):
    """8 ranks on two hosts time out at SeqNum 88213 (PyTorch's watchdog line);
    rank 5 wrote no log. With rank 0's desync report naming it, rank 5 never
    joined; without it nothing is known about rank 5: "no data", never red."""

    def bundles(self, tmp, desync):
        for host, ranks in (("node-a", [0, 1, 2, 3]), ("node-b", [4, 6, 7])):
            d = os.path.join(tmp, host)
            os.makedirs(os.path.join(d, "raw", "logs"))
            with open(os.path.join(d, "manifest.json"), "w") as f:
                json.dump({"format": "ccdiag-bundle", "schema_version": 1, "ccdiag_version": "0.1.0", "host": host,
                           "kernel": "5.15.0-105-generic", "time": "2026-04-22T21:50:00Z", "collectors": ["logs"]}, f)
            with open(os.path.join(d, "evidence.json"), "w") as f:
                json.dump({"evidence": [], "unchecked": []}, f)
            for r in ranks:
                with open(os.path.join(d, "raw", "logs", f"rank{r}.log"), "w") as f:
                    f.write(WATCHDOG.format(r=r) + "\n")
                    if r == 0 and desync:
                        f.write("\n".join(DESYNC) + "\n")

    def analyze(self, desync):
        tmp = tempfile.mkdtemp()
        try:
            self.bundles(tmp, desync)
            doc, _ = run_json(["analyze", tmp], expect_rc=1)
            out = os.path.join(tmp, "report.html")
            run(["analyze", tmp, "--html", out])
            with open(out) as f:
                html = f.read()
        finally:
            shutil.rmtree(tmp)
        seqs = doc["fleet"]["sequences"]
        self.assertEqual(len(seqs), 1, json.dumps(seqs)[:1500])
        return seqs[0], html

    def test_desync_report_makes_the_silent_rank_never_joined(self):
        sp, html = self.analyze(desync=True)
        rows = {r["rank"]: r for r in sp["ranks_not_at_front"]}
        self.assertEqual(sp["group_size"], 8)
        self.assertEqual(rows[5]["state"], "never_joined", json.dumps(sp))
        self.assertIn("pytorch.desync.lagging_ranks", rows[5]["absence"])
        self.assertEqual((sp["never_joined"], sp["missing"]), (1, 0))
        self.assertIn('<g class="never-joined" data-rank="5">', html)
        self.assertNotIn('class="no-data"', html)

    def test_without_evidence_the_silent_rank_is_no_data(self):
        sp, html = self.analyze(desync=False)
        rows = {r["rank"]: r for r in sp["ranks_not_at_front"]}
        self.assertEqual(rows[5]["state"], "no_data", json.dumps(sp))
        self.assertEqual((sp["never_joined"], sp["missing"]), (0, 1))
        self.assertIn('<g class="no-data" data-rank="5">', html)
        self.assertNotIn('class="never-joined"', html)
        self.assertIn("no data", html)


class AnalyzeSubgroupRows(unittest.TestCase):
    """Real gloo dumps (torch 2.15) of the sub-group deadlock in one bundle: a
    sub-group's picture lists the ranks that reported it, never ranks 0..n-1
    as "no data" (torch 2.15's gloo pg_config names no members)."""

    def test_sub_group_rows_are_its_reporting_ranks(self):
        from ccdiag_test import FIXTURES
        tmp = tempfile.mkdtemp()
        try:
            d = os.path.join(tmp, "node-a")
            shutil.copytree(os.path.join(FIXTURES, "torch", "subgroup", "fr"), os.path.join(d, "raw", "fr"))
            with open(os.path.join(d, "manifest.json"), "w") as f:
                json.dump({"format": "ccdiag-bundle", "schema_version": 1, "ccdiag_version": "0.1.0", "host": "node-a",
                           "kernel": "6.1.0", "time": "2026-04-22T21:50:00Z", "collectors": ["fr"]}, f)
            with open(os.path.join(d, "evidence.json"), "w") as f:
                json.dump({"evidence": [], "unchecked": []}, f)
            doc, _ = run_json(["analyze", tmp], expect_rc=1)
        finally:
            shutil.rmtree(tmp)
        seqs = {sp["process_group"]: sp for sp in doc["fleet"]["sequences"]}
        # The default group: every rank has a dump; rank 3 stopped one short of the front.
        self.assertEqual((seqs["0"]["group_size"], seqs["0"]["front"], seqs["0"]["missing"]), (4, 4, 0))
        self.assertEqual([(r["rank"], r["state"]) for r in seqs["0"]["ranks_not_at_front"]], [(3, "behind")])
        for pg in ("1", "2"):
            self.assertEqual(seqs[pg]["missing"], 0, json.dumps(seqs[pg]))
            self.assertLessEqual(seqs[pg]["group_size"], 2)

if __name__ == "__main__":
    unittest.main()
