"""Helpers for fleet tests: generated per-host bundles (tests/fixtures/fleet/
gen_bundles.py) and per-host fixture roots for `ccdiag --root` on fake nodes."""
import os
import subprocess
import sys

from ccdiag_test import FIXTURES

GEN = os.path.join(FIXTURES, "fleet", "gen_bundles.py")


def gen_bundles(out, hosts, scenario="xid79", culprit=None):
    args = [sys.executable, GEN, "--out", out, "--hosts", str(hosts), "--scenario", scenario]
    if culprit is not None:
        args += ["--culprit", str(culprit)]
    subprocess.run(args, check=True, capture_output=True)


MOUNTS = ("overlay / overlay rw,relatime 0 0\n"
          "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
          "tmpfs /dev/shm tmpfs rw,nosuid,nodev,size=1056964608k,inode64 0 0\n")


def make_node_root(root, host, kmsg_lines):
    """A node as `ccdiag --root` sees it: hostname, kernel, mounts, libnccl, driver."""
    def put(rel, text):
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    put("proc/sys/kernel/hostname", host + "\n")
    put("proc/sys/kernel/osrelease", "5.15.0-105-generic\n")
    put("proc/sys/kernel/random/boot_id", "5d0c8a4e-2f0b-4a7e-9d55-3c1f0e7b2a91\n")
    put("proc/version", "Linux version 5.15.0-105-generic (buildd@lcy02-amd64-007) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) "
        "11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #115-Ubuntu SMP Mon Apr 15 09:52:04 UTC 2024\n")
    put("proc/mounts", MOUNTS)
    put("proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
        "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n")
    put("usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5", "")
    put("kmsg.log", "\n".join(kmsg_lines) + "\n")
