"""The HTML report of `ccdiag analyze --html` rendered in headless Chromium
(Debian's chromium; skipped with exit 77 when absent): it renders, the DOM
shows the verdict and the culprit, the rank x sequence SVG marks the rank
that is behind, and the page makes no request the CSP would block."""
import os
import shutil
import subprocess
import tempfile
import unittest

from ccdiag_test import run, skip_unless
from fleet_fixtures import gen_bundles

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
skip_unless(CHROMIUM, "chromium not installed (Debian package chromium)")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1280,900"]


class HtmlInChromium(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        gen_bundles(os.path.join(cls.tmp, "b"), 16, "xid79", culprit=10)
        cls.html = os.path.join(cls.tmp, "report.html")
        p = run(["analyze", os.path.join(cls.tmp, "b"), "--html", cls.html])
        assert p.returncode == 1, p.stderr
        cls.url = "file://" + cls.html

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def chromium(self, *args):
        return subprocess.run([CHROMIUM] + FLAGS + list(args) + [self.url], capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, HOME=self.tmp))

    def test_dom_shows_the_verdict_and_the_culprit(self):
        p = self.chromium("--dump-dom")
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        dom = p.stdout
        self.assertIn('<span id="root-cause">gpu_fell_off_bus</span>', dom)
        self.assertIn("host <b>gpu-node-0011</b>", dom)
        self.assertIn("gpu <b>0000:5d:00.0</b>", dom)
        self.assertIn('<g class="behind" data-rank="83">', dom)
        self.assertIn("odd one out", dom)
        self.assertIn("<svg", dom)

    def test_screenshot_renders_without_csp_violations(self):
        png = os.path.join(self.tmp, "report.png")
        p = self.chromium("--enable-logging=stderr", "--v=0", f"--screenshot={png}")
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertTrue(os.path.getsize(png) > 10000)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertNotIn("violates the following Content Security Policy directive", p.stderr)


if __name__ == "__main__":
    unittest.main()
