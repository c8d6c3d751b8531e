"""`collect --out` never follows what another user planted: ccdiag runs as
root, and the documented --out under /tmp is a name any local user can create
first. Each attack below made root overwrite a file (or took planted files as
evidence) before the bundle writer wrote through a directory descriptor with
O_EXCL|O_NOFOLLOW."""
import json
import os
import stat
import tempfile
import unittest

from ccdiag_test import FIXTURES, run

ROOT = os.path.join(FIXTURES, "sysroots", "container-dev-shm-64mb")


class CollectOutDirectory(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name
        os.chmod(self.tmp, 0o755)
        self.victim = os.path.join(self.tmp, "victim.conf")
        with open(self.victim, "w") as f:
            f.write("precious\n")

    def tearDown(self):
        self._tmp.cleanup()

    def collect(self, out, *extra):
        return run(["--root", ROOT, "--timeout", "5", "collect", "--out", out] + list(extra))

    def assert_refused(self, p, needle):
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("ccdiag: error:", p.stderr)
        self.assertIn(needle, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        with open(self.victim) as f:
            self.assertEqual(f.read(), "precious\n")

    def test_planted_manifest_symlink_is_not_followed(self):
        out = os.path.join(self.tmp, "ccdiag-node")
        os.mkdir(out, 0o700)
        os.symlink(self.victim, os.path.join(out, "manifest.json"))
        self.assert_refused(self.collect(out), "not empty")

    def test_out_that_is_a_symlink_to_a_directory_is_refused(self):
        target = os.path.join(self.tmp, "etc")
        os.mkdir(target)
        out = os.path.join(self.tmp, "ccdiag-node")
        os.symlink(target, out)
        self.assert_refused(self.collect(out), "symlink")
        self.assertEqual(os.listdir(target), [])

    def test_out_that_is_a_symlink_to_a_file_is_refused(self):
        out = os.path.join(self.tmp, "ccdiag-node")
        os.symlink(self.victim, out)
        self.assert_refused(self.collect(out), "symlink")

    def test_planted_evidence_is_never_taken_in(self):
        # A planted raw/logs file once made a host without InfiniBand
        # diagnose as ib_transport_retry_exceeded.
        out = os.path.join(self.tmp, "ccdiag-node")
        os.makedirs(os.path.join(out, "raw", "logs"))
        os.chmod(out, 0o700)
        with open(os.path.join(out, "raw", "logs", "planted.log"), "w") as f:
            f.write("NCCL WARN NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129\n")
        self.assert_refused(self.collect(out), "not empty")

    @unittest.skipUnless(os.geteuid() == 0, "needs root to hand a directory to another user")
    def test_directory_of_another_user_is_refused(self):
        out = os.path.join(self.tmp, "ccdiag-node")
        os.mkdir(out, 0o700)
        os.chown(out, 65534, 65534)
        self.assert_refused(self.collect(out), "another user")

    def test_directory_writable_by_others_is_refused(self):
        out = os.path.join(self.tmp, "ccdiag-node")
        os.mkdir(out)
        os.chmod(out, 0o777)
        self.assert_refused(self.collect(out), "writable by other users")

    def test_own_empty_private_directory_is_used(self):
        out = os.path.join(self.tmp, "ccdiag-node")
        os.mkdir(out, 0o700)
        p = self.collect(out)
        self.assertIn(p.returncode, (0, 3), p.stderr)
        with open(os.path.join(out, "manifest.json")) as f:
            self.assertEqual(json.load(f)["host"], "trainer-pod-7f9c")

    def test_new_directory_and_files_are_private(self):
        out = os.path.join(self.tmp, "ccdiag-node")
        p = self.collect(out)
        self.assertIn(p.returncode, (0, 3), p.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o700)
        self.assertEqual(stat.S_IMODE(os.stat(os.path.join(out, "evidence.json")).st_mode), 0o600)

    def test_without_out_a_private_directory_is_made_and_printed(self):
        env_tmp = os.path.join(self.tmp, "runtime")
        os.mkdir(env_tmp, 0o700)
        p = run(["--root", ROOT, "--timeout", "5", "collect"], env={"XDG_RUNTIME_DIR": env_tmp})
        self.assertIn(p.returncode, (0, 3), p.stderr)
        path = p.stdout.strip()
        self.assertTrue(path.startswith(os.path.join(env_tmp, "ccdiag-collect-")), p.stdout)
        self.assertNotEqual(path, os.path.join(env_tmp, "ccdiag-collect-XXXXXX"))
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o700)
        self.assertTrue(os.path.isfile(os.path.join(path, "manifest.json")))

    def test_two_logs_with_one_name_are_both_kept(self):
        for r in ("r0", "r1"):
            os.mkdir(os.path.join(self.tmp, r))
            with open(os.path.join(self.tmp, r, "train.log"), "w") as f:
                f.write(f"log of {r}\n")
        out = os.path.join(self.tmp, "b")
        p = self.collect(out, "--log", os.path.join(self.tmp, "r0", "train.log"),
                         "--log", os.path.join(self.tmp, "r1", "train.log"))
        self.assertIn(p.returncode, (0, 3), p.stderr)
        logs = sorted(os.listdir(os.path.join(out, "raw", "logs")))
        self.assertEqual(logs, ["train.log", "train.log.2"])
        with open(os.path.join(out, "raw", "logs", "train.log.2")) as f:
            self.assertEqual(f.read(), "log of r1\n")


if __name__ == "__main__":
    unittest.main()
