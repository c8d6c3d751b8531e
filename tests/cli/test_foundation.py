"""Foundation behaviour of the ccdiag binary: flags, exit codes, examples,
bundle validation, bounded probes, collect -> diagnose round trip."""
import glob
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
import time
import unittest

from ccdiag_test import BIN, EXAMPLES, FIXTURES, run, run_json, validate


def example_dirs():
    return sorted(os.path.dirname(p) for p in glob.glob(os.path.join(EXAMPLES, "*", "expected.json")))


class FlagsAndExitCodes(unittest.TestCase):
    def test_version(self):
        p = run(["--version"])
        self.assertEqual(p.returncode, 0)
        self.assertRegex(p.stdout.strip(), r"^\d+\.\d+\.\d+")

    def test_help_lists_subcommands_examples_and_exit_codes(self):
        p = run(["--help"])
        self.assertEqual(p.returncode, 0)
        for word in ("diagnose", "collect", "info", "Examples:", "Exit codes"):
            self.assertIn(word, p.stdout)

    def test_no_subcommand_is_a_usage_error(self):
        self.assertEqual(run([]).returncode, 2)

    def test_unknown_flag_is_a_usage_error(self):
        p = run(["diagnose", "--no-such-flag"])
        self.assertEqual(p.returncode, 2)

    def test_bad_timeout_is_a_usage_error(self):
        self.assertEqual(run(["--timeout", "-1", "info"]).returncode, 2)

    def test_info_reports_runtime_libraries_without_crashing(self):
        p = run(["info", "--json"])
        self.assertEqual(p.returncode, 0)
        doc = json.loads(p.stdout)
        names = {l["soname"]: l for l in doc["runtime_libraries"]}
        self.assertIn("libnvidia-ml.so.1", names)
        for l in doc["runtime_libraries"]:
            self.assertIn(l["status"], ("found", "not found", "timeout", "error"))
        # No NVIDIA driver on the test machines: NVML must be reported cleanly as absent.
        if not os.path.exists("/proc/driver/nvidia/version"):
            self.assertEqual(names["libnvidia-ml.so.1"]["status"], "not found")

    def test_list_causes_json_is_the_catalogue(self):
        p = run(["diagnose", "--list-causes", "--json"])
        self.assertEqual(p.returncode, 0)
        causes = json.loads(p.stdout)
        ids = [c["id"] for c in causes]
        self.assertEqual(len(ids), len(set(ids)))
        for needed in ("rank_skips_collective", "nccl_bug", "ib_transport_retry_exceeded", "gpu_fell_off_bus",
                       "container_shm_too_small", "removeipc_deletes_shm"):
            self.assertIn(needed, ids)
        for c in causes:
            self.assertIn(c["layer"], ("framework", "nccl", "transport", "hardware", "system-config"))
            self.assertTrue(c["description"])
            self.assertTrue(c["next_steps"])


class Examples(unittest.TestCase):
    def test_every_example_gives_its_expected_verdict(self):
        dirs = example_dirs()
        self.assertGreaterEqual(len(dirs), 4)
        for d in dirs:
            with self.subTest(example=os.path.basename(d)):
                with open(os.path.join(d, "expected.json")) as f:
                    exp = json.load(f)
                doc, p = run_json(["diagnose", d], expect_rc=exp["exit_code"])
                v = doc["verdict"]
                self.assertEqual(v["root_cause"], exp["root_cause"])
                self.assertEqual(v["layer"], exp["layer"])
                for k, val in exp["culprit"].items():
                    self.assertEqual(v["culprit"].get(k), val, f"culprit.{k}")
                if exp["root_cause"] != "no_problem_found":
                    self.assertTrue(doc["next_steps"])
                    self.assertGreater(v["confidence"], 0.4)

    def test_text_output_starts_with_the_verdict(self):
        d = os.path.join(EXAMPLES, "gpu-fell-off-bus-xid79")
        p = run(["diagnose", d])
        self.assertEqual(p.returncode, 1)
        lines = p.stdout.splitlines()
        self.assertTrue(lines[0].startswith("verdict: gpu_fell_off_bus (hardware)"), lines[0])
        self.assertTrue(lines[1].startswith("culprit:"))
        self.assertTrue(lines[2].startswith("next:"))
        self.assertNotIn("\033[", p.stdout)  # not a TTY: no colour

    def test_markdown_summary(self):
        d = os.path.join(EXAMPLES, "gpu-uncorrectable-ecc-xid48")
        p = run(["diagnose", d, "--markdown"])
        self.assertEqual(p.returncode, 1)
        self.assertTrue(p.stdout.startswith("### ccdiag: `gpu_ecc_or_memory_fault` (hardware)"))
        self.assertIn("**Next steps**", p.stdout)
        self.assertIn("| layer | outcome | note |", p.stdout)

    def test_json_and_markdown_are_exclusive(self):
        d = os.path.join(EXAMPLES, "healthy-8gpu-node")
        self.assertEqual(run(["diagnose", d, "--json", "--markdown"]).returncode, 2)

    def test_tarball_bundle_gives_the_same_verdict(self):
        src = os.path.join(EXAMPLES, "gpu-fell-off-bus-xid79")
        with tempfile.TemporaryDirectory() as tmp:
            tgz = os.path.join(tmp, "gpu-node-017.tar.gz")
            with tarfile.open(tgz, "w:gz") as t:
                t.add(src, arcname="gpu-node-017")
            doc, _ = run_json(["diagnose", tgz], expect_rc=1)
            self.assertEqual(doc["verdict"]["root_cause"], "gpu_fell_off_bus")
            # The temporary extraction is cleaned up.
            self.assertEqual(glob.glob("/tmp/ccdiag-bundle-*/gpu-node-017"), [])


class BadBundles(unittest.TestCase):
    """Bad input: one line on stderr naming the file, exit 2, nothing read outside."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def make_bundle(self, name="b"):
        d = os.path.join(self.tmp, name)
        shutil.copytree(os.path.join(EXAMPLES, "healthy-8gpu-node"), d)
        return d

    def assert_refused(self, args, must_name):
        p = run(["diagnose"] + args)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        err = p.stderr.strip().splitlines()
        self.assertEqual(len(err), 1, p.stderr)
        self.assertTrue(err[0].startswith("ccdiag: error: "), err[0])
        self.assertIn(must_name, err[0])
        self.assertEqual(p.stdout, "")

    def test_nonexistent_path(self):
        self.assert_refused([os.path.join(self.tmp, "nope")], "nope")

    def test_directory_without_manifest(self):
        os.mkdir(os.path.join(self.tmp, "empty"))
        self.assert_refused([os.path.join(self.tmp, "empty")], "empty")

    def test_malformed_manifest(self):
        d = self.make_bundle()
        with open(os.path.join(d, "manifest.json"), "w") as f:
            f.write('{"format": "ccdiag-bundle", "schema_version": 1,')
        self.assert_refused([d], "manifest.json")

    def test_manifest_of_another_format(self):
        d = self.make_bundle()
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump({"format": "sosreport", "schema_version": 1, "host": "x"}, f)
        self.assert_refused([d], "manifest.json")

    def test_future_schema_version(self):
        d = self.make_bundle()
        with open(os.path.join(d, "manifest.json")) as f:
            m = json.load(f)
        m["schema_version"] = 99
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump(m, f)
        self.assert_refused([d], "schema_version 99")

    def test_malformed_evidence(self):
        d = self.make_bundle()
        with open(os.path.join(d, "evidence.json"), "w") as f:
            f.write("[1, 2")
        self.assert_refused([d], "evidence.json")

    def test_evidence_item_without_kind(self):
        d = self.make_bundle()
        with open(os.path.join(d, "evidence.json"), "w") as f:
            json.dump({"evidence": [{"data": {}}]}, f)
        self.assert_refused([d], "evidence.json")

    def test_symlink_leading_outside_the_bundle(self):
        d = self.make_bundle()
        secret = os.path.join(self.tmp, "outside.log")
        with open(secret, "w") as f:
            f.write("NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.\n")
        os.symlink(secret, os.path.join(d, "raw", "kernel.log.1"))
        os.makedirs(os.path.join(d, "raw", "kernel"))
        os.symlink(secret, os.path.join(d, "raw", "kernel", "dmesg"))
        self.assert_refused([d], "outside the bundle")

    def test_manifest_symlink(self):
        d = self.make_bundle()
        os.rename(os.path.join(d, "manifest.json"), os.path.join(self.tmp, "m.json"))
        os.symlink(os.path.join(self.tmp, "m.json"), os.path.join(d, "manifest.json"))
        self.assert_refused([d], "manifest.json")

    def tarball(self, members):
        path = os.path.join(self.tmp, "bad.tar.gz")
        with tarfile.open(path, "w:gz") as t:
            for info, data in members:
                t.addfile(info, io.BytesIO(data) if data is not None else None)
        return path

    def test_tar_member_climbing_out(self):
        info = tarfile.TarInfo("../../etc/cron.d/evil")
        info.size = 5
        path = self.tarball([(info, b"boom\n")])
        self.assert_refused([path], "'..'")
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "..", "etc", "cron.d", "evil")))

    def test_tar_symlink_member(self):
        info = tarfile.TarInfo("b/raw/kernel.log")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/shadow"
        path = self.tarball([(info, None)])
        self.assert_refused([path], "link")

    def test_not_a_tarball(self):
        path = os.path.join(self.tmp, "junk.tar.gz")
        with open(path, "wb") as f:
            f.write(os.urandom(4096))
        self.assert_refused([path], "junk.tar.gz")

    def test_missing_log_file(self):
        self.assert_refused(["--log", os.path.join(self.tmp, "rank0.log")], "rank0.log")


class LiveCollection(unittest.TestCase):
    ROOT = os.path.join(FIXTURES, "sysroots", "container-dev-shm-64mb")

    def test_collect_then_diagnose_matches_live_diagnose(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "bundle")
            p = run(["--root", self.ROOT, "collect", "--out", out])
            self.assertIn(p.returncode, (0, 3), p.stderr)
            with open(os.path.join(out, "manifest.json")) as f:
                m = json.load(f)
            self.assertEqual(m["format"], "ccdiag-bundle")
            self.assertEqual(m["host"], "trainer-pod-7f9c")
            self.assertEqual(m["kernel"], "5.15.0-1063-aws")
            with open(os.path.join(out, "evidence.json")) as f:
                ev = json.load(f)
            kinds = {e["kind"]: e for e in ev["evidence"]}
            self.assertEqual(kinds["host.dev_shm"]["data"]["size_bytes"], 64 << 20)
            self.assertEqual(kinds["host.versions"]["data"]["nccl_version"], "2.21.5")
            self.assertTrue(os.path.exists(os.path.join(out, "raw", "kernel.log")))
            post, _ = run_json(["diagnose", out])
            live, _ = run_json(["--root", self.ROOT, "diagnose"])
            self.assertEqual(post["verdict"]["root_cause"], live["verdict"]["root_cause"])
            # A 64 MiB /dev/shm alone is a lead, not a verdict.
            self.assertNotEqual(live["verdict"]["root_cause"], "container_shm_too_small")
            self.assertIn("container_shm_too_small",
                          [a["root_cause"] for a in live["alternatives"]])

    def test_collect_refuses_unwritable_out(self):
        p = run(["--root", self.ROOT, "collect", "--out", "/proc/ccdiag-cannot-write"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("ccdiag: error:", p.stderr)

    def test_a_fifo_as_kernel_log_is_refused_before_anything_blocks(self):
        # A FIFO with no writer blocks open() and read() forever, like a read on a
        # hung network filesystem. The bounded reader (docs/security.md) refuses
        # it as an input error before any collector runs, in far less than --timeout.
        with tempfile.TemporaryDirectory() as tmp:
            fifo = os.path.join(tmp, "kmsg.fifo")
            os.mkfifo(fifo)
            start = time.monotonic()
            p = run(["--root", self.ROOT, "--kernel-log", fifo, "--timeout", "2", "diagnose"], timeout=30)
            took = time.monotonic() - start
            self.assertLess(took, 2 + 1.0, f"diagnose took {took:.2f}s with --timeout 2")
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
            self.assertIn("is a FIFO; refused", p.stderr)
            self.assertEqual(p.stdout, "")

if __name__ == "__main__":
    unittest.main()
