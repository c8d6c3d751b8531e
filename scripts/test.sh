#!/usr/bin/env bash
# Runs the whole test suite: a normal build with every test (unit, CLI,
# live, examples), then the unit tests again under ASan + UBSan.
# Usage: scripts/test.sh [--quick]   (--quick: skip the sanitizer and fuzz builds)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-build --test-deps
# torch (PyPI wheel, CPU) for the real-torchrun tests (tests/torch); cached.
# In CI a failed install fails the run (the torch tests must not skip there);
# elsewhere it only makes those tests skip.
if [ "${CI:-}" = "true" ]; then
  scripts/setup-torch.sh
else
  scripts/setup-torch.sh || echo "test.sh: torch not installed; the tests/torch jobs will skip" >&2
fi
jobs=$(nproc)

# The static build (one copyable binary): the suite runs on what users copy.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCCDIAG_BUILD_TESTS=ON -DCCDIAG_STATIC=ON >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

if [ "${1:-}" != "--quick" ]; then
  if command -v clang++ >/dev/null; then
    # One clang ASan + UBSan + libFuzzer-coverage build serves both the unit
    # tests and the fuzz targets: the library is compiled sanitized once, at
    # -O0 (a g++ -O0 ASan build and a clang -O2 fuzz build took half of CI's
    # time on 2 cores; this one compiles a file in about a quarter of their
    # sum). It is not scripts/fuzz.sh's campaign build (build-fuzz, -O2).
    CC=clang CXX=clang++ cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug \
      -DCCDIAG_FUZZ=ON -DCCDIAG_BUILD_TESTS=ON >/dev/null
    cmake --build build-sanitize -j "$jobs" --target ccdiag_unit_tests
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-sanitize --output-on-failure -L unit
    # The fuzz targets, each run a few seconds on its seed corpus: the build
    # cannot rot unseen (clang 14 rejects code g++ accepts), and every fixed
    # finding's input in fuzz/corpus/ is replayed. The long campaigns are
    # scripts/fuzz.sh's.
    FUZZ_BUILD=build-sanitize FUZZ_JOBS="$jobs" scripts/fuzz.sh -t 3
  else
    cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCCDIAG_SANITIZE=ON -DCCDIAG_BUILD_TESTS=ON >/dev/null
    cmake --build build-asan -j "$jobs" --target ccdiag_unit_tests
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan --output-on-failure -L unit
  fi
fi
