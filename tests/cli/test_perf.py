"""ccdiag perf: verdicts on fixture results and bundles (tests/fixtures/perf, README there), the JSON
contract (report.schema.json plus perf{}), baselines, flight-recorder input, and bad input."""
import json
import os
import re
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from ccdiag_test import FIXTURES, run, run_json  # noqa: E402
from test_prom import parse as parse_prom  # noqa: E402  (the textfile format rules, shared with `ccdiag prom`)

P = os.path.join(FIXTURES, "perf")
S = os.path.join(P, "scenario")
B = os.path.join(P, "bundles")


def perf(*args, rc):
    doc, p = run_json(["perf"] + list(args), expect_rc=rc)
    return doc, p


class PerfVerdicts(unittest.TestCase):
    def test_healthy_ring_ok_exit_0(self):
        doc, _ = perf(os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), "--bundle", os.path.join(B, "hgx-healthy"), rc=0)
        r = doc["perf"]["results"][0]
        self.assertEqual(r["status"], "ok")
        self.assertAlmostEqual(r["expected"]["nominal"], 236.9, delta=0.5)
        self.assertAlmostEqual(r["plateau"]["value"], 231.95, delta=0.01)
        self.assertEqual(doc["verdict"]["root_cause"], "no_problem_found")
        self.assertEqual(doc["perf"]["topology"][0]["host"], "gpu-node-017")

    def test_downtrained_nic_below_expected_names_the_link(self):
        doc, _ = perf(os.path.join(S, "all_reduce_perf-2x8-nic-x8.txt"), "--bundle", os.path.join(B, "nic-x8"), rc=1)
        r = doc["perf"]["results"][0]
        self.assertEqual(r["status"], "below_expected")
        self.assertIn("mlx5_3 PCIe link downtrained", r["bottleneck"])
        self.assertGreater(r["shortfall"], 0.5)
        self.assertEqual(doc["verdict"]["root_cause"], "pcie_link_degraded")
        self.assertEqual(doc["verdict"]["culprit"].get("nic"), "mlx5_3")
        self.assertEqual(doc["findings"][0]["id"], "perf.below_expected")

    def test_no_gdr_below_expected(self):
        doc, _ = perf(os.path.join(S, "all_reduce_perf-2x8-nogdr.txt"), "--bundle", os.path.join(B, "no-gdr"), rc=1)
        r = doc["perf"]["results"][0]
        self.assertEqual(r["status"], "below_expected")
        self.assertEqual(r["bottleneck_cause"], "gpudirect_rdma_module_missing")
        self.assertEqual(doc["verdict"]["root_cause"], "gpudirect_rdma_module_missing")

    def test_corruption_first_text_and_json(self):
        doc, _ = perf(os.path.join(S, "all_reduce_perf-2x8-wrong.txt"), os.path.join(S, "all_reduce_perf-2x8-wrong.json"), rc=1)
        self.assertEqual([f["id"] for f in doc["findings"][:2]], ["perf.data_corruption"] * 2)
        self.assertEqual(doc["findings"][0]["severity"], "critical")
        self.assertEqual(doc["perf"]["results"][1]["wrong"], 12)
        p = run(["perf", os.path.join(S, "all_reduce_perf-2x8-wrong.txt")])
        self.assertEqual(p.returncode, 1)
        self.assertIn("DATA CORRUPTION: 6 wrong elements", p.stdout)

    def test_real_outputs_every_format_unjudged_is_not_healthy(self):
        doc, _ = perf(os.path.join(P, "real"), rc=0)
        res = {os.path.basename(r["file"]): r for r in doc["perf"]["results"]}
        self.assertEqual(len(res), 6)
        self.assertEqual(res["nccl-tests-old-error-column-2gpu.txt"]["error_column"], "error")
        self.assertEqual(res["perftest-ib_write_bw-postlist-gbits.txt"]["nic"], "ib0")
        self.assertTrue(all(r["status"] == "unjudged" for r in res.values()))
        # nothing could be judged: said under unchecked, not "healthy" at full confidence
        self.assertGreaterEqual(len(doc["unchecked"]), 6)
        self.assertLess(doc["verdict"]["confidence"], 0.7)

    def test_markdown(self):
        p = run(["perf", os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), "--bundle", os.path.join(B, "hgx-healthy"), "--markdown"])
        self.assertEqual(p.returncode, 0)
        self.assertIn("## Collective performance", p.stdout)
        self.assertIn("| ok |", p.stdout)


class PerfBaseline(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_save_then_regression(self):
        base = os.path.join(self.tmp, "b.json")
        perf(os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), "--save-baseline", base, rc=0)
        with open(base) as f:
            b = json.load(f)
        self.assertEqual(b["format"], "ccdiag-perf-baseline")
        self.assertEqual(b["entries"][0]["key"], "all_reduce/16r2h/8589934592")
        self.assertEqual(b["versions"]["nccl_tests"], "2.19.6")
        # second save merges samples
        perf(os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), "--save-baseline", base, rc=0)
        with open(base) as f:
            self.assertEqual(len(json.load(f)["entries"][0]["samples"]), 2)
        doc, _ = perf(os.path.join(S, "all_reduce_perf-2x8-slower.txt"), "--baseline", base, rc=1)
        r = doc["perf"]["results"][0]
        self.assertEqual(r["status"], "regression")
        self.assertAlmostEqual(r["baseline"]["median"], 231.95, delta=0.01)
        doc, _ = perf(os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), "--baseline", base, rc=0)
        self.assertEqual(doc["perf"]["results"][0]["status"], "ok")

    def test_refuses_to_overwrite_other_files(self):
        other = os.path.join(self.tmp, "notes.txt")
        with open(other, "w") as f:
            f.write("my notes\n")
        p = run(["perf", os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), "--save-baseline", other])
        self.assertEqual(p.returncode, 2)
        with open(other) as f:
            self.assertEqual(f.read(), "my notes\n")
        p = run(["perf", os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), "--baseline", other])
        self.assertEqual(p.returncode, 2)
        self.assertIn("not JSON", p.stderr)


class PerfBadInput(unittest.TestCase):
    def test_errors_are_one_line_exit_2(self):
        tmp = tempfile.mkdtemp()
        try:
            junk = os.path.join(tmp, "junk.txt")
            with open(junk, "w") as f:
                f.write("hello\n")
            for args in (["perf", "/nonexistent/x.txt"], ["perf", junk], ["perf"], ["perf", os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), "--bundle", tmp]):
                p = run(args)
                self.assertEqual(p.returncode, 2, args)
                self.assertTrue(p.stderr.startswith("ccdiag: error:") or "required" in p.stderr or "nothing to read" in p.stderr, p.stderr)
                self.assertLessEqual(len(p.stderr.strip().splitlines()), 2)
            # one good file and one bad: partial (3) unless a problem was found
            p = run(["perf", os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), junk])
            self.assertEqual(p.returncode, 3)
        finally:
            shutil.rmtree(tmp)


class PerfFlightRecorder(unittest.TestCase):
    def test_fr_healthy_dumps_name_nobody(self):
        fr = os.path.join(FIXTURES, "fr", "healthy")
        if not os.path.isdir(fr):
            self.skipTest("no healthy FR fixture")
        doc, _ = perf("--fr", fr, rc=0)
        self.assertEqual(doc["perf"]["fr"]["culprits"], [])
        self.assertFalse(any(c["slow"] for c in doc["perf"]["fr"]["communicators"]))
        # one communicator only: nothing to compare it with, which is said, not called healthy
        if len(doc["perf"]["fr"]["communicators"]) < 3:
            self.assertTrue(any("flight-recorder" in u["what"] for u in doc["unchecked"]))
            self.assertLess(doc["verdict"]["confidence"], 0.7)


HEALTHY = (os.path.join(S, "all_reduce_perf-2x8-healthy.txt"), os.path.join(B, "hgx-healthy"))
NIC_X8 = (os.path.join(S, "all_reduce_perf-2x8-nic-x8.txt"), os.path.join(B, "nic-x8"))


def samples_of(text, name):
    """{labels dict as a frozenset: value} of one metric's samples."""
    out = {}
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            labels, _, value = line.rpartition(" ")
            pairs = re.findall(r'([a-zA-Z_]+)="((?:\\.|[^"\\])*)"', labels)
            out[frozenset(pairs)] = float(value)
    return out


class PerfProm(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def prom(self, result, bundle, rc):
        out = os.path.join(self.tmp, "ccdiag-perf.prom")
        doc, _ = perf(result, "--bundle", bundle, "--prom", out, rc=rc)
        with open(out) as f:
            return doc, f.read()

    def test_format_rules_and_values_match_the_json(self):
        doc, text = self.prom(*HEALTHY, rc=0)
        self.assertTrue(text.endswith("\n"))
        helps, types, samples = parse_prom(text)  # HELP once per name, valid sample lines
        seen = []
        for line in text.splitlines():  # HELP and TYPE before the metric's first sample
            if line.startswith("# TYPE "):
                seen.append(line.split()[2])
            elif line and not line.startswith("#"):
                name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)
                self.assertEqual(seen[-1], name, f"{name} sampled outside its own HELP/TYPE block")
                self.assertIn(name, helps)
                self.assertTrue(name.startswith("ccdiag_"), name)
        for s in samples:  # no timestamps: "name{labels} value", nothing after the value
            self.assertEqual(len(s.rsplit("} ", 1)[-1].split()), 1, s)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["ccdiag-perf.prom"])  # temp file renamed away
        r = doc["perf"]["results"][0]
        plateau = samples_of(text, "ccdiag_perf_plateau_bandwidth_bytes_per_second")
        self.assertEqual(len(plateau), 1)
        (labels, value), = plateau.items()
        labels = dict(labels)
        self.assertEqual(labels["collective"], "all_reduce")
        self.assertEqual(labels["host"], "gpu-node-017,gpu-node-018")
        self.assertEqual(labels["ranks"], "16")
        self.assertAlmostEqual(value, r["plateau"]["value"] * 1e9, delta=1e3)  # GB/s -> bytes/s
        expected = samples_of(text, "ccdiag_perf_expected_bandwidth_bytes_per_second")
        nominal = [v for k, v in expected.items() if ("kind", "nominal") in k]
        self.assertEqual(len(nominal), 1)
        self.assertAlmostEqual(nominal[0], r["expected"]["nominal"] * 1e9, delta=1e3)
        ratio = list(samples_of(text, "ccdiag_perf_plateau_expected_ratio").values())
        self.assertAlmostEqual(ratio[0], r["plateau"]["value"] / r["expected"]["nominal"], places=6)
        lat = list(samples_of(text, "ccdiag_perf_latency_floor_seconds").values())
        self.assertAlmostEqual(lat[0], r["latency_floor"]["us"] / 1e6, places=9)
        self.assertEqual(list(samples_of(text, "ccdiag_perf_wrong_elements").values()), [0.0])
        self.assertIn('status="ok"', text)
        self.assertEqual(types["ccdiag_perf_verdict_info"], "gauge")

    def test_below_expected_ratio_below_one(self):
        doc, text = self.prom(*NIC_X8, rc=1)
        r = doc["perf"]["results"][0]
        self.assertEqual(r["status"], "below_expected")
        (ratio,) = samples_of(text, "ccdiag_perf_plateau_expected_ratio").values()
        self.assertLess(ratio, 1 - r["expected"]["tolerance"])
        self.assertAlmostEqual(ratio, 1 - r["shortfall"], places=3)
        info = samples_of(text, "ccdiag_perf_verdict_info")
        self.assertTrue(any(("status", "below_expected") in k and ("bottleneck_cause", "pcie_link_degraded") in k for k in info), info)

    def test_absent_evidence_is_not_written(self):
        # No bundle: nothing to expect, so no expected value and no ratio (not zeros).
        out = os.path.join(self.tmp, "ccdiag-perf.prom")
        perf(HEALTHY[0], "--prom", out, rc=0)
        with open(out) as f:
            text = f.read()
        parse_prom(text)
        self.assertIn("ccdiag_perf_plateau_bandwidth_bytes_per_second{", text)
        self.assertNotIn("ccdiag_perf_expected_bandwidth", text)
        self.assertNotIn("ccdiag_perf_plateau_expected_ratio", text)
        # the <= 2.11 float `error` column checks nothing countable: no #wrong series
        perf(os.path.join(P, "real", "nccl-tests-old-error-column-2gpu.txt"), "--prom", out, rc=0)
        with open(out) as f:
            text = f.read()
        self.assertNotIn("ccdiag_perf_wrong_elements", text)
        self.assertIn("ccdiag_perf_verdict_info{", text)

    def test_bad_name_and_unwritable_directory_exit_2(self):
        p = run(["perf", HEALTHY[0], "--prom", os.path.join(self.tmp, "perf.txt")])
        self.assertEqual(p.returncode, 2)
        self.assertIn("must end in .prom", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1)
        self.assertEqual(os.listdir(self.tmp), [])
        p = run(["perf", HEALTHY[0], "--prom", "/nonexistent/dir/ccdiag-perf.prom"])
        self.assertEqual(p.returncode, 2)
        self.assertTrue(p.stderr.startswith("ccdiag: error:"), p.stderr)


class PerfHtml(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def html(self, *args, rc):
        out = os.path.join(self.tmp, "perf.html")
        doc, _ = perf(*args, "--html", out, rc=rc)
        with open(out, encoding="utf-8") as f:
            return doc, f.read()

    def test_csp_first_one_chart_per_run_expected_line_at_its_value(self):
        # the two fixture bundles are one host (gpu-node-017) before and after a downtrain: one run each
        for (result, bundle), rc in ((HEALTHY, 0), (NIC_X8, 1)):
            doc, html = self.html(result, "--bundle", bundle, rc=rc)
            self.check_page(doc, html)
        self.assertIn("below_expected", html)
        self.assertIn(doc["perf"]["results"][0]["why"].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                      .replace('"', "&quot;").replace("'", "&#39;"), html)

    def test_one_chart_per_run_of_every_format(self):
        doc, html = self.html(os.path.join(P, "real"), rc=0)
        self.check_page(doc, html)
        self.assertNotIn('class="expected"', html)  # nothing to expect without a bundle: no line drawn at 0

    def check_page(self, doc, html):
        head = html.split("<head>", 1)[1]
        self.assertTrue(head.lstrip().startswith(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"))
        self.assertNotIn("<script", html)
        svgs = re.findall(r"<svg\b[^>]*>.*?</svg>", html, re.S)
        self.assertEqual(len(svgs), len(doc["perf"]["results"]))
        for svg, r in zip(svgs, doc["perf"]["results"]):
            # one point per size, each with its tooltip
            sizes = sorted({row["size_bytes"] for row in r["rows"] if row["size_bytes"] > 0})
            points = re.findall(r'<circle class="point"[^>]*><title>([^<]+)</title></circle>', svg)
            self.assertEqual(len(points), len(sizes), r["file"])
            self.assertIn(f"({sizes[-1]} bytes)", points[-1])
            if "expected" not in r:
                continue
            tag = re.match(r"<svg\b[^>]*>", svg).group(0)
            ymax = float(re.search(r'data-y-max="([^"]+)"', tag).group(1))
            top = float(re.search(r'data-plot-top="([^"]+)"', tag).group(1))
            bottom = float(re.search(r'data-plot-bottom="([^"]+)"', tag).group(1))
            y_of = lambda v: bottom - v / ymax * (bottom - top)  # noqa: E731
            exp = re.search(r'<line class="expected"[^>]*y1="([^"]+)" y2="([^"]+)" data-value="([^"]+)"', svg)
            self.assertIsNotNone(exp, "no expected-plateau line")
            self.assertEqual(exp.group(1), exp.group(2))  # horizontal
            self.assertAlmostEqual(float(exp.group(3)), r["expected"]["nominal"], places=6)
            self.assertAlmostEqual(float(exp.group(1)), y_of(r["expected"]["nominal"]), delta=0.02)
            pl = re.search(r'<line class="plateau"[^>]*y1="([^"]+)"[^>]*data-value="([^"]+)"', svg)
            self.assertAlmostEqual(float(pl.group(1)), y_of(r["plateau"]["value"]), delta=0.02)
            # the expected line sits above the plateau mark exactly when expected > measured
            self.assertEqual(float(exp.group(1)) < float(pl.group(1)), r["expected"]["nominal"] > r["plateau"]["value"])

    def test_hostile_file_and_host_names_are_escaped(self):
        hostile = os.path.join(self.tmp, 'all_reduce_perf-<script>alert(1)<script>"x.txt')
        with open(HEALTHY[0]) as f:
            text = f.read().replace("gpu-node-018", "<script>alert(2)</script>")
        with open(hostile, "w") as f:
            f.write(text)
        doc, html = self.html(hostile, rc=0)
        self.assertIn("<script>alert(2)</script>", doc["perf"]["results"][0]["hosts"])  # the parser kept the host as written
        self.assertNotIn("<script", html)
        self.assertIn("&lt;script&gt;alert(1)&lt;script&gt;&quot;x.txt", html)
        self.assertIn("&lt;script&gt;alert(2)&lt;/script&gt;", html)
        self.assertEqual(len(re.findall(r"<svg\b", html)), 1)
        # and in the metrics the same names are label-escaped, still one valid sample per line
        out = os.path.join(self.tmp, "ccdiag-perf.prom")
        perf(hostile, "--prom", out, rc=0)
        with open(out) as f:
            prom = f.read()
        parse_prom(prom)
        self.assertIn('file="all_reduce_perf-<script>alert(1)<script>\\"x.txt"', prom)


if __name__ == "__main__":
    unittest.main()
