#!/usr/bin/env bash
# The CCDIAG_STATIC build is one copyable binary: its dynamic section needs
# only glibc's libraries (ldd agrees), and it runs in an empty root that holds
# nothing but those libraries: `ccdiag --version`, an example diagnosis, a
# kernel log through the Hyperscan database, and a bundle written as a .tar.gz
# and read back (libarchive, zlib). NVML, CUDA, NCCL and verbs stay dlopened.
# Without root (chroot) the copy-and-run part is skipped, the ldd part runs.
# usage: tests/package/test_static.sh CCDIAG_BINARY SOURCE_DIR
set -euo pipefail
bin=$1
src=$2
fail() { echo "FAIL: $*"; exit 1; }

# glibc's own libraries (and the vDSO the kernel maps); nothing else may appear.
glibc='^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|ld-linux-x86-64\.so\.2|/lib64/ld-linux-x86-64\.so\.2)$'
needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] || fail "readelf shows no NEEDED entries (not a dynamic glibc binary?)"
for lib in $needed; do
  [[ "$lib" =~ $glibc ]] || fail "needs $lib (not glibc)"
done
echo "NEEDED: $(echo $needed)"
ldd_libs=$(ldd "$bin" | awk '{print $1}')
for lib in $ldd_libs; do
  [[ "$lib" =~ $glibc ]] || fail "ldd lists $lib (not glibc)"
done
echo "ldd: $(echo $ldd_libs)"
"$bin" info | grep -q "build features:.*static" || fail "ccdiag info does not say the build is static"

if [ "$(id -u)" -ne 0 ]; then echo "PASS (ldd only: the chroot run needs root)"; exit 0; fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/tmp" "$root/bin"
cp "$bin" "$root/bin/ccdiag"
# Exactly the libraries the loader resolves for it, at the paths it resolves them.
for path in $(ldd "$bin" | grep -o '/[^ ]*'); do
  mkdir -p "$root$(dirname "$path")"
  cp -L "$path" "$root$path"
done
cp -r "$src/examples/bundles/gpu-fell-off-bus-xid79" "$root/tmp/example"
in_root() { chroot "$root" /bin/ccdiag "$@"; }

version=$(in_root --version) || fail "--version did not run in a root holding only glibc"
echo "in an empty root: ccdiag $version"
set +e
out=$(in_root diagnose /tmp/example --json)
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "diagnose exited $rc"
echo "$out" | grep -q '"root_cause": "gpu_fell_off_bus"' || fail "wrong verdict: $(echo "$out" | head -5)"

# The kernel log of the example through the compiled signature database.
klog=$(find "$root/tmp/example" -name 'kernel*.log' -o -name 'dmesg*' | head -1)
if [ -n "$klog" ]; then
  logs=$(in_root logs "${klog#$root}" --json) || [ $? -le 1 ] || fail "logs failed"
  echo "$logs" | grep -q '"signature"' || fail "logs found no signature in the example's kernel log"
fi

# A bundle through libarchive both ways: pack the example as the tar.gz that
# collect writes, then diagnose the archive.
(cd "$root/tmp" && tar -czf example.tar.gz example)
set +e
out=$(in_root diagnose /tmp/example.tar.gz --json)
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "diagnose of the .tar.gz exited $rc"
echo "$out" | grep -q '"root_cause": "gpu_fell_off_bus"' || fail "wrong verdict on the .tar.gz"
echo "PASS: static binary needs only glibc and runs in a root that holds nothing else"
