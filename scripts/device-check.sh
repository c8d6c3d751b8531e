#!/usr/bin/env bash
# device-check.sh: run ccdiag's GPU paths against a REAL driver on a GPU machine
# (NVML probes, NVLink, the active CUDA P2P test, collect -> diagnose), and check
# what NVML answered against nvidia-smi and sysfs; read a real NCCL communicator
# (1 rank, and a 2-rank init hang) with `nccl attach` and compare with NCCL's INFO log. Everything the fake NVML /
# fake CUDA libraries stand in for in the test suite is exercised here for real.
#
# Usage:   scripts/device-check.sh            (from the repository root)
# Env:     CCDIAG_BIN  ccdiag binary (default build/ccdiag; built if absent and a toolchain exists)
#          OUT         results directory (default ./device-check-out)
#
# Safe on a production node: read-only probes, except `probe p2p`, which allocates
# 32 MiB per GPU and copies between GPUs; it runs WITHOUT --force, so ccdiag itself
# refuses it when training processes use the GPUs. Every step has a timeout. The
# script never resets, reconfigures or stops anything. Exit 0 when every step ran
# and gave a plausible answer; 1 otherwise. Read $OUT/summary.txt first.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/device-check-out}"
mkdir -p "$OUT"
BIN="${CCDIAG_BIN:-build/ccdiag}"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
failures=0

say() { echo "$*" | tee -a "$SUMMARY"; }
# step NAME EXPECTED_RCS CMD... : runs CMD with a 180 s bound, stdout/stderr to $OUT/NAME.{out,err}
step() {
  local name=$1 ok_rcs=$2
  shift 2
  local start end rc
  start=$(date +%s.%N)
  timeout -k 5 180 "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
  rc=$?
  end=$(date +%s.%N)
  local took
  took=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f", b-a}')
  if [[ " $ok_rcs " == *" $rc "* ]]; then
    say "ok    $name (exit $rc, ${took}s)"
  else
    say "FAIL  $name (exit $rc, expected one of: $ok_rcs, ${took}s) -- see $OUT/$name.err"
    failures=$((failures + 1))
  fi
  return 0
}

say "ccdiag device check, $(date -u +%FT%TZ), host $(hostname)"
{
  echo "--- uname"; uname -a
  echo "--- nvidia-smi"; timeout 30 nvidia-smi 2>&1 || echo "(nvidia-smi unavailable)"
  echo "--- nvidia-smi topo -m"; timeout 30 nvidia-smi topo -m 2>&1 || true
  echo "--- nvidia-smi nvlink -s"; timeout 30 nvidia-smi nvlink -s 2>&1 || true
  echo "--- /proc/driver/nvidia/version"; cat /proc/driver/nvidia/version 2>&1 || true
  echo "--- libraries"; ldconfig -p 2>/dev/null | grep -E 'libnvidia-ml|libcuda\.so' || true
} >"$OUT/environment.txt" 2>&1

if [[ ! -x "$BIN" ]]; then
  say "building ccdiag ($BIN not found)"
  if cmake -S . -B build -G Ninja -DCCDIAG_BUILD_TESTS=OFF >"$OUT/build.log" 2>&1 &&
    cmake --build build --target ccdiag >>"$OUT/build.log" 2>&1; then
    BIN=build/ccdiag
  else
    say "FAIL  build: see $OUT/build.log (copy a built build/ccdiag here or set CCDIAG_BIN)"
    exit 1
  fi
fi
if ldd "$BIN" 2>/dev/null | grep -q 'not found'; then
  say "FAIL  $BIN misses shared libraries:"
  ldd "$BIN" | grep 'not found' | tee -a "$SUMMARY"
  exit 1
fi

step info 0 "$BIN" info --json
step probe-gpu "0 1" "$BIN" probe gpu --json
step probe-gpu-text "0 1" "$BIN" probe gpu
step probe-nvlink "0 1" "$BIN" probe nvlink --json
step probe-p2p "0 1 2" "$BIN" probe p2p --json
step probe-p2p-text "0 1 2" "$BIN" probe p2p
step collect "0 3" "$BIN" collect --out "$OUT/bundle"
step diagnose "0 1 3" "$BIN" diagnose "$OUT/bundle" --json

# Cross-check what ccdiag read through NVML against nvidia-smi and sysfs.
python3 - "$OUT" <<'PY' | tee -a "$SUMMARY"
import json, os, subprocess, sys
out = sys.argv[1]
bad = 0
def load(name):
    try:
        with open(os.path.join(out, name + ".out")) as f:
            return json.load(f)
    except Exception as e:
        print(f"FAIL  {name}: output is not JSON ({e})"); return None
info = load("info")
if info:
    libs = {l["name"]: l["status"] for l in info["runtime_libraries"]}
    print(f"info  NVML {libs.get('NVML')}, CUDA driver {libs.get('CUDA driver')}")
    if libs.get("NVML") != "found": print("FAIL  info: NVML not found on a GPU machine"); bad += 1
gpu = load("probe-gpu")
if gpu:
    nv = [e for e in gpu["evidence"] if e["kind"] == "gpu.nvml"][0]
    print(f"nvml  {nv['availability']['state']} driver {nv['data'].get('driver_version')} "
          f"cuda {nv['data'].get('cuda_driver_version')} {nv['data'].get('device_count')} GPU(s) "
          f"in {nv['data'].get('elapsed_ms')} ms")
    if nv["availability"]["state"] != "ok": print("FAIL  probe gpu: NVML not ok"); bad += 1
    devs = [e for e in gpu["evidence"] if e["kind"] == "gpu.device"]
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=index,pci.bus_id,uuid,name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
    except Exception:
        smi = []
    for d in devs:
        data = d["data"]
        bdf = d["subject"].get("gpu", "?")
        sysfs = os.path.exists(f"/sys/bus/pci/devices/{bdf}")
        line = [l for l in smi if l.split(",")[0].strip() == str(data.get("index"))]
        match = bool(line) and data.get("uuid", "") in line[0] and bdf[5:].upper() in line[0].upper()
        print(f"gpu   {data.get('index')} {bdf} {data.get('name')} uuid {data.get('uuid')} temp {data.get('temperature_c')} "
              f"clocks {data.get('clocks_event_names')} ecc {data.get('ecc')} remap {data.get('remapped_rows')} "
              f"fabric {data.get('fabric', {}).get('state_name')} errors {data.get('errors')} "
              f"sysfs {'yes' if sysfs else 'NO'} nvidia-smi {'match' if match else 'MISMATCH' if smi else 'n/a'}")
        if not sysfs or (smi and not match): bad += 1
    links = [e for e in gpu["evidence"] if e["kind"] == "nvlink.link"]
    print(f"links {len(links)} NVLink(s), {sum(1 for l in links if l['data'].get('active'))} active")
    for f in gpu["findings"]:
        print(f"find  {f['severity']} {f['id']}: {f['summary']}")
p2p = load("probe-p2p")
if p2p:
    for e in p2p["evidence"]:
        if e["kind"] == "gpu.p2p" and e["data"].get("source") == "cuda":
            print(f"p2p   cuda {e['availability']['state']} {e['availability'].get('reason', '')}")
            for p in e["data"].get("pairs", []):
                print(f"pair  {p['a']} {p['b']} {p['expected_path']} {p['status']} {p.get('bandwidth_gbps')} GB/s "
                      f"{[d.get('latency_us') for d in p.get('directions', [])]} us {p.get('reason', '')}")
    for u in p2p["unchecked"]:
        print(f"unch  {u['what']}: {u['reason']}")
diag = load("diagnose")
if diag:
    print(f"diag  verdict {diag['verdict']['root_cause']} ({diag['verdict']['confidence']}); unchecked "
          f"{[u['what'] for u in diag['unchecked']]}")
sys.exit(1 if bad else 0)
PY
[[ ${PIPESTATUS[0]} -eq 0 ]] || failures=$((failures + 1))

# nccl attach on a real NCCL: a 1-rank communicator and a 2-rank init hang (rank 1
# never starts), read with ccdiag and compared with NCCL's own INFO log.
for mode in one-rank init-hang; do
  log="$OUT/nccl-$mode.log"
  NCCL_DEBUG=INFO NCCL_DEBUG_FILE="$log" python3 scripts/gpu_nccl_target.py "$mode" >"$OUT/nccl-$mode.target" 2>&1 &
  tpid=$!
  for _ in $(seq 1 60); do grep -q '"ready"' "$OUT/nccl-$mode.target" 2>/dev/null && break; sleep 1; done
  step "nccl-attach-$mode" "0 1" "$BIN" nccl attach "$tpid" --json
  kill -9 "$tpid" 2>/dev/null; wait "$tpid" 2>/dev/null
  python3 - "$OUT" "$mode" <<'PY' | tee -a "$SUMMARY"
import json, re, sys
out, mode = sys.argv[1], sys.argv[2]
try:
    target = json.loads(open(f"{out}/nccl-{mode}.target").read().splitlines()[0])
    doc = json.load(open(f"{out}/nccl-attach-{mode}.out"))
except Exception as e:
    print(f"FAIL  nccl-attach-{mode}: {e}"); sys.exit(1)
log = open(f"{out}/nccl-{mode}.log").read() if target.get("ready") else ""
ids = set(re.findall(r"commId (0x[0-9a-f]+)", log))
bus = set(re.findall(r"busId ([0-9a-f]+)", log))
proc = doc["processes"][0] if doc["processes"] else {}
comms = proc.get("comms", [])
print(f"nccl  {mode}: library {proc.get('library')} {proc.get('version_string')} layout {proc.get('layout_source')} "
      f"{proc.get('layout_label')}; {len(comms)} comm(s); target comm {target.get('comm')}; log commId {sorted(ids)}")
bad = 0
for c in comms:
    want_init = 0 if mode == "one-rank" else 7
    ok = (c["comm_hash"] in ids or not ids) and c["init_state"] == want_init and (mode != "one-rank" or c["addr"] == target["comm"])
    print(f"comm  {c['addr']} hash {c['comm_hash']} rank {c['rank']}/{c['nranks']} cudaDev {c['cuda_dev']} busId "
          f"{c['bus_id']} (log {sorted(bus)}) init {c['init_state_name']} seq {c['seq_numbers']} "
          f"ras {c.get('in_ras_list')} proxy {c['proxy_present']} {'ok' if ok else 'MISMATCH'}")
    bad += 0 if ok else 1
if not comms:
    print(f"FAIL  nccl-attach-{mode}: no communicator found ({proc.get('status')}: {proc.get('reason')})"); bad += 1
sys.exit(1 if bad else 0)
PY
  [[ ${PIPESTATUS[0]} -eq 0 ]] || failures=$((failures + 1))
done

say "done: $failures failure(s); results in $OUT"
[[ $failures -eq 0 ]]
