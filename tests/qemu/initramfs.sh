#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Pack the test initramfs.
#   initramfs.sh OUT.cpio.gz LOADLIST MODULE.ko...
# LOADLIST is the file copied to /kmad/load (module names in load order).
set -euo pipefail
out=$1 list=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/qemu/lib.sh
. "$here/lib.sh"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

mkdir -p "$root"/{bin,dev,proc,sys,tmp,kmad}
cp /bin/busybox "$root/bin/busybox"
cp "$here/init.sh" "$root/init"
chmod 755 "$root/init"
cp "$list" "$root/kmad/load"
for ko in "$@"; do
	cp "$ko" "$root/kmad/"
done
pack_initramfs "$root" "$out"
