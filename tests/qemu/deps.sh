#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what kmad's build and test harness needs from Debian, if missing.
#   tests/qemu/deps.sh [check|lint|stock|run]...
# Idempotent: when every package is present it only runs dpkg-query.
set -euo pipefail

pkgs=(make gcc bc bison flex libelf-dev libssl-dev cpio xz-utils kmod python3
      linux-source-6.1 qemu-system-x86 busybox-static libibumad-dev)
for what in "$@"; do
	case "$what" in
	check) ;;
	lint) pkgs+=(sparse perl) ;;
	stock|run) pkgs+=(linux-headers-amd64 linux-image-amd64) ;;
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
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
