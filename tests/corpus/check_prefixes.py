#!/usr/bin/env python3
"""Robust ingest, checked on real pastes: every case of the real-incident corpus must get the same verdict
(root cause) from `ccdiag diagnose --log` when each of its lines carries a prefix that
people's tools put there: grep -r (`path:`, `path:NNN:`), kubectl logs --prefix, docker compose, mpirun
--tag-output, srun --label, a Markdown quote, an ISO timestamp, syslog's header, ANSI colour, CRLF line ends,
kubelet's CRI log files, Docker's json-file log, pdsh/clush host tags, Ray's worker prefix, journalctl -o short-iso.

No label is read: this is an invariance check, so it runs on both parts of the corpus and reports only
counts and, for tuning cases, their ids (held-out ids are not printed).
Exit status: 0 when every variant agrees, 1 when one does not, 2 on a usage error.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_corpus import held_out, load_cases  # noqa: E402

PREFIXES = {
    "grep -r": lambda i, l: f"logs/node1/rank3.log:{l}",
    "grep -rn": lambda i, l: f"logs/rank3.log:{i + 1}:{l}",
    "kubectl --prefix": lambda i, l: f"[pod/trainer-worker-1/pytorch] {l}",
    "docker compose": lambda i, l: f"trainer-1  | {l}",
    "mpirun --tag-output": lambda i, l: f"[1,3]<stderr>:{l}",
    "srun --label": lambda i, l: f"3: {l}",
    "markdown quote": lambda i, l: f"> {l}",
    "ISO timestamp": lambda i, l: f"2024-05-01T12:00:{i % 60:02d}.123456Z {l}",
    "syslog": lambda i, l: f"May  1 12:00:{i % 60:02d} node1 python[1234]: {l}",
    "ANSI colour": lambda i, l: f"\x1b[32m{l}\x1b[0m",
    # What kubelet writes under /var/log/pods (the CRI logging format: time, stream, P/F tag).
    "CRI log file": lambda i, l: f"2024-05-01T12:00:{i % 60:02d}.123456789Z stderr F {l}",
    # Docker's json-file driver (/var/lib/docker/containers/<id>/<id>-json.log): one JSON object a line.
    "docker json-file": lambda i, l: json.dumps({"log": l + "\n", "stream": "stderr",
                                                 "time": f"2024-05-01T12:00:{i % 60:02d}.123456789Z"},
                                                separators=(",", ":")),
    "pdsh / clush": lambda i, l: f"node017: {l}",
    "Ray worker": lambda i, l: f"(RayTrainWorker pid=4242, ip=10.1.2.3) {l}",
    "journalctl -o short-iso": lambda i, l: f"2024-05-01T12:00:{i % 60:02d}+0000 node1 python[1234]: {l}",
}


def verdict(binary, text, tmp):
    fd, path = tempfile.mkstemp(suffix=".log", dir=tmp)
    with os.fdopen(fd, "w", newline="") as f:
        f.write(text)
    p = subprocess.run([binary, "diagnose", "--log", path, "--json"], capture_output=True, text=True, timeout=60)
    os.unlink(path)
    v = json.loads(p.stdout)["verdict"]
    return v["root_cause"], (v.get("culprit") or {}).get("rank")


# These tag every line with rank 3: information the plain lines lack (every line then comes from one rank),
# so a different verdict is not an ingest fault. Reported, not failed.
RANK_TAGS = {"mpirun --tag-output", "srun --label"}


def check(binary, case, tmp):
    lines = case["evidence_logs"]
    base = verdict(binary, "".join(l + "\n" for l in lines), tmp)
    bad = []
    variants = {name: "".join(t(i, l) + "\n" for i, l in enumerate(lines)) for name, t in PREFIXES.items()}
    variants["CRLF"] = "".join(l + "\r\n" for l in lines)
    for name, text in variants.items():
        got = verdict(binary, text, tmp)
        # The cause must agree. (The culprit rank may not: "path:10: text" is grep over srun-labelled
        # lines or grep -n over an indented line, and a syslog header can hide a later "[Rank N]".)
        if got[0] != base[0]:
            bad.append((name, base, got))
    return case, bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--cases", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases"))
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    cases = load_cases(a.cases)
    if not cases:
        print("no cases", file=sys.stderr)
        return 2
    failed = {"tuning": [], "held-out": []}
    with tempfile.TemporaryDirectory(prefix="ccdiag-prefix-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for case, bad in pool.map(lambda c: check(a.bin, c, tmp), cases):
            if bad:
                failed["held-out" if held_out(case) else "tuning"].append((case["id"], bad))
    variants = len(PREFIXES) + 1
    print(f"{len(cases)} cases x {variants} line-prefix variants")
    for part, rows in failed.items():
        print(f"  {part}: {len(rows)} case(s) whose verdict changed with a prefix")
        for cid, bad in rows:
            for name, base, got in bad:
                # Held-out cases: only which prefix broke, not the case or its verdicts.
                print(f"    {cid}: {name}: {base} -> {got}" if part == "tuning" else f"    (held-out): {name}")
    strict = any(name not in RANK_TAGS for rows in failed.values() for _, bad in rows for name, _, _ in bad)
    if not strict and any(failed.values()):
        print("  (only rank-tag variants changed a verdict: they add a rank to every line)")
    return 1 if strict else 0


if __name__ == "__main__":
    sys.exit(main())
