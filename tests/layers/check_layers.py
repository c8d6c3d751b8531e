#!/usr/bin/env python3
"""Checks every #include "..." under src/ against the allowed layer edges
(docs/architecture.md, "Layer edges"):

    model (include/ccdiag, src/model)  -> model
    sys                                -> model, sys
    bundle                             -> model, sys, bundle
    collectors                         -> model, sys, collectors
    analysis                           -> model, analysis
    report                             -> model, report
    cli, pipeline, fleet, main.cpp     -> anything

Edges that break these rules today are listed, one "FROM -> TO" per line, in
tests/layers/allowlist.txt. The check fails on any violation not in the list,
and on any listed line that no longer occurs (so the list only shrinks).
Usage: check_layers.py [SOURCE_DIR] [--print]   (--print: list today's violations)
"""
import os
import re
import sys

ALLOWED = {
    "model": {"model"},
    "sys": {"model", "sys"},
    "bundle": {"model", "sys", "bundle"},
    "collectors": {"model", "sys", "collectors"},
    "analysis": {"model", "analysis"},
    "report": {"model", "report"},
    "cli": None, "pipeline": None, "fleet": None, "main": None,
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(rel):
    """Layer of a path relative to the source root, or None outside the layers."""
    parts = rel.split("/")
    if parts[0] == "include" and len(parts) > 1 and parts[1] == "ccdiag":
        return "model"
    if parts[0] != "src":
        return None
    if len(parts) == 2:
        return "main" if parts[1] == "main.cpp" else None
    return parts[1] if parts[1] in ALLOWED else None


def resolve(root, including, name):
    """The file an #include "name" names: src/ and include/ are the include roots, then the including directory."""
    for base in (os.path.join(root, "src"), os.path.join(root, "include"), os.path.dirname(os.path.join(root, including))):
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(p):
            return os.path.relpath(p, root)
    return None


def violations(root):
    out = set()
    for top in ("src", os.path.join("include", "ccdiag")):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if not f.endswith((".cpp", ".hpp", ".h", ".cpp.in")):
                    continue
                rel = os.path.relpath(os.path.join(d, f), root)
                src_layer = layer_of(rel)
                if src_layer is None or ALLOWED.get(src_layer) is None:
                    continue
                with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for name in INCLUDE.findall(text):
                    target = resolve(root, rel, name)
                    if target is None:
                        continue  # generated or system header
                    t_layer = layer_of(target)
                    if t_layer is None or t_layer in ALLOWED[src_layer]:
                        continue
                    out.add(f"{rel} -> {target}")
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = args[0] if args else os.environ.get("CCDIAG_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
    root = os.path.abspath(root)
    now = violations(root)
    if "--print" in sys.argv:
        print("\n".join(sorted(now)))
        return 0
    allow_path = os.path.join(root, "tests", "layers", "allowlist.txt")
    with open(allow_path) as f:
        allowed = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    new = sorted(now - allowed)
    gone = sorted(allowed - now)
    for v in new:
        print(f"layer violation (not in tests/layers/allowlist.txt): {v}")
    for v in gone:
        print(f"fixed, remove from tests/layers/allowlist.txt: {v}")
    edges = {}
    for v in now:
        a, b = v.split(" -> ")
        key = f"{layer_of(a)} -> {layer_of(b)}"
        edges[key] = edges.get(key, 0) + 1
    print(f"{len(now)} allowlisted include(s) across layers: " + ", ".join(f"{k} x{n}" for k, n in sorted(edges.items())))
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main())
