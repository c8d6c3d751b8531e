#!/bin/sh
# Log analysis throughput: ccdiag logs (full catalogue: Hyperscan prefilter +
# RE2 extraction + topology + cross-rank analysis) vs ripgrep and GNU grep -E -f
# given the same patterns, each pinned to one core, on two generated 64-rank
# torchrun logs of SIZE bytes (default 1 GiB; gen_log.py documents both mixes):
#   realistic  a long NCCL_DEBUG=INFO job: set-up per session, training chatter,
#              failures and restarts (the figure the >= 200 MB/s target is about)
#   dense      stress mix: a fifth of all lines match a signature
#
# usage: bench/logs/run.sh [BUILD_DIR] [WORK_DIR] [SIZE_BYTES]
# env:   BENCH_TOOL_TIMEOUT (s, default 300) caps ccdiag and rg;
#        BENCH_GREP_TIMEOUT (s, default 60) caps grep, which is reported as a
#        lower bound when it is killed; BENCH_MIXES (default "realistic dense").
# Logs are generated once and reused (the names carry the generator version).
# grep/rg only count matching lines; ccdiag also extracts fields, builds the
# per-process topology, finds the first failure and writes the JSON report.
set -eu
BUILD=${1:-build}
WORK=${2:-${TMPDIR:-/tmp}/ccdiag-bench-logs}
SIZE=${3:-1073741824}
HERE=$(cd "$(dirname "$0")" && pwd)
CCDIAG=$BUILD/ccdiag
LIMIT=${BENCH_TOOL_TIMEOUT:-300}
GREP_LIMIT=${BENCH_GREP_TIMEOUT:-60}
MIXES=${BENCH_MIXES:-realistic dense}
mkdir -p "$WORK"
# The catalogue's patterns, as each tool's dialect wants them.
"$CCDIAG" logs --list-signatures --json | python3 "$HERE/export_patterns.py" "$WORK"

# time_it LIMIT NAME CMD...: "NAME wall cpu" seconds on core 0 (cpu = user +
# sys, which is what "per core" means on a shared machine), or "NAME timeout".
time_it() {
  limit=$1; name=$2; shift 2
  if timeout "$limit" /usr/bin/time -f "%e %U %S" -o "$WORK/$name.time" taskset -c 0 "$@" \
      > "$WORK/$name.out" 2> "$WORK/$name.err"; then :; else
    rc=$?
    if [ "$rc" -eq 124 ]; then echo "$name timeout timeout"; return; fi
  fi
  set -- $(tail -1 "$WORK/$name.time")
  echo "$name $1 $(awk "BEGIN{print $2 + $3}")"
}

for mix in $MIXES; do
  LOG=$WORK/$mix-64-ranks.v2.log
  if [ ! -f "$LOG" ] || [ "$(stat -c %s "$LOG")" -lt "$SIZE" ]; then
    python3 "$HERE/gen_log.py" "$LOG" --size "$SIZE" --mix "$mix" > "$WORK/$mix.gen.txt"
  fi
  BYTES=$(stat -c %s "$LOG")
  cat "$LOG" > /dev/null  # warm the page cache so every tool reads from memory
  {
    time_it "$LIMIT" ccdiag "$CCDIAG" logs "$LOG" --json
    cp "$WORK/ccdiag.out" "$WORK/$mix.ccdiag.json"
    time_it "$LIMIT" rg rg -j1 --no-mmap -c -f "$WORK/patterns.rg" "$LOG"
    time_it "$GREP_LIMIT" grep grep -E -c -f "$WORK/patterns.ere" "$LOG"
  } > "$WORK/$mix.times.txt"
  python3 - "$mix" "$WORK/$mix.times.txt" "$BYTES" "$LIMIT" "$GREP_LIMIT" "$WORK/$mix.ccdiag.json" \
      "$WORK/rg.out" <<'PY'
import json, sys
mix, times, size, limit, grep_limit, report, rg_out = sys.argv[1:]
size = int(size) / 1e6
limits = {"ccdiag": float(limit), "rg": float(limit), "grep": float(grep_limit)}
rows = {}
for line in open(times):
    name, wall, cpu = line.split()
    rows[name] = (wall, cpu)
summary = {}
try:
    for e in json.load(open(report))["logs"]["evidence"]:
        if e["kind"] == "log.summary":
            summary = e["data"]
except (OSError, ValueError, KeyError):
    pass
print(f"== {mix}: {size:.0f} MB, {summary.get('lines', '?')} lines, "
      f"{summary.get('matched_lines', '?')} matched by ccdiag"
      + (f" ({100.0 * summary['matched_lines'] / max(summary['lines'], 1):.2f}%)" if summary else "")
      + f", rg counted {open(rg_out).read().strip() or '?'} lines")
print(f"{'tool':8s} {'cpu s':>8s} {'wall s':>8s} {'MB/s cpu':>10s} {'MB/s wall':>10s}")
rate = {}
for name in ("ccdiag", "rg", "grep"):
    wall, cpu = rows[name]
    if cpu == "timeout":
        rate[name] = size / limits[name]
        print(f"{name:8s} killed after {limits[name]:.0f} s: < {rate[name]:.1f} MB/s")
    else:
        rate[name] = size / max(float(cpu), 1e-3)
        print(f"{name:8s} {float(cpu):8.2f} {float(wall):8.2f} {rate[name]:10.1f} {size / max(float(wall), 1e-3):10.1f}")
for other in ("rg", "grep"):
    at_least = " (at least)" if rows[other][1] == "timeout" else ""
    print(f"ccdiag / {other}: {rate['ccdiag'] / rate[other]:.2f}x{at_least}")
if mix == "realistic":
    print("target >= 200 MB/s per core:", "met" if rate["ccdiag"] >= 200 else "NOT met")
PY
done
