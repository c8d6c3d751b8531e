#!/usr/bin/env python3
"""ccdiag nccl attach vs what an engineer would otherwise do to see a stock
NCCL's communicator state in a hung rank:

- gdb attached to the live rank, printing the comm through NCCL's DWARF
  (`gdb -batch -p PID -ex "p *(struct ncclComm*)ADDR"`) — given the address,
  which ccdiag finds itself and gdb cannot;
- gcore (a core file of the rank, for offline reading).

The target is tests/programs/nccl_fake_rank with the installed libnccl (its
DWARF is what gdb reads) and a comm laid out with the shipped 2.28.9 row, plus
`--ballast-mb` MiB of touched anonymous memory (a rank's heap is mostly
tensors' host copies and caches: ccdiag scans it all). Runs are interleaved;
prints median wall times and each tool's time as a multiple of ccdiag's.
Peak RSS of ccdiag comes from wait4's ru_maxrss.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "live"))
os.environ.setdefault("CCDIAG_BUILD_DIR", os.path.join(ROOT, "build"))
os.environ.setdefault("CCDIAG_SOURCE_DIR", ROOT)
os.environ.setdefault("CCDIAG_BIN", os.path.join(ROOT, "build", "ccdiag"))
import test_nccl_attach as t  # noqa: E402  (the target and its spec)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--ballast-mb", type=int, default=2048)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if not t.REAL_NCCL:
        print("SKIP: no NCCL library installed (gdb needs its DWARF)")
        return 0
    tmp = tempfile.mkdtemp(prefix="ccdiag-bench-attach-")
    data = open(t.REAL_NCCL, "rb").read(64 << 20)
    i = data.find(b"NCCL version ")
    version = data[i + 13:data.index(b"+", i)].decode() if i >= 0 else "2.28.9"
    row = t.row_for(version)
    times = {}
    rss = {}
    try:
        with t.Rank(tmp, row, [t.ring_comm(row)], lib=t.REAL_NCCL, ballast_mb=a.ballast_mb) as r:
            addr = r.ready["comms"][0]
            tools = {"ccdiag nccl attach": [os.environ["CCDIAG_BIN"], "nccl", "attach", str(r.pid), "--samples", "1", "--json",
                                            "--timeout", "60"]}
            if shutil.which("gdb"):
                tools["gdb -p, print the comm (address given)"] = [
                    "gdb", "-batch", "-nx", "-p", str(r.pid), "-ex", f"p *(struct ncclComm*){addr}"]
            if shutil.which("gcore"):
                tools["gcore (core file for offline reading)"] = ["gcore", "-o", os.path.join(tmp, "core"), str(r.pid)]
            for _ in range(a.runs):
                for name, cmd in tools.items():
                    t0 = time.monotonic()
                    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                    out = p.stdout.read()
                    _, _, ru = os.wait4(p.pid, 0)  # this child's own peak RSS
                    p.returncode = 0
                    el = time.monotonic() - t0
                    times.setdefault(name, []).append(el)
                    if name.startswith("ccdiag"):
                        doc = json.loads(out)
                        assert doc["processes"][0]["comms"][0]["addr"] == addr, "ccdiag did not find the comm"
                    rss.setdefault(name, []).append(ru.ru_maxrss)
                    for f in os.listdir(tmp):
                        if f.startswith("core"):
                            os.unlink(os.path.join(tmp, f))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary = {n: {"median_s": statistics.median(v), "max_s": max(v)} for n, v in times.items()}
    base = summary["ccdiag nccl attach"]["median_s"]
    ratios = {n: s["median_s"] / base for n, s in summary.items() if not n.startswith("ccdiag")}
    if a.json:
        print(json.dumps({"ballast_mb": a.ballast_mb, "runs": a.runs, "tools": summary, "ratios_vs_ccdiag": ratios,
                          "max_rss_kb": {n: max(v) for n, v in rss.items()}}, indent=2))
        return 0
    print(f"target: NCCL {version} comm + {a.ballast_mb} MiB heap; {a.runs} interleaved runs")
    for n, s in summary.items():
        extra = "" if n.startswith("ccdiag") else f"  ({ratios[n]:.1f}x ccdiag)"
        print(f"  {n:<44} median {s['median_s'] * 1000:8.0f} ms  max {s['max_s'] * 1000:8.0f} ms  "
              f"peak RSS {max(rss[n]) // 1024:5d} MiB{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
