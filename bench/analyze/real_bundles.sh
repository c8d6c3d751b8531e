#!/bin/sh
# `ccdiag analyze` on HOSTS copies (default 1,000) of a bundle that `ccdiag
# collect` writes on this machine (manifest, evidence, the raw kernel log:
# what a real host gives, not generated evidence), each under its own host
# name (copy_bundle.py), against what an on-call engineer runs instead over
# the same tree: ripgrep with the same 181 signature patterns (a count of
# matching lines per file, no verdict). Whole process, paired runs
# (bench/common/pair_time.py); the ratio is analyze / rg. Targets (issue
# #19): 1,000 bundles in <= 15 s, 4,096 in <= 60 s, within 2 GB.
#
# usage: bench/analyze/real_bundles.sh [BUILD_DIR] [HOSTS]
set -eu
BUILD=${1:-build}
HOSTS=${2:-1000}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$BUILD/ccdiag" --timeout 10 collect --out "$WORK/one" >/dev/null 2>&1 || true
[ -f "$WORK/one/manifest.json" ] || { echo "bench: ccdiag collect wrote no bundle" >&2; exit 2; }
python3 "$HERE/copy_bundle.py" "$WORK/one" "$WORK/bundles" "$HOSTS"
echo "bundles: $(du -sk "$WORK/bundles" | cut -f1) KiB on disk; one: $(du -sk "$WORK/one" | cut -f1) KiB"
"$BUILD/ccdiag" logs --list-signatures --json | python3 "$HERE/../logs/export_patterns.py" "$WORK"
cat "$WORK"/bundles/*/raw/* > /dev/null  # page cache warm for both
python3 "$HERE/../common/pair_time.py" -n 5 --timeout 600 --vs "rg -c -f $WORK/patterns.rg $WORK/bundles" -- \
  "$BUILD/ccdiag" analyze "$WORK/bundles" --json
