#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what kmad's build and test harness needs from Debian, if missing.
#   tests/qemu/deps.sh [check|lint|stock|run|interop|fuzz]...
# Idempotent: when every package is present it only runs dpkg-query.
set -euo pipefail

# What every set needs: build kmad, pack an initramfs, boot QEMU.
pkgs=(make gcc cpio kmod qemu-system-x86 busybox-static)
# The debug kernel (make check, make lint) and the host checks.
check_pkgs=(bc bison flex libelf-dev libssl-dev xz-utils python3
	    linux-source-6.1 libibumad-dev)
[ $# -gt 0 ] || set -- check
for what in "$@"; do
	case "$what" in
	check) pkgs+=("${check_pkgs[@]}") ;;
	# lint: python3-docutils for the reStructuredText check; clang, lld
	# and llvm for the LLVM=1 build (tests/qemu/prep.sh clang)
	lint) pkgs+=("${check_pkgs[@]}" sparse perl python3-docutils
		     clang lld llvm) ;;
	stock) pkgs+=(linux-headers-amd64 linux-image-amd64) ;;
	# make run: the stock kernel and its headers, rsync for the build copy
	run) pkgs+=(linux-headers-amd64 linux-image-amd64 rsync) ;;
	# make interop: the same, plus iproute2 (ip, rdma) and libibumad for
	# the guest, python3 for the splat patterns of harness.py
	interop) pkgs+=(linux-headers-amd64 linux-image-amd64 rsync iproute2
			libibumad-dev libibumad3 python3) ;;
	# make fuzz: clang (bookworm's is clang-14) and libclang-rt-14-dev,
	# which has the libFuzzer, ASan and UBSan runtimes it links
	fuzz) pkgs+=(clang libclang-rt-14-dev python3) ;;
	*) echo "deps.sh: unknown set '$what'" >&2; exit 2 ;;
	esac
done

missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]} (run as root, or apt-get install them)" >&2
	exit 1
fi
echo ">> installing from Debian: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
echo ">> apt-get update" >&2
apt-get update -q >/dev/null
# Progress: one line per package downloaded and set up.
apt-get install -y -q --no-install-recommends "${missing[@]}" |
	sed -u -n '/^\(Get:\|Setting up \)/s/^/   /p' >&2
[ "${PIPESTATUS[0]}" = 0 ]
