#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make fakeib`: kmad_fakeib (tests/fakeib/fakeib.c), fake ib_core devices
# with an InfiniBand link layer, on Debian's stock kernel in QEMU, proved
# real to the kernel's ib_mad with Debian's infiniband-diags (unmodified,
# through ib_umad), then bound by kmad_ib, with GSI round trips between
# kmad and ib_mad and between two kmad agents, and SMPs through kmad_ib's
# QP0 bridge (a kmad SMA answering kmad and Debian's smpquery).  See Documentation/testing.rst
# ("make fakeib") and Documentation/kmad_ib.rst.
#
#   1. install what is missing (tests/qemu/deps.sh interop, and
#      infiniband-diags);
#   2. build kmad and kmad_ib against the kernel's headers in a copy of
#      the tree (build/fakeib/src), tests/fakeib (kmad_fakeib.ko,
#      kmad_fakeib_smi.ko) and
#      tests/interop (ibmad_peer.ko, kmad_interop.ko), both W=1;
#   3. pack a busybox initramfs: the tools and the libraries ldd names,
#      ib_core, ib_umad, ib_cm and what they depend on, the test modules,
#      tests/fakeib/guest.sh as /init (and tests/qemu/guest-lib.sh, which
#      it sources);
#   4. boot the kernel in QEMU (TCG, 2 vCPUs, hard timeout);
#   5. judge: the guest prints one "fakeib: <check>: ok|FAILED ..." line
#      per check in a results block at its end; a missing check, the guest
#      not reaching its end, or a kernel splat (tests/qemu/harness.py's
#      patterns) fails.  The last line is "N passed, N failed".
#
# Environment (the Makefile passes KERNEL):
#   KERNEL=stock|debug|kcsan  Debian's stock kernel (default) or make
#                             check's debug kernel (lockdep, KASAN,
#                             kmemleak...) with its own RDMA modules, or
#                             its KCSAN twin
#   KMAD_FAKEIB_TIMEOUT=<s>   hard limit for the guest (default 300, 900
#                             with KERNEL=debug or kcsan)
#   KMAD_FAKEIB_VERBOSE=1     show the whole kernel boot log
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/fakeib
qemu_dir=$root/tests/qemu
# shellcheck source=tests/qemu/lib.sh
. "$qemu_dir/lib.sh"
kernel=${KERNEL:-stock}
case "$kernel" in
stock) out=$root/build/fakeib ;;
debug|kcsan) out=$root/build/fakeib-$kernel ;;
*) echo "fakeib.sh: KERNEL=$kernel: stock, debug or kcsan expected" >&2; exit 2 ;;
esac
timeout=${KMAD_FAKEIB_TIMEOUT:-300}
[ "$kernel" = stock ] || timeout=${KMAD_FAKEIB_TIMEOUT:-900}
start_all=$SECONDS

# The checks the guest must print, in order (tests/fakeib/guest.sh).
CHECKS="load sysfs ibstat smpquery perfquery kmad-bind
gsi/ibmad_unsupported gsi/ibmad_peer gsi/kmad_kmad gsi/timeout_retry gsi/pkey_index
gsi/rdma-to-kmad gsi/rdma-to-kmad-pkey smi/smi_kmad smi/smi_timeout smi/smi_dr smi/rereg smi/smi_set_tid smi/smpquery-sma smi/ibmad-flush
smi/smi_ibmad
smi/unload unload"

say() { echo ">> $*"; }
die() {
	echo "fakeib.sh: $*" >&2
	echo "fakeib: harness: FAILED $*"
	echo "0 passed, 1 failed"
	exit 1
}

# 1. Packages.  modroot: where the kernel's modules are (below it,
#    /lib/modules/<kver>/): the host's for the stock kernel, a
#    modules_install of the debug build for the debug kernel.
if [ "$kernel" = stock ]; then
	say "checking packages (tests/qemu/deps.sh interop)"
	"$qemu_dir/deps.sh" interop
	stock_kernel
	modroot=
else
	say "checking packages (tests/qemu/deps.sh check interop)"
	"$qemu_dir/deps.sh" check interop
	debug_kernel_modules "$out" "$kernel"
fi
if ! dpkg-query -W -f='${Status}' infiniband-diags 2>/dev/null | grep -q 'ok installed'; then
	say "apt-get install -y infiniband-diags"
	DEBIAN_FRONTEND=noninteractive apt-get install -y infiniband-diags > /dev/null ||
		die "apt-get install infiniband-diags failed"
fi
kernel_check
modules_check

# 2. Build in a copy of the tree (objects survive between runs).
harness_build_kmad "$root" "$out"
kos=()
for m in kmad kmad_ib; do
	ko=$(find "$src/drivers" -name "$m.ko" | head -n 1)
	[ -n "$ko" ] || die "$m.ko was not built"
	kos+=("$ko")
done
for d in tests/fakeib tests/interop; do
	build_test_modules "$d"
done
for ko in tests/fakeib/kmad_fakeib.ko tests/fakeib/kmad_fakeib_smi.ko \
	  tests/interop/ibmad_peer.ko tests/interop/kmad_interop.ko; do
	[ -f "$src/$ko" ] || die "$ko was not built"
	kos+=("$src/$ko")
done
build umad_peer gcc -std=gnu11 -O2 -Wall -Wextra -Werror \
	-o "$src/tests/interop/umad_peer" "$src/tests/interop/umad_peer.c" -libumad
say "built in $((SECONDS - build_t0))s: umad_peer ${kos[*]##*/}"

# 3. The initramfs.
stage=$out/initramfs
rm -rf "$stage"
mkdir -p "$stage"/{bin,sbin,dev,proc,sys,tmp,kmad,lib64,etc} \
	"$stage/lib/modules/$kver/updates/kmad"
cp /bin/busybox "$stage/bin/busybox"
for t in ibstat smpquery perfquery; do
	p=$(command -v "$t" || true)
	[ -n "$p" ] || p=/usr/sbin/$t
	[ -x "$p" ] || die "$t not found"
	add_prog "$p" "/sbin/$t"
done
add_prog "$src/tests/interop/umad_peer" /sbin/umad_peer
[ ! -d /etc/infiniband-diags ] || cp -r /etc/infiniband-diags "$stage/etc/"

# The kernel's modules and everything they depend on, at their own paths.
for m in ib_core ib_umad ib_cm; do
	add_mod "$m"
done
cp "${kos[@]}" "$stage/lib/modules/$kver/updates/kmad/"
for f in modules.order modules.builtin modules.builtin.modinfo; do
	cp "$modroot/lib/modules/$kver/$f" "$stage/lib/modules/$kver/$f"
done
/sbin/depmod -b "$stage" "$kver"
grep -q '^updates/kmad/kmad_fakeib.ko: .*ib_core.ko' \
	"$stage/lib/modules/$kver/modules.dep" || die "depmod: kmad_fakeib's dependency on ib_core not found"
{
	printf 'KVER=%q\n' "$kver"
	printf 'CHECKS=%q\n' "${CHECKS//$'\n'/ }"
} > "$stage/kmad/fakeib.conf"
cp "$here/guest.sh" "$stage/init"
cp "$qemu_dir/guest-lib.sh" "$stage/kmad/"
chmod 755 "$stage/init"
pack_initramfs "$stage" "$out/initramfs.cpio.gz"
say "initramfs: $(du -h "$out/initramfs.cpio.gz" | cut -f1), kernel modules: ${!mods_added[*]}"

# 4. Boot.
# no5lvl: 4-level paging, for the debug kernel (tests/qemu/check.sh says why).
append="console=ttyS0 no5lvl panic=-1 oops=panic panic_on_warn=1 no_timer_check log_buf_len=4M"
[ "${KMAD_FAKEIB_VERBOSE:-0}" = 1 ] || [ "$kernel" != stock ] || append+=" quiet"
log=$out/console.log
say "booting the $kernel kernel $vmlinuz in QEMU (TCG, 2 vCPUs, timeout ${timeout}s); console log: $log"
QEMU_QUIET=1 qemu_boot "$timeout" "$vmlinuz" "$out/initramfs.cpio.gz" "$append" "$log"
say "guest ran ${qemu_guest_s}s (qemu exit $qemu_rc)"

# 5. The verdict.
results=$out/results.txt
sed -n '/^kmad-fakeib: results begin$/,/^kmad-fakeib: results end$/p' "$log" > "$results"
lines=()
harness_fail=()
if ! grep -q '^kmad-fakeib: results end$' "$results"; then
	harness_fail+=("the guest printed no results block (qemu exit $qemu_rc); judging the whole log")
	cp "$log" "$results"
fi
grep -q '^kmad-fakeib: end$' "$log" || harness_fail+=("the guest did not reach its end (qemu exit $qemu_rc)")
for c in $CHECKS; do
	line=$(grep -m1 "^fakeib: $c: \(ok\|FAILED\)" "$results" || true)
	[ -n "$line" ] || line="fakeib: $c: FAILED no result line from the guest"
	lines+=("$line")
done
splats=$(kernel_splats "$log") || harness_fail+=("cannot scan the log for splats")
if [ -n "$splats" ]; then
	echo "kernel splats in $log:"
	echo "$splats" | head -n 20
	lines+=("fakeib: no-splat: FAILED $(echo "$splats" | wc -l) splat line(s), first: $(echo "$splats" | head -n 1)")
else
	lines+=("fakeib: no-splat: ok console log scanned")
fi
for f in "${harness_fail[@]}"; do
	lines+=("fakeib: harness: FAILED $f")
done

echo
echo "== make fakeib ($kernel kernel $kver): guest ran ${qemu_guest_s}s, $((SECONDS - start_all))s in all"
passed=0 failed=0
for l in "${lines[@]}"; do
	echo "$l"
	# "fakeib: <check>: ok ...", from the start: a FAILED line's
	# detail may hold ": ok" too.
	if [[ $l =~ ^fakeib:\ [^:\ ]+:\ ok ]]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
