#!/usr/bin/env python3
"""Stacks of a live process, side by side in one run, against the tool a user
would run instead (bench/stacks/README.md):

1. native: a 100-thread C process (test-programs/many_threads): ccdiag stacks
   (symbol cache warm, cold = a fresh empty cache directory every run, and
   disabled) vs eu-stack -p vs gdb -batch -ex "thread apply all bt";
2. python: a stuck Python rank (bench/stacks/py_rank.py, 8 threads):
   ccdiag stacks (native + Python frames, warm cache) vs py-spy dump
   (Python frames) and py-spy dump --native.

Tools run interleaved, run by run, so machine noise hits all of them alike.
Reports per tool the median and p90 wall time of N runs (default 10),
ccdiag's target pause (first PTRACE_INTERRUPT -> last PTRACE_DETACH) and each
tool's time as a multiple of ccdiag's (warm). Targets: warm ccdiag >= 5x
faster than eu-stack, >= 30x faster than gdb, no slower than py-spy dump;
pause < 10 ms. Tools that are missing are skipped. Fails if any tool leaves a
thread stopped.

Usage: bench/stacks/bench_stacks.py [--runs N] [--threads T] [--build DIR]
       [--py-spy PATH] [--python PATH] [--json]
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


def start(cmd):
    target = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    if not target.stdout.readline().startswith("ready"):
        target.kill()
        sys.exit(f"bench: {cmd[0]} did not start")
    return target


def find_py_spy(build, given):
    for c in (given, os.path.join(build, "pyspy-venv", "bin", "py-spy"), shutil.which("py-spy")):
        if c and os.path.exists(c):
            return c
    return None


def run_suite(pid, tools, runs, frame_counters):
    """Runs every tool `runs` times, interleaved. Returns {name: [ms]},
    ccdiag pauses and frame counts."""
    results, pauses, frames = {}, [], {}
    for _ in range(runs):
        for name, (cmd, before) in tools.items():
            if before:
                before()
            ms, p = timed(cmd)
            if p.returncode not in (0, 3) and not name.startswith("eu-stack"):
                sys.exit(f"bench: {name} failed ({p.returncode}): {p.stderr[-500:]}")
            results.setdefault(name, []).append(ms)
            if name.startswith("ccdiag"):
                doc = json.loads(p.stdout)
                if name == "ccdiag (warm cache)":
                    pauses.append(doc["processes"][0]["pause_ms"])
                frames[name] = sum(len(t["frames"]) for t in doc["processes"][0]["threads"])
            elif name in frame_counters:
                frames[name] = frame_counters[name](p.stdout)
            left = [s for s in states(pid) if s in "tT"]
            if left:
                sys.exit(f"bench: {name} left {len(left)} threads stopped")
    return results, pauses, frames


def summarise(results, pauses):
    summary = {n: {"median_ms": statistics.median(v), "p90_ms": pct(v, 90)} for n, v in results.items()}
    base = summary["ccdiag (warm cache)"]
    base["pause_median_ms"] = statistics.median(pauses)
    base["pause_p90_ms"] = pct(pauses, 90)
    ratios = {n: s["median_ms"] / base["median_ms"] for n, s in summary.items() if n != "ccdiag (warm cache)"}
    return summary, ratios


def hash_lines(text):
    return sum(1 for line in text.splitlines() if line.startswith("#"))


def pyspy_frames(text):
    # py-spy dump: "    function (file:line)" under each "Thread ..." header.
    return sum(1 for line in text.splitlines() if line.startswith("    ") and "(" in line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--threads", type=int, default=100)
    ap.add_argument("--build", default=os.path.join(SOURCE, "build"))
    ap.add_argument("--py-spy", default=None, help="py-spy binary (default: BUILD/pyspy-venv/bin/py-spy, then PATH)")
    ap.add_argument("--python", default="/usr/bin/python3", help="interpreter of the Python rank")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--compare", default=None,
                    help="another ccdiag binary (an earlier build) run in the same interleaved rounds, warm cache")
    a = ap.parse_args()
    ccdiag = os.path.join(a.build, "ccdiag")
    target_bin = os.path.join(a.build, "test-programs", "many_threads")
    for f in (ccdiag, target_bin):
        if not os.path.exists(f):
            sys.exit(f"bench: {f} missing: build first (ninja -C {a.build} ccdiag many_threads)")
    py_spy = find_py_spy(a.build, a.py_spy)
    scratch = tempfile.mkdtemp(prefix="ccdiag-bench-")
    warm_dir = os.path.join(scratch, "warm")
    cold_dir = os.path.join(scratch, "cold")

    def empty_cold():
        shutil.rmtree(cold_dir, ignore_errors=True)

    out = {"threads": a.threads, "runs": a.runs, "load_before": os.getloadavg()}
    try:
        # 1. Native: the 100-thread C target.
        target = start([target_bin, str(a.threads)])
        try:
            pid = target.pid
            tools = {
                "ccdiag (warm cache)": ([ccdiag, "stacks", str(pid), "--json", "--symbol-cache", warm_dir], None),
                "ccdiag (cold cache)": ([ccdiag, "stacks", str(pid), "--json", "--symbol-cache", cold_dir], empty_cold),
                "ccdiag --no-symbol-cache": ([ccdiag, "stacks", str(pid), "--json", "--no-symbol-cache"], None),
            }
            if a.compare:
                tools["ccdiag --compare (warm cache)"] = (
                    [a.compare, "stacks", str(pid), "--json", "--symbol-cache", warm_dir], None)
            if shutil.which("eu-stack"):
                tools["eu-stack -p"] = (["eu-stack", "-p", str(pid)], None)
            if shutil.which("gdb"):
                tools["gdb thread apply all bt"] = (
                    ["gdb", "-batch", "-nx", "-ex", "thread apply all bt", "-p", str(pid)], None)
            subprocess.run(tools["ccdiag (warm cache)"][0], capture_output=True, timeout=120)  # prime the warm cache
            results, pauses, frames = run_suite(pid, tools, a.runs,
                                                {"eu-stack -p": hash_lines, "gdb thread apply all bt": hash_lines})
            summary, ratios = summarise(results, pauses)
            out["native"] = {"tools": summary, "ratios_vs_ccdiag_warm": ratios, "frames": frames}
        finally:
            target.kill()
            target.wait()

        # 2. Python: a stuck rank.
        if os.path.exists(a.python):
            target = start([a.python, os.path.join(HERE, "py_rank.py")])
            try:
                pid = target.pid
                tools = {
                    "ccdiag (warm cache)": ([ccdiag, "stacks", str(pid), "--json", "--symbol-cache", warm_dir], None),
                    "ccdiag (cold cache)": ([ccdiag, "stacks", str(pid), "--json", "--symbol-cache", cold_dir],
                                            empty_cold),
                }
                if a.compare:
                    tools["ccdiag --compare (warm cache)"] = (
                        [a.compare, "stacks", str(pid), "--json", "--symbol-cache", warm_dir], None)
                if py_spy:
                    tools["py-spy dump"] = ([py_spy, "dump", "--pid", str(pid)], None)
                    tools["py-spy dump --native"] = ([py_spy, "dump", "--native", "--pid", str(pid)], None)
                subprocess.run(tools["ccdiag (warm cache)"][0], capture_output=True, timeout=120)
                results, pauses, frames = run_suite(pid, tools, a.runs,
                                                    {"py-spy dump": pyspy_frames, "py-spy dump --native": pyspy_frames})
                summary, ratios = summarise(results, pauses)
                out["python"] = {"interpreter": a.python, "py_spy": py_spy, "tools": summary,
                                 "ratios_vs_ccdiag_warm": ratios, "frames": frames}
            finally:
                target.kill()
                target.wait()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    out["load_after"] = os.getloadavg()

    if a.json:
        print(json.dumps(out, indent=2))
        return
    print(f"load average before {out['load_before'][0]:.1f}, after {out['load_after'][0]:.1f}; "
          f"{a.runs} runs each, interleaved (median / p90 wall ms)")
    for part, title in (("native", f"{a.threads}-thread C process"), ("python", "stuck Python rank")):
        if part not in out:
            continue
        r = out[part]
        print(f"{title}:")
        for n, s in r["tools"].items():
            extra = ""
            if "pause_median_ms" in s:
                extra = f"   target pause {s['pause_median_ms']:.1f} ms (p90 {s['pause_p90_ms']:.1f})"
            print(f"  {n:<26} {s['median_ms']:8.1f} / {s['p90_ms']:8.1f}{extra}")
        for n, x in r["ratios_vs_ccdiag_warm"].items():
            print(f"  {n} takes {x:.2f}x the time of ccdiag (warm cache)")
        print(f"  frames: {r['frames']}")


if __name__ == "__main__":
    main()
