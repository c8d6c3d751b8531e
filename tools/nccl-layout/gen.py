#!/usr/bin/env python3
"""Derive NCCL struct layouts (offsets only) for ccdiag's `nccl attach`.

Method (docs/nccl-attach.md, "Layout tables"): for one NCCL source tree at a
release tag, write nccl.h from src/nccl.h.in as NCCL's own src/Makefile does,
compile probe.cpp (offsetof/sizeof of every layout key, SFINAE for members a
tag lacks) against the tag's headers and a CUDA include dir, run it, and emit
one row. No NCCL build, GPU or driver is needed; nothing of NCCL is kept.

Subcommands:
  probe TREE --cuda-include DIR        one row (JSON) for the tree's version
  tags REPO --from 2.18.1 --to 2.30.7  every release tag of a NCCL git clone:
                                       `git archive` each into a temp dir, probe
                                       it, merge identical consecutive layouts
  dwarf LIB --tool BIN                 the offsets in LIB's DWARF, read by
                                       ccdiag's own dwarf_layout (BIN is the
                                       build's tools/nccl-layout/ccdiag-nccl-layout)
  merge ROW.json...                    merge single-version rows into ranges
  compare A.json B.json                field-by-field difference of two rows/tables

Output rows: {label, versions, arch, cuda_ge_11_3, source, fields}. `fields`
holds only the keys the tag has (a missing member is left out, never guessed).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, "probe.cpp")


def die(msg):
    print(f"gen.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def version_key(v):
    return tuple(int(x) for x in v.split("."))


def read_version(tree):
    """(major, minor, patch, suffix) from makefiles/version.mk."""
    path = os.path.join(tree, "makefiles", "version.mk")
    try:
        text = open(path).read()
    except OSError as e:
        die(f"{path}: {e.strerror}")
    vals = dict(re.findall(r"^(NCCL_\w+)\s*:=\s*(\S*)", text, re.M))
    try:
        return int(vals["NCCL_MAJOR"]), int(vals["NCCL_MINOR"]), int(vals["NCCL_PATCH"]), vals.get("NCCL_SUFFIX", "")
    except (KeyError, ValueError):
        die(f"{path}: no NCCL_MAJOR/MINOR/PATCH")


def write_nccl_h(tree, outdir, ver):
    """nccl.h from nccl.h.in, the substitutions of NCCL's src/Makefile."""
    major, minor, patch, suffix = ver
    text = open(os.path.join(tree, "src", "nccl.h.in")).read()
    subs = {"Major": str(major), "Minor": str(minor), "Patch": str(patch), "Suffix": suffix,
            "Version": "%d%02d%02d" % (major, minor, patch)}
    for k, v in subs.items():
        text = text.replace("${nccl:%s}" % k, v)
    with open(os.path.join(outdir, "nccl.h"), "w") as f:
        f.write(text)


def write_pfn_shim(cuda_include, outdir, cxx):
    """CUDA 13 dropped the unversioned PFN_cuXxx typedefs that NCCL 2.21-2.26
    use; alias each to its highest versioned typedef (a function pointer either
    way, so no layout changes). Used only when a tag fails to compile without.
    The header is preprocessed first: typedefs in inactive #if branches do not
    count."""
    r = subprocess.run([cxx, "-std=c++17", "-E", "-P", f"-I{cuda_include}", "-x", "c++", "-"],
                       input="#include <cudaTypedefs.h>\n", capture_output=True, text=True)
    if r.returncode != 0:
        die(f"{cuda_include}: cannot preprocess cudaTypedefs.h:\n{r.stderr[-2000:]}")
    defined = set(re.findall(r"\b(PFN_cu\w+)\s*\)\s*\(", r.stdout))
    best = {}
    for name in defined:
        m = re.fullmatch(r"(PFN_cu\w+?)_v(\d+)", name)
        if m and int(m.group(2)) > best.get(m.group(1), -1):
            best[m.group(1)] = int(m.group(2))
    lines = ["#pragma once", "#include <cudaTypedefs.h>"]
    for name, ver in sorted(best.items()):
        if name not in defined:
            lines.append(f"typedef {name}_v{ver} {name};")
    path = os.path.join(outdir, "pfn_shim.h")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def probe_tree(tree, cuda_include, cxx, cuda_version):
    ver = read_version(tree)
    version = "%d.%d.%d" % ver[:3]
    work = tempfile.mkdtemp(prefix="nccl-layout-")
    try:
        write_nccl_h(tree, work, ver)
        cu_major, cu_minor = cuda_version.split(".")[:2]
        src = os.path.join(tree, "src")
        incs = [src, work, os.path.join(src, "include"), os.path.join(src, "include", "plugin"),
                os.path.join(src, "include", "os"), cuda_include, os.path.join(cuda_include, "cccl")]
        exe = os.path.join(work, "probe")
        # -O1: unused static helpers in NCCL headers (gdrwrap.h) must not leave
        # unresolved references at link time.
        cmd = [cxx, "-std=c++17", "-O1", "-w", f"-DCUDA_MAJOR={cu_major}", f"-DCUDA_MINOR={cu_minor}",
               "-DNCCL_OS_LINUX"] + [f"-I{i}" for i in incs if os.path.isdir(i)] + [PROBE, "-o", exe, "-lpthread"]
        shim = False
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0 and "PFN_cu" in r.stderr:
            shim_h = write_pfn_shim(cuda_include, work, cxx)
            r = subprocess.run(cmd[:1] + ["-include", shim_h] + cmd[1:], capture_output=True, text=True)
            shim = True
        if r.returncode != 0:
            die(f"{tree}: probe does not compile:\n{r.stderr[-4000:]}")
        out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
        raw = json.loads(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    fields = {k: v for k, v in raw.items() if v is not None}
    cxx_id = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    how = f"probe.cpp over the tag's headers, {cxx_id}, CUDA {cuda_version} headers"
    if shim:
        how += " (+PFN_cu typedef aliases)"
    return {"label": version, "versions": [version], "arch": "x86_64", "cuda_ge_11_3": True,
            "source": how, "fields": fields}


def cuda_version_of(cuda_include):
    try:
        text = open(os.path.join(cuda_include, "cuda_runtime_api.h")).read()
        v = int(re.search(r"#define CUDART_VERSION\s+(\d+)", text).group(1))
        return f"{v // 1000}.{(v % 1000) // 10}"
    except (OSError, AttributeError):
        die(f"{cuda_include}: no CUDART_VERSION in cuda_runtime_api.h")


def label_of(versions):
    return versions[0] if len(versions) == 1 else f"{versions[0]}-{versions[-1]}"


def merge_rows(rows):
    """Consecutive versions (in version order) with identical fields become one
    row; labels stay ranges of consecutive releases."""
    rows = sorted(rows, key=lambda r: version_key(r["versions"][0]))
    out = []
    for r in rows:
        if out and out[-1]["fields"] == r["fields"] and out[-1]["arch"] == r["arch"] \
                and out[-1]["cuda_ge_11_3"] == r["cuda_ge_11_3"]:
            out[-1]["versions"] += r["versions"]
            if r["source"] != out[-1]["source"]:
                out[-1]["source"] += "; " + r["source"]
        else:
            out.append(json.loads(json.dumps(r)))
        out[-1]["label"] = label_of(out[-1]["versions"])
    for r in out:
        if " (tags v" not in r["source"]:
            r["source"] = f"{r['source']} (tags v{'-1, v'.join(r['versions'])}-1)"
    return out


def cmd_probe(a):
    print(json.dumps(probe_tree(a.tree, a.cuda_include, a.cxx, cuda_version_of(a.cuda_include)), indent=2))


def cmd_tags(a):
    tags = subprocess.run(["git", "-C", a.repo, "tag"], capture_output=True, text=True, check=True).stdout.split()
    lo, hi = version_key(a.from_), version_key(a.to)
    chosen = []
    for t in tags:
        m = re.fullmatch(r"v(\d+\.\d+\.\d+)-1", t)
        if m and lo <= version_key(m.group(1)) <= hi:
            chosen.append((version_key(m.group(1)), t))
    if not chosen:
        die(f"{a.repo}: no release tags between {a.from_} and {a.to}")
    cuda_version = cuda_version_of(a.cuda_include)
    rows = []
    for _, tag in sorted(chosen):
        tmp = tempfile.mkdtemp(prefix="nccl-tag-")
        try:
            archive = subprocess.run(["git", "-C", a.repo, "archive", tag, "src", "makefiles"],
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            row = probe_tree(tmp, a.cuda_include, a.cxx, cuda_version)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(f"{tag}: ncclComm.sizeof {row['fields'].get('ncclComm.sizeof')}", file=sys.stderr)
        rows.append(row)
    write_table(merge_rows(rows), a.out)


ABOUT = ("NCCL struct offsets (bytes) and constants for ccdiag nccl attach, x86_64, NCCL built for CUDA >= 11.3. "
         "Generated by tools/nccl-layout/gen.py from NCCL's release-tag headers (numbers only); "
         "keys: layout_field_keys() in src/collectors/nccl/attach/layout.hpp; a key missing from a row is "
         "a member that release does not have. See docs/nccl-attach.md, 'Layout tables'.")


def write_table(rows, out):
    text = json.dumps({"format": 1, "about": ABOUT, "rows": rows}, indent=1) + "\n"
    if out:
        with open(out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def cmd_dwarf(a):
    r = subprocess.run([a.tool, "dwarf", a.lib], capture_output=True, text=True)
    if r.returncode != 0:
        die(r.stderr.strip() or f"{a.tool} failed")
    if not a.table:
        print(r.stdout, end="")
        return
    # Check the table row of the library's version against its DWARF, key by
    # key, and note the check in the row's source.
    drow = json.loads(r.stdout)
    if not drow["versions"]:
        die(f"{a.lib}: no NCCL version string")
    version = drow["versions"][0]
    try:
        doc = json.load(open(a.table))
    except (OSError, ValueError) as e:
        die(f"{a.table}: {e}")
    rows = [t for t in doc["rows"] if version in t["versions"]]
    if not rows:
        die(f"{a.table}: no row for {version}")
    row = rows[0]
    bad = [(k, row["fields"].get(k), v) for k, v in drow["fields"].items() if row["fields"].get(k) != v]
    bad += [(k, v, None) for k, v in row["fields"].items() if k not in drow["fields"]]
    for k, t, d in bad:
        print(f"{version} {k}: table {t}, DWARF {d}", file=sys.stderr)
    if bad:
        sys.exit(1)
    note = f"; all {len(drow['fields'])} keys equal to the DWARF of the {a.name or os.path.basename(a.lib)} {version} library"
    if note not in row["source"]:
        row["source"] += note
    write_table(doc["rows"], a.table)
    print(f"{version}: {len(drow['fields'])} keys equal", file=sys.stderr)


def cmd_merge(a):
    rows = []
    for p in a.rows:
        doc = json.load(open(p))
        rows += doc["rows"] if "rows" in doc else [doc]
    write_table(merge_rows(rows), None)


def fields_of(path):
    doc = json.load(open(path))
    if "rows" in doc:
        return {v: r["fields"] for r in doc["rows"] for v in r["versions"]}
    if "fields" in doc:
        return {v: doc["fields"] for v in doc.get("versions") or ["*"]}
    return {"*": doc}


def cmd_compare(a):
    A, B = fields_of(a.a), fields_of(a.b)
    bad = 0
    for v in sorted(set(A) | set(B), key=lambda s: version_key(s) if s != "*" else (0,)):
        fa, fb = A.get(v, A.get("*")), B.get(v, B.get("*"))
        if fa is None or fb is None:
            continue
        for k in sorted(set(fa) | set(fb)):
            if fa.get(k) != fb.get(k):
                bad += 1
                print(f"{v} {k}: {fa.get(k)} != {fb.get(k)}")
    sys.exit(1 if bad else 0)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sp = p.add_subparsers(dest="cmd", required=True)
    q = sp.add_parser("probe")
    q.add_argument("tree")
    q.add_argument("--cuda-include", default="/usr/local/cuda/include")
    q.add_argument("--cxx", default="g++")
    q.set_defaults(fn=cmd_probe)
    q = sp.add_parser("tags")
    q.add_argument("repo")
    q.add_argument("--from", dest="from_", default="2.18.1")
    q.add_argument("--to", default="99.99.99")
    q.add_argument("--cuda-include", default="/usr/local/cuda/include")
    q.add_argument("--cxx", default="g++")
    q.add_argument("--out")
    q.set_defaults(fn=cmd_tags)
    q = sp.add_parser("dwarf")
    q.add_argument("lib")
    q.add_argument("--tool", required=True)
    q.add_argument("--table", help="check this table's row for the library's version and note it there")
    q.add_argument("--name", help="how the library is named in the note (e.g. the wheel it came from)")
    q.set_defaults(fn=cmd_dwarf)
    q = sp.add_parser("merge")
    q.add_argument("rows", nargs="+")
    q.set_defaults(fn=cmd_merge)
    q = sp.add_parser("compare")
    q.add_argument("a")
    q.add_argument("b")
    q.set_defaults(fn=cmd_compare)
    a = p.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
