#!/usr/bin/python3
"""Capture the parts of a GPU/RDMA host that `ccdiag probe pcie|rdma|config`
read into a --root tree (the layout of tests/fixtures/sysroots/, docs/probe.md),
redacted, so a real node's state can become a fixture or be sent for analysis.

    sudo python3 scripts/capture_hw_fixture.py OUT_DIR [--interval 2]

Run as root to capture config space beyond 64 bytes (ACS). What it writes:
sysfs attributes of every GPU/NIC and each bridge up to its root port (with
the kernel's own symlink texts), the RDMA ports (GIDs, counters), their
netdevs, a second counter sample under t1/, IOMMU groups, errno.map for every
attribute that failed to read (EINVAL on empty GID slots...), /proc/cmdline,
btime, modules, NVIDIA driver files, rank processes (environ reduced to
RANK/LOCAL_RANK), and `rdma -j res show qp` when iproute2's rdma is present.
Redacted: the hostname, node/port GUIDs and IPv4 addresses inside GIDs.
"""
import argparse
import errno
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time

ATTRS = ["vendor", "device", "class", "numa_node", "local_cpulist", "current_link_speed", "max_link_speed",
         "current_link_width", "max_link_width", "aer_dev_correctable", "aer_dev_nonfatal", "aer_dev_fatal",
         "aer_rootport_total_err_cor", "aer_rootport_total_err_fatal", "aer_rootport_total_err_nonfatal", "config"]
BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def redact(text):
    if isinstance(text, bytes):
        return text
    def guid(m):
        h = hashlib.sha256(m.group(0).encode()).hexdigest()
        return "%s:%s:%s:%s" % (h[0:4], h[4:8], h[8:12], h[12:16])
    text = re.sub(r"\b[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}$", guid, text, flags=re.M)
    # IPv4-mapped GIDs ::ffff:a.b.c.d -> 10.0.c.d
    text = re.sub(r"0000:ffff:[0-9a-f]{4}:([0-9a-f]{4})", r"0000:ffff:0a00:\1", text)
    return text


class Capture:
    def __init__(self, out):
        self.out = out
        self.errno_lines = []
        os.makedirs(out, exist_ok=True)

    def copy(self, host_path, dest_rel=None, binary=False, transform=None):
        dest = os.path.join(self.out, (dest_rel or host_path).lstrip("/"))
        try:
            with open(host_path, "rb") as f:
                data = f.read(1 << 20)
        except OSError as e:
            if e.errno in (errno.ENOENT, errno.EISDIR):
                return False
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            open(dest, "w").close()
            self.errno_lines.append("%s %s" % ((dest_rel or host_path).lstrip("/"), errno.errorcode.get(e.errno, "EIO")))
            return False
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if not binary:
            data = data.decode("utf-8", "replace")
            data = transform(data) if transform else redact(data)
            with open(dest, "w") as f:
                f.write(data)
        else:
            with open(dest, "wb") as f:
                f.write(data)
        return True

    def link(self, host_path):
        """Recreate a symlink with the kernel's own (relative) text."""
        dest = os.path.join(self.out, host_path.lstrip("/"))
        if os.path.lexists(dest):
            return
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        os.symlink(os.readlink(host_path), dest)

    def tree(self, host_dir, skip=()):
        """Every regular attribute below host_dir (no symlinks followed)."""
        for dirpath, dirnames, filenames in os.walk(host_dir):
            dirnames[:] = [d for d in dirnames if d not in skip and not os.path.islink(os.path.join(dirpath, d))]
            for n in filenames:
                p = os.path.join(dirpath, n)
                if os.path.islink(p):
                    if n == "device":
                        self.link(p)
                    continue
                self.copy(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--interval", type=float, default=2.0)
    a = ap.parse_args()
    c = Capture(a.out)
    devices = "/sys/bus/pci/devices"
    os.makedirs(os.path.join(a.out, devices.lstrip("/")), exist_ok=True)
    wanted = set()
    ib_devs = sorted(os.listdir("/sys/class/infiniband")) if os.path.isdir("/sys/class/infiniband") else []
    for bdf in sorted(os.listdir(devices)):
        try:
            vendor = open(os.path.join(devices, bdf, "vendor")).read().strip()
            cls = open(os.path.join(devices, bdf, "class")).read().strip()
        except OSError:
            continue
        if vendor == "0x10de" or os.path.isdir(os.path.join(devices, bdf, "infiniband")):
            wanted.add(bdf)
            c.link(os.path.join(devices, bdf))
            if vendor == "0x10de" and cls.startswith("0x0680"):
                for n in ("vendor", "device", "class"):
                    c.copy(os.path.realpath(os.path.join(devices, bdf, n)))
                continue
            real = os.path.realpath(os.path.join(devices, bdf))
            # the device and every bridge above it
            for part in real.split("/"):
                if BDF.match(part):
                    hop = real[: real.index(part) + len(part)]
                    for n in ATTRS:
                        c.copy(os.path.join(hop, n), binary=(n == "config"))
                    c.link(os.path.join(devices, part))
                    g = os.path.join(hop, "iommu_group")
                    if os.path.islink(g):
                        c.link(g)
                        c.copy(os.path.join(os.path.realpath(g), "type"))
    for dev in ib_devs:
        c.link("/sys/class/infiniband/" + dev)
        real = os.path.realpath("/sys/class/infiniband/" + dev)
        c.tree(real)
        for port in os.listdir(os.path.join(real, "ports")):
            for nd_dir in ("gid_attrs/ndevs",):
                d = os.path.join(real, "ports", port, nd_dir)
                for i in os.listdir(d) if os.path.isdir(d) else []:
                    try:
                        nd = open(os.path.join(d, i)).read().strip()
                    except OSError:
                        continue
                    if nd and os.path.lexists("/sys/class/net/" + nd):
                        c.link("/sys/class/net/" + nd)
                        c.tree(os.path.realpath("/sys/class/net/" + nd), skip=("queues", "power", "subsystem"))
        net = os.path.join(real, "device", "net")
        for nd in os.listdir(net) if os.path.isdir(net) else []:
            c.link("/sys/class/net/" + nd)
            c.tree(os.path.realpath("/sys/class/net/" + nd), skip=("queues", "power", "subsystem"))
    os.makedirs(os.path.join(a.out, "sys/class/iommu"), exist_ok=True)
    for u in os.listdir("/sys/class/iommu") if os.path.isdir("/sys/class/iommu") else []:
        os.makedirs(os.path.join(a.out, "sys/class/iommu", u), exist_ok=True)
    time.sleep(a.interval)
    for dev in ib_devs:
        base = "/sys/class/infiniband/%s/ports" % dev
        for port in os.listdir(base):
            for grp in ("counters", "hw_counters"):
                d = os.path.join(base, port, grp)
                for n in os.listdir(d) if os.path.isdir(d) else []:
                    c.copy(os.path.join(d, n), dest_rel="t1" + os.path.join(d, n))
    for nd in os.listdir(os.path.join(a.out, "sys/class/net")) if os.path.isdir(os.path.join(a.out, "sys/class/net")) else []:
        c.copy("/sys/class/net/%s/carrier_changes" % nd, dest_rel="t1/sys/class/net/%s/carrier_changes" % nd)

    for p in ("/proc/cmdline", "/proc/sys/kernel/osrelease", "/proc/modules", "/proc/driver/nvidia/version",
              "/sys/module/nvidia_peermem/version", "/sys/module/nvidia_peermem/initstate",
              "/sys/kernel/mm/memory_peers/nv_mem/version"):
        c.copy(p)
    c.copy("/proc/stat", transform=lambda t: "".join(l for l in t.splitlines(True) if l.startswith("btime")))
    c.copy("/proc/mounts", transform=lambda t: "".join(l for l in t.splitlines(True) if " /dev/shm " in l))
    with open(os.path.join(a.out, "proc/sys/kernel/hostname"), "w") as f:
        f.write("captured-host\n")
    if os.path.isdir("/proc/driver/nvidia/gpus"):
        for g in os.listdir("/proc/driver/nvidia/gpus"):
            c.copy("/proc/driver/nvidia/gpus/%s/information" % g)
    if os.path.exists("/dev/nvidia-nvswitchctl"):
        os.makedirs(os.path.join(a.out, "dev"), exist_ok=True)
        open(os.path.join(a.out, "dev/nvidia-nvswitchctl"), "w").close()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
            comm = open("/proc/%s/comm" % pid).read()
        except OSError:
            continue
        keep = [e for e in env if e.split(b"=", 1)[0] in (b"RANK", b"LOCAL_RANK")]
        if comm.strip() == "nv-fabricmanage" or keep:
            c.copy("/proc/%s/comm" % pid)
            c.copy("/proc/%s/status" % pid)
            c.copy("/proc/%s/limits" % pid)
            with open(os.path.join(a.out, "proc", pid, "environ"), "wb") as f:
                f.write(b"\0".join(keep) + (b"\0" if keep else b""))
    rdma = shutil.which("rdma")
    if rdma:
        p = subprocess.run([rdma, "-j", "res", "show", "qp"], capture_output=True, text=True, timeout=10)
        if p.returncode == 0:
            with open(os.path.join(a.out, "rdma-res-qp.json"), "w") as f:
                f.write(p.stdout)
    if c.errno_lines:
        with open(os.path.join(a.out, "errno.map"), "w") as f:
            f.write("# captured read failures: path errno\n" + "\n".join(c.errno_lines) + "\n")
    print("captured into %s (%d read failures recorded in errno.map)" % (a.out, len(c.errno_lines)), file=sys.stderr)


if __name__ == "__main__":
    main()
