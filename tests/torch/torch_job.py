"""Runs tests/torch/scenario.py as a real torchrun job (4 ranks, gloo on the
CPU, rendezvous on 127.0.0.1) and keeps what a user would have afterwards:
the console (torchrun's own output, ranks teed with [defaultN]: prefixes),
the per-rank logs of --log-dir, and the flight-recorder dumps.

The venv comes from scripts/setup-torch.sh (CCDIAG_TORCH_VENV); without it
the tests skip (exit 77). Every process started here is in its own session
and is killed by process group in cleanup."""
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
from ccdiag_test import SOURCE_DIR, run, run_json, skip_unless  # noqa: E402,F401

NPROC = 4
TIMEOUT_S = 40  # collective timeout: long enough for live diagnose + collect on a loaded 2-core host


def venv_python():
    venv = os.environ.get("CCDIAG_TORCH_VENV")
    if not venv:
        venv = subprocess.run([os.path.join(SOURCE_DIR, "scripts", "setup-torch.sh"), "--print"],
                              capture_output=True, text=True).stdout.strip()
    py = os.path.join(venv, "bin", "python")
    return py if os.access(py, os.X_OK) else None


def require_torch():
    py = venv_python()
    skip_unless(py is not None, "no torch venv (scripts/setup-torch.sh installs it)")
    ok = subprocess.run([py, "-c", "import torch.distributed as d; assert d.is_gloo_available()"],
                        capture_output=True, timeout=120).returncode == 0
    skip_unless(ok, "torch in the venv cannot import torch.distributed with gloo")
    skip_unless(os.geteuid() == 0 or open("/proc/sys/kernel/yama/ptrace_scope").read().strip() == "0",
                "live capture needs ptrace of sibling processes (root or ptrace_scope 0)")
    return py


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TorchJob:
    """`with TorchJob("skip") as job: job.wait_ready(); ...; job.wait_end()`"""

    def __init__(self, scenario, timeout_s=TIMEOUT_S, culprit=2, tee=True):
        self.py = require_torch()
        self.scenario = scenario
        self.dir = tempfile.mkdtemp(prefix=f"ccdiag-torch-{scenario}-")
        self.out = os.path.join(self.dir, "out")
        self.logdir = os.path.join(self.dir, "logs")
        os.makedirs(self.out)
        self.console_path = os.path.join(self.dir, "console.log")
        env = dict(os.environ)
        env.update({"TORCH_FR_BUFFER_SIZE": "2000",
                    "CCDIAG_TORCH_TIMEOUT": str(timeout_s), "CCDIAG_TORCH_CULPRIT": str(culprit),
                    "OMP_NUM_THREADS": "1",
                    "PYTHONUNBUFFERED": "1", "GLOO_SOCKET_IFNAME": "lo", "TORCHELASTIC_ERROR_FILE": ""})
        env.pop("TORCHELASTIC_ERROR_FILE")
        self.console = open(self.console_path, "wb")
        # tee=False: no --log-dir, no --tee: the workers write straight to the
        # console, which is then all a user has.
        logging = ["--log-dir", self.logdir, "--tee", "3"] if tee else []
        cmd = [self.py, "-m", "torch.distributed.run", "--nproc-per-node", str(NPROC), "--nnodes", "1",
               "--master-addr", "127.0.0.1", "--master-port", str(free_port())] + logging + [
               "--max-restarts", "0", "--monitor-interval", "0.5",
               os.path.join(HERE, "scenario.py"), scenario, self.out]
        self.proc = subprocess.Popen(cmd, stdout=self.console, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True, cwd=self.dir)
        self.rc = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()
        if os.environ.get("CCDIAG_KEEP_TORCH_JOBS"):
            print(f"kept {self.dir}", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=30)
        self.console.close()

    def ready_ranks(self):
        return sorted(int(p.rsplit(".", 1)[1]) for p in glob.glob(os.path.join(self.out, "ready.*")))

    def wait_ready(self, ranks=range(NPROC), timeout=150, settle=3.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if set(ranks) <= set(self.ready_ranks()):
                time.sleep(settle)  # let the ranks reach the blocking call
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"job ended before it was ready:\n{self.console_text()[-4000:]}")
            time.sleep(0.2)
        raise AssertionError(f"ranks {sorted(set(ranks) - set(self.ready_ranks()))} not ready:\n"
                             f"{self.console_text()[-4000:]}")

    def wait_end(self, timeout=120):
        try:
            self.rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"job did not end within {timeout}s:\n{self.console_text()[-4000:]}")
        self.console.flush()
        return self.rc

    def console_text(self):
        self.console.flush()
        with open(self.console_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def rank_logs(self):
        return sorted(glob.glob(os.path.join(self.logdir, "**", "*.log"), recursive=True))

    def fr_dir(self):
        return os.path.join(self.out, "fr")

    def fr_dumps(self):
        return sorted(glob.glob(os.path.join(self.fr_dir(), "rank*")))

    def pids(self):
        """pid of each rank, from its ready file."""
        out = {}
        for r in self.ready_ranks():
            with open(os.path.join(self.out, f"ready.{r}")) as f:
                out[r] = int(f.read().strip() or 0)
        return out
