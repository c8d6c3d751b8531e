#!/usr/bin/env bash
# The .deb (cpack, dependencies from dpkg-shlibdeps) installs into a clean
# Debian 12 root made by debootstrap and runs there: `ccdiag --version`, an
# example diagnosis, its man page and bash completion file in place.
# Needs root (chroot), debootstrap and Debian's archive; without them it says
# why and exits 77 (CTest: skipped).
# usage: tests/package/test_deb.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root for chroot"
command -v debootstrap >/dev/null || skip "debootstrap not installed"
command -v cpack >/dev/null || skip "cpack not found"

work=$(mktemp -d)
cleanup() {
  for m in proc dev; do umount "$work/root/$m" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

(cd "$build" && cpack -G DEB -B "$work/pkg" >/dev/null)
deb=$(ls "$work"/pkg/ccdiag_*.deb)
deps=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $deps"
if grep -q '^CCDIAG_STATIC:BOOL=ON' "$build/CMakeCache.txt"; then
  # One copyable binary: glibc is all it needs, so all the package needs.
  for lib in libhyperscan5 libre2-9 libarchive13 libdw1 libfmt9 libstdc++6; do
    case "$deps" in *"$lib"*) echo "FAIL: static build, yet $lib in Depends"; exit 1 ;; esac
  done
  case "$deps" in *libc6*) ;; *) echo "FAIL: libc6 missing from Depends"; exit 1 ;; esac
else
  for lib in libhyperscan5 libre2-9 libarchive13 libdw1 libfmt9; do
    case "$deps" in *"$lib"*) ;; *) echo "FAIL: $lib missing from Depends"; exit 1 ;; esac
  done
fi
# Never linked: loaded at run time when a probe needs them.
for lib in libnvidia-ml libcuda libnccl libibverbs; do
  case "$deps" in *"$lib"*) echo "FAIL: $lib must be dlopened, not a dependency"; exit 1 ;; esac
done

if ! debootstrap --variant=minbase bookworm "$work/root" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1; then
  tail -5 "$work/debootstrap.log"
  skip "debootstrap could not build a Debian 12 root (archive unreachable?)"
fi
cp "$deb" "$work/root/tmp/"
cp -r "$src/examples/bundles/gpu-fell-off-bus-xid79" "$work/root/tmp/example"
cp /etc/resolv.conf "$work/root/etc/resolv.conf" 2>/dev/null || true
chroot "$work/root" /bin/sh -c "apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends /tmp/$(basename "$deb")" >"$work/apt.log" 2>&1 || {
  tail -20 "$work/apt.log"; echo "FAIL: the .deb did not install in a clean root"; exit 1; }

version=$(chroot "$work/root" ccdiag --version)
echo "installed: ccdiag $version"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "FAIL: --version printed '$version'"; exit 1; }
set +e
out=$(chroot "$work/root" ccdiag diagnose /tmp/example --json)
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "FAIL: diagnose exited $rc"; exit 1; }
echo "$out" | grep -q '"root_cause": "gpu_fell_off_bus"' || { echo "FAIL: wrong verdict"; echo "$out" | head -20; exit 1; }
for f in /usr/share/man/man1/ccdiag.1 /usr/share/man/man1/ccdiag-diagnose.1 /usr/share/bash-completion/completions/ccdiag \
         /usr/lib/ccdiag/libnccl-profiler-ccdiag.so; do
  [ -e "$work/root$f" ] || [ -e "$work/root$f.gz" ] || { echo "FAIL: $f not installed"; exit 1; }
done
echo "PASS: .deb installs and runs in a clean Debian 12 root"
