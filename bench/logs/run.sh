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

# time_it NAME CMD...: wall seconds on core 0, or "timeout" after $LIMIT s.
time_it() {
  name=$1; shift
  start=$(date +%s.%N)
  if timeout "$LIMIT" taskset -c 0 "$@" > "$WORK/$name.out" 2> "$WORK/$name.err"; then :; else
    rc=$?
    if [ "$rc" -eq 124 ]; then echo "$name timeout"; return; fi
  fi
  end=$(date +%s.%N)
  echo "$name $(echo "$end - $start" | bc)"
}
{
  time_it ccdiag "$CCDIAG" logs "$LOG" --json
  time_it rg rg -j1 --no-mmap -c -f "$WORK/patterns.rg" "$LOG"
  time_it grep grep -E -c -f "$WORK/patterns.ere" "$LOG"
} > "$WORK/times.txt"
python3 - "$WORK/times.txt" "$BYTES" "$LIMIT" <<'PY'
import sys
times = {}
for line in open(sys.argv[1]):
    name, t = line.split()
    times[name] = t
size = int(sys.argv[2]) / 1e6
print(f"log: {size:.0f} MB")
rate = {}
for name in ("ccdiag", "rg", "grep"):
    t = times.get(name)
    if t == "timeout":
        print(f"{name:8s} > {sys.argv[3]} s (timed out): < {size / float(sys.argv[3]):.1f} MB/s")
        rate[name] = size / float(sys.argv[3])
    else:
        rate[name] = size / float(t)
        print(f"{name:8s} {float(t):8.2f} s  {rate[name]:8.1f} MB/s")
for other in ("rg", "grep"):
    print(f"ccdiag / {other}: {rate['ccdiag'] / rate[other]:.2f}x" + (" (at least)" if times.get(other) == "timeout" else ""))
print("target: >= 200 MB/s per core:", "met" if rate["ccdiag"] >= 200 else "NOT met")
PY
