"""`ccdiag logs --json` and `diagnose --json` on text that is not valid UTF-8:
a stray byte, an overlong form, and a line longer than the excerpt limit cut
by ccdiag right inside an emoji. The output must be valid JSON (exit 0/1),
never exit 4 ("incomplete UTF-8 string")."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from ccdiag_test import run  # noqa: E402


class Utf8Output(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ccdiag-utf8-")
        self.path = os.path.join(self.dir, "rank3.log")
        # The excerpt keeps 300 bytes of a line: put a 4-byte emoji across byte 300.
        pad = "x" * (300 - len("NCCL WARN ") - 2)
        lines = [
            b"node1:123:456 [3] NCCL INFO NCCL version 2.21.5+cuda12.4",
            ("node1:123:456 [3] NCCL WARN " + pad).encode() + "\U0001F525 tail".encode(),
            b"[rank3]: RuntimeError: bad byte \xff and overlong \xc0\xaf in a message",
            b"torch.distributed.DistBackendError: NCCL error in: ... unhandled system error \xe2\x82",
        ]
        with open(self.path, "wb") as f:
            f.write(b"\n".join(lines) + b"\n")

    def tearDown(self):
        import shutil
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_logs_json(self):
        p = run(["logs", self.path, "--json"])
        self.assertIn(p.returncode, (0, 1), p.stderr)
        doc = json.loads(p.stdout)
        text = json.dumps(doc, ensure_ascii=False)
        self.assertNotIn("\ufffd\ufffd\ufffd\ufffd", text)  # a cut code point is dropped, not four U+FFFD
        self.assertIn("bad byte \ufffd", text)

    def test_diagnose_json(self):
        p = run(["diagnose", "--log", self.path, "--json"])
        self.assertIn(p.returncode, (0, 1), p.stderr)
        json.loads(p.stdout)


if __name__ == "__main__":
    unittest.main()
