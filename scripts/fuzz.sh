#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each on its seed
# corpus, printing one summary line per target: executions, seconds, result.
#
#   scripts/fuzz.sh                     # every target, 60 s each
#   scripts/fuzz.sh -t 3600 bundle_reader_fuzz cli_values_fuzz
#   FUZZ_BUILD=build-fuzz FUZZ_JOBS=2 scripts/fuzz.sh -t 30
#   scripts/fuzz.sh -t 3600 -r 10000000 nccl_core_fuzz   # stop at 10^7 executions or one hour
#   FUZZ_NO_BUILD=1 scripts/fuzz.sh ...    # run what is built (two campaigns side by side)
#   scripts/fuzz.sh -c 3600 -r 10000000 log_line_fuzz   # one CPU-hour of the fuzzer's own CPU time
#
# -t bounds wall time; -c bounds the fuzzer's CPU time (user + system, read
# from /proc every second; the fuzzer is interrupted when it has had that much),
# so a campaign at nice 19 on a shared machine still gets its CPU-hour. The
# cpu column is what the fuzzer process used either way. FUZZ_TIMEOUT (default
# 10 s) is libFuzzer's per-input wall-clock limit: on a shared machine at nice 19
# a starved fuzzer can spend longer than that on an input that takes 0.2 s alone,
# so campaigns beside other work use 60.
#
# The issue's goal is >= 10^7 executions (or one CPU-hour) per target; record
# what a run reached in docs/fuzzing.md. A crash leaves its input as
# <work>/<target>/crash-* and the script exits 1: fix it, add a regression
# test, and copy the input into fuzz/corpus/<target>/ so it is replayed.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
cpu_budget=
runs=()
while getopts "t:r:c:" opt; do
  case $opt in
    t) seconds=$OPTARG ;;
    r) runs=("-runs=$OPTARG") ;;
    c) cpu_budget=$OPTARG; seconds=$((OPTARG * 20)) ;;  # wall bound far above the CPU bound
    *) echo "usage: $0 [-t seconds] [-c cpu-seconds] [-r executions] [target...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))

build=${FUZZ_BUILD:-build-fuzz}
jobs=${FUZZ_JOBS:-2}
if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCCDIAG_FUZZ=ON -DCCDIAG_BUILD_TESTS=OFF >/dev/null
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for src in fuzz/*_fuzz.cpp; do targets+=("$(basename "$src" .cpp)"); done
fi
[ -n "${FUZZ_NO_BUILD:-}" ] || nice cmake --build "$build" -j"$jobs" --target "${targets[@]}"

work=${FUZZ_WORK:-$build/fuzz-work}
mkdir -p "$work"
status=0
# CPU seconds (user + system) a process has used, from /proc/PID/stat.
cpu_of() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  # shellcheck disable=SC2086
  set -- $stat
  echo $(((${12} + ${13}) / $(getconf CLK_TCK)))
}

printf '%-24s %12s %8s %8s  %s\n' target executions seconds cpu result
for t in "${targets[@]}"; do
  # Seed corpus: fuzz/corpus/<target>/, or the older <name without _fuzz>/.
  seeds=fuzz/corpus/$t
  [ -d "$seeds" ] || seeds=fuzz/corpus/${t%_fuzz}
  mkdir -p "$work/$t/corpus"
  log=$work/$t/log.txt
  started=$SECONDS
  set +e
  (cd "$work/$t" && exec "$OLDPWD/$build/fuzz/$t" -max_total_time="$seconds" ${runs[@]+"${runs[@]}"} -rss_limit_mb=2048 -timeout="${FUZZ_TIMEOUT:-10}" \
     -print_final_stats=1 corpus "$OLDPWD/$seeds") >"$log" 2>&1 &
  pid=$!
  cpu=0 interrupted=
  while kill -0 "$pid" 2>/dev/null; do
    cpu=$(cpu_of "$pid" || echo "$cpu")
    if [ -n "$cpu_budget" ] && [ "$cpu" -ge "$cpu_budget" ] && [ -z "$interrupted" ]; then
      kill -INT "$pid"; interrupted=1  # libFuzzer prints its final stats and exits 72
    fi
    sleep 1 & wait $! 2>/dev/null
  done
  wait "$pid"
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  secs=$((SECONDS - started))
  if [ $rc -eq 0 ] || { [ -n "$interrupted" ] && [ $rc -eq 72 ]; }; then result=ok
  else result="FINDING (rc $rc, see $log)"; status=1; fi
  printf '%-24s %12s %8s %8s  %s\n' "$t" "${execs:-?}" "${secs:-$seconds}" "$cpu" "$result"
done
exit $status
