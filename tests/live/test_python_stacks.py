"""ccdiag stacks reads the Python stacks of stuck CPython processes from
outside, for every interpreter 3.10-3.14 found on this machine (PATH, `pyenv
root`), and agrees frame for frame with the same process's own
faulthandler dump (function name, file, line per thread)."""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from stacks_helpers import assert_running_untraced, can_ptrace, run, skip_unless  # noqa: E402
from ccdiag_test import validate  # noqa: E402

skip_unless(can_ptrace(), "ptrace of own children is not allowed here (yama ptrace_scope >= 2 and not root)")

TARGET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "py_stuck_target.py")
MINORS = (10, 11, 12, 13, 14)


def version_of(exe):
    try:
        out = subprocess.run([exe, "-c", "import sys; print(sys.version_info[1], hasattr(sys, '_is_gil_enabled') "
                              "and not sys._is_gil_enabled())"], capture_output=True, text=True, timeout=20)
        minor, ft = out.stdout.split()
        return int(minor), ft == "True"
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None, None


def find_interpreters():
    """[(minor, path)]: every distinct CPython 3.10-3.14 (GIL build) found: the
    interpreter running this test (Debian's python3 under CTest), python3.X on
    PATH, and pyenv's versions. pyenv shims are scripts, not interpreters."""
    cands = [sys.executable]
    for name in ["python3"] + [f"python3.{m}" for m in MINORS]:
        p = shutil.which(name)
        if p:
            cands.append(p)
    try:
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        root = ""
    if root:
        cands += sorted(glob.glob(os.path.join(root, "versions", "3.*", "bin", "python3.*[0-9]")))
    found, seen = [], set()
    for c in cands:
        real = os.path.realpath(c)
        if "shims" in real or real in seen:
            continue
        seen.add(real)
        minor, ft = version_of(real)
        if minor in MINORS and not ft:
            found.append((minor, real))
    return found


INTERPRETERS = find_interpreters()
skip_unless(INTERPRETERS, "no CPython 3.10-3.14 interpreter found")


def parse_faulthandler(text):
    """{thread_id: [(name, file, line or None), ...newest first]}"""
    threads, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^(?:Current thread|Thread) 0x([0-9a-f]+) \(most recent call first\):", line)
        if m:
            cur = threads.setdefault(int(m.group(1), 16), [])
            continue
        m = re.match(r'^  File "(.*)", line (\d+|\?\?\?) in (.*)$', line)
        if m and cur is not None:
            cur.append((m.group(3), m.group(1), None if m.group(2) == "???" else int(m.group(2))))
    return threads


class Stuck:
    def __init__(self, exe, spin=False):
        self.exe, self.spin = exe, spin

    def __enter__(self):
        self.dir = tempfile.mkdtemp()
        self.tb = os.path.join(self.dir, "tb.txt")
        args = [self.exe, TARGET, self.tb] + (["spin"] if self.spin else [])
        self.p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        if line.strip() != "ready":
            raise AssertionError(f"target did not start: {line!r}")
        self.pid = self.p.pid
        return self

    def ground_truth(self):
        os.kill(self.pid, signal.SIGUSR1)
        for _ in range(200):
            time.sleep(0.05)
            with open(self.tb) as f:
                text = f.read()
            if text.count("(most recent call first)") >= 17 and text.endswith("\n\n"):
                break
        return parse_faulthandler(text)

    def __exit__(self, *a):
        self.p.kill()
        self.p.wait()
        self.p.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def python_frames(thread):
    return [f for f in thread["frames"] if f["kind"] == "python"]


class PythonStacksLive(unittest.TestCase):
    def check_interpreter(self, minor, exe, spin=False):
        with Stuck(exe, spin) as t:
            # With a spinner holding the GIL, the main thread can still be on its
            # way into held.acquire() when the target says ready (it needs the
            # GIL between bytecodes; on a loaded machine it waits for it), caught
            # between a C call and its Python frame: the capture then says "not
            # interleaved", honestly. A capture a moment later must be clean; a
            # walker that is wrong is wrong every time.
            for _ in range(3):
                p = run(["stacks", str(t.pid), "--json"], timeout=90)
                self.assertIn(p.returncode, (0, 3), p.stderr)
                doc = json.loads(p.stdout)
                if not any("not interleaved" in pr and f"thread {t.pid}:" in pr for pr in doc["processes"][0]["problems"]):
                    break
            validate(doc, "stacks.schema.json")
            truth = t.ground_truth()
            proc = doc["processes"][0]
            self.assertEqual(proc.get("python", {}).get("error", ""), "", proc.get("python"))
            self.assertTrue(proc["python"]["version"].startswith(f"3.{minor}"), proc["python"])
            by_id = {int(th["python"]["thread_id"], 16): th for th in proc["threads"] if "python" in th}
            self.assertEqual(set(by_id), set(truth), "Python threads differ from faulthandler's")
            for tid, expected in truth.items():
                got = [(f["function"].split(".")[-1], f["file"], f["line"]) for f in python_frames(by_id[tid])]
                self.assertEqual(got, expected[:100] if len(expected) > 100 else expected, f"thread 0x{tid:x}")
            main = [th for th in proc["threads"] if th["tid"] == t.pid][0]
            names = [f["function"] for f in python_frames(main)]
            self.assertEqual(names[:2], ["block_main", "main"])
            deep = [th for th in by_id.values() if any(f["function"] == "recurse" for f in th["frames"])][0]
            self.assertEqual(sum(f["function"] == "recurse" for f in deep["frames"]), 41)
            if minor >= 11:  # qualified names exist from 3.11
                self.assertTrue(any(f["function"] == "Worker.wait_on_lock" for th in by_id.values()
                                    for f in th["frames"]))
            holders = [th for th in proc["threads"] if th.get("python", {}).get("holds_gil")]
            if spin:
                self.assertEqual(len(holders), 1)
                self.assertIn("spin", [f["function"] for f in python_frames(holders[0])])
            else:
                self.assertEqual(holders, [])
            # Interleaved: the main thread's Python frames sit among native frames,
            # and no eval-loop frame is left in their place.
            kinds = [f["kind"] for f in main["frames"]]
            self.assertEqual(kinds[0], "native", kinds)
            self.assertFalse(any("not interleaved" in pr for pr in proc["problems"] if f"thread {t.pid}:" in pr),
                             proc["problems"])
            self.assertFalse(any("_PyEval_EvalFrameDefault" == f["function"] for f in main["frames"]))
            assert_running_untraced(self, t.pid)

    def test_every_interpreter_matches_faulthandler(self):
        for minor, exe in INTERPRETERS:
            with self.subTest(python=exe):
                self.check_interpreter(minor, exe)
        missing = sorted(set(MINORS) - {m for m, _ in INTERPRETERS})
        print(f"interpreters tested: {INTERPRETERS}; not present: {missing}", file=sys.stderr)

    def test_gil_holder_is_the_spinning_thread(self):
        for minor, exe in INTERPRETERS:
            with self.subTest(python=exe):
                self.check_interpreter(minor, exe, spin=True)

    def test_text_output_names_python_frames_and_census(self):
        minor, exe = INTERPRETERS[0]
        with Stuck(exe) as t:
            p = run(["stacks", str(t.pid)], timeout=90)
            self.assertIn(p.returncode, (0, 3), p.stderr)
            self.assertRegex(p.stdout, r"\[python\] block_main \(.*py_stuck_target\.py:\d+\)")
            # The activity line names where the rank is in Python.
            self.assertRegex(p.stdout.splitlines()[0], r"at py_stuck_target\.py:\d+ in block_main$")

    def test_unsupported_interpreter_says_why_and_keeps_native_stack(self):
        old = []
        try:
            root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=20).stdout.strip()
            old = sorted(glob.glob(os.path.join(root, "versions", "3.[6-9].*", "bin", "python3.[6-9]"))) if root else []
        except (OSError, subprocess.TimeoutExpired):
            pass
        if not old:
            self.skipTest("no CPython older than 3.10 present")
        minor, _ = version_of(old[-1])
        with Stuck(old[-1]) as t:
            p = run(["stacks", str(t.pid)], timeout=90)
            self.assertIn(p.returncode, (0, 3), p.stderr)
            self.assertIn(f"! Python frames unavailable: CPython 3.{minor} not supported", p.stdout)
            self.assertIn("__futex_abstimed_wait_common", p.stdout)  # the native stack is still there
            self.assertNotIn("[python]", p.stdout)
            doc = json.loads(run(["stacks", str(t.pid), "--json"], timeout=90).stdout)
            validate(doc, "stacks.schema.json")
            self.assertIn(f"CPython 3.{minor} not supported", doc["processes"][0]["python"]["error"])


if __name__ == "__main__":
    unittest.main()
