#!/usr/bin/env python3
"""Runs `ccdiag diagnose --log` on every real-incident case of tests/corpus/cases and scores it.

For each case the evidence lines are written to a temporary log file (and, with --gzip-check, to a
gzipped copy that must give the same verdict), `ccdiag diagnose --log FILE --json` runs on it, and the
verdict's root_cause and layer are compared with the case's label. Accuracy is printed for the tuning
part and the held-out part separately (split rule in README.md: held out when FNV-1a-32(source.ref) % 3
== 0), per layer and overall, with a confusion summary, a reliability table (accuracy per confidence
bin) and the count of wrong verdicts at >= 0.7.

Held-out discipline: per-case results are printed for the tuning part only (--show-failures); the
held-out part is reported in aggregate, so no rule is written against a held-out case.

Exit status: 0 when the held-out part meets the floors, 1 when it does not, 2 on a usage error.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import gzip
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

LAYERS = ["framework", "nccl", "transport", "hardware", "system-config"]
BINS = [(0.0, 0.3, "<0.3"), (0.3, 0.5, "0.3-0.5"), (0.5, 0.7, "0.5-0.7"), (0.7, 0.9, "0.7-0.9"), (0.9, 1.01, ">=0.9")]
NON_CAUSES = {"insufficient_evidence", "no_problem_found"}


def fnv1a32(s: str) -> int:
    h = 0x811C9DC5
    for b in s.encode("utf-8"):
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def held_out(case: dict) -> bool:
    return fnv1a32(case["source"]["ref"]) % 3 == 0


def load_cases(case_dir: str) -> list[dict]:
    cases = []
    for name in sorted(os.listdir(case_dir)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(case_dir, name)
        try:
            with open(path, encoding="utf-8") as f:
                c = json.load(f)
        except (OSError, ValueError) as e:
            print(f"WARNING: skipping {name}: not valid JSON ({e})")
            continue
        missing = [k for k in ("id", "source", "layer", "root_cause_category", "evidence_logs") if k not in c]
        if missing or not isinstance(c.get("source"), dict) or "ref" not in c["source"] or \
                not isinstance(c.get("evidence_logs"), list):
            print(f"WARNING: skipping {name}: missing or malformed fields {missing or ['source.ref/evidence_logs']}")
            continue
        if c["layer"] not in LAYERS:
            print(f"WARNING: skipping {name}: unknown layer {c['layer']!r}")
            continue
        c["_file"] = name
        cases.append(c)
    return cases


def diagnose(binary: str, path: str) -> dict:
    p = subprocess.run([binary, "diagnose", "--log", path, "--json"], capture_output=True, text=True, timeout=60)
    if p.returncode not in (0, 1, 3):
        return {"error": f"exit {p.returncode}: {p.stderr.strip()[:200]}"}
    try:
        r = json.loads(p.stdout)
    except ValueError:
        return {"error": "output is not JSON"}
    v = r.get("verdict", {})
    layer = v.get("layer")
    if layer == "process":
        layer = "framework"
    return {"root_cause": v.get("root_cause"), "layer": layer, "confidence": float(v.get("confidence") or 0.0),
            "exit": p.returncode, "findings": [f.get("id") for f in r.get("findings", [])],
            "basis": v.get("basis"),
            "leader": (r.get("alternatives") or [{}])[0].get("root_cause"),
            "leader_score": (r.get("alternatives") or [{}])[0].get("score")}


def run_case(binary: str, case: dict, gzip_check: bool) -> dict:
    text = "\n".join(str(x) for x in case["evidence_logs"]) + "\n"
    with tempfile.TemporaryDirectory(prefix="ccdiag-corpus-") as d:
        plain = os.path.join(d, case["id"] + ".log")
        with open(plain, "w", encoding="utf-8") as f:
            f.write(text)
        out = diagnose(binary, plain)
        if gzip_check and "error" not in out:
            gz = plain + ".gz"
            with gzip.open(gz, "wt", encoding="utf-8") as f:
                f.write(text)
            g = diagnose(binary, gz)
            if (g.get("root_cause"), g.get("layer"), g.get("confidence")) != \
                    (out["root_cause"], out["layer"], out["confidence"]):
                out["gzip_differs"] = f"{g.get('root_cause')}/{g.get('confidence')}"
    out["case"] = case
    out["cat_ok"] = out.get("root_cause") == case["root_cause_category"]
    out["layer_ok"] = out.get("layer") == case["layer"]
    return out


def pct(n: int, d: int) -> str:
    return f"{100.0 * n / d:5.1f}% ({n}/{d})" if d else "   n/a"


def report(name: str, results: list[dict]) -> dict:
    n = len(results)
    cat = sum(r["cat_ok"] for r in results)
    lay = sum(r["layer_ok"] for r in results)
    print(f"\n== {name}: {n} cases ==")
    print(f"  category accuracy: {pct(cat, n)}")
    print(f"  layer accuracy:    {pct(lay, n)}")
    print("  per layer (label layer: category / layer):")
    for layer in LAYERS:
        rs = [r for r in results if r["case"]["layer"] == layer]
        if rs:
            print(f"    {layer:14s} {pct(sum(r['cat_ok'] for r in rs), len(rs)):>18s}  "
                  f"{pct(sum(r['layer_ok'] for r in rs), len(rs)):>18s}")
    # Confusion: label layer -> verdict layer (or the non-cause verdict).
    conf = defaultdict(Counter)
    for r in results:
        got = r.get("layer") or r.get("root_cause")
        conf[r["case"]["layer"]][got or "error"] += 1
    print("  confusion (label layer -> verdict layer / non-cause verdict):")
    for layer in LAYERS:
        if conf[layer]:
            print(f"    {layer:14s} " + ", ".join(f"{k} {v}" for k, v in conf[layer].most_common()))
    print("  reliability (category accuracy per confidence bin):")
    for lo, hi, label in BINS:
        rs = [r for r in results if lo <= r.get("confidence", 0.0) < hi]
        print(f"    {label:8s} {pct(sum(r['cat_ok'] for r in rs), len(rs))}")
    wrong07 = [r for r in results if r.get("confidence", 0.0) >= 0.7 and not r["cat_ok"]]
    wrong09 = [r for r in results if r.get("confidence", 0.0) >= 0.9 and not r["cat_ok"]]
    sure = [r for r in results if r.get("confidence", 0.0) >= 0.7]
    print(f"  verdicts >= 0.7: {len(sure)}, right {pct(len(sure) - len(wrong07), len(sure))}; "
          f"wrong >= 0.7: {len(wrong07)}; wrong >= 0.9: {len(wrong09)}")
    for basis in ("evidence", "leading_candidate"):
        rs = [r for r in results if r.get("basis") == basis]
        print(f"  basis {basis:18s} category {pct(sum(r['cat_ok'] for r in rs), len(rs))}, "
              f"layer {pct(sum(r['layer_ok'] for r in rs), len(rs))}")
    healthy = [r for r in results if r.get("root_cause") == "no_problem_found"]
    print(f"  no_problem_found verdicts: {len(healthy)}")
    errors = [r for r in results if "error" in r]
    if errors:
        print(f"  runs that failed: {len(errors)}")
    gz = [r for r in results if "gzip_differs" in r]
    if gz:
        print(f"  gzipped copy gave a different verdict: {len(gz)}")
    return {"n": n, "cat": cat / n if n else 0.0, "layer": lay / n if n else 0.0, "wrong07": len(wrong07),
            "healthy": len(healthy), "errors": len(errors), "gz": len(gz)}


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.environ.get("CCDIAG_BIN", "ccdiag"), help="ccdiag binary")
    ap.add_argument("--cases", default=os.path.join(here, "cases"), help="directory of case files")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--gzip-check", action="store_true", help="also run a gzipped copy; verdicts must be equal")
    ap.add_argument("--show-failures", action="store_true", help="print every tuning case the verdict got wrong")
    ap.add_argument("--cue-stats", action="store_true",
                    help="tabulate finding ids against label layer/category over the tuning part (for weights)")
    ap.add_argument("--case", help="run one tuning case and print its full report (held-out cases refused)")
    ap.add_argument("--min-category", type=float, default=0.0, help="held-out category accuracy floor (0-1)")
    ap.add_argument("--min-layer", type=float, default=0.0, help="held-out layer accuracy floor (0-1)")
    ap.add_argument("--max-wrong-sure", type=int, default=-1, help="held-out wrong verdicts >= 0.7 allowed (-1: any)")
    ap.add_argument("--min-cases", type=int, default=0, help="fewest valid cases expected")
    a = ap.parse_args()

    if not os.path.isdir(a.cases):
        print(f"error: no case directory {a.cases}", file=sys.stderr)
        return 2
    cases = load_cases(a.cases)
    if a.case:
        c = next((c for c in cases if c["id"] == a.case), None)
        if c is None:
            print(f"error: no case {a.case}", file=sys.stderr)
            return 2
        if held_out(c):
            print(f"error: {a.case} is held out; only aggregates are shown for it", file=sys.stderr)
            return 2
        with tempfile.TemporaryDirectory(prefix="ccdiag-corpus-") as d:
            p = os.path.join(d, c["id"] + ".log")
            with open(p, "w", encoding="utf-8") as f:
                f.write("\n".join(c["evidence_logs"]) + "\n")
            print(f"label: {c['layer']} / {c['root_cause_category']}")
            return subprocess.run([a.bin, "diagnose", "--log", p]).returncode and 0

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        results = list(ex.map(lambda c: run_case(a.bin, c, a.gzip_check), cases))
    tuning = [r for r in results if not held_out(r["case"])]
    held = [r for r in results if held_out(r["case"])]

    if a.show_failures:
        print("== tuning cases the verdict got wrong (label -> verdict) ==")
        for r in tuning:
            if not r["cat_ok"] or "gzip_differs" in r:
                c = r["case"]
                extra = f"  [gz: {r['gzip_differs']}]" if "gzip_differs" in r else ""
                lead = f" (leader {r['leader']})" if r.get("root_cause") in NON_CAUSES and r.get("leader") else ""
                print(f"  {c['id']:28s} {c['layer']}/{c['root_cause_category']} -> "
                      f"{r.get('layer')}/{r.get('root_cause')} {r.get('confidence', 0):.2f}{lead}"
                      f"{' ' + r['error'] if 'error' in r else ''}{extra}")

    if a.cue_stats:
        # Counts behind the likelihood ratios (docs/decision-tree.md, calibration): for each finding id, the
        # tuning cases it occurs in by label layer and category. Held-out cases never enter.
        by_id = defaultdict(list)
        for r in tuning:
            for fid in set(r.get("findings", [])):
                by_id[fid].append(r["case"])
        print("== finding ids over the tuning part: cases, by label layer | by category ==")
        for fid, cs in sorted(by_id.items(), key=lambda kv: -len(kv[1])):
            lay = Counter(c["layer"] for c in cs)
            cat = Counter(c["root_cause_category"] for c in cs)
            print(f"  {fid:44s} {len(cs):3d}  " + ", ".join(f"{k} {v}" for k, v in lay.most_common()) + "  |  " +
                  ", ".join(f"{k} {v}" for k, v in cat.most_common(4)))

    t = report("tuning", tuning)
    h = report("held-out", held)
    allr = report("all", results)

    failed = []
    if len(cases) < a.min_cases:
        failed.append(f"{len(cases)} valid cases < {a.min_cases}")
    if h["n"] and h["cat"] < a.min_category:
        failed.append(f"held-out category {h['cat']:.3f} < {a.min_category}")
    if h["n"] and h["layer"] < a.min_layer:
        failed.append(f"held-out layer {h['layer']:.3f} < {a.min_layer}")
    if a.max_wrong_sure >= 0 and h["wrong07"] > a.max_wrong_sure:
        failed.append(f"held-out wrong verdicts >= 0.7: {h['wrong07']} > {a.max_wrong_sure}")
    if allr["errors"]:
        failed.append(f"{allr['errors']} runs failed")
    if allr["gz"]:
        failed.append(f"{allr['gz']} gzipped copies gave a different verdict")
    del t
    if failed:
        print("\nFAIL: " + "; ".join(failed))
        return 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
