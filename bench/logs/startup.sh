#!/bin/sh
# First-command latency: `ccdiag logs` on a small real file (the kernel log a
# `ccdiag collect` wrote on a development host, ~23 KB, or FILE) against
# ripgrep given the same 181 patterns, with paired whole-process runs (bench/common/pair_time.py, start-up
# included; A/B ratio taken pair by pair). The built-in signatures' Hyperscan
# database is embedded at build time (tools/sigdb), so ccdiag pays no pattern
# compilation; rg compiles its patterns on every run. `diagnose --log` on the
# same file is timed too: its line sieve's literal database is embedded the
# same way (without it, ~80 ms of compiling on any log over 64 KiB).
#
# usage: bench/logs/startup.sh [BUILD_DIR] [FILE]
set -eu
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ -n "${2:-}" ]; then
  FILE=$2
else
  "$BUILD/ccdiag" --timeout 5 collect --out "$WORK/bundle" >/dev/null 2>&1 || true
  FILE=$WORK/bundle/raw/kernel.log
fi
"$BUILD/ccdiag" logs --list-signatures --json | python3 "$HERE/export_patterns.py" "$WORK"
echo "file: $(wc -c < "$FILE") bytes; prefilter: $("$BUILD/ccdiag" logs "$FILE" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["logs"]["stats"]["prefilter"])')"
python3 "$HERE/../common/pair_time.py" -n 20 --vs "rg -c -f $WORK/patterns.rg $FILE" -- "$BUILD/ccdiag" logs "$FILE"
# diagnose exits 1 when it finds a problem, 3 when the evidence is insufficient: the pair timer reports it.
python3 "$HERE/../common/pair_time.py" -n 20 --vs "rg -c -f $WORK/patterns.rg $FILE" -- "$BUILD/ccdiag" diagnose --log "$FILE"
