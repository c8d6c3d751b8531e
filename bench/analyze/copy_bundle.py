#!/usr/bin/env python3
"""Copies one bundle that `ccdiag collect` wrote into N host bundles.

    copy_bundle.py SRC DEST N

Each copy is SRC with its host name (the manifest's "host", and every
"host" field of its evidence) replaced by node-0000, node-0001, ... so that
`ccdiag analyze` reads N distinct hosts of the same real shape: the same
manifest, evidence and raw kernel log a real host gave, not generated ones.
"""
import json
import os
import shutil
import sys


def rename(obj, old, new):
    if isinstance(obj, dict):
        return {k: (new if k == "host" and v == old else rename(v, old, new)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [rename(v, old, new) for v in obj]
    return obj


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, dest, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(os.path.join(src, "manifest.json")) as f:
        manifest = json.load(f)
    with open(os.path.join(src, "evidence.json")) as f:
        evidence = json.load(f)
    old = manifest["host"]
    os.makedirs(dest, exist_ok=True)
    for i in range(n):
        host = f"node-{i:04d}"
        out = os.path.join(dest, host)
        shutil.copytree(src, out)
        with open(os.path.join(out, "manifest.json"), "w") as f:
            json.dump(dict(manifest, host=host), f)
        with open(os.path.join(out, "evidence.json"), "w") as f:
            json.dump(rename(evidence, old, host), f)
    print(f"{n} copies of {src} (host {old}) in {dest}")


if __name__ == "__main__":
    main()
