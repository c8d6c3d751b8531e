#!/bin/sh
# `ccdiag diagnose --log` on the 64 per-rank files of a job (the realistic mix
# of gen_log.py, default 200 MB, split by its [rankN] prefix the way torchrun
# --log-dir or per-rank redirection leaves them) against ripgrep with the same
# 181 signature patterns over the same files (a count of matching lines, no
# verdict), both on every CPU they may use, then ccdiag pinned to one CPU
# (`taskset -c 0`): the multi-core ratio. Whole process, paired runs (bench/common/pair_time.py).
#
# usage: bench/logs/diagnose_files.sh [BUILD_DIR] [SIZE_BYTES]
set -eu
BUILD=${1:-build}
SIZE=${2:-200000000}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 "$HERE/gen_log.py" --size "$SIZE" --mix realistic "$WORK/job.log"
mkdir "$WORK/ranks"
awk -v dir="$WORK/ranks" '{ k = "other"; if (match($0, /^\[rank[0-9]+\]/)) k = substr($0, 6, RLENGTH - 6);
                           print > (dir "/rank" k ".log") }' "$WORK/job.log"
rm "$WORK/job.log"
"$BUILD/ccdiag" logs --list-signatures --json | python3 "$HERE/export_patterns.py" "$WORK"
ARGS=""
for f in "$WORK"/ranks/*.log; do ARGS="$ARGS --log $f"; done
cat "$WORK"/ranks/*.log > /dev/null  # page cache warm for both
echo "== ccdiag diagnose (all CPUs) vs rg (all CPUs), $(ls "$WORK/ranks" | wc -l) files"
# diagnose exits 1 (a problem found): the pair timer reports the exit status, not a failure.
python3 "$HERE/../common/pair_time.py" -n 5 --timeout 300 --vs "rg --no-mmap -c -f $WORK/patterns.rg $WORK/ranks" -- \
  "$BUILD/ccdiag" diagnose $ARGS
echo "== ccdiag diagnose (all CPUs) vs the same pinned to one CPU"
python3 "$HERE/../common/pair_time.py" -n 5 --timeout 300 --vs "taskset -c 0 $BUILD/ccdiag diagnose $ARGS" -- \
  "$BUILD/ccdiag" diagnose $ARGS
