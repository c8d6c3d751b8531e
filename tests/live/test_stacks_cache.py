"""The symbol cache (docs/stacks.md, "Symbol cache") never changes what
`ccdiag stacks` prints: the frames of a parked process are the same with the
cache cold (empty directory), warm, corrupted and disabled; the cold run fills
the directory with private entries; an unsafe directory is refused with a
warning and the capture still succeeds."""
import json
import os
import shutil
import stat
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from stacks_helpers import Target, assert_running_untraced, can_ptrace, run, skip_unless  # noqa: E402
from ccdiag_test import validate  # noqa: E402

skip_unless(can_ptrace(), "ptrace of own children is not allowed here (yama ptrace_scope >= 2 and not root)")


def capture(pid, *extra):
    p = run(["stacks", str(pid), "--json"] + list(extra), timeout=60)
    if p.returncode != 0:
        raise AssertionError(f"exit {p.returncode}\nstdout:{p.stdout[-3000:]}\nstderr:{p.stderr[-3000:]}")
    doc = json.loads(p.stdout)
    validate(doc, "stacks.schema.json")
    return doc, p


def frames_by_thread(doc, skip_names=()):
    """{tid: [(pc, function, module, file, line, kind), ...]} of the threads
    that cannot move between captures (heartbeat threads wake every 1 ms)."""
    out = {}
    for th in doc["processes"][0]["threads"]:
        if th["name"] in skip_names:
            continue
        out[th["tid"]] = [(f["pc"], f["function"], f["module"], f["file"], f["line"], f["kind"]) for f in th["frames"]]
    return out


class SymbolCacheLive(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ccdiag-symcache-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.cache = os.path.join(self.tmp, "cache")

    def entries(self):
        return sorted(n for n in os.listdir(self.cache) if not n.startswith("."))

    def test_frames_identical_cold_warm_corrupt_and_disabled(self):
        # many_threads: futex, sleep, pipe, epoll and recv parkers, a 200-deep
        # recursion (file:line from its -g build); heartbeats excluded.
        with Target("many_threads", 24) as t:
            heartbeat = {f"worker-{i}" for i in range(24) if i % 6 == 5}
            cold, _ = capture(t.pid, "--symbol-cache", self.cache)
            names = self.entries()
            self.assertTrue(any(n.startswith("sym-") for n in names), names)
            self.assertTrue(any(n.startswith("line-") for n in names), names)
            self.assertEqual(stat.S_IMODE(os.stat(self.cache).st_mode), 0o700)
            for n in names:
                st = os.lstat(os.path.join(self.cache, n))
                self.assertTrue(stat.S_ISREG(st.st_mode))
                self.assertEqual(st.st_uid, os.geteuid())
                self.assertEqual(stat.S_IMODE(st.st_mode) & 0o077, 0, n)
            warm, _ = capture(t.pid, "--symbol-cache", self.cache)
            off, _ = capture(t.pid, "--no-symbol-cache")
            # Every entry's bytes past its header overwritten: ignored and rebuilt.
            for n in names:
                with open(os.path.join(self.cache, n), "r+b") as f:
                    f.seek(220)
                    f.write(b"\xff" * 64)
            corrupt, _ = capture(t.pid, "--symbol-cache", self.cache)
            ref = frames_by_thread(cold, heartbeat)
            self.assertGreaterEqual(len(ref), 20)
            deep = [fr for fr in ref.values() if sum(1 for f in fr if f[1] == "recurse_then_wait") >= 200]
            self.assertEqual(len(deep), 1, "the 200-deep recursion is named")
            self.assertTrue(all(f[3] and f[3].endswith("many_threads.c") and f[4] > 0
                                for f in deep[0] if f[1] == "recurse_then_wait"))
            for label, doc in (("warm", warm), ("disabled", off), ("corrupt", corrupt)):
                self.assertEqual(frames_by_thread(doc, heartbeat), ref, label)
            assert_running_untraced(self, t.pid)

    def test_env_variable_and_off(self):
        with Target("hang_mutex_deadlock") as t:
            p = run(["stacks", str(t.pid), "--json"], env={"CCDIAG_SYMBOL_CACHE": self.cache}, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(self.entries())
            other = os.path.join(self.tmp, "unused")
            p = run(["stacks", str(t.pid), "--json"], env={"CCDIAG_SYMBOL_CACHE": "off", "XDG_CACHE_HOME": other,
                                                          "HOME": other}, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertFalse(os.path.exists(other))

    def test_unsafe_directory_refused_capture_still_succeeds(self):
        os.mkdir(self.cache, 0o700)
        os.chmod(self.cache, 0o777)
        with Target("hang_mutex_deadlock") as t:
            doc, p = capture(t.pid, "--symbol-cache", self.cache)
            self.assertIn("symbol cache not used", p.stderr)
            self.assertIn("writable", p.stderr)
            self.assertEqual(os.listdir(self.cache), [])
            fns = [f["function"] for th in doc["processes"][0]["threads"] for f in th["frames"]]
            self.assertIn("lock_a_then_b", fns)
            link = os.path.join(self.tmp, "link")
            os.chmod(self.cache, 0o700)
            os.symlink(self.cache, link)
            _, p = capture(t.pid, "--symbol-cache", link)
            self.assertIn("symlink", p.stderr)
            self.assertEqual(os.listdir(self.cache), [])


if __name__ == "__main__":
    unittest.main()
