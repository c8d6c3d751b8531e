"""Adversarial inputs (issue 22, docs/security.md): ccdiag runs as root and reads
bundles, logs, cores and process environments other people made. Every input
class below must end with the documented exit code, within --timeout + 1 s,
with bounded peak memory, writing nothing outside its output directory and
printing no secret.

Each child is measured with wait4(2): its own wall time and peak RSS."""
import gzip
import io
import json
import os
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cli"))
from ccdiag_test import BIN, EXAMPLES, FIXTURES  # noqa: E402

TIMEOUT = 2.0  # --timeout given to every command here
SLACK = 1.0    # the bound: wall time within --timeout + 1 s
MAX_RSS_MB = 400
HEALTHY = os.path.join(EXAMPLES, "healthy-8gpu-node")
TORCHRUN = os.path.join(FIXTURES, "sysroots", "ranks-torchrun-2gpu-secrets")
IS_ROOT = os.geteuid() == 0


class Outcome:
    def __init__(self, rc, stdout, stderr, wall, maxrss_mb):
        self.returncode, self.stdout, self.stderr, self.wall, self.maxrss_mb = rc, stdout, stderr, wall, maxrss_mb


def measured(args, env=None, limit=30.0, user=None, tmpdir=None, cwd=None):
    """Runs ccdiag; returns its exit code, output, wall time and peak RSS (MiB).
    The child gets TMPDIR=tmpdir and no XDG_RUNTIME_DIR, so every temporary
    directory it makes is visible to the test."""
    full_env = dict(os.environ, NO_COLOR="1")
    full_env.pop("XDG_RUNTIME_DIR", None)
    if tmpdir:
        full_env["TMPDIR"] = tmpdir
    if env:
        full_env.update(env)

    def demote():
        if user is not None:
            os.setgroups([])
            os.setgid(user)
            os.setuid(user)

    t0 = time.monotonic()
    p = subprocess.Popen([BIN] + list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=full_env, preexec_fn=demote, cwd=cwd)
    out, err = [], []
    readers = [threading.Thread(target=lambda: out.append(p.stdout.read())),
               threading.Thread(target=lambda: err.append(p.stderr.read()))]
    for r in readers:
        r.start()
    killer = threading.Timer(limit, lambda: os.kill(p.pid, signal.SIGKILL))
    killer.start()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    killer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    for r in readers:
        r.join()
    p.stdout.close()
    p.stderr.close()
    return Outcome(p.returncode, out[0].decode(errors="replace"), err[0].decode(errors="replace"), wall,
                   ru.ru_maxrss / 1024.0)


def tree(path):
    """Every path under `path` with its size: to prove nothing was written."""
    found = {}
    for d, dirs, files in os.walk(path):
        for n in dirs + files:
            p = os.path.join(d, n)
            st = os.lstat(p)
            found[os.path.relpath(p, path)] = (st.st_mode, st.st_size)
    return found


class Adversarial(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ccdiag-adv-")
        os.chmod(self.tmp, 0o755)
        self.scratch = os.path.join(self.tmp, "scratch")  # TMPDIR of the child
        os.mkdir(self.scratch)
        os.chmod(self.scratch, 0o1777)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def bundle(self, name="b"):
        d = os.path.join(self.tmp, name)
        shutil.copytree(HEALTHY, d)
        return d

    def check(self, o, codes, what, one_line=True):
        """The common bar: exit code, time, memory, no leftovers in TMPDIR."""
        if isinstance(codes, int):
            codes = (codes,)
        self.assertIn(o.returncode, codes, f"{what}: rc={o.returncode} stderr={o.stderr[-2000:]}")
        self.assertLess(o.wall, TIMEOUT + SLACK, f"{what}: took {o.wall:.1f} s")
        self.assertLess(o.maxrss_mb, MAX_RSS_MB, f"{what}: peak RSS {o.maxrss_mb:.0f} MiB")
        if o.returncode == 2 and one_line:
            # CLI11's parse errors add its usual "Run with --help" line.
            lines = [l for l in o.stderr.splitlines() if l.strip() and not l.startswith("Run with --help")]
            self.assertEqual(len(lines), 1, f"{what}: expected one error line, got {o.stderr!r}")
            self.assertTrue(lines[0].startswith("ccdiag: error:") or "--" in lines[0], lines[0])
        self.wait_no_leftovers(what)

    def wait_no_leftovers(self, what):
        # The cleanup process removes what a killed ccdiag left: give it a moment
        # (up to 10 s: on a loaded 2-core host it may be scheduled late).
        deadline = time.monotonic() + 10
        while True:
            left = [n for n in os.listdir(self.scratch) if n.startswith("ccdiag-")]
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        if not left:
            return
        self.fail(f"{what}: left {left} in TMPDIR")

    def run_cmd(self, args, **kw):
        return measured(["--timeout", str(TIMEOUT)] + args, tmpdir=self.scratch, **kw)

    # -- 2. deep JSON -------------------------------------------------------

    def test_deep_json_manifest_and_evidence(self):
        """A 100,000-deep manifest or evidence crashed diagnose/analyze/prom (SIGSEGV)."""
        deep = "[" * 100000 + "]" * 100000
        for victim in ("manifest.json", "evidence.json"):
            d = self.bundle(victim.split(".")[0])
            path = os.path.join(d, victim)
            with open(path) as f:
                doc = json.load(f)
            text = json.dumps(doc)
            key = '"host": ' if victim == "manifest.json" else '"evidence": ['
            text = text.replace(key, '"deep": ' + deep + ", " + key, 1)
            with open(path, "w") as f:
                f.write(text)
            prom_out = os.path.join(self.tmp, "m.prom")
            for args in (["diagnose", d], ["analyze", d], ["prom", "--out", prom_out, d]):
                o = self.run_cmd(args)
                # analyze lists every unreadable host before its one-line error.
                self.check(o, 2, f"{args[0]} with a deep {victim}", one_line=args[0] != "analyze")
                self.assertIn("nested deeper", o.stderr)
                self.assertFalse(os.path.exists(prom_out))

    # -- 3. hangs -----------------------------------------------------------

    def fifo(self, path):
        os.mkfifo(path)
        return path

    def test_fifo_as_bundle_json(self):
        """A FIFO as manifest.json / evidence.json hung diagnose past --timeout."""
        for victim in ("manifest.json", "evidence.json"):
            d = self.bundle(victim.split(".")[0])
            os.unlink(os.path.join(d, victim))
            self.fifo(os.path.join(d, victim))
            o = self.run_cmd(["diagnose", d])
            self.check(o, 2, f"FIFO {victim}")
            self.assertIn("FIFO", o.stderr)

    def test_fifo_as_log_or_kernel_log(self):
        """A FIFO given to logs, diagnose --log, collect --log or --kernel-log never returned."""
        f = self.fifo(os.path.join(self.tmp, "rank0.log"))
        out = os.path.join(self.tmp, "out")
        for args in (["logs", f], ["diagnose", "--log", f],
                     ["--root", TORCHRUN, "collect", "--out", out, "--log", f],
                     ["--kernel-log", f, "--root", TORCHRUN, "collect", "--out", out + "2"],
                     ["--kernel-log", f, "--root", TORCHRUN, "probe", "kernel"]):
            o = self.run_cmd(args)
            self.check(o, 2, " ".join(args[:3]))
            self.assertIn("FIFO", o.stderr)
        self.assertFalse(os.path.exists(out + "2"))

    def core(self, loads, phnum=None):
        """An ELF64 x86_64 core: PT_LOAD headers (vaddr, memsz, filesz, data)."""
        phnum = len(loads) if phnum is None else phnum
        ehdr = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
        ehdr += struct.pack("<HHIQQQIHHHHHH", 4, 62, 1, 0, 64, 0, 0, 64, 56, phnum, 64, 0, 0)
        data_off = 64 + 56 * phnum
        phdrs, blob, blob_len = [], [], 0
        for i in range(phnum):
            vaddr, memsz, filesz, data = loads[i % len(loads)]
            vaddr += i * (memsz + 4096)
            off = data_off + blob_len if filesz else 0
            phdrs.append(struct.pack("<IIQQQQQQ", 1, 6, off, vaddr, 0, filesz, memsz, 4096))
            blob.append(data[:filesz])
            blob_len += filesz
        path = os.path.join(self.tmp, f"core.{phnum}")
        with open(path, "wb") as f:
            f.write(ehdr + b"".join(phdrs) + b"".join(blob))
        return path

    def test_crafted_cores(self):
        """nccl attach --core on a PT_LOAD with p_memsz 2^50, or 65535 program
        headers, scanned page by page with no deadline: never returned."""
        page = bytes(4096)
        for path in (self.core([(0x10000000, 1 << 50, 4096, page)]),
                     self.core([(0x10000000, 1 << 30, 0, b"")], phnum=0xFFFF)):
            # --nccl-lib names a library (any file): without one ccdiag stops at
            # "no libnccl mapped" before scanning, as it would on a real core
            # whose NT_FILE note names none.
            o = self.run_cmd(["nccl", "attach", "--core", path, "--nccl-lib", path, "--json"])
            self.check(o, (0, 1, 3), os.path.basename(path))

    def test_ras_that_never_answers_keeps_the_rings(self):
        """A RAS port that accepts and never answers made the nccl collector miss
        its budget at --timeout < 3.6 s, dropping the flight-recorder rings."""
        frdir = os.path.join(self.tmp, "fr")
        os.mkdir(frdir)
        with open(os.path.join(frdir, "ccdiag-nccl-host-1234.fr"), "wb") as f:
            f.write(b"ring bytes")
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(4)
        held = []
        stop = threading.Event()

        def accept():
            srv.settimeout(0.2)
            while not stop.is_set():
                try:
                    held.append(srv.accept()[0])
                except OSError:
                    pass
        t = threading.Thread(target=accept)
        t.start()
        try:
            out = os.path.join(self.tmp, "live")
            o = self.run_cmd(["collect", "--out", out],
                             env={"CCDIAG_NCCL_DIR": frdir, "NCCL_RAS_ADDR": "127.0.0.1:%d" % srv.getsockname()[1]})
        finally:
            stop.set()
            t.join()
            for c in held:
                c.close()
            srv.close()
        self.check(o, (0, 3), "collect with a silent RAS port", one_line=False)
        self.assertTrue(os.path.exists(os.path.join(out, "raw", "nccl", "fr", "ccdiag-nccl-host-1234.fr.b64")),
                        os.listdir(os.path.join(out, "raw")) if os.path.isdir(os.path.join(out, "raw")) else o.stderr)
        with open(os.path.join(out, "evidence.json")) as f:
            unchecked = json.load(f)["unchecked"]
        self.assertTrue(any(u["what"] == "NCCL RAS" for u in unchecked), unchecked)

    def test_probe_budget_is_the_timeout(self):
        """probe budgets had floors above --timeout (rdma: interval + 4 s, kernel 6 s,
        others 4 s): `probe rdma --interval 3 --timeout 2` ran past --timeout."""
        root = os.path.join(FIXTURES, "sysroots", "roce-counters-rising")
        o = self.run_cmd(["--root", root, "probe", "rdma", "--interval", "3"])
        self.check(o, 2, "probe rdma with --interval past --timeout")
        self.assertIn("--interval must be shorter than --timeout", o.stderr)
        for what in ("kernel", "pcie", "config"):
            o = self.run_cmd(["--root", root, "probe", what])
            self.check(o, (0, 1, 3), "probe " + what, one_line=False)

    # -- 4. memory ----------------------------------------------------------

    @unittest.skipUnless(IS_ROOT, "mknod of a character device needs root")
    def test_dev_zero_as_manifest(self):
        """/dev/zero as manifest.json: read whole before the size check -> bad_alloc, exit 4."""
        d = self.bundle()
        os.unlink(os.path.join(d, "manifest.json"))
        os.mknod(os.path.join(d, "manifest.json"), 0o644 | stat.S_IFCHR, os.makedev(1, 5))
        o = self.run_cmd(["diagnose", d])
        self.check(o, 2, "/dev/zero manifest")
        self.assertIn("character device", o.stderr)

    def sparse(self, path, size, tail=b""):
        with open(path, "wb") as f:
            f.truncate(size - len(tail))
            f.seek(size - len(tail))
            f.write(tail)
        return path

    def test_huge_kernel_logs_are_read_by_their_tail(self):
        """raw/kernel.log had no cap (1.5 GB -> 6 GB RSS); --kernel-log was read whole."""
        xid = b"\n[  100.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"
        d = self.bundle()
        self.sparse(os.path.join(d, "raw", "kernel.log"), 1536 << 20, xid)
        o = self.run_cmd(["diagnose", "--json", d])
        self.check(o, 1, "1.5 GB raw/kernel.log")
        self.assertIn("fallen off the bus", o.stdout)  # the newest part is what is analysed
        big = self.sparse(os.path.join(self.tmp, "kern.log"), 1 << 30, xid)
        out = os.path.join(self.tmp, "out")
        o = self.run_cmd(["--kernel-log", big, "--root", TORCHRUN, "collect", "--out", out])
        self.check(o, (0, 3), "1 GB --kernel-log", one_line=False)
        self.assertLessEqual(os.path.getsize(os.path.join(out, "raw", "kernel.log")), 8 << 20)

    def tarball(self, name, members, gz=True):
        """members: (TarInfo, bytes or None); written with the declared sizes as given."""
        raw = io.BytesIO()
        for info, data in members:
            raw.write(info.tobuf(format=tarfile.GNU_FORMAT))  # GNU: sizes past 8 GiB
            if data:
                raw.write(data + bytes(-len(data) % 512))
        raw.write(bytes(1024))
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as f:
            f.write(gzip.compress(raw.getvalue(), 1) if gz else raw.getvalue())
        return path

    def member(self, name, size=0, type_=tarfile.REGTYPE):
        info = tarfile.TarInfo(name)
        info.size = size
        info.type = type_
        return info

    def test_tar_member_count_and_size_caps(self):
        """1,000,000 empty members were extracted (175 s); one 9 GiB member wrote 8 GB first."""
        many = self.tarball("many.tar.gz", [(self.member(f"b/raw/f{i}"), None) for i in range(200000)])
        o = self.run_cmd(["diagnose", many])
        self.check(o, 2, "200,000 members")
        # Refused at 10,000 members, or earlier at --timeout on a slow disk.
        self.assertRegex(o.stderr, "more than 10000 members|within --timeout")
        huge = self.tarball("huge.tar.gz", [(self.member("b/raw/kernel.log", 9 << 30), bytes(1 << 20))])
        o = self.run_cmd(["diagnose", huge])
        self.check(o, 2, "a 9 GiB member")
        self.assertIn("expands beyond", o.stderr)

    def test_tar_header_libarchive_has_no_message_for(self):
        """Found by fuzz/bundle_reader_fuzz.cpp: a pax header libarchive rejects
        without an error message made ccdiag call strlen(NULL) (SIGSEGV)."""
        src = os.path.join(os.path.dirname(__file__), "..", "fixtures", "adversarial", "pax-header-no-error-message.tar")
        path = os.path.join(self.tmp, "pax.tar")
        shutil.copy(src, path)
        o = self.run_cmd(["diagnose", path])
        self.check(o, 2, "pax header without an error message")

    # -- 5. evidence silently lost -----------------------------------------

    def bundle_with_xid_log(self, name):
        d = self.bundle(name)
        os.makedirs(os.path.join(d, "raw", "logs"), exist_ok=True)
        with open(os.path.join(d, "raw", "logs", "rank0.log"), "w") as f:
            f.write("node1:42:42 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>\n")
        for root, dirs, files in os.walk(self.tmp):
            for n in dirs:
                os.chmod(os.path.join(root, n), 0o755)
            for n in files:
                os.chmod(os.path.join(root, n), 0o644)
        return d

    def test_unreadable_raw_is_unchecked_not_health(self):
        """An unreadable raw/ or raw/logs/ gave no_problem_found, exit 0, nothing unchecked."""
        for sub in ("raw", os.path.join("raw", "logs")):
            d = self.bundle_with_xid_log(sub.replace(os.sep, "_"))
            os.chmod(os.path.join(d, sub), 0)
            o = self.run_cmd(["diagnose", "--json", d], user=65534 if IS_ROOT else None)
            self.check(o, 3, f"unreadable {sub}")
            doc = json.loads(o.stdout)
            self.assertTrue(any(sub.replace(os.sep, "/") in u["what"] for u in doc["unchecked"]), doc["unchecked"])
            self.assertLess(doc["verdict"]["confidence"], 0.7)
            os.chmod(os.path.join(d, sub), 0o755)

    def test_raw_symlink_out_of_the_bundle(self):
        """A `raw` that is itself a symlink out of the bundle was walked (outside paths in errors)."""
        outside = os.path.join(self.tmp, "elsewhere-7731")
        os.makedirs(outside)
        with open(os.path.join(outside, "kernel.log"), "w") as f:
            f.write("[  1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.\n")
        d = self.bundle()
        shutil.rmtree(os.path.join(d, "raw"))
        os.symlink(outside, os.path.join(d, "raw"))
        o = self.run_cmd(["diagnose", d])
        self.check(o, 2, "raw -> outside")
        self.assertIn("raw is a symlink", o.stderr)
        self.assertNotIn("elsewhere-7731", o.stderr + o.stdout)

    def test_duplicate_tar_member(self):
        """A duplicate tar member silently replaced the first."""
        with open(os.path.join(HEALTHY, "manifest.json"), "rb") as f:
            manifest = f.read()
        with open(os.path.join(HEALTHY, "evidence.json"), "rb") as f:
            evidence = f.read()
        good = b"[  1.0] usb 1-1: new device\n"
        bad = b"[  1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"
        path = self.tarball("dup.tar.gz", [
            (self.member("b/manifest.json", len(manifest)), manifest),
            (self.member("b/evidence.json", len(evidence)), evidence),
            (self.member("b/raw/kernel.log", len(good)), good),
            (self.member("b/raw/kernel.log", len(bad)), bad)])
        o = self.run_cmd(["diagnose", path])
        self.check(o, 2, "duplicate member")
        self.assertIn("appears twice", o.stderr)

    def test_truncated_tar_gz(self):
        """A tar.gz cut short is refused with a note, never read as a complete bundle."""
        src = self.bundle()
        path = os.path.join(self.tmp, "cut.tar.gz")
        with tarfile.open(path, "w:gz") as t:
            t.add(src, arcname="b")
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(data[: len(data) - 40])
        o = self.run_cmd(["diagnose", path])
        self.check(o, 2, "truncated tar.gz")
        self.assertIn("truncated", o.stderr.lower())

    def test_truncated_gz_log(self):
        """A .log.gz cut short was analysed as if complete (exit 0, no note)."""
        data = b"".join(b"node1:42:42 [0] NCCL INFO line %d\n" % i for i in range(20000))
        g = gzip.compress(data)
        path = os.path.join(self.tmp, "rank0.log.gz")
        with open(path, "wb") as f:
            f.write(g[: len(g) // 2])
        for args in (["logs", path], ["diagnose", "--log", path]):
            o = self.run_cmd(args)
            self.check(o, 2, " ".join(args[:2]) + " truncated gz")
            self.assertIn("truncated", o.stderr)

    # -- 6. secrets ---------------------------------------------------------

    SECRETS = {
        "NCCL_COMM_ID": ("trainer:Hunter2pw@10.0.0.7:29500", "Hunter2pw"),
        "TORCHELASTIC_RUN_ID": ("admin:Sup3rpass@store", "Sup3rpass"),
        "NCCL_DEBUG_SUBSYS": ("Authorization: Bearer abcdefghijklmnop123", "abcdefghijklmnop123"),
        "MASTER_ADDR": ("https://u:pa/ss99w0rd@host.example/x", "pa/ss99w0rd"),
        "NCCL_NET_PLUGIN": ("https://h.example/p?token=qqqtokval987", "qqqtokval987"),
        "NCCL_TUNER_PLUGIN": ("https://h.example/p?a=1&key=kkkeyval321", "kkkeyval321"),
        "SLURM_DBD_PASS": ("dbdpassword77", "dbdpassword77"),
        # A long lowercase key (one character class): only its entropy gives it away.
        "NCCL_PROXY_HINT": ("qhxzjvwkdmtplrbfngcsyaueiokzqmvhxbtrnlw", None),
    }

    def secret_root(self):
        root = os.path.join(self.tmp, "root")
        shutil.copytree(TORCHRUN, root, symlinks=True)
        env_path = os.path.join(root, "proc", "4101", "environ")
        with open(env_path, "rb") as f:
            entries = [e for e in f.read().split(b"\0") if e]
        names = set(self.SECRETS)
        entries = [e for e in entries if e.split(b"=", 1)[0].decode() not in names]
        for k, (v, _) in self.SECRETS.items():
            entries.append(f"{k}={v}".encode())
        with open(env_path, "wb") as f:
            f.write(b"\0".join(entries) + b"\0")
        return root

    def secret_words(self):
        return [s if s else v for v, s in self.SECRETS.values()]

    def assert_no_secret(self, text, where):
        for s in self.secret_words():
            self.assertNotIn(s, text, f"{s!r} leaked into {where}")

    def test_no_secret_in_ranks_bundle_or_tar_stream(self):
        """Userinfo without a scheme, bearer values in allowlisted variables, URL
        passwords with '/', ?token= values, *_PASS names and long lowercase tokens
        reached ranks --json, bundles and collect --tar streams."""
        root = self.secret_root()
        for args in (["ranks", "--json"], ["ranks"]):
            o = self.run_cmd(["--root", root] + args)
            self.check(o, 0, " ".join(args))
            self.assert_no_secret(o.stdout + o.stderr, " ".join(args))
        o = self.run_cmd(["--root", root, "ranks", "--json"])
        env = {r["pid"]: r["env"] for r in json.loads(o.stdout)["ranks"]}[4101]
        for k in self.SECRETS:
            self.assertEqual(env.get(k, "<redacted>"), "<redacted>", k)
        self.assertEqual(env["NCCL_SOCKET_IFNAME"], "eth0")  # configuration stays readable
        self.assertEqual(env["RANK"], "0")

        out = os.path.join(self.tmp, "bundle")
        o = self.run_cmd(["--root", root, "collect", "--out", out])
        self.check(o, (0, 3), "collect", one_line=False)
        for d, _, files in os.walk(out):
            for n in files:
                with open(os.path.join(d, n), errors="replace") as f:
                    self.assert_no_secret(f.read(), os.path.join(d, n))
        tar_path = os.path.join(self.tmp, "stream.tar.gz")
        with open(tar_path, "wb") as f:
            p = subprocess.run([BIN, "--timeout", str(TIMEOUT), "--root", root, "collect", "--tar"], stdout=f,
                               stderr=subprocess.PIPE, timeout=30)
        self.assertIn(p.returncode, (0, 3))
        with tarfile.open(tar_path) as t:
            for m in t.getmembers():
                if m.isfile():
                    self.assert_no_secret(t.extractfile(m).read().decode(errors="replace"), "tar " + m.name)

    # -- 7. leftovers -------------------------------------------------------

    def slow_tarball(self):
        # Many small members: extraction takes a while, so a signal lands mid-way.
        return self.tarball("slow.tar.gz", [(self.member(f"b/raw/logs/r{i}.log", 16384), bytes(16384))
                                            for i in range(9000)])

    def test_signals_leave_no_temporary_directory(self):
        """SIGTERM/SIGINT/SIGHUP/SIGKILL of diagnose left /tmp/ccdiag-bundle-* behind."""
        path = self.slow_tarball()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL):
            env = dict(os.environ, TMPDIR=self.scratch, NO_COLOR="1")
            env.pop("XDG_RUNTIME_DIR", None)
            p = subprocess.Popen([BIN, "--timeout", "60", "diagnose", path], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(200):  # until the extraction directory exists
                if any(n.startswith("ccdiag-bundle-") for n in os.listdir(self.scratch)):
                    break
                time.sleep(0.01)
            self.assertTrue(any(n.startswith("ccdiag-bundle-") for n in os.listdir(self.scratch)), sig)
            p.send_signal(sig)
            p.wait(timeout=10)
            self.wait_no_leftovers(f"diagnose killed by {sig!r}")

    def test_killed_collect_leaves_no_live_dir_and_no_child(self):
        """A killed live diagnose left /tmp/ccdiag-live-* and collector children blocked forever."""
        env = dict(os.environ, TMPDIR=self.scratch, NO_COLOR="1")
        env.pop("XDG_RUNTIME_DIR", None)
        p = subprocess.Popen([BIN, "--timeout", "8", "diagnose"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        for _ in range(300):
            if any(n.startswith("ccdiag-live-") for n in os.listdir(self.scratch)):
                break
            time.sleep(0.01)
        time.sleep(0.3)  # collectors are running in their children now
        kids = [int(x) for x in os.listdir("/proc") if x.isdigit() and self.parent_of(int(x)) == p.pid]
        p.kill()
        p.wait(timeout=10)
        self.wait_no_leftovers("killed live diagnose")
        deadline = time.monotonic() + 3
        alive = kids
        while alive and time.monotonic() < deadline:
            alive = [k for k in kids if self.is_ccdiag(k)]
            time.sleep(0.05)
        self.assertEqual(alive, [], "collector children outlived a killed ccdiag")

    @staticmethod
    def parent_of(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            return -1

    @staticmethod
    def is_ccdiag(pid):
        try:
            return os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath(BIN)
        except OSError:
            return False

    # -- 8. undefined behaviour --------------------------------------------

    def test_since_overflow_is_a_usage_error(self):
        """--since 777777777777777d overflowed int64 and was accepted."""
        for v in ("777777777777777d", "9223372036854775807s", "@99999999999999999"):
            o = self.run_cmd(["--root", TORCHRUN, "probe", "kernel", "--since", v])
            self.check(o, 2, "--since " + v)
            self.assertIn("--since", o.stderr)


if __name__ == "__main__":
    unittest.main()
