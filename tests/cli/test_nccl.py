"""ccdiag nccl ras | dump, end to end.

RAS: against fake_ras_server.py, which speaks the RAS client protocol and
replies with the fixtures in tests/fixtures/ras (NCCL's own format strings),
or misbehaves (slow, closes early, garbage, wrong protocol, truncated).
Dump: the harness (tests/programs/nccl_profiler_harness.c) dlopens the built
libnccl-profiler-ccdiag.so, looks up ncclProfiler_v5 and drives it as NCCL
2.28 does; ccdiag then reads the shared-memory files it left."""
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from ccdiag_test import BIN, BUILD_DIR, FIXTURES, run, run_json  # noqa: E402
from fake_ras_server import FakeRasServer  # noqa: E402

RAS = os.path.join(FIXTURES, "ras")
PLUGIN = os.path.join(BUILD_DIR, "lib", "libnccl-profiler-ccdiag.so")
HARNESS = os.path.join(BUILD_DIR, "test-programs", "nccl_profiler_harness")


def fixture(name):
    with open(os.path.join(RAS, name)) as f:
        return f.read()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def ids(doc):
    return [f["id"] for f in doc["findings"]]


class RasQueryTest(unittest.TestCase):
    def serve(self, mode, text="status-missing-rank-2.28.7.txt", js="status-healthy-2.29.7.json"):
        srv = FakeRasServer(mode, fixture(text), fixture(js)).start()
        self.addCleanup(srv.stop)
        return srv

    def ras(self, srv_or_port, *extra, timeout="5", expect_rc=None):
        port = srv_or_port if isinstance(srv_or_port, int) else srv_or_port.port
        args = ["--timeout", timeout, "nccl", "ras", "--addr", f"127.0.0.1:{port}"] + list(extra)
        return run_json(args, expect_rc=expect_rc, schema=None, timeout=30)

    def test_closed_port_is_unavailable_not_error(self):
        t0 = time.time()
        doc, p = self.ras(free_port(), expect_rc=3)
        self.assertLess(time.time() - t0, 3)
        self.assertEqual(doc["query"]["availability"], "unavailable")
        self.assertEqual(doc["findings"], [])

    def test_json_supported_healthy(self):
        srv = self.serve("ok", js="status-healthy-2.29.7.json")
        doc, _ = self.ras(srv, expect_rc=0)
        self.assertEqual(doc["query"]["format"], "json")
        self.assertEqual(doc["query"]["server_protocol"], "2")
        st = doc["sources"][0]["status"]
        self.assertEqual(st["nccl_version"], "2.29.7")
        self.assertEqual(len(st["communicators"][0]["ranks"]), 16)
        self.assertEqual(doc["findings"], [])
        # The handshake ncclras uses, in order.
        self.assertEqual(srv.commands[0], "CLIENT PROTOCOL 2")
        self.assertTrue(srv.commands[1].startswith("TIMEOUT "))
        self.assertEqual(srv.commands[2:], ["SET FORMAT json", "STATUS"])

    def test_pre_json_server_falls_back_to_text(self):
        srv = self.serve("pre_json", text="status-missing-rank-2.28.7.txt")
        doc, _ = self.ras(srv, expect_rc=1)
        self.assertTrue(doc["query"]["json_unsupported"])
        self.assertEqual(doc["sources"][0]["status"]["format"], "text")
        missing = [f for f in doc["findings"] if f["id"] == "nccl.ras.missing_rank"]
        self.assertEqual(len(missing), 1)
        self.assertEqual(missing[0]["subject"]["rank"], 11)
        self.assertEqual(missing[0]["subject"]["host"], "10.0.0.12")
        self.assertEqual(missing[0]["subject"]["pid"], 39011)
        self.assertEqual(missing[0]["subject"]["gpu"], "3")
        lag = [f for f in doc["findings"] if f["id"] == "nccl.ras.count_lagging"]
        self.assertEqual([f["subject"]["rank"] for f in lag], [4])
        self.assertEqual(lag[0]["fields"]["launched"], 1206)
        self.assertIn("nccl.ras.gather_timeout", ids(doc))

    def test_verbose_status_command(self):
        srv = self.serve("ok")
        self.ras(srv, "--verbose-status", expect_rc=0)
        self.assertEqual(srv.commands[-1], "VERBOSE STATUS")

    def test_slow_server_is_bounded_by_timeout(self):
        srv = self.serve("slow")
        t0 = time.time()
        doc, _ = self.ras(srv, timeout="2", expect_rc=3)
        self.assertLess(time.time() - t0, 4.5)
        self.assertEqual(doc["query"]["availability"], "timeout")

    def test_silent_handshake_is_bounded(self):
        srv = self.serve("slow_handshake")
        t0 = time.time()
        doc, _ = self.ras(srv, timeout="1.5", expect_rc=3)
        self.assertLess(time.time() - t0, 4)
        self.assertEqual(doc["query"]["availability"], "timeout")

    def test_close_early(self):
        srv = self.serve("close_early")
        doc, _ = self.ras(srv, expect_rc=3)
        self.assertEqual(doc["query"]["availability"], "error")
        self.assertIn("closed", doc["query"]["reason"])

    def test_garbage_and_wrong_protocol(self):
        for mode in ("garbage", "wrong_protocol"):
            srv = self.serve(mode)
            doc, _ = self.ras(srv, expect_rc=3)
            self.assertEqual(doc["query"]["availability"], "error", mode)
            self.assertIn("not an NCCL RAS server", doc["query"]["reason"], mode)

    def test_truncated_report(self):
        srv = self.serve("truncated", js="status-dead-peer-2.29.7.json")
        doc, _ = self.ras(srv, expect_rc=3)
        # Truncated JSON cannot be parsed: nothing is claimed from it.
        self.assertEqual(doc["findings"], [])
        srv2 = self.serve("truncated", text="status-dead-peer-2.28.7.txt")
        p = run(["--timeout", "5", "nccl", "ras", "--text-format", "--addr", f"127.0.0.1:{srv2.port}"], timeout=30)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("report incomplete", p.stdout)

    def test_nccl_ras_addr_env_and_ipv6_fallback(self):
        # A server on ::1 only: "localhost" must reach it after 127.0.0.1 is refused.
        try:
            srv = FakeRasServer("ok", fixture("status-healthy-2.28.7.txt"), fixture("status-healthy-2.29.7.json"),
                                host="::1", family=socket.AF_INET6).start()
        except OSError:
            self.skipTest("no IPv6 loopback here")
        self.addCleanup(srv.stop)
        doc, _ = run_json(["--timeout", "5", "nccl", "ras"], expect_rc=0, schema=None,
                          env={"NCCL_RAS_ADDR": f"localhost:{srv.port}"})
        self.assertEqual(doc["query"]["address"], f"[::1]:{srv.port}")
        self.assertTrue(any("127.0.0.1" in a and "refused" in a for a in doc["query"]["attempts"]))

    def test_collect_queries_the_address_the_ranks_use(self):
        # The job moved RAS off the default port (NCCL_RAS_ADDR in the ranks' environment, not ccdiag's):
        # collect reads it from the rank's /proc/PID/environ and queries there.
        # Another job's rank 0 on the same host, started first, names a port nobody answers on: its
        # silence must not hide this job's report (every address the ranks name is asked).
        srv = self.serve("ok")
        dead_port = free_port()
        other = subprocess.Popen(["sleep", "60"], env=dict(os.environ, RANK="0", WORLD_SIZE="2",
                                                           NCCL_RAS_ADDR=f"127.0.0.1:{dead_port}"))
        self.addCleanup(lambda: (other.kill(), other.wait()))
        env = dict(os.environ, RANK="0", WORLD_SIZE="2", NCCL_RAS_ADDR=f"127.0.0.1:{srv.port}")
        rank = subprocess.Popen(["sleep", "60"], env=env)
        self.addCleanup(lambda: (rank.kill(), rank.wait()))
        # The rank's environment is what collect reads: wait until /proc shows it.
        marker = b"NCCL_RAS_ADDR=127.0.0.1:%d" % srv.port
        for _ in range(100):
            with open(f"/proc/{rank.pid}/environ", "rb") as f:
                if marker in f.read():
                    break
            time.sleep(0.02)
        out = tempfile.mkdtemp(prefix="ccdiag-collect-ras-")
        self.addCleanup(shutil.rmtree, out, True)
        clean = {k: v for k, v in os.environ.items() if k != "NCCL_RAS_ADDR"}
        p = subprocess.run([BIN, "collect", "--out", out, "--timeout", "20"], capture_output=True, text=True,
                           env=clean, timeout=120)
        self.assertIn(p.returncode, (0, 3), p.stderr)
        nccl_dir = os.path.join(out, "raw", "nccl")
        saved = [f for f in os.listdir(nccl_dir) if f.startswith("ras-status")] if os.path.isdir(nccl_dir) else []
        if len(saved) != 1:
            # Say why: what RAS answered (or not) and which ranks collect saw.
            with open(os.path.join(out, "evidence.json")) as f:
                ev = json.load(f)
            ras = [e for e in ev["evidence"] if e.get("kind") == "nccl.ras"]
            ranks = [{k: e.get(k) for k in ("kind", "subject", "data")} for e in ev["evidence"]
                     if e.get("kind") == "ranks.process" and (e.get("subject") or {}).get("pid") == rank.pid]
            self.fail(f"no RAS report saved; stderr={p.stderr!r} unchecked={ev['unchecked']} ras={ras} "
                      f"this rank={ranks} servers connections={srv.connections}")
        with open(os.path.join(out, "evidence.json")) as f:
            unchecked = json.load(f)["unchecked"]
        # The other job's port was named by its rank: its silence is a gap that is said.
        self.assertTrue(any(u["what"] == "NCCL RAS" and str(dead_port) in u["reason"] for u in unchecked), unchecked)

    def test_bad_address_is_usage_error(self):
        p = run(["nccl", "ras", "--addr", "host:notaport"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("ccdiag: error:", p.stderr)


class RasFileTest(unittest.TestCase):
    def test_dead_peer_text(self):
        doc, _ = run_json(["nccl", "ras", "--file", os.path.join(RAS, "status-dead-peer-2.28.7.txt")], expect_rc=1,
                          schema=None)
        dead = [f for f in doc["findings"] if f["id"] == "nccl.ras.dead_process"]
        self.assertEqual(len(dead), 1)
        self.assertEqual(dead[0]["subject"]["pid"], 39011)
        self.assertEqual(dead[0]["supports"][0]["cause"], "rank_process_died")
        remote = [f for f in doc["findings"] if f["id"] == "nccl.ras.async_error"]
        self.assertEqual(len(remote), 1)
        self.assertEqual(remote[0]["fields"]["code"], 6)

    def test_missing_rank_json_with_nccl_2_28_comma_bug(self):
        doc, _ = run_json(["nccl", "ras", "--file", os.path.join(RAS, "status-missing-rank-2.28.7.json")],
                          expect_rc=1, schema=None)
        st = doc["sources"][0]["status"]
        self.assertTrue(st["repaired"])
        self.assertEqual([f["subject"]["rank"] for f in doc["findings"] if f["id"] == "nccl.ras.missing_rank"], [11])
        self.assertEqual([f["subject"]["rank"] for f in doc["findings"] if f["id"] == "nccl.ras.count_lagging"], [4])

    def test_mismatch_and_local_error(self):
        for name in ("status-mismatch-2.28.7.txt", "status-mismatch-2.29.7.json"):
            doc, _ = run_json(["nccl", "ras", "--file", os.path.join(RAS, name)], expect_rc=1, schema=None)
            lag = sorted(f["subject"]["rank"] for f in doc["findings"] if f["id"] == "nccl.ras.count_lagging")
            self.assertEqual(lag, [5, 13], name)
            err = [f for f in doc["findings"] if f["id"] == "nccl.ras.async_error"]
            self.assertEqual([(f["subject"]["rank"], f["fields"]["code"]) for f in err], [(9, 2)], name)

    def test_healthy_files(self):
        for name in ("status-healthy-2.28.7.txt", "status-healthy-2.29.7.json"):
            doc, _ = run_json(["nccl", "ras", "--file", os.path.join(RAS, name)], expect_rc=0, schema=None)
            self.assertEqual(doc["findings"], [], name)

    def test_not_a_ras_file(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
            f.write("hello\n")
            f.flush()
            p = run(["nccl", "ras", "--file", f.name])
        self.assertEqual(p.returncode, 2)
        self.assertIn("ccdiag: error:", p.stderr)
        self.assertIn("not an NCCL RAS STATUS report", p.stderr)


@unittest.skipUnless(os.path.exists(PLUGIN) and os.path.exists(HARNESS), "plugin or harness not built")
class FlightRecorderTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ccdiag-fr-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.env = {"CCDIAG_NCCL_DIR": self.dir, "CCDIAG_NCCL_KEEP": "1"}

    def harness(self, scenario, *extra):
        env = dict(os.environ, **self.env)
        p = subprocess.run([HARNESS, PLUGIN, scenario] + list(extra), capture_output=True, text=True, env=env,
                           timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p

    def dump(self, expect_rc, *extra):
        doc, _ = run_json(["nccl", "dump", "--stuck-after", "0"] + list(extra), expect_rc=expect_rc, schema=None,
                          env=self.env)
        self.assertEqual(len(doc["comms"]), 1)
        return doc, doc["comms"][0]

    def test_files_are_private_and_named(self):
        self.harness("healthy")
        files = sorted(os.listdir(self.dir))
        self.assertEqual(len(files), 4)
        for f in files:
            self.assertRegex(f, r"^ccdiag-nccl-\d+-5c1e0c4a9d2f7b31-[0-3]\.fr$")
            self.assertEqual(stat.S_IMODE(os.stat(os.path.join(self.dir, f)).st_mode), 0o600)

    def test_plugin_exports_v5_and_v4(self):
        nm = shutil.which("nm")
        if not nm:
            self.skipTest("nm not installed")
        out = subprocess.run([nm, "-D", "--defined-only", PLUGIN], capture_output=True, text=True).stdout
        self.assertRegex(out, r"\bncclProfiler_v5\b")
        self.assertRegex(out, r"\bncclProfiler_v4\b")

    def test_healthy(self):
        self.harness("healthy")
        doc, c = self.dump(0)
        self.assertEqual(c["verdict"], "healthy")
        self.assertEqual(c["comm"], "0x5c1e0c4a9d2f7b31")
        self.assertEqual(doc["findings"], [])
        self.assertEqual({r["where"] for r in c["ranks"]}, {"idle"})

    def test_finalize_unlinks_unless_kept(self):
        self.env.pop("CCDIAG_NCCL_KEEP")
        self.harness("healthy", "--finalize")
        self.assertEqual(os.listdir(self.dir), [])

    def test_rank_never_enqueues(self):
        self.harness("never_enqueues")
        doc, c = self.dump(1)
        self.assertEqual(c["verdict"], "not_enqueued")
        self.assertEqual(c["layer"], "framework")
        self.assertEqual(c["culprits"], [2])
        self.assertEqual(c["in_flight"], "AllReduce seq 10")
        by = {r["rank"]: r for r in c["ranks"]}
        self.assertEqual(by[1]["where"], "waiting_on_peer")
        self.assertEqual(by[1]["waits"][0]["state"], "SendPeerWait")
        self.assertEqual(by[1]["waits_on"], 2)
        self.assertEqual(by[3]["waits"][0]["state"], "RecvWait")
        self.assertEqual(by[3]["waits_on"], 2)
        prim = [f for f in doc["findings"] if f["role"] == "primary"]
        self.assertEqual([(f["id"], f["subject"]["rank"]) for f in prim], [("nccl.fr.not_enqueued", 2)])

    def test_send_stuck_in_sendwait(self):
        self.harness("send_stuck")
        doc, c = self.dump(1)
        self.assertEqual((c["verdict"], c["layer"], c["culprits"]), ("network_wait", "transport", [1]))
        by = {r["rank"]: r for r in c["ranks"]}
        self.assertEqual(by[1]["waits"][0]["state"], "SendWait")
        self.assertEqual(by[1]["waits"][0]["peer"], 2)
        self.assertEqual(by[2]["where"], "waiting_on_peer")
        self.assertEqual(by[1]["op"]["algo"], "RING")
        self.assertEqual(by[1]["op"]["seq"], 10)

    def test_gpu_wait(self):
        self.harness("gpu_wait")
        doc, c = self.dump(1)
        self.assertEqual((c["verdict"], c["layer"], c["culprits"]), ("gpu_wait", "hardware", [2]))
        f = [f for f in doc["findings"] if f["role"] == "primary"][0]
        self.assertEqual(f["supports"][0]["cause"], "gpu_hung_kernel")

    def test_dead_proxy_thread(self):
        self.harness("dead_proxy")
        doc, c = self.dump(1)
        self.assertEqual((c["verdict"], c["layer"], c["culprits"]), ("proxy_stalled", "nccl", [2]))

    def test_v4_abi(self):
        self.harness("send_stuck", "--v4")
        doc, c = self.dump(1, "--raw")
        self.assertEqual(c["verdict"], "network_wait")
        self.assertEqual({s["abi_version"] for s in doc["snapshots"]}, {4})

    def test_live_hung_process_by_pid(self):
        env = dict(os.environ, **self.env)
        p = subprocess.Popen([HARNESS, PLUGIN, "gpu_wait", "--hold"], stdout=subprocess.PIPE, text=True, env=env)
        self.addCleanup(p.stdout.close)
        self.addCleanup(p.kill)
        lines = [p.stdout.readline() for _ in range(5)]
        self.assertEqual(lines[-1].strip(), "holding")
        doc, c = self.dump(1, str(p.pid))
        self.assertEqual(c["culprits"], [2])
        self.assertTrue(all(r["pid"] == p.pid for r in c["ranks"]))
        p.kill()
        p.wait()

    def test_text_output_names_state_and_peer(self):
        self.harness("send_stuck")
        r = run(["nccl", "dump", "--stuck-after", "0"], env=self.env)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("STUCK (network_wait, layer transport)", r.stdout)
        self.assertIn("ch0 send to 2", r.stdout)
        self.assertIn("SendWait", r.stdout)

    def test_collected_copies_in_a_bundle_dir(self):
        # `ccdiag collect` stores the files base64-encoded; dump reads them post-mortem.
        self.harness("gpu_wait")
        out = tempfile.mkdtemp(prefix="ccdiag-collect-")
        self.addCleanup(shutil.rmtree, out, True)
        p = run(["collect", "--out", out], env=self.env, timeout=60)
        self.assertIn(p.returncode, (0, 3), p.stderr)
        frdir = os.path.join(out, "raw", "nccl", "fr")
        self.assertEqual(len([f for f in os.listdir(frdir) if f.endswith(".fr.b64")]), 4)
        doc, _ = run_json(["nccl", "dump", "--stuck-after", "0", frdir], expect_rc=1, schema=None)
        self.assertEqual(doc["comms"][0]["verdict"], "gpu_wait")
        self.assertEqual(doc["comms"][0]["culprits"], [2])

    def test_no_files(self):
        doc, _ = run_json(["nccl", "dump"], expect_rc=3, schema=None, env=self.env)
        self.assertIn("no flight-recorder files", doc["unchecked"])

    def test_bad_file_is_input_error(self):
        bad = os.path.join(self.dir, "x.fr")
        with open(bad, "wb") as f:
            f.write(b"\x00" * 100)
        p = run(["nccl", "dump", bad], env=self.env)
        self.assertEqual(p.returncode, 2)
        self.assertIn("ccdiag: error:", p.stderr)


@unittest.skipUnless(os.path.exists(PLUGIN) and os.path.exists(HARNESS), "plugin or harness not built")
class BundleTest(unittest.TestCase):
    """diagnose reads raw/nccl/** of a bundle: RAS output and plugin files."""

    def make_bundle(self, ras_fixture=None, scenario=None):
        d = tempfile.mkdtemp(prefix="ccdiag-bundle-")
        self.addCleanup(shutil.rmtree, d, True)
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump({"format": "ccdiag-bundle", "schema_version": 1, "host": "node7",
                       "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 60))}, f)
        with open(os.path.join(d, "evidence.json"), "w") as f:
            json.dump({"evidence": [], "unchecked": []}, f)
        os.makedirs(os.path.join(d, "raw", "nccl", "fr"))
        if ras_fixture:
            shutil.copy(os.path.join(RAS, ras_fixture), os.path.join(d, "raw", "nccl", "ras-status.txt"))
        if scenario:
            frdir = os.path.join(d, "raw", "nccl", "fr")
            env = dict(os.environ, CCDIAG_NCCL_DIR=frdir, CCDIAG_NCCL_KEEP="1")
            subprocess.run([HARNESS, PLUGIN, scenario], check=True, env=env, capture_output=True, timeout=30)
        return d

    def test_ras_dead_peer_in_bundle(self):
        b = self.make_bundle(ras_fixture="status-dead-peer-2.28.7.txt")
        doc, _ = run_json(["diagnose", b], expect_rc=1)
        self.assertIn("nccl.ras.dead_process", ids(doc))
        self.assertEqual(doc["verdict"]["root_cause"], "rank_process_died")
        self.assertEqual(doc["verdict"]["culprit"].get("pid"), 39011)

    def test_flight_recorder_in_bundle(self):
        b = self.make_bundle(scenario="send_stuck")
        doc, _ = run_json(["diagnose", b], expect_rc=1)
        self.assertIn("nccl.fr.network_wait", ids(doc))
        # SendWait names the layer (network) and the rank, not yet the cause
        # within it: the leading candidate is a transport cause on rank 1.
        lead = doc["verdict"]["root_cause"]
        if lead == "insufficient_evidence":
            lead = doc["alternatives"][0]["root_cause"]
        causes, _ = run_json(["diagnose", "--list-causes"], expect_rc=0, schema=None)
        self.assertEqual({c["id"]: c["layer"] for c in causes}[lead], "transport")
        self.assertEqual(doc["verdict"]["culprit"].get("rank"), 1)
        self.assertEqual(doc["verdict"]["culprit"].get("comm"), "0x5c1e0c4a9d2f7b31")


if __name__ == "__main__":
    unittest.main()
