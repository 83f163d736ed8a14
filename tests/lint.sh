#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make lint`: checkpatch.pl --strict over every kmad C and header file
# (the kernel ones: tests/interop/umad_peer.c and
# tests/diags/umad_abi_test.c are user programs),
# then a sparse (C=2) and W=1 build of all modules against the debug test
# kernel, then docutils over every Documentation/*.rst.  Any warning
# fails.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/qemu/lib.sh
. "$root/tests/qemu/lib.sh"
"$root/tests/qemu/deps.sh" lint
kdir=$("$root/tests/qemu/kernel.sh" debug | tail -n 1)
ksrc=$(readlink -f "$kdir/source")
fail=0

# A throwaway copy of the tree's files (tracked and new, not ignored), for
# builds against other kernels than the debug one; prints its directory.
tree_copy() {
	local tmp

	tmp=$(mktemp -d)
	(cd "$root" && git ls-files -co --exclude-standard -z) |
		(cd "$root" && xargs -0 cp --parents -t "$tmp")
	echo "$tmp"
}

mapfile -t files < <(cd "$root" && git ls-files -co --exclude-standard \
	'drivers/*.c' 'drivers/*.h' 'include/*.h' 'samples/*.c' 'samples/*.h' \
	'tests/kunit/*.c' 'tests/kunit/*.h' 'tests/bench/*.c' \
	'tests/interop/*.c' 'tests/fakeib/*.c' 'tests/fakeib/*.h' \
	'tests/diags/*.c' |
	grep -v -e '/trace\.h$' -e '^tests/interop/umad_peer\.c$' \
		-e '^tests/diags/umad_abi_test\.c$')
echo ">> checkpatch --strict on ${#files[@]} files"
if ! (cd "$root" && "$ksrc/scripts/checkpatch.pl" --strict --no-tree --quiet \
	-f "${files[@]}"); then
	fail=1
fi
# Tracepoint headers use the TRACE_EVENT() layout of include/trace/events/,
# which checkpatch's parenthesis-alignment checks reject; every other
# check still applies to them.
mapfile -t traces < <(cd "$root" && git ls-files -co --exclude-standard 'drivers/*/trace.h')
if [ ${#traces[@]} -gt 0 ] && ! (cd "$root" && "$ksrc/scripts/checkpatch.pl" \
	--strict --no-tree --quiet --ignore PARENTHESIS_ALIGNMENT,OPEN_ENDED_LINE \
	-f "${traces[@]}"); then
	fail=1
fi

echo ">> sparse (C=2) and W=1 build"
make -s -C "$root" clean >/dev/null
log=$(mktemp)
if ! make -C "$root" KDIR="$kdir" modules C=2 W=1 > "$log" 2>&1; then
	cat "$log"
	fail=1
elif grep -E 'warning:|error:' "$log"; then
	fail=1
fi
rm -f "$log"

# The test module of `make diags` (kmad_sim only, no InfiniBand needed).
sparse_dir() {
	local dir=$1 log

	echo ">> sparse (C=2) and W=1 build of $dir against $kdir"
	log=$(mktemp)
	if ! make -C "$kdir" M="$root/$dir" C=2 W=1 \
		KBUILD_EXTRA_SYMBOLS="$root/Module.symvers" modules > "$log" 2>&1; then
		cat "$log"
		fail=1
	elif grep -E 'warning:|error:' "$log"; then
		fail=1
	fi
	rm -f "$log"
}
sparse_dir tests/diags

# kmad_ib needs a kernel with InfiniBand.  The debug kernel has it
# (tests/qemu/config/debug.config): the build above checked kmad_ib, and
# the interop test modules (ibmad_peer, kmad_interop), the rxe bench
# module (tests/bench/rxe) and the fake IB device (tests/fakeib) get their
# own sparse and W=1 build against it
# here.  If it has none, sparse and W=1 check
# kmad_ib and the test modules against the stock headers, in a throwaway
# copy of the tree.
if grep -qs '^CONFIG_INFINIBAND=[ym]' "$kdir/.config"; then
	for dir in tests/interop tests/bench/rxe tests/fakeib; do
		[ -f "$root/$dir/Kbuild" ] || continue
		sparse_dir "$dir"
	done
else
	hdr_pkg=$(stock_headers_pkg 2>/dev/null)
	stock=/usr/src/$hdr_pkg
	if [ -n "$hdr_pkg" ] && grep -qs '^CONFIG_INFINIBAND=[ym]' "$stock/.config"; then
		echo ">> sparse (C=2) and W=1 build of kmad_ib against $stock"
		tmp=$(tree_copy)
		log=$(mktemp)
		if ! { make -C "$tmp" KDIR="$stock" modules C=2 W=1 &&
		       { [ ! -f "$tmp/tests/interop/kmad_interop.c" ] ||
			 make -C "$stock" M="$tmp/tests/interop" C=2 W=1 \
			      KBUILD_EXTRA_SYMBOLS="$tmp/Module.symvers" modules; }; } \
			> "$log" 2>&1; then
			cat "$log"
			fail=1
		elif grep -E 'warning:|error:' "$log"; then
			fail=1
		fi
		rm -rf "$tmp" "$log"
	else
		echo ">> kmad_ib not checked: no kernel headers with CONFIG_INFINIBAND"
	fi
fi

# Other targets, as the kernel's build bots would try: W=1 builds of the
# modules of the top-level Kbuild (kmad and its providers, clients,
# samples, benchmark and KUnit modules; not the test modules of
# tests/interop, tests/bench/rxe, tests/fakeib and tests/diags) against
# a 32-bit x86 tree (gcc) and an x86_64 tree built with clang, both only
# prepared (tests/qemu/prep.sh).  Any compiler warning fails, any modpost warning
# too, and so does a 64-bit division compiled into a libgcc call: a
# 32-bit kernel has none of them, so the module would not load there.
# With no Module.symvers the kernel's exports are unknown, so modpost's
# "undefined" warnings are expected and skipped.
for flavor in i386 clang; do
	if ! out=$("$root/tests/qemu/prep.sh" "$flavor"); then
		echo "lint: preparing the $flavor tree failed" >&2
		fail=1
		continue
	fi
	mapfile -t prep <<< "$out"
	read -r -a kargs <<< "${prep[-2]}"
	echo ">> W=1 build against the $flavor tree ${prep[-1]}"
	tmp=$(tree_copy)
	log=$(mktemp)
	if ! make -C "$tmp" KDIR="${prep[-1]}" "${kargs[@]}" W=1 \
		KBUILD_MODPOST_WARN=1 modules > "$log" 2>&1; then
		cat "$log"
		fail=1
	elif grep -E 'warning:|error:' "$log" ||
	     grep 'WARNING' "$log" | grep -v -e 'undefined!$' \
		-e 'Module.symvers is missing' -e 'unresolved symbol warnings'; then
		fail=1
	fi
	while IFS= read -r ko; do
		if nm -u "$ko" | grep -E '__(u?(div|mod|divmod)di[34]|ashldi3|ashrdi3|lshrdi3|u?cmpdi2|muldi3)$'; then
			echo "lint: ${ko#"$tmp"/} needs a libgcc helper on $flavor (use div_u64() and friends)" >&2
			fail=1
		fi
	done < <(find "$tmp" -name '*.ko')
	rm -rf "$tmp" "$log"
done

# Documentation: every file must parse as reStructuredText without a
# warning (a broken table or a stray line turns into garbled text).
# Debian's python3 and python3-docutils, whatever python3 is first in PATH.
mapfile -t rsts < <(cd "$root" && git ls-files -co --exclude-standard 'Documentation/*.rst')
echo ">> docutils on ${#rsts[@]} reStructuredText files"
if ! (cd "$root" && /usr/bin/python3 - "${rsts[@]}" <<'PY'
import sys
import docutils.core
import docutils.utils

bad = 0
for path in sys.argv[1:]:
    try:
        with open(path, encoding='utf-8') as f:
            docutils.core.publish_doctree(
                f.read(), source_path=path,
                settings_overrides={'halt_level': 2, 'report_level': 2})
    except docutils.utils.SystemMessage as e:
        print(f'{path}: {e}', file=sys.stderr)
        bad = 1
sys.exit(bad)
PY
); then
	fail=1
fi

if [ "$fail" = 0 ]; then
	echo ">> lint: clean"
else
	echo ">> lint: FAILED" >&2
fi
exit "$fail"
