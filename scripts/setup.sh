#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine to run ccdiag: installs the build
# dependencies from Debian's archive, then builds the ccdiag binary and the
# NCCL profiler plugin into build/ (nothing else: the tests are built by
# scripts/test.sh, which also installs the test dependencies).
# Usage: scripts/setup.sh [--no-build] [--test-deps]
set -euo pipefail
cd "$(dirname "$0")/.."

no_build=0
test_deps=0
for arg in "$@"; do
  case "$arg" in
    --no-build) no_build=1 ;;
    --test-deps) test_deps=1 ;;
    *) echo "usage: scripts/setup.sh [--no-build] [--test-deps]" >&2; exit 2 ;;
  esac
done

# What building and running ccdiag needs.
PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libcli11-dev libfmt-dev nlohmann-json3-dev
  libdw-dev libelf-dev libarchive-dev zlib1g-dev libre2-dev libhyperscan-dev
  libibverbs-dev
  # The static archives that libarchive's and libdw's static links pull in
  # (one copyable binary: cmake -DCCDIAG_STATIC=ON).
  libxml2-dev libicu-dev nettle-dev libbz2-dev liblzma-dev
)
# What the test suite and benches need on top (debuggers and launchers the
# tests compare against, the fuzzing compiler, a browser for the HTML report).
if [ "$test_deps" = 1 ]; then
  PACKAGES+=(
    catch2 elfutils gdb rdma-core
    clang libclang-rt-14-dev
    python3 python3-jsonschema python3-venv
    ripgrep pdsh clustershell
    chromium fonts-dejavu-core
    bash-completion fish zsh debootstrap
  )
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

[ "$no_build" = 1 ] && exit 0
echo "setup: building ccdiag into build/ (the tests are built by scripts/test.sh)" >&2
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCCDIAG_BUILD_TESTS=OFF -DCCDIAG_STATIC=ON
cmake --build build --target ccdiag nccl-profiler-ccdiag
echo "setup: done: build/ccdiag (static: copy it to any x86-64 glibc host)" >&2
