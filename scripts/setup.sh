#!/bin/bash
# Install what ptflame needs to build and test, from Debian's packages.
# Idempotent: installs only what is missing. Run as root (or with sudo).
set -eu
# libc6-dbg: libc's and ld.so's separate debug files (by build-id), so that
# their static functions have names in profiles and the tests exercise
# debuginfo lookup on real system libraries.
# chromium, chromium-driver, python3-selenium: the SVG flame graph's test in a
# real (headless) browser (tests/e2e/svg/browser.sh), with the font the SVG
# names first (its labels are cut to that width). groff-base,
# bsdextrautils (col): the man pages' test (tests/e2e/install). clang +
# libclang-rt-14-dev: the libFuzzer targets (tests/fuzz, scripts/fuzz.sh).
# qemu-user: qemu-x86_64, the fast backend of record --emulate. sqlite3, jq,
# tcl, bc, bzip2, zstd, file: programs of scripts/stress-commands.txt.
# libzstd-dev: perf.data records compressed with zstd (perf record -z,
# ptflame record -z).
pkgs=(build-essential g++ meson ninja-build pkg-config
      libipt-dev libdw-dev libelf-dev libcapstone-dev libzydis-dev libiberty-dev libcmocka-dev
      libzstd-dev
      linux-perf python3 gdb libc6-dbg
      chromium chromium-driver python3-selenium fonts-dejavu-core groff-base bsdextrautils
      clang libclang-rt-14-dev qemu-user sqlite3 jq tcl bc bzip2 zstd file)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup: installing ${missing[*]}" >&2
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
