#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Prepare (or reuse) a kernel tree that modules can be compiled against
# but that is never booted: `make lint` builds kmad against it to see
# what another architecture or compiler says.
#
#   tests/qemu/prep.sh i386|clang
#
#   i386   a 32-bit x86 kernel (i386 defconfig), built with gcc: 64-bit
#          divisions the compiler turns into libgcc calls (__udivdi3 ...),
#          which the kernel does not have, and 32-bit format warnings
#   clang  an x86_64 kernel (defconfig) built with LLVM=1: clang's own
#          warnings
#
# Both add what kmad's modules need (modules, InfiniBand, KUnit, debugfs)
# and stop after modules_prepare (a minute, not a kernel build).  Cached
# in $KMAD_CACHE (default /var/cache/kmad) like tests/qemu/kernel.sh's
# kernels, keyed by the source package version and this script's hash.
# The last line printed on stdout is the tree (usable as KDIR, with the
# make arguments the second-to-last line prints).
set -euo pipefail

flavor=${1:?usage: prep.sh i386|clang}
cache=${KMAD_CACHE:-/var/cache/kmad}
case "$flavor" in
i386)	kargs=(ARCH=i386) ;;
clang)	kargs=(LLVM=1) ;;
*)	echo "prep.sh: unknown flavor $flavor" >&2; exit 2 ;;
esac

tarball=/usr/src/linux-source-6.1.tar.xz
[ -f "$tarball" ] || { echo "prep.sh: $tarball missing (apt-get install linux-source-6.1)" >&2; exit 2; }
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
hash=$(sha256sum "$0" | cut -c1-12)
src=$cache/src/linux-$srcver
out=$cache/kernel/$srcver-prep-$flavor-$hash

if [ ! -f "$out/.kmad-prepared" ]; then
	# tests/qemu/kernel.sh unpacks the source (and holds the cache lock
	# while it does); any flavor will do.
	here=$(cd "$(dirname "$0")" && pwd)
	[ -f "$src/.kmad-unpacked" ] || "$here/kernel.sh" debug >/dev/null
	mkdir -p "$cache/kernel"
	exec 9>"$cache/.lock"
	flock 9
fi
if [ ! -f "$out/.kmad-prepared" ]; then
	echo ">> preparing the $flavor tree in $out" >&2
	rm -rf "$out"
	mkdir -p "$out"
	make -s -C "$src" O="$out" "${kargs[@]}" defconfig >/dev/null
	"$src/scripts/config" --file "$out/.config" -e MODULES -e INFINIBAND \
		-e INFINIBAND_USER_MAD -m KUNIT -e DEBUG_FS
	make -s -C "$src" O="$out" "${kargs[@]}" olddefconfig >/dev/null
	for opt in CONFIG_MODULES=y CONFIG_INFINIBAND=y CONFIG_KUNIT=m CONFIG_DEBUG_FS=y; do
		grep -qx "$opt" "$out/.config" ||
			{ echo "prep.sh: wanted $opt in $out/.config" >&2; exit 1; }
	done
	if ! make -C "$out" "${kargs[@]}" -j"$(( $(nproc) + 1 ))" modules_prepare \
		> "$out/prepare.log" 2>&1; then
		tail -40 "$out/prepare.log" >&2
		exit 1
	fi
	touch "$out/.kmad-prepared"
	for old in "$cache/kernel/"*-prep-"$flavor"-*; do
		[ "$old" = "$out" ] || rm -rf "$old"
	done
fi
echo "${kargs[*]}"
echo "$out"
