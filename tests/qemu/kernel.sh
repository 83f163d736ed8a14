#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or reuse) the QEMU guest kernel for kmad's tests.
#
#   tests/qemu/kernel.sh debug|kcsan|bench
#
# The kernel comes from Debian's linux-source-6.1 package, configured from
# allnoconfig plus the fragments in tests/qemu/config/.  It is cached in
# $KMAD_CACHE (default /var/cache/kmad), keyed by the source package version
# and a hash of the fragments, so only the first build pays.  The last line
# printed on stdout is the build directory (usable as KDIR).
set -euo pipefail

flavor=${1:?usage: kernel.sh debug|kcsan|bench}
here=$(cd "$(dirname "$0")" && pwd)
cache=${KMAD_CACHE:-/var/cache/kmad}
frags=("$here/config/base.config" "$here/config/$flavor.config")
# kcsan is debug with KCSAN in place of KASAN (config/kcsan.config),
# and the kernel's own code built without KCSAN's instrumentation
# (KCSAN_SANITIZE=n; the modules built against it later, kmad's, are
# instrumented): every report involves one of kmad's accesses, never a
# race between two of the kernel's own.
kmake=()
if [ "$flavor" = kcsan ]; then
	frags=("$here/config/base.config" "$here/config/debug.config"
	       "$here/config/kcsan.config")
	kmake=(KCSAN_SANITIZE=n)
fi
for f in "${frags[@]}"; do
	[ -f "$f" ] || { echo "kernel.sh: no config fragment $f" >&2; exit 2; }
done

tarball=/usr/src/linux-source-6.1.tar.xz
[ -f "$tarball" ] || { echo "kernel.sh: $tarball missing (apt-get install linux-source-6.1)" >&2; exit 2; }
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
# The make arguments count only when there are any: the hashes of the
# debug and bench flavors stay what they were before kcsan existed.
confhash=$( (cat "${frags[@]}"; echo "$flavor${kmake[*]:+ ${kmake[*]}}") |
	   sha256sum | cut -c1-12)
src=$cache/src/linux-$srcver
out=$cache/kernel/$srcver-$flavor-$confhash

# A finished build is never changed again: no lock needed to use it (one
# guest's build of another flavor must not hold up every other check).
if [ -f "$out/.kmad-built" ]; then
	echo ">> cached $flavor kernel: $out" >&2
	echo "$out"
	exit 0
fi

mkdir -p "$cache/src" "$cache/kernel"
exec 9>"$cache/.lock"
flock 9

if [ ! -f "$src/.kmad-unpacked" ]; then
	echo ">> unpacking linux-source-6.1 $srcver into $src" >&2
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xf "$tarball" -C "$src.tmp" --strip-components=1
	touch "$src.tmp/.kmad-unpacked"
	mv "$src.tmp" "$src"
fi

if [ -f "$out/.kmad-built" ]; then
	echo ">> cached $flavor kernel: $out" >&2
	echo "$out"
	exit 0
fi

mkdir -p "$out"
echo ">> configuring $flavor kernel in $out" >&2
make -s -C "$src" O="$out" allnoconfig >/dev/null
KCONFIG_CONFIG="$out/.config" "$src/scripts/kconfig/merge_config.sh" \
	-m -O "$out" "$out/.config" "${frags[@]}" >/dev/null
make -s -C "$src" O="$out" olddefconfig >/dev/null

# Every option a fragment names must have survived olddefconfig: a
# dependency we forgot would otherwise silently drop a debug check.  When
# two fragments name the same option the later one wins, as in
# merge_config.sh (debug.config's CONFIG_INFINIBAND=m over base.config's
# =n): only its line is checked.
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=n)
		opt=${line%%=*}
		if grep -q "^$opt=" "$out/.config"; then
			echo "kernel.sh: $opt should be unset" >&2; bad=1
		fi ;;
	CONFIG_*=*)
		if ! grep -qx "$line" "$out/.config"; then
			echo "kernel.sh: wanted $line, got: $(grep "^${line%%=*}=" "$out/.config" || echo unset)" >&2
			bad=1
		fi ;;
	esac
done < <(cat "${frags[@]}" | grep '^CONFIG_' | tac | sort -t= -k1,1 -u -s)
[ "$bad" = 0 ] || { echo "kernel.sh: config fragments not satisfied" >&2; exit 1; }

jobs=$(( $(nproc) + 1 ))
log=$out/build.log
echo ">> building $flavor kernel with -j$jobs (first build takes about 10 minutes; log: $log)" >&2
start=$SECONDS
make -C "$src" O="$out" -j"$jobs" "${kmake[@]}" >"$log" 2>&1 &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
	sleep 20
	kill -0 "$pid" 2>/dev/null || break
	n=$(grep -c '^  CC ' "$log" || true)
	echo ">> kernel build: $n files compiled, $((SECONDS - start))s elapsed" >&2
done
if ! wait "$pid"; then
	tail -40 "$log" >&2
	echo "kernel.sh: kernel build failed, see $log" >&2
	exit 1
fi
touch "$out/.kmad-built"
# Older builds of this flavor (other configs) are dead weight: drop them.
for old in "$cache/kernel/"*-"$flavor"-*; do
	[ "$old" = "$out" ] || rm -rf "$old"
done
echo ">> $flavor kernel built in $((SECONDS - start))s: $out" >&2
echo "$out"
