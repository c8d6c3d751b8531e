#!/usr/bin/env bash
# ccdiag fr vs PyTorch's fr_trace on the same generated dumps, in one run.
#
#   FR_TRACE_ROOT=<dir holding torch/distributed/flight_recorder/ or tools/flight_recorder/>
#   bench/fr/run_bench.sh [RANKS] [ENTRIES]          # default 1024 x 2000, rank 17 missing
#   FR_BENCH_SCALE=1 bench/fr/run_bench.sh 4096 2000 # ccdiag only (the 60 s / 4 GB target)
#
# FR_TRACE_ROOT is a scratch copy of the analyzer (copy the package from a PyTorch checkout; for torch/distributed/... add
# empty torch/__init__.py and torch/distributed/__init__.py so no libtorch is
# imported). Nothing from it is committed. Dumps go to FR_BENCH_DIR (default
# /tmp/ccdiag-fr-bench-RANKSxENTRIES) and are reused when present.
# Prints wall time, CPU time (user + sys: what a loaded shared machine does not
# distort) and peak RSS of each, and the speed-up ratios. Results: README.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
ranks=${1:-1024}
entries=${2:-2000}
ccdiag=${CCDIAG_BIN:-$src/build/ccdiag}
dir=${FR_BENCH_DIR:-/tmp/ccdiag-fr-bench-${ranks}x${entries}}
py=${PYTHON:-python3}

if [ ! -f "$dir/nccl_trace_rank_$((ranks - 1))" ]; then
  echo "generating $ranks x $entries dumps in $dir ..." >&2
  rm -rf "$dir"
  "$py" "$src/tests/fixtures/fr/gen_fr_dumps.py" bench "$dir" --ranks "$ranks" --entries "$entries" ${FR_BENCH_TP:+--tp $FR_BENCH_TP}
fi
echo "dumps: $(ls "$dir" | wc -l) files, $(du -sh "$dir" | cut -f1)"

measure() {  # prints "<wall s> <peak RSS KiB> <cpu s>" of the command, its output to $out
  local out=$1; shift
  /usr/bin/time -f "%e %M %U %S" -o "$out.time" "$@" > "$out" 2> "$out.err" || true
  # time prepends "Command exited with non-zero status N"
  tail -n 1 "$out.time" | awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }'
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
read -r c_wall c_rss c_cpu < <(measure "$tmp/ccdiag.json" "$ccdiag" fr "$dir" --json)
c_root=$("$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); f=[x for x in d["findings"] if "caused_by" not in x][:1]; print(f and (f[0]["kind"], f[0]["process_group"], f[0]["seq"], f[0]["ranks"][:8]))' "$tmp/ccdiag.json")
echo "ccdiag fr : ${c_wall} s wall, ${c_cpu} s CPU, peak RSS $((c_rss / 1024)) MiB, first finding: $c_root"

if [ -n "${FR_BENCH_SCALE:-}" ]; then
  exit 0
fi
: "${FR_TRACE_ROOT:?set FR_TRACE_ROOT to a scratch copy of the fr_trace analyzer (see the header)}"
if [ -d "$FR_TRACE_ROOT/torch/distributed/flight_recorder" ]; then
  mod=torch.distributed.flight_recorder.fr_trace
else
  mod=tools.flight_recorder.fr_trace
fi
read -r p_wall p_rss p_cpu < <(cd "$FR_TRACE_ROOT" && PYTHONPATH="$FR_TRACE_ROOT" measure "$tmp/fr_trace.out" "$py" -m "$mod" "$dir" -p nccl_trace_rank_)
p_head=$(grep -m1 -E "sequence number|Collective" "$tmp/fr_trace.out.err" || true)
echo "fr_trace  : ${p_wall} s wall, ${p_cpu} s CPU, peak RSS $((p_rss / 1024)) MiB, first report: $p_head"
"$py" -c 'import sys; c,p,cc,pc=map(float,sys.argv[1:]); print(f"speed-up: {p/max(c,1e-3):.1f}x wall, {pc/max(cc,1e-3):.1f}x CPU (target >= 20x)")' "$c_wall" "$p_wall" "$c_cpu" "$p_cpu"
