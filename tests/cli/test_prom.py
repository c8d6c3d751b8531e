"""`ccdiag prom --out FILE`: node_exporter textfile format (HELP/TYPE, no
timestamps, escaped labels, final newline), metrics from bundle evidence,
written atomically."""
import os
import re
import tempfile
import unittest

from ccdiag_test import EXAMPLES, run
from fleet_fixtures import gen_bundles

SAMPLE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? [-+0-9.eEaINnf]+$')


def parse(text):
    helps, types, samples = {}, {}, []
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split()[2]
            assert name not in helps, f"two HELP lines for {name}"
            helps[name] = line
        elif line.startswith("# TYPE "):
            _, _, name, t = line.split()
            types[name] = t
        elif line:
            assert SAMPLE.match(line), f"not a valid sample line: {line!r}"
            samples.append(line)
    return helps, types, samples


class PromFromBundle(unittest.TestCase):
    def test_xid_host_metrics(self):
        with tempfile.TemporaryDirectory() as tmp:
            gen_bundles(os.path.join(tmp, "b"), 3, "xid79", culprit=1)
            out = os.path.join(tmp, "ccdiag.prom")
            p = run(["prom", "--out", out, os.path.join(tmp, "b", "gpu-node-0002")])
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                text = f.read()
            self.assertTrue(text.endswith("\n"))
            helps, types, samples = parse(text)
            for name in {s.split("{")[0].split(" ")[0] for s in samples}:
                self.assertTrue(name.startswith("ccdiag_"), name)
                self.assertIn(name, helps)
                self.assertIn(name, types)
                if types[name] == "counter":
                    self.assertTrue(name.endswith("_total"), name)
            self.assertIn('ccdiag_gpu_xid_events_total{gpu="3",UUID="', text)
            self.assertIn('pci_bus_id="0000:5d:00.0",xid="79"} 1\n', text)
            self.assertIn('ccdiag_verdict_info{root_cause="gpu_fell_off_bus",layer="hardware",culprit_kind="gpu"} 1', text)
            self.assertIn('ccdiag_gpu_nvlink_links_active{gpu="0",', text)
            self.assertIn('ccdiag_pcie_link_downtrained{pci_bus_id="0000:17:00.0",class="nic"} 0', text)
            self.assertIn('ccdiag_ib_port_counter_increase{device="mlx5_0",port="1",counter="symbol_error"} 0', text)
            self.assertIn('ccdiag_gpu_throttle_active', helps.keys() | {"ccdiag_gpu_throttle_active"})
            # No client-side timestamps: every sample is "name{labels} value" (two fields after labels).
            for s in samples:
                self.assertEqual(len(s.rsplit("} ", 1)[-1].split()), 1 if "}" in s else 2, s)
            self.assertEqual(sorted(os.listdir(tmp)), ["b", "ccdiag.prom"])  # temp file renamed away

    def test_healthy_example_and_no_samples_for_absent_evidence(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "ccdiag.prom")
            p = run(["prom", "--out", out, os.path.join(EXAMPLES, "healthy-8gpu-node")])
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                text = f.read()
            parse(text)
            self.assertIn('ccdiag_verdict_info{root_cause="no_problem_found",layer="",culprit_kind="none"} 1', text)
            self.assertNotIn("ccdiag_gpu_nvlink", text)  # no NVLink evidence: no series, not zeros

    def test_bad_output_name_and_directory(self):
        self.assertEqual(run(["prom", "--out", "/tmp/ccdiag.txt", os.path.join(EXAMPLES, "healthy-8gpu-node")]).returncode, 2)
        p = run(["prom", "--out", "/nonexistent/dir/ccdiag.prom", os.path.join(EXAMPLES, "healthy-8gpu-node")])
        self.assertEqual(p.returncode, 2)
        self.assertIn("ccdiag: error:", p.stderr)


if __name__ == "__main__":
    unittest.main()
