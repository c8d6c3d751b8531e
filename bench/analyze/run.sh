#!/usr/bin/env bash
# bench/analyze: generate N host bundles (default 4,096 hosts x 8 ranks, the
# xid79 scenario of tests/fixtures/fleet/gen_bundles.py: full gpu/nvlink/pcie/
# rdma/ranks/stacks/fr evidence per host) and time `ccdiag analyze` on them,
# with peak RSS from GNU time. Targets (issue #12): < 60 s and < 2 GB.
# Usage: bench/analyze/run.sh [HOSTS] [BUILD_DIR]     (keeps nothing afterwards)
set -euo pipefail
cd "$(dirname "$0")/../.."
hosts=${1:-4096}
build=${2:-build}
bin="$build/ccdiag"
[ -x "$bin" ] || { echo "bench: build first ($bin missing)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench: needs GNU time (Debian package time)" >&2; exit 2; }
work=$(mktemp -d /tmp/ccdiag-bench-analyze-XXXXXX)
trap 'rm -rf "$work"' EXIT

t0=$(date +%s.%N)
python3 tests/fixtures/fleet/gen_bundles.py --out "$work/bundles" --hosts "$hosts" --scenario xid79
t1=$(date +%s.%N)
size=$(du -sm "$work/bundles" | cut -f1)
echo "generated $hosts bundles ($size MiB) in $(echo "$t1 - $t0" | bc) s"

set +e
/usr/bin/time -v "$bin" analyze "$work/bundles" --json --html "$work/report.html" > "$work/out.json" 2> "$work/time.txt"
rc=$?
set -e
wall=$(grep "Elapsed (wall clock)" "$work/time.txt" | awk '{print $NF}')
rss_kb=$(grep "Maximum resident set size" "$work/time.txt" | awk '{print $NF}')
verdict=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); v=d['verdict']; print(v['root_cause'], v['culprit'].get('host'), v['culprit'].get('gpu'), 'answered', d['fleet']['hosts_answered'])" "$work/out.json")
html_kb=$(( $(stat -c %s "$work/report.html") / 1024 ))
echo "analyze: exit $rc, wall $wall, peak RSS $((rss_kb / 1024)) MiB, html ${html_kb} KiB"
echo "verdict: $verdict"
