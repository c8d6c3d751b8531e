#!/usr/bin/env python3
"""Native stacks of a 100-thread process, side by side in one run:
ccdiag stacks vs eu-stack -p vs gdb -batch -ex "thread apply all bt".

Reports, per tool, the median and p90 wall time of N runs (default 10) and
ccdiag's own target pause (first PTRACE_INTERRUPT -> last PTRACE_DETACH), then
the ratios. Targets: pause < 20 ms, ccdiag wall <= eu-stack,
ccdiag >= 10x faster than gdb. Tools that are missing are skipped (the GPU
machine has no gdb).

Usage: bench/stacks/bench_stacks.py [--runs N] [--threads T] [--build DIR]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def timed(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    return (time.perf_counter() - t0) * 1000.0, p


def states(pid):
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                s = f.read()
            out.append(s[s.rindex(")") + 2])
        except OSError:
            pass
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--threads", type=int, default=100)
    ap.add_argument("--build", default=os.path.join(SOURCE, "build"))
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    a = ap.parse_args()
    ccdiag = os.path.join(a.build, "ccdiag")
    target_bin = os.path.join(a.build, "test-programs", "many_threads")
    for f in (ccdiag, target_bin):
        if not os.path.exists(f):
            sys.exit(f"bench: {f} missing: build first (ninja -C build)")
    target = subprocess.Popen([target_bin, str(a.threads)], stdout=subprocess.PIPE, text=True)
    try:
        if not target.stdout.readline().startswith("ready"):
            sys.exit("bench: target did not start")
        pid = target.pid
        tools = {
            "ccdiag": [ccdiag, "stacks", str(pid), "--json"],
            "ccdiag --no-lines": [ccdiag, "stacks", str(pid), "--json", "--no-lines"],
        }
        if shutil.which("eu-stack"):
            tools["eu-stack -p"] = ["eu-stack", "-p", str(pid)]
            tools["eu-stack -s -p"] = ["eu-stack", "-s", "-p", str(pid)]
        if shutil.which("gdb"):
            tools["gdb thread apply all bt"] = ["gdb", "-batch", "-nx", "-ex", "thread apply all bt", "-p", str(pid)]
        results = {}
        pauses = []
        frames = {}
        # Interleave the tools run by run so machine noise hits all of them alike.
        for _ in range(a.runs):
            for name, cmd in tools.items():
                ms, p = timed(cmd)
                if p.returncode not in (0, 3) and not name.startswith("eu-stack"):
                    sys.exit(f"bench: {name} failed ({p.returncode}): {p.stderr[-500:]}")
                results.setdefault(name, []).append(ms)
                if name == "ccdiag":
                    doc = json.loads(p.stdout)
                    pauses.append(doc["processes"][0]["pause_ms"])
                    frames["ccdiag"] = sum(len(t["frames"]) for t in doc["processes"][0]["threads"])
                elif name == "eu-stack -p":
                    frames["eu-stack"] = sum(1 for l in p.stdout.splitlines() if l.startswith("#"))
                elif name.startswith("gdb"):
                    frames["gdb"] = sum(1 for l in p.stdout.splitlines() if l.startswith("#"))
                left = [s for s in states(pid) if s in "tT"]
                if left:
                    sys.exit(f"bench: {name} left {len(left)} threads stopped")
        summary = {n: {"median_ms": statistics.median(v), "p90_ms": pct(v, 90)} for n, v in results.items()}
        summary["ccdiag"]["pause_median_ms"] = statistics.median(pauses)
        summary["ccdiag"]["pause_p90_ms"] = pct(pauses, 90)
        base = summary["ccdiag"]["median_ms"]
        ratios = {n: s["median_ms"] / base for n, s in summary.items() if not n.startswith("ccdiag")}
        if a.json:
            print(json.dumps({"threads": a.threads, "runs": a.runs, "tools": summary, "ratios_vs_ccdiag": ratios,
                              "frames": frames}, indent=2))
            return
        print(f"{a.threads}-thread target, {a.runs} runs each (median / p90 wall ms)")
        for n, s in summary.items():
            extra = ""
            if n == "ccdiag":
                extra = f"   target pause {s['pause_median_ms']:.1f} ms (p90 {s['pause_p90_ms']:.1f})"
            print(f"  {n:<26} {s['median_ms']:8.1f} / {s['p90_ms']:8.1f}{extra}")
        for n, r in ratios.items():
            print(f"  {n} takes {r:.1f}x the time of ccdiag")
        print(f"  frames: {frames}")
    finally:
        target.kill()
        target.wait()


if __name__ == "__main__":
    main()
