#!/usr/bin/env python3
"""Checks `ccdiag nccl attach` against real NCCL builds from PyPI (not CI: each wheel is 150-350 MB).

For each release: `pip download --no-deps nvidia-nccl-<cu>==X`, take the wheel's lib/libnccl.so.2 and
  1. compare the shipped table row (data/nccl-layouts.json) with the library's DWARF, key by key
     (build/tools/nccl-layout/ccdiag-nccl-layout dwarf);
  2. lay out a synthetic communicator at the DWARF's offsets in tests/programs/nccl_fake_rank, which
     dlopens that very library (no GPU needed), and decode it live and from a gcore core;
  3. the same decode with the library stripped of its DWARF (`objcopy --strip-debug`): the table row, or
     exit 3 with a reason when the release has none — never "no communicator, exit 0".
Prints a Markdown table (docs/nccl-attach.md keeps the last run's).

    bench/nccl-wheels/run.py --build build --cache ~/.cache/ccdiag-nccl-wheels 2.18.3 2.21.5 2.32.3
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
DEFAULT_VERSIONS = ["2.18.3", "2.19.3", "2.20.5", "2.21.5", "2.22.3", "2.23.4", "2.24.3", "2.25.1", "2.26.2",
                    "2.27.3", "2.29.7", "2.30.7", "2.31.2", "2.32.3"]


def wheel_lib(cache, cu, version):
    """lib/libnccl.so.2 of the wheel, downloaded once into `cache`."""
    out = os.path.join(cache, version, "libnccl.so.2")
    if os.path.exists(out):
        return out
    pattern = os.path.join(cache, f"nvidia_nccl_{cu}-{version}-*.whl")
    if not glob.glob(pattern):
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"nvidia-nccl-{cu}=={version}",
                        "-d", cache], check=True)
    whl = glob.glob(pattern)[0]
    with zipfile.ZipFile(whl) as z:
        name = next(n for n in z.namelist() if n.endswith("lib/libnccl.so.2"))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with z.open(name) as src, open(out + ".tmp", "wb") as dst:
            shutil.copyfileobj(src, dst)
    os.replace(out + ".tmp", out)
    return out


def table_row(version):
    with open(os.path.join(SOURCE, "data", "nccl-layouts.json")) as f:
        rows = json.load(f)["rows"]
    return next((r for r in rows if version in r["versions"]), None)


def ring_spec(fields, lib, **kw):
    comm = {"hash": "0x5c1e0c4a9d2f7b31", "rank": 3, "nranks": 8, "cuda_dev": 3, "bus_id": 0x3e000,
            "coll_op_count": 11, "seq": [0, 0, 5, 0, 12],
            "channels": [{"peers": [{"peer": 4, "send": True}]}, {"peers": [{"peer": 2, "recv": True}]}],
            "proxy": True, "in_ras_list": True,
            "proxy_ops": [{"op_count": 22, "pattern": 0, "subs": [
                {"dir": "send", "peer": 4, "channel": 0, "nsteps": 8, "posted": 8, "transmitted": 3, "done": 3},
                {"dir": "recv", "peer": 2, "channel": 1, "nsteps": 8, "posted": 8, "received": 5, "transmitted": 5,
                 "done": 5}]}]}
    spec = {"fields": fields, "comms": [comm], "lib": lib}
    spec.update(kw)
    return spec


def decoded_ok(doc, want_source=None):
    """The one comm decodes exactly: identity, counters, the proxy sub states."""
    p = doc["processes"][0]
    if p["status"] != "ok" or len(p["comms"]) != 1:
        return f"{p['status']}: {p['reason']}"
    if want_source and p["layout_source"] != want_source:
        return "layout " + p["layout_source"]
    c = p["comms"][0]
    got = (c["comm_hash"], c["rank"], c["nranks"], c["bus_id"], c["n_channels"])
    if got != ("0x5c1e0c4a9d2f7b31", 3, 8, "0000:3e:00.0", 2):
        return f"identity {got}"
    subs = c["proxy_ops"][0]["subs"] if c["proxy_ops"] else []
    if [(s["direction"], s["state"]) for s in subs] != [("send", "G"), ("recv", "R")]:
        return f"subs {subs}"
    return ""


def attach(ccdiag, args):
    r = subprocess.run([ccdiag, "nccl", "attach", "--json", *args], capture_output=True, text=True, timeout=300)
    return r.returncode, json.loads(r.stdout) if r.stdout.strip().startswith("{") else None


def run_rank(program, spec, tmp, fn):
    path = os.path.join(tmp, "spec.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    p = subprocess.Popen([program, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        if not p.stdout.readline():
            raise RuntimeError("nccl_fake_rank: " + p.stderr.read()[-300:])
        return fn(p.pid)
    finally:
        p.kill()
        p.wait()


def check_release(a, version, tmp):
    res = {"version": version}
    lib = wheel_lib(a.cache, a.cu, version)
    res["size_mb"] = os.path.getsize(lib) >> 20
    d = subprocess.run([a.layout_tool, "dwarf", lib], capture_output=True, text=True)
    if d.returncode != 0:
        res["dwarf"] = "none: " + d.stderr.strip()[-120:]
        return res
    fields = json.loads(d.stdout)["fields"]
    res["keys"] = len(fields)
    row = table_row(version)
    if row is None:
        res["table"] = "no row"
    else:
        diff = sorted(k for k in set(fields) | set(row["fields"]) if fields.get(k) != row["fields"].get(k))
        res["table"] = f"{row['label']}: " + ("equal" if not diff else f"{len(diff)} differ ({', '.join(diff[:4])})")
    res["comm_size"] = fields.get("ncclComm.sizeof")
    spec = ring_spec(fields, lib)

    def live(pid):
        rc, doc = attach(a.ccdiag, [str(pid), "--samples", "1"])
        live_res = (rc, decoded_ok(doc, "dwarf") if doc else "no JSON")
        core_res = ("-", "gcore missing")
        if shutil.which("gcore"):
            prefix = os.path.join(tmp, "core")
            g = subprocess.run(["gcore", "-o", prefix, str(pid)], capture_output=True, text=True, timeout=300)
            core = f"{prefix}.{pid}"
            if g.returncode == 0 and os.path.exists(core):
                rc2, doc2 = attach(a.ccdiag, ["--core", core])
                core_res = (rc2, decoded_ok(doc2, "dwarf") if doc2 else "no JSON")
                os.unlink(core)
        return live_res, core_res

    (lrc, lerr), (crc, cerr) = run_rank(a.program, spec, tmp, live)
    res["live"] = "ok" if lrc == 1 and not lerr else f"exit {lrc} {lerr}"
    res["core"] = "ok" if crc == 1 and not cerr else f"exit {crc} {cerr}"
    # Stripped of its DWARF: the table row, or exit 3 with a reason.
    stripped = os.path.join(tmp, "libnccl.so.2")
    subprocess.run(["objcopy", "--strip-debug", lib, stripped], check=True)
    rc, doc = run_rank(a.program, ring_spec(fields, stripped), tmp,
                       lambda pid: attach(a.ccdiag, [str(pid), "--samples", "1"]))
    p = doc["processes"][0]
    if rc == 1 and not decoded_ok(doc, "table"):
        res["stripped"] = "table: ok"
    elif rc == 1 and not decoded_ok(doc, "magic-distance"):
        res["stripped"] = "magic-distance: ok"
    elif rc == 3 and p["status"] in ("no_layout", "unsupported"):
        res["stripped"] = f"exit 3 {p['status']}"
    else:
        res["stripped"] = f"exit {rc} {p['status']}: {p['reason'][:80]} (WRONG)"
    os.unlink(stripped)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("versions", nargs="*", default=DEFAULT_VERSIONS)
    ap.add_argument("--build", default=os.path.join(SOURCE, "build"))
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/ccdiag-nccl-wheels"))
    ap.add_argument("--cu", default="cu12", help="wheel flavour: cu12 or cu13")
    a = ap.parse_args()
    a.ccdiag = os.path.join(a.build, "ccdiag")
    a.layout_tool = os.path.join(a.build, "tools", "nccl-layout", "ccdiag-nccl-layout")
    a.program = os.path.join(a.build, "test-programs", "nccl_fake_rank")
    for p in (a.ccdiag, a.layout_tool, a.program):
        if not os.path.exists(p):
            sys.exit(f"run.py: {p} is not built (targets ccdiag, ccdiag-nccl-layout, nccl_fake_rank)")
    os.makedirs(a.cache, exist_ok=True)
    print("| release | DWARF keys | table row vs DWARF | sizeof(ncclComm) | live (DWARF) | gcore (DWARF) | "
          "stripped |")
    print("|---|---|---|---|---|---|---|")
    bad = 0
    for v in a.versions:
        with tempfile.TemporaryDirectory(prefix="ccdiag-wheel-") as tmp:
            try:
                r = check_release(a, v, tmp)
            except Exception as e:  # one release failing must not hide the others
                r = {"version": v, "error": str(e)[-200:]}
        cells = [r.get(k, "") for k in ("keys", "table", "comm_size", "live", "core", "stripped")]
        if "error" in r:
            cells = [r["error"], "", "", "", "", ""]
        wrong = ("error" in r or "differ" in str(r.get("table")) or r.get("live") != "ok"
                 or r.get("core") not in ("ok",) or "WRONG" in str(r.get("stripped")))
        bad += wrong
        print(f"| {v} | " + " | ".join(str(c) for c in cells) + " |", flush=True)
    print(f"\n{len(a.versions) - bad} of {len(a.versions)} releases without a mismatch")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
