#!/usr/bin/env bash
# Builds the Debian package (cpack -G DEB), installs it into a clean Debian 12 root made with
# debootstrap (no container registry is reachable here; the Debian mirror is), and runs the
# installed vmm-run on an installed scenario with the host backend: no GPU, no driver, no build
# tree. Exit 0 when that run passes. Too slow for CTest (a few minutes); run it by hand, as root:
#   tools/package_test.sh [ROOT]          (ROOT defaults to a fresh directory under /tmp)
# Needs the build in ./build (tools/build.sh) and root (debootstrap, chroot, mount).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "package_test: $*"; }

[ "$(id -u)" -eq 0 ] || { echo "package_test: run as root (debootstrap, chroot)" >&2; exit 2; }
[ -f build/build.ninja ] || tools/build.sh

# The mirror apt uses here, from sources.list or a deb822 sources file.
mirror=$({ grep -hsoE '^(deb +|URIs: +)[^ ]+' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources \
             /etc/apt/sources.list.d/*.list || true; } | awk '{print $2}' | { grep -E '/debian/?$' || true; } | head -1)
mirror=${mirror:-http://deb.debian.org/debian}

log "building the package"
cmake --build build
rm -f build/vmm-run_*.deb
(cd build && cpack -G DEB >/dev/null)
deb=$(ls build/vmm-run_*.deb)
log "$deb"
dpkg-deb --info "$deb" | grep -E '^ (Package|Version|Architecture|Depends|Suggests|Installed-Size):'
dpkg-deb --contents "$deb" | awk '{print $6}' | grep -vE '/$'
if grep -q -- '--generate-code' build/build.ninja; then
  log "GPU code in the kernels (nvcc flags; PTX is what other GPUs JIT-compile):"
  grep -o -- '--generate-code=[^ ]*' build/build.ninja | sort -u
fi

command -v debootstrap >/dev/null || {
  log "installing debootstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}

root=${1:-$(mktemp -d /tmp/vmm-run-pkgroot.XXXXXX)}
keep_root=${1:+1}  # a ROOT given on the command line is kept
cleanup() {
  umount "$root/proc" 2>/dev/null || true
  if [ -z "$keep_root" ]; then rm -rf --one-file-system "$root" "$root.debootstrap.log"; fi
}
trap cleanup EXIT

log "debootstrap --variant=minbase bookworm $root $mirror"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 || {
  tail -20 "$root.debootstrap.log" >&2
  exit 1
}
mount -t proc proc "$root/proc"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$deb" "$root/tmp/vmm-run.deb"

log "no GPU, no driver in the root:"
chroot "$root" sh -c 'ls /usr/lib/x86_64-linux-gnu/libcuda.so* /dev/nvidia* 2>&1 || true'

log "chroot apt-get install -y /tmp/vmm-run.deb"
chroot "$root" apt-get update -qq
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y /tmp/vmm-run.deb \
  >"$root/tmp/apt.log" 2>&1 || { cat "$root/tmp/apt.log" >&2; exit 1; }
grep -E '^(The following|  |Setting up)' "$root/tmp/apt.log" || true

log "vmm-run --version"
chroot "$root" vmm-run --version
log "vmm-run /usr/share/vmm-run/scenarios/reuse.yaml --backend host --report-dir /tmp/r"
rc=0
chroot "$root" vmm-run /usr/share/vmm-run/scenarios/reuse.yaml --backend host --report-dir /tmp/r || rc=$?
log "exit $rc"
[ "$rc" -eq 0 ] || exit 1
[ -s "$root/tmp/r/reuse.host.json" ] || { log "no report /tmp/r/reuse.host.json"; exit 1; }
chroot "$root" sh -c 'vmm-run validate --quiet /usr/share/vmm-run/scenarios/*.yaml'
chroot "$root" sh -c 'vmm-run /usr/share/vmm-run/scenarios/*.yaml --backend host -q --report-dir /tmp/all'
log "PASS: the .deb installs into a clean Debian 12 root and runs there without a GPU"
