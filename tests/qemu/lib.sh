# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shell functions shared by the QEMU harnesses (tests/qemu/run.sh,
# tests/interop/interop.sh, and through it tests/bench/rxe/;
# tests/diags/diags.sh; tests/opensm/opensm.sh; tests/fakeib/fakeib.sh;
# tests/qemu/initramfs.sh;
# tests/lint.sh).  Source it from bash:
#
#   . "$root/tests/qemu/lib.sh"

# qemu_boot <timeout s> <kernel image> <initramfs> <append> <console log>
#
# Boots a guest the way make run and make interop do: QEMU TCG, q35,
# -cpu max, no devices but the serial console, no reboot, under a hard
# timeout (then killed, 10 s later with SIGKILL).  The console goes to
# <console log> with the carriage returns taken out, and to stdout too
# unless QEMU_QUIET=1.  The guest's /init powers off when it is done.
#
# Environment: QEMU_SMP (vCPUs, default 2), QEMU_MEM (default 1G).
#
# Sets qemu_rc (QEMU's exit status, 124 after the timeout) and
# qemu_guest_s (seconds the guest ran); returns 0 whatever QEMU did: the
# caller judges the log.
qemu_boot() {
	local timeout=$1 kernel=$2 initrd=$3 append=$4 log=$5 t0=$SECONDS
	local smp=${QEMU_SMP:-2} mem=${QEMU_MEM:-1G}

	qemu_rc=0
	if [ "${QEMU_QUIET:-0}" = 1 ]; then
		timeout --foreground -k 10 "$timeout" \
			qemu-system-x86_64 -machine q35 -cpu max -smp "$smp" -m "$mem" \
			-nodefaults -display none -serial stdio -no-reboot \
			-kernel "$kernel" -initrd "$initrd" \
			-append "$append" < /dev/null 2>&1 | tr -d '\r' > "$log" ||
			qemu_rc=${PIPESTATUS[0]}
	else
		timeout --foreground -k 10 "$timeout" \
			qemu-system-x86_64 -machine q35 -cpu max -smp "$smp" -m "$mem" \
			-nodefaults -display none -serial stdio -no-reboot \
			-kernel "$kernel" -initrd "$initrd" \
			-append "$append" < /dev/null 2>&1 | tr -d '\r' | tee "$log" ||
			qemu_rc=${PIPESTATUS[0]}
	fi
	# shellcheck disable=SC2034 # qemu_rc and qemu_guest_s are for the caller
	qemu_guest_s=$((SECONDS - t0))
	if [ "$qemu_rc" = 124 ]; then
		echo "qemu_boot: QEMU killed after ${timeout}s" | tee -a "$log"
	fi
	return 0
}

# pack_initramfs <stage dir> <out.cpio.gz>
#
# Packs <stage dir> as a newc cpio archive, owned by root, in a stable
# order, gzipped into <out.cpio.gz>.  Creates /dev/console (which must
# exist before devtmpfs is mounted, for init's stdio) and /dev/null in
# the stage first, unless they are there from an earlier pack.
pack_initramfs() {
	local stage=$1 out=$2

	mkdir -p "$stage/dev"
	[ -e "$stage/dev/console" ] || mknod -m 600 "$stage/dev/console" c 5 1
	[ -e "$stage/dev/null" ] || mknod -m 666 "$stage/dev/null" c 1 3
	(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) |
		gzip -1 > "$out"
}

# harness_build <log> <command...>
#
# Runs <command> with its output appended to <log>.  On failure shows the
# log's last 30 lines and returns 1, for the caller to give up.
harness_build() {
	local log=$1 rc
	shift
	"$@" >> "$log" 2>&1 && rc=0 || rc=$?
	if [ "$rc" != 0 ]; then
		tail -n 30 "$log"
		return 1
	fi
}

# stock_headers_pkg
#
# Prints the linux-headers-<version>-amd64 package Debian's
# linux-headers-amd64 depends on: the stock kernel's headers.
stock_headers_pkg() {
	dpkg-query -W -f='${Depends}' linux-headers-amd64 |
		grep -o 'linux-headers-[^ ,]*-amd64' | head -n 1
}

# The functions below call the caller's say <message> and die <message>
# (each harness prints its own prefix and verdict line when it gives up).

# stock_kernel
#
# Sets kver, kdir and vmlinuz for Debian's stock kernel: the version
# linux-headers-amd64 depends on (stock_headers_pkg), its headers in
# /usr/src and its image in /boot.  Dies when the version cannot be told;
# kernel_check checks that the two are there.
stock_kernel() {
	local pkg

	pkg=$(stock_headers_pkg)
	[ -n "$pkg" ] || die "cannot tell the kernel version from linux-headers-amd64"
	kver=${pkg#linux-headers-}
	kdir=/usr/src/$pkg
	vmlinuz=/boot/vmlinuz-$kver
}

# kernel_check
#
# Dies unless $kdir (the build tree) is a directory and $vmlinuz (the
# image) is readable.
kernel_check() {
	[ -d "$kdir" ] || die "$kdir missing"
	[ -r "$vmlinuz" ] || die "$vmlinuz missing or unreadable"
}

# harness_build_kmad <root> <out>
#
# Copies the tree <root> to <out>/src (tests/qemu/copy-tree.sh: objects
# there survive between runs), empties <out>/build.log, then builds kmad's
# modules there against $kdir.  Sets src and build_log, and defines
# build <what> <command...> for the caller's later steps: the command,
# logged by harness_build, dying with the log's name on failure.  Sets
# build_t0 to $SECONDS when the build began (after the copy).
harness_build_kmad() {
	local root=$1 out=$2

	src=$out/src
	"$root/tests/qemu/copy-tree.sh" "$root" "$src"
	build_log=$out/build.log
	: > "$build_log"
	say "building kmad against $kdir in $src"
	# shellcheck disable=SC2034 # build_t0 is for the caller
	build_t0=$SECONDS
	build kmad make -C "$src" KDIR="$kdir" -j"$(nproc)" modules
}
# build_test_modules <dir>
#
# Builds the test modules of <dir> (relative to $src) with W=1 against
# $kdir and kmad's $src/Module.symvers; dies on a failure or a W=1
# warning.  6.1's modpost does not rerun for an M= build whose only change
# is KBUILD_EXTRA_SYMBOLS, so a test module whose sources did not change
# kept the symbol CRCs of an older kmad build ("disagrees about version
# of symbol" at modprobe): when one of its .ko files is older than
# Module.symvers, the directory is cleaned first.
build_test_modules() {
	local d=$src/$1 mark

	if [ -n "$(find "$d" -maxdepth 1 -name '*.ko' ! -newer "$src/Module.symvers")" ]; then
		make -s -C "$kdir" M="$d" clean >> "$build_log" 2>&1
	fi
	mark=$(wc -l < "$build_log")
	build "$1" make -C "$kdir" M="$d" W=1 \
		KBUILD_EXTRA_SYMBOLS="$src/Module.symvers" modules
	if tail -n +"$((mark + 1))" "$build_log" | grep -Ei 'warning:'; then
		die "W=1 warnings in $1 (log: $build_log)"
	fi
}
build() {
	local what=$1

	shift
	harness_build "$build_log" "$@" || die "building $what (log: $build_log)"
}

# debug_kernel_modules <out> [debug|kcsan]
#
# For the debug kernel of make check (tests/qemu/kernel.sh debug), or its
# KCSAN twin (kcsan): sets kdir, kver and vmlinuz, and installs its
# modules under <out>/kmods, which it sets as modroot (the stock kernel's
# modroot is empty: the host's /lib/modules).
debug_kernel_modules() {
	local flavor=${2:-debug}

	kdir=$("$(dirname "${BASH_SOURCE[0]}")/kernel.sh" "$flavor" | tail -n 1) ||
		die "building the $flavor kernel (tests/qemu/kernel.sh $flavor)"
	kver=$(cat "$kdir/include/config/kernel.release")
	vmlinuz=$kdir/arch/x86/boot/bzImage
	modroot=$1/kmods
	rm -rf "$modroot"
	make -s -C "$kdir" INSTALL_MOD_PATH="$modroot" modules_install > /dev/null ||
		die "modules_install of $kdir"
}

# modules_check
#
# Dies unless $modroot/lib/modules/$kver/kernel is there; then says which
# kernel the harness boots and sets modinfo, the modinfo command for it.
modules_check() {
	[ -d "$modroot/lib/modules/$kver/kernel" ] ||
		die "$modroot/lib/modules/$kver/kernel missing"
	say "$kernel kernel $kver: $vmlinuz, build tree $kdir"
	modinfo=(/sbin/modinfo -k "$kver")
	[ -z "$modroot" ] || modinfo+=(-b "$modroot")
}

# add_lib <file>
#
# Copies <file> (symlinks followed) into the initramfs tree $stage at
# the same path, once.
add_lib() {
	local f=$1

	[ -e "$stage$f" ] && return 0
	mkdir -p "$stage$(dirname "$f")"
	cp -L "$f" "$stage$f"
}

# add_prog <program> <path in the guest>
#
# Copies a host program into $stage as it is, with every library ldd
# names.
add_prog() {
	local prog=$1 dest=$2 lib

	mkdir -p "$stage$(dirname "$dest")"
	cp "$prog" "$stage$dest"
	while read -r lib; do
		add_lib "$lib"
	done < <(ldd "$prog" | grep -o '/[^ ]*')
}

# add_mod <module>
#
# Copies a module of the guest kernel ($modinfo, below $modroot) and the
# modules it depends on into $stage at their own paths, once each; a
# built-in one is skipped.  The names copied are the keys of mods_added.
declare -A mods_added=()
add_mod() {
	local m=$1 path dep rel

	[ -n "${mods_added[$m]:-}" ] && return 0
	mods_added[$m]=1
	path=$("${modinfo[@]}" -n "$m") || die "no module $m in the $kernel kernel"
	case "$path" in
	"$modroot"/lib/modules/*) ;;
	*) return 0 ;;	# built in
	esac
	rel=${path#"$modroot"}
	mkdir -p "$stage$(dirname "$rel")"
	cp "$path" "$stage$rel"
	for dep in $("${modinfo[@]}" -F depends "$m" | tr ',' ' '); do
		add_mod "$dep"
	done
}

# kernel_splats <console log>
#
# Prints one line per kernel splat in the log ("N: what: line"), with the
# patterns of tests/qemu/harness.py (make check); like make check, it
# leaves out kmemleak reports of objects allocated by start_kernel (boot,
# not kmad), and says on stderr how many.  Fails if it cannot scan.
kernel_splats() {
	python3 - "$(dirname "${BASH_SOURCE[0]}")" "$1" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import harness
with open(sys.argv[2], encoding='utf-8', errors='replace') as f:
    log = f.read().splitlines()
boot_leaks = harness.early_boot_leaks(log)
if boot_leaks:
    print(f'(ignored: {len(boot_leaks)} kmemleak report(s) of objects '
          'allocated by start_kernel)', file=sys.stderr)
for n, line in enumerate(log, 1):
    if n in boot_leaks:
        continue
    for rx, what in harness.SPLATS:
        if rx.search(line):
            print(f'{n}: {what}: {line.strip()}')
            break
PY
}
