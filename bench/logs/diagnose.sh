#!/bin/sh
# `ccdiag diagnose --log` on a large realistic log (default 200 MB, the
# gen_log.py realistic mix: a 64-rank NCCL_DEBUG=INFO job with three failed
# sessions) against what an on-call engineer runs instead: ripgrep with the
# same 181 signature patterns (a count of matching lines, no verdict). Whole
# process, paired runs (bench/common/pair_time.py); the ratio is diagnose / rg. diagnose does the
# signature scan plus the decision tree's log facts and cues on every line.
#
# BENCH_MIX=coll uses the NCCL_DEBUG_SUBSYS=INIT,COLL mix instead (one
# "<Coll>: opCount" line per collective per rank, 91% of lines).
#
# usage: bench/logs/diagnose.sh [BUILD_DIR] [SIZE_BYTES]
set -eu
BUILD=${1:-build}
SIZE=${2:-200000000}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
MIX=${BENCH_MIX:-realistic}
python3 "$HERE/gen_log.py" --size "$SIZE" --mix "$MIX" "$WORK/job.log"
"$BUILD/ccdiag" logs --list-signatures --json | python3 "$HERE/export_patterns.py" "$WORK"
cat "$WORK/job.log" > /dev/null  # page cache warm for both
# diagnose exits 1 (a problem found) on this log: the pair timer reports the exit status, not a failure.
python3 "$HERE/../common/pair_time.py" -n 5 --timeout 300 --vs "rg -j1 --no-mmap -c -f $WORK/patterns.rg $WORK/job.log" -- \
  "$BUILD/ccdiag" diagnose --log "$WORK/job.log"
