#!/usr/bin/env python3
"""Times a command as a whole process, alone or paired with a second one.

    pair_time.py [-n RUNS] [--warmup N] [--timeout S] [--vs 'COMMAND B'] -- COMMAND A [ARG ...]

Each counted round runs A then B (A B A B ...), after uncounted warm-up rounds. Every run's figures come
from the kernel's accounting of the finished child (wait4: user and system CPU seconds, peak RSS), its
wall time from a monotonic clock around it. Prints min / median / max of each figure and, with --vs,
the ratio A/B pair by pair (so a drift in the machine's speed cancels). Output of the commands is
discarded; their exit codes are printed, never judged (a diagnosis that finds a problem exits 1).
Exit status: 0 when every run finished, 2 on bad arguments, 3 when --timeout cut the rounds short.
"""
import argparse
import os
import shlex
import statistics
import sys
import time


def run_once(argv, deadline):
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            fd = os.open(os.devnull, os.O_RDWR)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    while True:
        wpid, status, ru = os.wait4(pid, os.WNOHANG)
        if wpid == pid:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.002)
    wall = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    return {"user": ru.ru_utime, "sys": ru.ru_stime, "cpu": ru.ru_utime + ru.ru_stime, "wall": wall,
            "peak_mib": ru.ru_maxrss / 1024.0, "exit": code}


def row(name, values, unit=""):
    return f"  {name:<10} min {min(values):9.3f}{unit}  median {statistics.median(values):9.3f}{unit}  max {max(values):9.3f}{unit}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--vs")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd_a = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd_a or a.n < 1 or a.warmup < 0:
        ap.print_usage(sys.stderr)
        return 2
    cmd_b = shlex.split(a.vs) if a.vs else None
    deadline = time.monotonic() + a.timeout
    runs = {"A": [], "B": []}
    cut = False
    for i in range(a.warmup + a.n):
        for key, cmd in (("A", cmd_a), ("B", cmd_b)):
            if cmd is None:
                continue
            r = run_once(cmd, deadline)
            if r is None:
                cut = True
                break
            if i >= a.warmup:
                runs[key].append(r)
        if cut:
            break
    if cmd_b:
        pairs = min(len(runs["A"]), len(runs["B"]))
        runs["A"], runs["B"] = runs["A"][:pairs], runs["B"][:pairs]
    if not runs["A"]:
        print("no run finished before the timeout", file=sys.stderr)
        return 3
    for key, cmd in (("A", cmd_a), ("B", cmd_b)):
        if cmd is None:
            continue
        rs = runs[key]
        print(f"{key}: {shlex.join(cmd)}  ({len(rs)} runs, exit codes {sorted(set(r['exit'] for r in rs))})")
        for f in ("user", "sys", "cpu", "wall"):
            print(row(f, [r[f] for r in rs], " s"))
        print(row("peak", [r["peak_mib"] for r in rs], " MiB"))
    if cmd_b:
        print("A/B, pair by pair:")
        for f in ("cpu", "wall"):
            print(row(f, [ra[f] / rb[f] if rb[f] > 0 else float("inf") for ra, rb in zip(runs["A"], runs["B"])]))
    return 3 if cut else 0


if __name__ == "__main__":
    sys.exit(main())
