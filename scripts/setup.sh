#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine completely: installs the build and test
# dependencies from Debian's archive, then builds ccdiag into build/.
# Usage: scripts/setup.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libcli11-dev libfmt-dev nlohmann-json3-dev catch2
  libdw-dev libelf-dev elfutils gdb libarchive-dev zlib1g-dev libre2-dev libhyperscan-dev
  libibverbs-dev rdma-core
  clang libclang-rt-14-dev
  python3 python3-jsonschema python3-venv
  ripgrep pdsh clustershell
  chromium fonts-dejavu-core
)

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

[ "${1:-}" = "--no-build" ] && exit 0
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build
