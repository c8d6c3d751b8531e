"""`ccdiag nccl attach` against real processes and real core files.

Each target is tests/programs/nccl_fake_rank: it dlopens a libnccl (the fake
one from tests/fake_nccl with its version string patched to the row's
version, or the installed NCCL) and lays out communicator and proxy images at
the offsets of one row of data/nccl-layouts.json. ccdiag knows nothing of the
target: it reads the version from the library file, picks the layout, scans
the heap for the magic pair and decodes. Every row is checked live (through
process_vm_readv) and from a core file the kernel writes when the target
aborts."""
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cli"))
from ccdiag_test import BUILD_DIR, SOURCE_DIR, run, run_json, skip_unless  # noqa: E402
from stacks_helpers import assert_running_untraced  # noqa: E402

PROGRAM = os.path.join(BUILD_DIR, "test-programs", "nccl_fake_rank")
FAKE_LIB = os.path.join(BUILD_DIR, "fake-nccl", "libnccl.so.2")
PLACEHOLDER = b"NCCL version XX.XX.XX+cudaXX.X"
SCHEMA = "nccl-attach.schema.json"
REAL_NCCL = next((p for p in (os.environ.get("CCDIAG_NCCL_LIB", ""), "/usr/local/cuda/lib64/libnccl.so.2",
                               "/usr/local/cuda/lib/libnccl.so.2") if p and os.path.exists(p)), None)

skip_unless(os.path.exists(PROGRAM) and os.path.exists(FAKE_LIB), "nccl_fake_rank or the fake libnccl not built")


def load_rows():
    with open(os.path.join(SOURCE_DIR, "data", "nccl-layouts.json")) as f:
        doc = json.load(f)
    return doc["rows"] if isinstance(doc, dict) else doc


ROWS = load_rows()


def REAL_VERSION():
    with open(REAL_NCCL, "rb") as f:
        data = f.read()
    i = data.find(b"NCCL version ")
    return data[i + 13:data.index(b"+", i)].decode()
MAGIC_ROWS = [r for r in ROWS if "ncclComm.endMagic" in r["fields"]]
OLD_ROWS = [r for r in ROWS if "ncclComm.endMagic" not in r["fields"]]


def row_for(version):
    return next(r for r in ROWS if version in r["versions"])


def can_read_memory():
    """process_vm_readv on a child needs ptrace access (Yama, capabilities)."""
    p = subprocess.Popen(["sleep", "30"])
    try:
        r = run(["nccl", "attach", str(p.pid), "--json"], timeout=30)
        return r.returncode in (0, 3) and "ptrace access" not in r.stderr
    finally:
        p.kill()
        p.wait()


def make_lib(tmp, version, cuda="13.0"):
    """A copy of the fake libnccl whose banner reads `NCCL version <version>+cuda<cuda>`."""
    d = os.path.join(tmp, "lib-" + version)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "libnccl.so.2")
    with open(FAKE_LIB, "rb") as f:
        data = f.read()
    text = f"NCCL version {version}+cuda{cuda}".encode()
    i = data.index(PLACEHOLDER)
    data = data[:i] + text + b"\0" * (len(PLACEHOLDER) - len(text)) + data[i + len(PLACEHOLDER):]
    with open(path, "wb") as f:
        f.write(data)
    return path


def build_id_span(data):
    """(offset, length) of the NT_GNU_BUILD_ID descriptor in an ELF64 file's section headers."""
    import struct
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    for i in range(shnum):
        _, sh_type, _, _, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        if sh_type != 7:  # SHT_NOTE
            continue
        pos = off
        while pos + 12 <= off + size:
            namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
            name_end = pos + 12 + ((namesz + 3) & ~3)
            if ntype == 3 and data[pos + 12:pos + 15] == b"GNU":
                return name_end, descsz
            pos = name_end + ((descsz + 3) & ~3)
    return None


def other_build(path, out):
    """A copy of the library at `path` with a different build-id (another build of the same source)."""
    with open(path, "rb") as f:
        data = bytearray(f.read())
    off, n = build_id_span(data)
    data[off:off + n] = bytes((b ^ 0x5A) for b in data[off:off + n])
    with open(out, "wb") as f:
        f.write(data)
    return out


def elf_build_id(path):
    with open(path, "rb") as f:
        data = f.read()
    off, n = build_id_span(data)
    return data[off:off + n].hex()


def ring_comm(row, rank=3, nranks=8, hash_="0x5c1e0c4a9d2f7b31", **kw):
    """Rank `rank` of a ring: recv from rank-1 on channel 1, send to rank+1 on channel 0,
    one collective (#11) in flight on the proxy: send waiting for the GPU, recv waiting for data."""
    prev, nxt = (rank - 1) % nranks, (rank + 1) % nranks
    c = {"hash": hash_, "rank": rank, "nranks": nranks, "cuda_dev": rank % 8, "bus_id": 0x3b000 + (rank << 12),
         "coll_op_count": 11, "seq": [0, 0, 5, 0, 12],
         "channels": [{"peers": [{"peer": nxt, "send": True}]}, {"peers": [{"peer": prev, "recv": True}]}],
         "proxy": True,
         "proxy_ops": [{"op_count": 11 << 1, "pattern": 0, "subs": [
             {"dir": "send", "peer": nxt, "channel": 0, "nsteps": 8, "posted": 8, "transmitted": 3, "done": 3},
             {"dir": "recv", "peer": prev, "channel": 1, "nsteps": 8, "posted": 8, "received": 5,
              "transmitted": 5, "done": 5}]}],
         "in_ras_list": True}
    c.update(kw)
    return c


class Rank:
    """A running nccl_fake_rank; killed on exit."""

    def __init__(self, tmp, row, comms, lib=None, env=None, cwd=None, **spec_kw):
        spec = {"fields": row["fields"], "comms": comms}
        if lib:
            spec["lib"] = lib
        spec.update(spec_kw)
        fd, self.spec_path = tempfile.mkstemp(suffix=".json", dir=tmp)
        with os.fdopen(fd, "w") as f:
            json.dump(spec, f)
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.proc = subprocess.Popen([PROGRAM, self.spec_path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=full_env, cwd=cwd or tmp,
                                     preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CORE, (-1, -1)))
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout=10)
            raise RuntimeError("nccl_fake_rank failed: " + self.proc.stderr.read())
        self.ready = json.loads(line)
        self.pid = self.proc.pid

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        self.proc.stdout.close()
        self.proc.stderr.close()


def core_of(tmp, row, comms, lib, **kw):
    """Runs a target that aborts after laying out its comms; returns the core path."""
    cwd = tempfile.mkdtemp(dir=tmp)
    r = Rank(tmp, row, comms, lib=lib, cwd=cwd, abort=True, **kw)
    with r:
        r.proc.wait(timeout=30)
    cores = [os.path.join(cwd, f) for f in os.listdir(cwd) if f.startswith("core")]
    if not cores:
        raise unittest.SkipTest("the kernel wrote no core file (core_pattern is not a plain file name here)")
    return cores[0], r.ready


def attach(args, rc=None):
    return run_json(["nccl", "attach"] + [str(a) for a in args], expect_rc=rc, schema=SCHEMA, timeout=120)


class AttachTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not can_read_memory():
            raise unittest.SkipTest("no ptrace access to child processes here (Yama / capabilities)")

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ccdiag-attach-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def check_ring_verdict(self, doc):
        """Rank 3 of the ring waits for data from rank 2, which was not read: rank 2 is the suspect."""
        (a,) = doc["comms"]
        self.assertEqual((a["verdict"], a["culprits"]), ("peer_missing", [2]))
        r3 = next(r for r in a["ranks"] if r["rank"] == 3)
        self.assertEqual((r3["where"], r3["waits_on"]), ("waiting_on_peer", 2))

    def check_ring_decode(self, proc, row, ready, version):
        self.assertEqual(proc["status"], "ok", proc)
        self.assertEqual(proc["version"], version)
        self.assertEqual(proc["layout_source"], "table")
        self.assertEqual(proc["layout_label"], row["label"])
        self.assertEqual(len(proc["comms"]), 1, proc["notes"])
        c = proc["comms"][0]
        self.assertEqual(c["addr"], ready["comms"][0])
        self.assertEqual(c["comm_hash"], "0x5c1e0c4a9d2f7b31")
        self.assertEqual((c["rank"], c["nranks"], c["cuda_dev"]), (3, 8, 3))
        self.assertEqual(c["bus_id"], "0000:3e:00.0")
        self.assertEqual(c["init_state"], 0)
        self.assertEqual(c["coll_op_count"], 11)
        self.assertTrue(c["owner_ok"])
        self.assertTrue(c["in_ras_list"])
        if "ncclComm.seqNumber" in row["fields"]:
            self.assertEqual(c["seq_numbers"], [0, 0, 5, 0, 12])
        else:
            self.assertEqual(c["seq_numbers"], [])
        self.assertEqual(c["n_channels"], 2)
        self.assertEqual(c["channels"][0]["peers"], [{"peer": 4, "send": True, "recv": False}])
        self.assertEqual(c["channels"][1]["peers"], [{"peer": 2, "send": False, "recv": True}])
        self.assertEqual(c["proxy_tp_rank"], 3)
        self.assertEqual(len(c["proxy_ops"]), 1)
        op = c["proxy_ops"][0]
        self.assertEqual((op["index"], op["p2p"], op["nsubs"]), (11, False, 2))
        send, recv = op["subs"]
        self.assertEqual((send["direction"], send["peer"], send["channel"], send["nsteps"]), ("send", 4, 0, 8))
        self.assertEqual((send["posted"], send["transmitted"], send["done"], send["state"]), (8, 3, 3, "G"))
        self.assertEqual((recv["direction"], recv["peer"], recv["channel"]), ("recv", 2, 1))
        self.assertEqual((recv["posted"], recv["received"], recv["done"], recv["state"]), (8, 5, 5, "R"))


class EveryLayoutRow(AttachTestCase):
    """The synthetic live and core scenarios decode exactly for every table row."""

    def test_live_every_row(self):
        for row in ROWS:
            version = row["versions"][-1]
            with self.subTest(layout=row["label"]):
                lib = make_lib(self.tmp, version)
                with Rank(self.tmp, row, [ring_comm(row)], lib=lib) as r:
                    doc, _ = attach([r.pid, "--interval", "0.05"], rc=1)
                    assert_running_untraced(self, r.pid)  # the brief stop of 2.18-2.20 leaves nothing behind
                self.check_ring_decode(doc["processes"][0], row, r.ready, version)
                if row in OLD_ROWS:  # found through the proxy thread: registers read under a brief stop
                    self.assertTrue(doc["processes"][0]["comms"][0]["proxy_thread_found"])
                self.check_ring_verdict(doc)

    def test_core_every_row(self):
        for row in ROWS:
            version = row["versions"][0]
            with self.subTest(layout=row["label"]):
                lib = make_lib(self.tmp, version)
                core, ready = core_of(self.tmp, row, [ring_comm(row)], lib)
                doc, _ = attach(["--core", core], rc=1)
                self.check_ring_verdict(doc)
                proc = doc["processes"][0]
                self.assertEqual(proc["kind"], "core")
                self.check_ring_decode(proc, row, ready, version)
                # The thread anchor: the proxy progress thread's pthread_t is a thread's fs_base.
                self.assertTrue(proc["comms"][0]["proxy_thread_found"])
                os.unlink(core)

    @unittest.skipUnless(shutil.which("gcore"), "gdb's gcore not installed")
    def test_gcore_of_a_live_rank(self):
        """A core written by gdb's gcore (what an on-call engineer takes of a hung rank)."""
        row = row_for("2.28.9")
        lib = make_lib(self.tmp, "2.28.9")
        with Rank(self.tmp, row, [ring_comm(row)], lib=lib) as r:
            prefix = os.path.join(self.tmp, "gcore")
            g = subprocess.run(["gcore", "-o", prefix, str(r.pid)], capture_output=True, text=True, timeout=120)
            core = f"{prefix}.{r.pid}"
            if g.returncode != 0 or not os.path.exists(core):
                self.skipTest("gcore could not attach here: " + g.stderr[-200:])
            doc, _ = attach(["--core", core], rc=1)
        self.check_ring_decode(doc["processes"][0], row, r.ready, "2.28.9")
        self.check_ring_verdict(doc)

    def test_heap_placement(self):
        row = MAGIC_ROWS[-1]
        lib = make_lib(self.tmp, row["versions"][0])
        with Rank(self.tmp, row, [ring_comm(row, placement="heap")], lib=lib, heap_threshold=True) as r:
            doc, _ = attach([r.pid, "--samples", "1"], rc=1)
        self.check_ring_decode(doc["processes"][0], row, r.ready, row["versions"][0])

    def test_before_the_magic_a_comm_without_proxy_threads_is_not_found(self):
        """2.18-2.20 comms are found through their proxy threads; one hung in bootstrap has none."""
        row = OLD_ROWS[0]
        lib = make_lib(self.tmp, row["versions"][0])
        c = {"hash": "0x77aa00bb11cc22dd", "rank": 0, "nranks": 2, "init_state": 7, "channels": []}
        with Rank(self.tmp, row, [c], lib=lib) as r:
            doc, _ = attach([r.pid], rc=0)
        proc = doc["processes"][0]
        self.assertEqual(proc["status"], "no_comm")
        self.assertTrue(any("predates the comm magic" in n for n in proc["notes"]), proc["notes"])

    def test_unknown_version_falls_back_to_the_magic_distance(self):
        row = row_for("2.28.9")
        lib = make_lib(self.tmp, "2.28.8")  # not a release tag: not in the table
        with Rank(self.tmp, row, [ring_comm(row)], lib=lib) as r:
            doc, _ = attach([r.pid, "--samples", "1"], rc=1)
        proc = doc["processes"][0]
        self.assertEqual(proc["layout_source"], "magic-distance")
        self.assertEqual(proc["comms"][0]["rank"], 3)
        self.assertTrue(any("not in the layout table" in n for n in proc["notes"]), proc["notes"])


class Negative(AttachTestCase):
    def row(self):
        return row_for("2.28.9")

    def test_freed_and_decoy_comms_are_rejected(self):
        row = self.row()
        lib = make_lib(self.tmp, "2.28.9")
        comms = [ring_comm(row, poisoned=True), ring_comm(row, start_magic_only=True),
                 ring_comm(row, freed=True), ring_comm(row, rank=5, hash_="0x00000000000000aa")]
        with Rank(self.tmp, row, comms, lib=lib) as r:
            doc, _ = attach([r.pid])
        proc = doc["processes"][0]
        self.assertEqual([c["comm_hash"] for c in proc["comms"]], ["0x00000000000000aa"])
        self.assertEqual(proc["comms"][0]["addr"], r.ready["comms"][3])
        self.assertGreaterEqual(proc["scan"]["rejected_no_end_magic"], 1)
        self.assertEqual(proc["scan"]["rejected_invalid"], 1)

    def test_cyclic_op_list_ends(self):
        row = self.row()
        lib = make_lib(self.tmp, "2.28.9")
        c = ring_comm(row, cyclic_ops=True)
        c["proxy_ops"].append(json.loads(json.dumps(c["proxy_ops"][0])))
        with Rank(self.tmp, row, [c], lib=lib) as r:
            doc, p = attach([r.pid])
        comm = doc["processes"][0]["comms"][0]
        self.assertEqual(len(comm["proxy_ops"]), 2)
        self.assertTrue(any("loops" in n for n in comm["notes"]), comm["notes"])

    def test_counters_changing_during_the_read(self):
        row = self.row()
        lib = make_lib(self.tmp, "2.28.9")
        with Rank(self.tmp, row, [ring_comm(row)], lib=lib, mutate=True) as r:
            doc, _ = attach([r.pid, "--samples", "2", "--interval", "0.05"])
        comm = doc["processes"][0]["comms"][0]
        self.assertEqual(comm["rank"], 3)
        send = comm["proxy_ops"][0]["subs"][0]
        # Either the reads never agreed (and say so) or the sub is seen moving.
        self.assertTrue(not comm["consistent"] or send["moving"], comm)
        self.assertGreaterEqual(comm["read_attempts"], 2)

    def test_truncated_core(self):
        row = self.row()
        lib = make_lib(self.tmp, "2.28.9")
        core, _ = core_of(self.tmp, row, [ring_comm(row)], lib)
        size = os.path.getsize(core)
        with open(core, "r+b") as f:
            f.truncate(size // 3)
        doc, p = attach(["--core", core])
        # Whatever survived is decoded (exit 1: the ring wait) or the read is partial (exit 3);
        # never "nothing stuck" (exit 0) from a core that lost memory.
        self.assertIn(p.returncode, (1, 3))
        proc = doc["processes"][0]
        self.assertTrue(any("truncated" in n for n in proc["notes"]), proc["notes"])
        self.assertTrue(proc["incomplete"])
        for c in proc["comms"]:
            self.assertEqual(c["comm_hash"], "0x5c1e0c4a9d2f7b31")

    def test_core_truncated_through_the_comm(self):
        """The cut falls inside the comm: its start magic survives, its end does not: exit 3, said why."""
        row = self.row()
        lib = make_lib(self.tmp, "2.28.9")
        core, ready = core_of(self.tmp, row, [ring_comm(row, proxy_ops=[])], lib)
        comm = int(ready["comms"][0], 16)
        with open(core, "rb") as f:
            data = f.read()
        cut = None
        import struct
        phoff, = struct.unpack_from("<Q", data, 0x20)
        phnum, = struct.unpack_from("<H", data, 0x38)
        for i in range(phnum):
            ptype, _, off, vaddr, _, filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data, phoff + i * 56)
            if ptype == 1 and vaddr <= comm < vaddr + filesz:
                cut = off + (comm - vaddr) + 4096
        self.assertIsNotNone(cut)
        with open(core, "r+b") as f:
            f.truncate(cut)
        doc, p = attach(["--core", core], rc=3)
        proc = doc["processes"][0]
        self.assertEqual(proc["status"], "unreadable", proc)
        self.assertIn("truncated through", proc["reason"])
        self.assertEqual(proc["comms"], [])

    def test_process_without_nccl(self):
        p = subprocess.Popen(["sleep", "30"])
        try:
            doc, r = attach([p.pid], rc=0)
        finally:
            p.kill()
            p.wait()
        self.assertEqual(doc["processes"][0]["status"], "no_nccl")
        text = run(["nccl", "attach", str(p.pid)])
        self.assertEqual(text.returncode, 2)  # the process is gone now: no such process

    def test_bad_inputs(self):
        r = run(["nccl", "attach", "notapid"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a process id", r.stderr)
        notcore = os.path.join(self.tmp, "notcore")
        with open(notcore, "wb") as f:
            f.write(b"\x7fELF" + b"\0" * 100)
        r = run(["nccl", "attach", "--core", notcore])
        self.assertEqual(r.returncode, 2)
        self.assertIn(notcore, r.stderr)
        r = run(["nccl", "attach", "--core", FAKE_LIB])
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a core dump", r.stderr)
        r = run(["nccl", "attach"])
        self.assertEqual(r.returncode, 2)
        # `--core FILE PID`: the pid is a pid, not a second core file.
        r = run(["nccl", "attach", "--core", notcore, "999999999"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("pid 999999999: no such process", r.stderr)


class Undecodable(AttachTestCase):
    """A comm is there but cannot be decoded: exit 3 and a reason naming the fix, never "no communicator", exit 0."""

    def other_size_row(self):
        # A release this ccdiag has no row for: sizeof(ncclComm) no table row has (2.31/2.32 grew the comm).
        row = json.loads(json.dumps(row_for("2.28.9")))
        sizes = {r["fields"]["ncclComm.sizeof"] for r in ROWS}
        size = row["fields"]["ncclComm.sizeof"] + 4096
        while size in sizes:
            size += 16
        row["fields"]["ncclComm.sizeof"] = size
        row["fields"]["ncclComm.endMagic"] = size - 8
        return row

    def test_release_not_in_the_table_without_dwarf(self):
        row = self.other_size_row()
        lib = make_lib(self.tmp, "2.99.1")  # newer than the table; the fake library has no DWARF (stripped)
        with Rank(self.tmp, row, [ring_comm(row)], lib=lib) as r:
            doc, p = attach([r.pid, "--samples", "1"], rc=3)
            text = run(["nccl", "attach", str(r.pid), "--samples", "1"])
        proc = doc["processes"][0]
        self.assertEqual(proc["status"], "no_layout", proc)
        self.assertGreaterEqual(proc["scan"]["magic_hits"], 1)
        self.assertIn("NCCL 2.99.1", proc["reason"])
        self.assertIn("debug info", proc["reason"])
        self.assertIn("newer ccdiag", proc["reason"])
        self.assertEqual(text.returncode, 3)
        self.assertIn("no_layout: ", text.stdout)
        self.assertIn("communicator start magic(s) found but none decoded", text.stdout)

    def test_table_row_of_another_size(self):
        """--layout table on a build whose comm is not the row's size (a patched or mislabelled build)."""
        row = self.other_size_row()
        lib = make_lib(self.tmp, "2.28.9")
        with Rank(self.tmp, row, [ring_comm(row)], lib=lib) as r:
            doc, _ = attach([r.pid, "--samples", "1", "--layout", "table"], rc=3)
        proc = doc["processes"][0]
        self.assertEqual(proc["status"], "no_layout", proc)
        self.assertIn("not the layout of this build", proc["reason"])

    def test_core_whose_library_is_not_on_this_host(self):
        row = self.other_size_row()
        lib = make_lib(self.tmp, "2.99.1")
        core, _ = core_of(self.tmp, row, [ring_comm(row)], lib)
        os.unlink(lib)  # the core was taken on another machine
        doc, _ = attach(["--core", core], rc=3)
        proc = doc["processes"][0]
        self.assertEqual(proc["status"], "no_layout", proc)
        self.assertIn("--nccl-lib", proc["reason"])


class ReplacedLibrary(AttachTestCase):
    """The library file is not the mapped build: never read the other build's version or layout."""

    def test_library_replaced_on_disk_while_the_rank_runs(self):
        row = row_for("2.28.9")
        lib = make_lib(self.tmp, "2.28.9")
        with Rank(self.tmp, row, [ring_comm(row)], lib=lib) as r:
            # A pip upgrade mid-job: a new file (another release, another build) at the same path.
            newer = other_build(make_lib(self.tmp, "2.26.2"), lib + ".new")
            os.replace(newer, lib)
            doc, p = attach([r.pid, "--samples", "1"])
        proc = doc["processes"][0]
        self.assertNotEqual(proc["version"], "2.26.2", proc)
        if os.geteuid() == 0:
            # /proc/PID/map_files opens the mapped (deleted) inode itself.
            self.assertEqual(p.returncode, 1, proc)
            self.assertIn("/map_files/", proc["library_opened"])
            self.check_ring_decode(proc, row, r.ready, "2.28.9")
        else:
            self.assertEqual(p.returncode, 3, proc)
            self.assertIn("replaced", proc["reason"])

    def test_nccl_lib_of_another_build_is_refused(self):
        row = row_for("2.28.9")
        lib = make_lib(self.tmp, "2.28.9")
        core, ready = core_of(self.tmp, row, [ring_comm(row)], lib)
        wrong = other_build(lib, os.path.join(self.tmp, "libnccl-other.so.2"))
        doc, _ = attach(["--core", core, "--nccl-lib", wrong], rc=3)
        proc = doc["processes"][0]
        self.assertEqual(proc["status"], "wrong_library", proc)
        self.assertIn(elf_build_id(lib), proc["reason"])
        self.assertIn(elf_build_id(wrong), proc["reason"])
        self.assertEqual(proc["comms"], [])
        # The right build under another name is accepted.
        renamed = os.path.join(self.tmp, "copied-from-the-node.so")
        shutil.copy(lib, renamed)
        os.unlink(lib)
        doc, _ = attach(["--core", core, "--nccl-lib", renamed], rc=1)
        self.check_ring_decode(doc["processes"][0], row, ready, "2.28.9")

    @unittest.skipUnless(shutil.which("gcore"), "gdb's gcore not installed")
    def test_gcore_cut_before_its_notes(self):
        """gcore writes the notes (the mapped-file list) after the memory: a cut core loses them."""
        import struct
        row = row_for("2.28.9")
        lib = make_lib(self.tmp, "2.28.9")
        with Rank(self.tmp, row, [ring_comm(row)], lib=lib) as r:
            prefix = os.path.join(self.tmp, "gcore")
            g = subprocess.run(["gcore", "-o", prefix, str(r.pid)], capture_output=True, text=True, timeout=120)
            core = f"{prefix}.{r.pid}"
            if g.returncode != 0 or not os.path.exists(core):
                self.skipTest("gcore could not attach here: " + g.stderr[-200:])
        with open(core, "rb") as f:
            data = f.read()
        phoff, = struct.unpack_from("<Q", data, 0x20)
        phnum, = struct.unpack_from("<H", data, 0x38)
        segs = [struct.unpack_from("<IIQQQQQQ", data, phoff + i * 56) for i in range(phnum)]
        note = min(s[2] for s in segs if s[0] == 4)  # PT_NOTE
        loads_end = max(s[2] + s[5] for s in segs if s[0] == 1)
        if note < loads_end:
            self.skipTest("this gcore writes its notes before the memory")
        with open(core, "r+b") as f:
            f.truncate(note)
        doc, _ = attach(["--core", core], rc=3)
        proc = doc["processes"][0]
        self.assertEqual(proc["status"], "unreadable", proc)
        self.assertIn("mapped-file list", proc["reason"])
        self.assertIn("--nccl-lib", proc["reason"])
        # With the library named, the memory (all there) decodes.
        doc, _ = attach(["--core", core, "--nccl-lib", lib], rc=1)
        self.check_ring_decode(doc["processes"][0], row, r.ready, "2.28.9")


class CrossRank(AttachTestCase):
    """Ranks of one comm in several processes, joined by commHash."""

    def start(self, comms_by_rank, env_by_rank=None, **kw):
        row = row_for("2.28.9")
        lib = make_lib(self.tmp, "2.28.9")
        ranks = []
        for i, c in enumerate(comms_by_rank):
            ranks.append(Rank(self.tmp, row, [c], lib=lib, env=(env_by_rank or {}).get(i), **kw))
        return ranks

    def stop(self, ranks):
        for r in ranks:
            r.__exit__()

    def test_rank_that_did_not_issue_the_collective(self):
        row = row_for("2.28.9")
        comms = []
        for rank in range(4):
            c = ring_comm(row, rank=rank, nranks=4, proxy_ops=[])
            if rank == 2:
                c["seq"] = [0, 0, 5, 0, 11]
            comms.append(c)
        ranks = self.start(comms)
        try:
            doc, _ = attach([r.pid for r in ranks] + ["--samples", "2", "--interval", "0.05"], rc=1)
        finally:
            self.stop(ranks)
        (a,) = doc["comms"]
        self.assertEqual((a["verdict"], a["culprits"], a["layer"]), ("not_enqueued", [2], "framework"))
        prim = [f for f in doc["findings"] if f["role"] == "primary"]
        self.assertEqual([(f["id"], f["subject"]["rank"]) for f in prim], [("nccl.attach.not_enqueued", 2)])
        self.assertIn("AllReduce #12", prim[0]["summary"])

    def test_init_hang_names_the_rank_that_never_joined(self):
        row = row_for("2.28.9")
        c = {"hash": "0x77aa00bb11cc22dd", "rank": 0, "nranks": 2, "init_state": 7, "channels": []}
        ranks = self.start([c])
        try:
            doc, _ = attach([ranks[0].pid], rc=1)
        finally:
            self.stop(ranks)
        (a,) = doc["comms"]
        self.assertEqual((a["verdict"], a["culprits"]), ("peer_missing", [1]))
        self.assertIn("hangs in init", a["summary"])
        self.assertEqual(doc["processes"][0]["comms"][0]["init_state_name"], "ncclInProgress")

    def test_network_pair(self):
        row = row_for("2.28.9")
        # rank 1 sent everything to rank 2 but the network never completed it; rank 2 waits for the data.
        c1 = ring_comm(row, rank=1, nranks=3, proxy_ops=[{"op_count": 22, "subs": [
            {"dir": "send", "peer": 2, "channel": 0, "nsteps": 8, "posted": 8, "transmitted": 8, "done": 6}]}])
        c2 = ring_comm(row, rank=2, nranks=3, proxy_ops=[{"op_count": 22, "subs": [
            {"dir": "recv", "peer": 1, "channel": 0, "nsteps": 8, "posted": 8, "received": 6, "transmitted": 6,
             "done": 6}]}])
        c0 = ring_comm(row, rank=0, nranks=3, proxy_ops=[])
        ranks = self.start([c0, c1, c2])
        try:
            doc, _ = attach([r.pid for r in ranks] + ["--samples", "2", "--interval", "0.05"], rc=1)
        finally:
            self.stop(ranks)
        (a,) = doc["comms"]
        self.assertEqual((a["verdict"], a["culprits"], a["layer"]), ("network_wait", [1], "transport"))
        sym = [f for f in doc["findings"] if f["role"] == "symptom"]
        self.assertEqual([(f["id"], f["subject"]["rank"], f["fields"]["waits_on"]) for f in sym],
                         [("nccl.attach.waiting_on_peer", 2, 1)])

    def test_input_files_join_across_hosts(self):
        row = row_for("2.28.9")
        comms = [ring_comm(row, rank=r, nranks=2, proxy_ops=[]) for r in range(2)]
        comms[0]["seq"] = [0, 0, 5, 0, 9]
        ranks = self.start(comms)
        try:
            a0, _ = attach([ranks[0].pid])
            a1, _ = attach([ranks[1].pid])
        finally:
            self.stop(ranks)
        files = []
        for i, d in enumerate((a0, a1)):
            files.append(os.path.join(self.tmp, f"host{i}.json"))
            with open(files[-1], "w") as f:
                json.dump(d, f)
        doc, _ = attach(["--input", files[0], "--input", files[1]], rc=1)
        self.assertEqual(doc["comms"][0]["culprits"], [0])

    def test_diagnose_uses_attach_evidence(self):
        row = row_for("2.28.9")
        comms = []
        for rank in range(2):
            c = ring_comm(row, rank=rank, nranks=2, proxy_ops=[], hash_="0x1111222233334444")
            if rank == 1:
                c["seq"] = [0, 0, 5, 0, 7]
            comms.append(c)
        env = {i: {"RANK": str(i), "WORLD_SIZE": "2", "LOCAL_RANK": str(i)} for i in range(2)}
        ranks = self.start(comms, env)
        out = os.path.join(self.tmp, "bundle")
        try:
            p = run(["collect", "--out", out, "--timeout", "20"], timeout=120)
            self.assertIn(p.returncode, (0, 1, 3), p.stderr)
        finally:
            self.stop(ranks)
        doc, _ = run_json(["diagnose", out], schema="report.schema.json", timeout=120)
        ids = [(f["id"], f["subject"].get("rank")) for f in doc["findings"] if f["id"].startswith("nccl.attach.")]
        self.assertIn(("nccl.attach.not_enqueued", 1), ids)


@unittest.skipUnless(REAL_NCCL, "no NCCL library installed")
class RealLibrary(AttachTestCase):
    """The installed libnccl: ccdiag takes offsets from its DWARF, the target
    lays out with the shipped table row: both must agree."""

    def test_dwarf_layout_of_the_installed_nccl(self):
        with open(REAL_NCCL, "rb") as f:
            data = f.read()
        i = data.find(b"NCCL version ")
        version = data[i + 13:data.index(b"+", i)].decode()
        row = row_for(version)
        with Rank(self.tmp, row, [ring_comm(row)], lib=REAL_NCCL) as r:
            doc, _ = attach([r.pid, "--samples", "1"], rc=1)
            table, _ = attach([r.pid, "--samples", "1", "--layout", "table"], rc=1)
        proc = doc["processes"][0]
        self.assertEqual(proc["layout_source"], "dwarf")
        self.assertEqual(proc["version"], version)
        self.assertTrue(proc["build_id"])
        self.assertEqual(proc["comms"][0]["rank"], 3)
        self.assertEqual(proc["comms"][0]["proxy_ops"][0]["subs"][1]["received"], 5)
        keys = ("addr", "comm_hash", "rank", "nranks", "cuda_dev", "bus_id", "init_state", "seq_numbers",
                "coll_op_count", "n_channels", "channels", "proxy_ops", "owner_ok")
        pick = lambda p: [{k: c.get(k) for k in keys} for c in p["comms"]]  # noqa: E731
        self.assertEqual(table["processes"][0]["layout_source"], "table")
        self.assertEqual(pick(proc), pick(table["processes"][0]))

    def attach_copy(self, lib, env=None):
        """Runs a rank on `lib` (a modified copy of the installed NCCL) and attaches with `env`."""
        version = REAL_VERSION()
        row = row_for(version)
        with Rank(self.tmp, row, [ring_comm(row)], lib=lib) as r:
            doc, _ = run_json(["nccl", "attach", str(r.pid), "--samples", "1"], expect_rc=1, schema=SCHEMA,
                              timeout=300, env=env)
        proc = doc["processes"][0]
        self.assertEqual(proc["comms"][0]["rank"], 3)
        return proc

    def objcopy(self, *args):
        subprocess.run(["objcopy", *args], check=True, timeout=600)

    @unittest.skipUnless(shutil.which("objcopy"), "binutils' objcopy not installed")
    def test_dwarf_in_zdebug_sections(self):
        lib = os.path.join(self.tmp, "libnccl.so.2")
        self.objcopy("--compress-debug-sections=zlib-gnu", REAL_NCCL, lib)
        proc = self.attach_copy(lib)
        self.assertEqual(proc["layout_source"], "dwarf", proc["notes"])

    @unittest.skipUnless(shutil.which("objcopy"), "binutils' objcopy not installed")
    def test_dwarf_in_a_separate_debug_file(self):
        d = os.path.join(self.tmp, "lib")
        os.makedirs(d)
        lib, dbg = os.path.join(d, "libnccl.so.2"), os.path.join(d, "libnccl.so.2.debug")
        self.objcopy("--only-keep-debug", REAL_NCCL, dbg)
        self.objcopy("--strip-debug", "--add-gnu-debuglink=" + dbg, REAL_NCCL, lib)
        proc = self.attach_copy(lib)
        self.assertEqual(proc["layout_source"], "dwarf", proc["notes"])
        self.assertTrue(any(dbg in n for n in proc["notes"]), proc["notes"])
        # A debuginfod cache ($DEBUGINFOD_CACHE_PATH/<build-id>/debuginfo), no debuglink.
        plain = os.path.join(self.tmp, "plain")
        os.makedirs(plain)
        self.objcopy("--strip-debug", REAL_NCCL, os.path.join(plain, "libnccl.so.2"))
        cache = os.path.join(self.tmp, "cache")
        os.makedirs(os.path.join(cache, elf_build_id(REAL_NCCL)))
        os.rename(dbg, os.path.join(cache, elf_build_id(REAL_NCCL), "debuginfo"))
        env = dict(os.environ, DEBUGINFOD_CACHE_PATH=cache)
        proc = self.attach_copy(os.path.join(plain, "libnccl.so.2"), env=env)
        self.assertEqual(proc["layout_source"], "dwarf", proc["notes"])
        # Without the cache: the table, and no DWARF claimed.
        proc = self.attach_copy(os.path.join(plain, "libnccl.so.2"), env=dict(os.environ, DEBUGINFOD_CACHE_PATH=plain))
        self.assertEqual(proc["layout_source"], "table")


if __name__ == "__main__":
    unittest.main()
