"""Progress lines on stderr only where a person watches: a TTY, not --json.
analyze over many bundles and live diagnose show one line rewritten in place
and clear it; with --json or stderr in a pipe nothing is printed."""
import os
import pty
import select
import shutil
import subprocess
import tempfile
import unittest

from ccdiag_test import BIN, FIXTURES, run

ROOT = os.path.join(FIXTURES, "sysroots", "container-dev-shm-64mb")


def run_with_tty_stderr(args, timeout=60):
    """Runs ccdiag with stderr on a pseudo-terminal; returns (rc, stdout, tty bytes)."""
    master, slave = pty.openpty()
    env = dict(os.environ, NO_COLOR="1")
    p = subprocess.Popen([BIN] + args, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    tty = b""
    out, _ = p.communicate(timeout=timeout)
    while True:
        r, _, _ = select.select([master], [], [], 0.2)
        if not r:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        tty += chunk
    os.close(master)
    return p.returncode, out.decode(), tty.decode(errors="replace")


class Progress(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.bundles = os.path.join(cls._tmp.name, "bundles")
        os.mkdir(cls.bundles)
        first = os.path.join(cls.bundles, "h0")
        p = run(["--root", ROOT, "--timeout", "5", "collect", "--out", first])
        assert p.returncode in (0, 3), p.stderr
        for i in range(1, 40):
            shutil.copytree(first, os.path.join(cls.bundles, f"h{i}"))

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def test_analyze_shows_and_clears_a_progress_line_on_a_tty(self):
        rc, out, tty = run_with_tty_stderr(["analyze", self.bundles])
        self.assertIn("analyze: [", tty)
        self.assertIn("/40 bundles", tty)
        self.assertTrue(tty.rstrip("\r\n").endswith("\x1b[K"), repr(tty[-80:]))  # cleared at the end
        self.assertNotIn("analyze: [", out)

    def test_live_diagnose_names_running_collectors_and_deadline(self):
        rc, out, tty = run_with_tty_stderr(["--root", ROOT, "--timeout", "5", "diagnose"])
        self.assertIn("collecting:", tty)
        self.assertIn("deadline in", tty)
        self.assertTrue(out.startswith("verdict:"), out[:200])

    def test_silent_with_json_and_in_pipes(self):
        rc, out, tty = run_with_tty_stderr(["analyze", self.bundles, "--json"])
        self.assertNotIn("analyze: [", tty)
        rc, out, tty = run_with_tty_stderr(["--root", ROOT, "--timeout", "5", "diagnose", "--json"])
        self.assertNotIn("collecting:", tty)
        p = run(["analyze", self.bundles])
        self.assertNotIn("analyze: [", p.stderr)
        self.assertNotIn("\x1b[K", p.stderr)


if __name__ == "__main__":
    unittest.main()
