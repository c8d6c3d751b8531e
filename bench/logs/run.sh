#!/bin/sh
# Log analysis throughput: ccdiag logs (full catalogue: Hyperscan prefilter +
# RE2 extraction + cross-rank analysis) vs ripgrep and GNU grep -E -f given the
# same patterns, on one generated multi-rank log of >= 1 GiB, each on one core.
#
# usage: bench/logs/run.sh [BUILD_DIR] [WORK_DIR] [SIZE_BYTES]
# Prints MB/s per tool and the ratios. grep/rg only report matching lines; ccdiag
# also extracts fields, builds topology and finds the first failure.
set -eu
BUILD=${1:-build}
WORK=${2:-${TMPDIR:-/tmp}/ccdiag-bench-logs}
SIZE=${3:-1073741824}
HERE=$(cd "$(dirname "$0")" && pwd)
CCDIAG=$BUILD/ccdiag
LIMIT=${BENCH_TOOL_TIMEOUT:-600}
mkdir -p "$WORK"
LOG=$WORK/job-64-ranks.log
if [ ! -f "$LOG" ] || [ "$(stat -c %s "$LOG")" -lt "$SIZE" ]; then
  python3 "$HERE/gen_log.py" "$LOG" --size "$SIZE"
fi
BYTES=$(stat -c %s "$LOG")
# The catalogue's patterns, as each tool's dialect wants them.
"$CCDIAG" logs --list-signatures --json | python3 "$HERE/export_patterns.py" "$WORK"
cat "$LOG" > /dev/null  # warm the page cache so every tool reads from memory

# time_it NAME CMD...: "NAME wall cpu" seconds on core 0 (cpu = user + sys,
# which is what "per core" means on a shared machine), or "NAME timeout".
time_it() {
  name=$1; shift
  if timeout "$LIMIT" /usr/bin/time -f "%e %U %S" -o "$WORK/$name.time" taskset -c 0 "$@" \
      > "$WORK/$name.out" 2> "$WORK/$name.err"; then :; else
    rc=$?
    if [ "$rc" -eq 124 ]; then echo "$name timeout timeout"; return; fi
  fi
  set -- $(tail -1 "$WORK/$name.time")
  echo "$name $1 $(awk "BEGIN{print $2 + $3}")"
}
{
  time_it ccdiag "$CCDIAG" logs "$LOG" --json
  time_it rg rg -j1 --no-mmap -c -f "$WORK/patterns.rg" "$LOG"
  time_it grep grep -E -c -f "$WORK/patterns.ere" "$LOG"
} > "$WORK/times.txt"
python3 - "$WORK/times.txt" "$BYTES" "$LIMIT" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    name, wall, cpu = line.split()
    rows[name] = (wall, cpu)
size = int(sys.argv[2]) / 1e6
limit = float(sys.argv[3])
print(f"log: {size:.0f} MB, one core each; MB/s over CPU time (user+sys), wall time for reference")
rate = {}
for name in ("ccdiag", "rg", "grep"):
    wall, cpu = rows[name]
    if cpu == "timeout":
        rate[name] = size / limit
        print(f"{name:8s} timed out after {limit:.0f} s: < {rate[name]:.1f} MB/s")
    else:
        rate[name] = size / max(float(cpu), 1e-3)
        print(f"{name:8s} cpu {float(cpu):8.2f} s  wall {float(wall):8.2f} s  {rate[name]:8.1f} MB/s")
for other in ("rg", "grep"):
    at_least = " (at least)" if rows[other][1] == "timeout" else ""
    print(f"ccdiag / {other}: {rate['ccdiag'] / rate[other]:.2f}x{at_least}")
print("target >= 200 MB/s per core:", "met" if rate["ccdiag"] >= 200 else "NOT met")
PY
