"""Helpers for live stack tests: start a test program that hangs in a known
way, wait for its "ready" line, and check afterwards that it was not left
stopped or traced. Every process started here is killed by pid in cleanup."""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cli"))
from ccdiag_test import BUILD_DIR, run, skip_unless  # noqa: E402,F401

PROGRAMS = os.path.join(BUILD_DIR, "test-programs")


_CAN_PTRACE = None


def can_ptrace():
    """True when ccdiag may attach to a sibling process here. Probed for real:
    Yama ptrace_scope 1 forbids non-descendants without CAP_SYS_PTRACE, a
    container may drop the capability, seccomp may refuse ptrace."""
    global _CAN_PTRACE
    if _CAN_PTRACE is None:
        if not os.path.exists(os.path.join(PROGRAMS, "spin_loop")):
            _CAN_PTRACE = False
        else:
            with Target("spin_loop") as t:
                p = run(["stacks", str(t.pid), "--no-lines"], timeout=60)
                _CAN_PTRACE = p.returncode == 0
    return _CAN_PTRACE


class Target:
    """A running test program; `with Target("spin_loop") as t: t.pid`."""

    def __init__(self, name, *args, ready_timeout=10, blocked=False):
        """blocked=True: the program's main thread ends in a blocking call, and
        the test asserts on it; wait until it sits there (wait_blocked)."""
        self.proc = subprocess.Popen([os.path.join(PROGRAMS, name)] + [str(a) for a in args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.extra_pids = []
        deadline = time.time() + ready_timeout
        self.ready_line = ""
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if line.startswith("ready"):
                self.ready_line = line.strip()
                break
            if not line and self.proc.poll() is not None:
                raise RuntimeError(f"{name} exited early: {self.proc.stderr.read()}")
        else:
            self.kill()
            raise RuntimeError(f"{name} did not become ready")
        self.pid = self.proc.pid
        if blocked:
            self.wait_blocked()
        else:
            self.settle()

    def _main_syscall(self):
        """The main thread's /proc/PID/syscall number ("running" when not in
        one), or None where it cannot be read."""
        try:
            with open(f"/proc/{self.pid}/syscall") as f:
                return f.read().split(" ", 1)[0].strip()
        except OSError:
            return None

    def _wait_until(self, done, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            nr = self._main_syscall()
            if nr is None or done(nr):
                return
            time.sleep(0.01)

    def settle(self, timeout=5.0):
        """The ready line is read once the target's write() has copied it, not
        once the target has left write(): wait until the main thread is out of
        the write(2) syscall (nr 1). It may still be running in __write after
        that; tests of a blocking state use wait_blocked()."""
        self._wait_until(lambda nr: nr != "1", timeout)

    def wait_blocked(self, timeout=10.0):
        """For a target whose state under test is a blocking call: wait until
        its main thread sits in a syscall other than the write(2) of its ready
        line. Just out of write() it reads "running" while its PC is still in
        __write, and a loaded host can leave it there for seconds (seen in CI)."""
        self._wait_until(lambda nr: nr.isdigit() and nr != "1", timeout)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()

    def kill(self):
        for pid in self.extra_pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        for f in (self.proc.stdout, self.proc.stderr):
            if f and not f.closed:
                f.close()


def thread_states(pid):
    """{tid: state letter} from /proc/PID/task/*/stat."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                s = f.read()
            out[int(tid)] = s[s.rindex(")") + 2]
        except (OSError, ValueError):
            pass
    return out


def tracer_pids(pid):
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("TracerPid:"):
                        out[int(tid)] = int(line.split()[1])
        except OSError:
            pass
    return out


def wait_group_exited(pgid, timeout=10):
    """Waits until no process of process group `pgid` is still running (zombies
    have exited: their tracees are already detached)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = False
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat") as f:
                    s = f.read()
            except OSError:
                continue
            fields = s[s.rindex(")") + 2:].split()
            if fields[0] != "Z" and int(fields[2]) == pgid:
                alive = True
                break
        if not alive:
            return
        time.sleep(0.02)
    raise AssertionError(f"process group {pgid} still running after {timeout} s")


def assert_running_untraced(tc, pid, settle=0.1):
    """The target is alive, no thread is stopped (T/t) and none is traced."""
    time.sleep(settle)
    tc.assertTrue(os.path.exists(f"/proc/{pid}"), "target died")
    states = thread_states(pid)
    stopped = {t: s for t, s in states.items() if s in "Tt"}
    tc.assertEqual(stopped, {}, f"threads left stopped: {stopped}")
    traced = {t: p for t, p in tracer_pids(pid).items() if p != 0}
    tc.assertEqual(traced, {}, f"threads left traced: {traced}")


def functions(thread):
    return [f["function"] for f in thread["frames"]]


def all_functions(proc):
    return [fn for t in proc["threads"] for fn in functions(t)]
