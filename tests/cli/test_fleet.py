"""`ccdiag fleet collect` through a real pdsh (Debian's, `-R exec` local mode:
each "host" runs a local command with %h substituted) on 16 fake nodes, each a
fixture root for `ccdiag --root`; node07's kernel log holds Xid 79, node15
refuses the connection, node16 hangs past the per-host timeout. Then
`ccdiag analyze` on the result must name node07. Also: collect --tar round
trip, exact command lines for clush / srun / kubectl."""
import json
import os
import shutil
import stat
import subprocess
import tempfile
import unittest

from ccdiag_test import BIN, run, run_json, skip_unless
from fleet_fixtures import make_node_root

skip_unless(shutil.which("pdsh"), "pdsh not installed (Debian package pdsh)")

HEALTHY_KMSG = [
    "6,1702,86400123456,-;nvidia-peermem: module is loaded",
    "6,1704,86401123456,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024",
]
XID79_KMSG = HEALTHY_KMSG + [
    "4,1731,8123617000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=41233, name=python, GPU has fallen off the bus.",
    "3,1732,8123617104,-;NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.",
]

# Stands in for the network: node15 is unreachable, node16 hangs; the others
# run the real ccdiag.
REMOTE = """#!/bin/sh
host="$1"; shift
case "$host" in
  node15) echo "ssh: connect to host node15 port 22: No route to host" >&2; exit 255 ;;
  node16) exec sleep 600 ;;
esac
exec "$@"
"""


class PdshSixteenHosts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        roots = os.path.join(cls.tmp, "roots")
        for i in range(1, 17):
            h = f"node{i:02d}"
            make_node_root(os.path.join(roots, h), h, XID79_KMSG if h == "node07" else HEALTHY_KMSG)
        remote = os.path.join(cls.tmp, "remote.sh")
        with open(remote, "w") as f:
            f.write(REMOTE)
        os.chmod(remote, os.stat(remote).st_mode | stat.S_IEXEC)
        cls.out = os.path.join(cls.tmp, "out")
        cls.p = run(["fleet", "collect", "-w", "node[01-16]", "--launcher", "pdsh", "--rcmd", "exec", "--fanout", "8",
                     "--per-host-timeout", "6", "--remote-ccdiag", remote,
                     "--remote-args", f"%h {BIN} --timeout 5 --root {roots}/%h --kernel-log {roots}/%h/kmsg.log",
                     "--out", cls.out], timeout=120)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_fourteen_hosts_answered_two_listed_as_failed(self):
        self.assertEqual(self.p.returncode, 3, self.p.stdout + self.p.stderr)
        self.assertIn("fleet: 14 of 16 host(s) answered via pdsh", self.p.stdout)
        with open(os.path.join(self.out, "fleet.json")) as f:
            rec = json.load(f)
        self.assertEqual(rec["launcher"], "pdsh")
        self.assertEqual(rec["command"][:3], ["pdsh", "-R", "exec"])
        failed = {f["host"]: f["reason"] for f in rec["failed"]}
        self.assertEqual(set(failed), {"node15", "node16"})
        self.assertIn("No route to host", failed["node15"])
        self.assertIn("no bundle stream", failed["node15"])
        self.assertIn("node16", failed)
        for i in range(1, 15):
            h = f"node{i:02d}"
            with open(os.path.join(self.out, h, "manifest.json")) as f:
                self.assertEqual(json.load(f)["host"], h)
            self.assertTrue(os.path.exists(os.path.join(self.out, h, "raw", "kernel.log")))
        self.assertFalse(os.path.exists(os.path.join(self.out, "node15")))

    def test_analyze_names_the_culprit_and_lists_the_silent_hosts(self):
        doc, _ = run_json(["analyze", self.out], expect_rc=1)
        v = doc["verdict"]
        self.assertEqual(v["root_cause"], "gpu_fell_off_bus")
        self.assertEqual(v["culprit"]["host"], "node07")
        self.assertEqual(v["culprit"]["gpu"], "0000:3b:00.0")
        na = {h["host"]: h["status"] for h in doc["fleet"]["not_answered"]}
        self.assertEqual(na, {"node15": "no_bundle", "node16": "no_bundle"})
        self.assertEqual(doc["fleet"]["hosts_answered"], 14)


class CollectTarStream(unittest.TestCase):
    def test_tar_stream_round_trip(self):
        with tempfile.TemporaryDirectory() as tmp:
            make_node_root(os.path.join(tmp, "r"), "node07", XID79_KMSG)
            tgz = os.path.join(tmp, "node07.tar.gz")
            with open(tgz, "wb") as f:
                p = subprocess.run([BIN, "--root", os.path.join(tmp, "r"), "--kernel-log", os.path.join(tmp, "r", "kmsg.log"),
                                    "collect", "--tar"], stdout=f, stderr=subprocess.PIPE, timeout=60)
            self.assertIn(p.returncode, (0, 3), p.stderr)
            names = subprocess.run(["tar", "-tzf", tgz], capture_output=True, text=True, check=True).stdout.split()
            self.assertIn("node07/manifest.json", names)
            self.assertIn("node07/raw/kernel.log", names)
            doc, _ = run_json(["diagnose", tgz], expect_rc=1)
            self.assertEqual(doc["verdict"]["root_cause"], "gpu_fell_off_bus")

    def test_base64_stream_has_markers_and_decodes(self):
        with tempfile.TemporaryDirectory() as tmp:
            make_node_root(os.path.join(tmp, "r"), "node03", HEALTHY_KMSG)
            p = subprocess.run([BIN, "--root", os.path.join(tmp, "r"), "--kernel-log", os.path.join(tmp, "r", "kmsg.log"),
                                "collect", "--tar", "--base64"], capture_output=True, text=True, timeout=60)
            lines = p.stdout.splitlines()
            self.assertEqual(lines[0], "CCDIAG-BUNDLE-TAR-BEGIN 1 node03")
            self.assertTrue(lines[-1].startswith("CCDIAG-BUNDLE-TAR-END "))
            self.assertTrue(all(len(l) <= 76 for l in lines[1:-1]))
            import base64
            data = base64.b64decode("".join(lines[1:-1]))
            self.assertEqual(len(data), int(lines[-1].split()[1]))
            self.assertEqual(data[:2], b"\x1f\x8b")  # gzip

    def test_tar_needs_no_out_and_base64_needs_tar(self):
        p = run(["collect", "--base64", "--out", "/tmp/x"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("--base64 needs --tar", p.stderr)


class LauncherCommandLines(unittest.TestCase):
    def dry(self, *args):
        p = run(["fleet", "collect", "--out", "/tmp/inc42", "--dry-run"] + list(args))
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.strip().splitlines()

    def test_pdsh(self):
        (line,) = self.dry("-w", "gpu[001-004]", "--fanout", "64", "--per-host-timeout", "60")
        self.assertEqual(line, "pdsh -R ssh -S -f 64 -t 10 -u 75 -w ^/tmp/inc42/.fleet/hosts "
                               "timeout -k 5 60 ccdiag collect --tar --base64")

    def test_clush_gets_one_command_string(self):
        (line,) = self.dry("--launcher", "clush", "-w", "gpu[001-004]", "--remote-args", "--timeout 20")
        self.assertEqual(line, "clush -R ssh -S -n -f 32 -t 10 -u 135 --hostfile=/tmp/inc42/.fleet/hosts "
                               "'timeout -k 5 120 ccdiag --timeout 20 collect --tar --base64'")

    def test_srun_attaches_with_overlap(self):
        (line,) = self.dry("--launcher", "srun", "--jobid", "8812", "-w", "gpu[011-012]")
        self.assertEqual(line, "srun --jobid=8812 --overlap -N 2 --ntasks-per-node=1 -K0 --time=4 -w /tmp/inc42/.fleet/hosts "
                               "-o /tmp/inc42/.fleet/%N.out -e /tmp/inc42/.fleet/%N.err "
                               "timeout -k 5 120 ccdiag collect --tar --base64")

    def test_srun_uses_the_allocation_node_list(self):
        p = run(["fleet", "collect", "--out", "/tmp/inc42", "--dry-run", "--launcher", "srun"],
                env={"SLURM_JOB_NODELIST": "gpu[001-003,010]"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(" -N 4 ", p.stdout)

    def test_kubectl_one_exec_per_pod(self):
        lines = self.dry("--launcher", "kubectl", "-n", "train", "-c", "trainer", "-w", "llm-worker-[0-1]")
        self.assertEqual(lines, [
            "kubectl exec -n train llm-worker-0 -c trainer -- timeout -k 5 120 ccdiag collect --tar --base64",
            "kubectl exec -n train llm-worker-1 -c trainer -- timeout -k 5 120 ccdiag collect --tar --base64"])

    def test_bad_inputs(self):
        p = run(["fleet", "collect", "--out", "/tmp/x", "--launcher", "mpirun", "-w", "a"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown launcher", p.stderr)
        p = run(["fleet", "collect", "--out", "/tmp/x", "-w", "node[1-"])
        self.assertEqual(p.returncode, 2)
        p = run(["fleet", "collect", "--out", "/tmp/x", "-w", "a", "--launcher-path", "/nonexistent/pdsh"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("not found", p.stderr)


@unittest.skipUnless(shutil.which("clush"), "clush not installed (Debian package clustershell)")
class ClushExecWorker(unittest.TestCase):
    def test_clush_exec_gathers_bundles(self):
        with tempfile.TemporaryDirectory() as tmp:
            roots = os.path.join(tmp, "roots")
            for h in ("node01", "node02", "node03"):
                make_node_root(os.path.join(roots, h), h, HEALTHY_KMSG)
            out = os.path.join(tmp, "out")
            p = run(["fleet", "collect", "-w", "node[01-03]", "--launcher", "clush", "--rcmd", "exec",
                     "--remote-ccdiag", BIN, "--remote-args",
                     f"--timeout 5 --root {roots}/%h --kernel-log {roots}/%h/kmsg.log", "--out", out], timeout=120)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn("3 of 3 host(s) answered via clush", p.stdout)
            for h in ("node01", "node02", "node03"):
                self.assertTrue(os.path.exists(os.path.join(out, h, "manifest.json")))


# Stands in for kubectl: `get pods` prints the pods of the selector; `exec -n NS POD [-c C] -- CMD...` runs
# CMD inside the pod's filesystem (here: its fixture root as the working directory); pod "llm-worker-2"
# fails the way kubectl does when the container is gone.
FAKE_KUBECTL = """#!/bin/sh
roots="$FAKE_K8S_ROOTS"
if [ "$1" = get ]; then printf 'llm-worker-0\\nllm-worker-1\\nllm-worker-2\\n'; exit 0; fi
[ "$1" = exec ] || exit 64
pod="$4"
while [ "$1" != -- ]; do shift; done; shift
if [ "$pod" = llm-worker-2 ]; then echo 'error: unable to upgrade connection: container not found ("trainer")' >&2; exit 1; fi
cd "$roots/$pod" || exit 1
exec "$@"
"""


class KubectlExec(unittest.TestCase):
    def test_one_exec_per_pod_and_failed_pods_listed(self):
        with tempfile.TemporaryDirectory() as tmp:
            roots = os.path.join(tmp, "roots")
            for pod in ("llm-worker-0", "llm-worker-1", "llm-worker-2"):
                make_node_root(os.path.join(roots, pod), pod, XID79_KMSG if pod == "llm-worker-1" else HEALTHY_KMSG)
            fake = os.path.join(tmp, "kubectl")
            with open(fake, "w") as f:
                f.write(FAKE_KUBECTL)
            os.chmod(fake, 0o755)
            out = os.path.join(tmp, "out")
            p = run(["fleet", "collect", "--launcher", "kubectl", "--launcher-path", fake, "-n", "train",
                     "-l", "training.kubeflow.org/job-name=llm", "-c", "trainer", "--remote-ccdiag", BIN,
                     "--remote-args", "--timeout 5 --root . --kernel-log kmsg.log", "--out", out],
                    env={"FAKE_K8S_ROOTS": roots}, timeout=120)
            self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
            self.assertIn("2 of 3 host(s) answered via kubectl", p.stdout)
            with open(os.path.join(out, "fleet.json")) as f:
                rec = json.load(f)
            self.assertEqual(rec["failed"][0]["host"], "llm-worker-2")
            self.assertIn("container not found", rec["failed"][0]["reason"])
            doc, _ = run_json(["analyze", out], expect_rc=1)
            self.assertEqual(doc["verdict"]["root_cause"], "gpu_fell_off_bus")
            self.assertEqual(doc["verdict"]["culprit"]["host"], "llm-worker-1")


if __name__ == "__main__":
    unittest.main()
