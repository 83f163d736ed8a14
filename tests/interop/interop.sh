#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make interop`: kmad against the kernel's own MAD layer (ib_mad) and
# rdma-core's libibumad, over soft-RoCE (rxe) on the stock Debian kernel,
# in QEMU.  See Documentation/interop.rst.
#
#   1. install what is missing (tests/qemu/deps.sh interop): the stock
#      kernel image and headers, QEMU, busybox, iproute2 (ip, rdma),
#      libibumad, gcc;
#   2. build kmad (and kmad_ib when the tree has it) against the stock
#      headers in a copy of the tree (build/interop/src), then the test
#      modules of tests/interop/ (ibmad_peer, and kmad_interop when its
#      source exists) and the user program umad_peer (-libumad);
#   3. pack a busybox initramfs: iproute2's ip (renamed iproute2-ip, since
#      busybox --install would shadow it), rdma, umad_peer and the
#      libraries ldd names, the stock modules rxe needs (and what
#      modinfo says they depend on) with a modules.dep from the host's
#      depmod, kmad's modules in updates/kmad, tests/interop/guest.sh as
#      /init (and tests/qemu/guest-lib.sh, which it sources);
#   4. boot /boot/vmlinuz-<stock> in QEMU (TCG, 2 vCPUs, hard timeout);
#      the guest creates rxe0/rxe1 on a veth pair and runs the exchanges,
#      one "interop: <name>: ok|FAILED|SKIPPED ..." line each;
#   5. judge the results block the guest prints last and the console
#      log: any FAILED line, a missing expected line, the guest not
#      reaching its end, or a kernel splat fails the run.  The last line
#      is the summary and the verdict.
#
# Environment (the Makefile passes its variables of the same names):
#   KERNEL=stock|debug|kcsan  the guest kernel: Debian's stock kernel (the
#                             default), or the debug kernel of make check
#                             (tests/qemu/kernel.sh debug: lockdep, KASAN,
#                             kmemleak...), with its own RDMA modules, or
#                             its KCSAN twin (kcsan)
#   INTEROP_CASES=<list>      kmad_interop cases= (default: the module's own)
#   INTEROP_ARGS='k=v ...'    more kmad_interop parameters, verbatim
#   KMAD_INTEROP_TIMEOUT=<s>  hard limit for the guest (default 420, 900 with
#                             KERNEL=debug or kcsan: a passing guest needs
#                             well under a minute on the stock kernel, a few
#                             on the debug one; a failing one can wait 30 s
#                             per kmad_interop case)
#   KMAD_INTEROP_VERBOSE=1    show the whole kernel boot log
#   RXE_BENCH=1               the rxe part of make bench instead of the
#                             exchanges (tests/bench/rxe/rxe.sh sets it):
#                             the same build, initramfs and fabric, plus
#                             tests/bench/rxe/rxe_bench.ko, which the guest
#                             loads after setup with RXE_BENCH_ARGS; output
#                             in build/rxebench/, default timeout 3000 s,
#                             2 GiB guest, slab_nomerge (so that each slab
#                             cache's counters are its own)
#   RXE_BENCH_ARGS='k=v ...'  rxe_bench's parameters (quick=, repeats=...)
#   RXE_PERF=1                with RXE_BENCH=1, profile: the host's perf
#                             (/usr/bin/perf) goes into the initramfs and
#                             the guest runs rxe_bench under perf record -a
#                             -g -k mono -e cpu-clock, then prints perf
#                             report for every "prof: window" rxe_bench
#                             printed (give it prof_n=<N> in
#                             RXE_BENCH_ARGS); Documentation/benchmarks.rst,
#                             "Profiling"
#   RXE_PERF_FREQ=<Hz>        perf record -F (default 2000)
#   RXE_PERF_APPEND='...'     with RXE_PERF=1, more guest kernel command
#                             line (e.g. 'clocksource=tsc tsc=reliable')
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/interop
qemu_dir=$root/tests/qemu
# shellcheck source=tests/qemu/lib.sh
. "$qemu_dir/lib.sh"
kernel=${KERNEL:-stock}
bench=${RXE_BENCH:-0}
bench_args=${RXE_BENCH_ARGS:-}
perf=${RXE_PERF:-0}
perf_freq=${RXE_PERF_FREQ:-2000}
perf_append=${RXE_PERF_APPEND:-}
[ "$bench" = 1 ] || perf=0
case "$kernel" in
stock) out=$root/build/interop
       [ "$bench" != 1 ] || out=$root/build/rxebench ;;
debug|kcsan) out=$root/build/interop-$kernel ;;
*) echo "interop.sh: KERNEL=$kernel: stock, debug or kcsan expected" >&2; exit 2 ;;
esac
timeout=${KMAD_INTEROP_TIMEOUT:-420}
[ "$kernel" = stock ] || timeout=${KMAD_INTEROP_TIMEOUT:-900}
[ "$bench" != 1 ] || timeout=${KMAD_INTEROP_TIMEOUT:-3000}
cases=${INTEROP_CASES:-}
interop_args=${INTEROP_ARGS:-}
start_all=$SECONDS

say() { echo ">> $*"; }
die() { echo "interop.sh: FAILED: $*" >&2; echo "interop: verdict: FAILED ($*)"; exit 1; }

[[ "$cases $interop_args $bench_args" =~ ^[A-Za-z0-9_=,:.\ /+-]*$ ]] ||
	die "INTEROP_CASES/INTEROP_ARGS/RXE_BENCH_ARGS: only letters, digits, blanks and _=,:./+- are allowed"
[[ "$perf_freq" =~ ^[0-9]+$ ]] || die "RXE_PERF_FREQ=$perf_freq: a number expected"
[[ "$perf_append" =~ ^[A-Za-z0-9_=,.\ -]*$ ]] ||
	die "RXE_PERF_APPEND: only letters, digits, blanks and _=,.- are allowed"

# 1. Packages.
# modroot: where the kernel's own modules are (/lib/modules/<kver>/ below
# it): the host's for the stock kernel, a modules_install of the debug
# build for the debug kernel.
if [ "$kernel" = stock ]; then
	say "checking packages (tests/qemu/deps.sh interop)"
	"$qemu_dir/deps.sh" interop
	stock_kernel
	[[ $(dpkg-query -W -f='${Depends}' linux-image-amd64) == *"linux-image-$kver"* ]] ||
		die "linux-image-amd64 does not match the headers ($kver)"
	modroot=
else
	say "checking packages (tests/qemu/deps.sh check interop)"
	"$qemu_dir/deps.sh" check interop
	debug_kernel_modules "$out" "$kernel"
	grep -q '^CONFIG_RDMA_RXE=m' "$kdir/.config" ||
		die "the debug kernel $kdir has no CONFIG_RDMA_RXE=m (tests/qemu/config/debug.config)"
fi
kernel_check
modules_check

# 2. Build in a copy of the tree (objects survive between runs).
harness_build_kmad "$root" "$out"
# Only what this build made: modules.order lists it.  The copy keeps the
# objects of modules whose source is gone (another branch's kmad_ib.ko).
built() {	# built <modules.order> <module>: its path, if listed
	sed 's/\.o$/.ko/' "$1" | { grep -m1 -E "(^|/)$2\.ko\$" || true; } |
		sed "s|^\([^/]\)|$(dirname "$1")/\1|"
}
kos=()
for m in kmad kmad_ib kmad_umad; do
	ko=$(built "$src/modules.order" "$m")
	[ -n "$ko" ] && kos+=("$ko")
done
if [ ${#kos[@]} -eq 0 ] || [[ ${kos[0]} != */kmad.ko ]]; then
	die "kmad.ko was not built"
fi
say "building tests/interop (W=1) against $kdir"
build_test_modules tests/interop
peer_ko=$(built "$src/tests/interop/modules.order" ibmad_peer)
[ -n "$peer_ko" ] || die "ibmad_peer.ko was not built"
ko=$(built "$src/tests/interop/modules.order" kmad_interop)
[ -n "$ko" ] && kos+=("$ko")
if [ "$bench" = 1 ]; then
	say "building tests/bench/rxe (W=1) against $kdir"
	build_test_modules tests/bench/rxe
	ko=$(built "$src/tests/bench/rxe/modules.order" rxe_bench)
	[ -n "$ko" ] || die "rxe_bench.ko was not built"
	kos+=("$ko")
fi
build umad_peer gcc -std=gnu11 -O2 -Wall -Wextra -Werror \
	-o "$src/tests/interop/umad_peer" "$src/tests/interop/umad_peer.c" -libumad
say "built in $((SECONDS - build_t0))s: ibmad_peer.ko umad_peer ${kos[*]##*/}"

# 3. The initramfs.
stage=$out/initramfs
rm -rf "$stage"
mkdir -p "$stage"/{bin,dev,proc,sys,tmp,kmad,lib64} \
	"$stage/lib/modules/$kver/updates/kmad"

# Programs and the libraries their loader names (glibc's ld.so included).
cp /bin/busybox "$stage/bin/busybox"
add_prog "$(command -v ip)" /bin/iproute2-ip
add_prog "$(command -v rdma)" /bin/rdma
add_prog "$src/tests/interop/umad_peer" /bin/umad_peer
if [ "$perf" = 1 ]; then
	[ -x /usr/bin/perf ] || die "RXE_PERF=1: no /usr/bin/perf on this host"
	add_prog /usr/bin/perf /bin/perf
fi

# The stock modules and everything they depend on, at their own paths.
stock=(crc32_generic udp_tunnel ip6_udp_tunnel ib_core ib_umad rdma_rxe veth)
# The debug kernel has no INFINIBAND_USER_ACCESS (nothing here uses verbs).
[ "$kernel" != stock ] || stock+=(ib_uverbs)
for m in "${stock[@]}"; do
	add_mod "$m"
done
cp "$peer_ko" "$stage/lib/modules/$kver/updates/kmad/"
[ ${#kos[@]} -eq 0 ] || cp "${kos[@]}" "$stage/lib/modules/$kver/updates/kmad/"
for f in modules.order modules.builtin modules.builtin.modinfo; do
	cp "$modroot/lib/modules/$kver/$f" "$stage/lib/modules/$kver/$f"
done
/sbin/depmod -b "$stage" "$kver"
grep -q '^kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko: ' \
	"$stage/lib/modules/$kver/modules.dep" || die "depmod: rdma_rxe missing"

# What the guest runs: kmad_interop's parameters, checked against it.
interop_mod=()
ko=$stage/lib/modules/$kver/updates/kmad/kmad_interop.ko
if [ -f "$ko" ]; then
	mapfile -t params < <(/sbin/modinfo -F parm "$ko" | sed -n 's/^\([a-z0-9_]*\):.*/\1/p')
	if [ -n "$cases" ]; then
		printf '%s\n' "${params[@]}" | grep -qx cases ||
			die "INTEROP_CASES given, but kmad_interop has no cases= parameter (it has: ${params[*]})"
		interop_mod+=("cases=$cases")
	fi
	read -r -a extra <<< "$interop_args"
	interop_mod+=("${extra[@]}")
	printf '%s\n' "${params[@]}" > "$stage/kmad/interop.params"
elif [ -n "$cases$interop_args" ]; then
	die "INTEROP_CASES/INTEROP_ARGS given, but the tree has no kmad_interop"
fi
{
	printf 'KVER=%q\n' "$kver"
	printf 'INTEROP_ARGS=%q\n' "${interop_mod[*]}"
	[ "$bench" != 1 ] || printf 'RXE_BENCH=1\nRXE_BENCH_ARGS=%q\n' "$bench_args"
	[ "$perf" != 1 ] || printf 'RXE_PERF=1\nRXE_PERF_FREQ=%q\n' "$perf_freq"
} > "$stage/kmad/interop.conf"
cp "$here/guest.sh" "$stage/init"
cp "$qemu_dir/guest-lib.sh" "$stage/kmad/"
chmod 755 "$stage/init"
pack_initramfs "$stage" "$out/initramfs.cpio.gz"
say "initramfs: $(du -h "$out/initramfs.cpio.gz" | cut -f1), kernel modules: ${!mods_added[*]}"

# 4. Boot.
# no5lvl: 4-level paging, for the debug kernel (tests/qemu/check.sh says why).
append="console=ttyS0 no5lvl panic=-1 oops=panic no_timer_check log_buf_len=4M"
# The debug kernel boots verbose: a splat at boot is printed at
# KERN_WARNING, which quiet would hide from the splat check.
[ "${KMAD_INTEROP_VERBOSE:-0}" = 1 ] || [ "$kernel" != stock ] || append+=" quiet"
if [ "$bench" = 1 ]; then
	append+=" slab_nomerge"
	export QEMU_MEM=${QEMU_MEM:-2G}
fi
[ "$perf" != 1 ] || [ -z "$perf_append" ] || append+=" $perf_append"
log=$out/console.log
say "booting the $kernel kernel $vmlinuz in QEMU (TCG, 2 vCPUs, timeout ${timeout}s); console log: $log"
qemu_boot "$timeout" "$vmlinuz" "$out/initramfs.cpio.gz" "$append" "$log"
rc=$qemu_rc guest_s=$qemu_guest_s

# 5. The verdict, from the block of announcements and results the guest
#    prints last with the console quiet (a kernel message cannot have cut
#    into a line there); without that block, from the whole log.
fail=()
grep -q '^kmad-interop: end' "$log" || fail+=("the guest did not reach its end (qemu exit $rc)")
results=$out/results.txt
sed -n '/^kmad-interop: results begin$/,/^kmad-interop: results end$/p' "$log" > "$results"
if ! grep -q '^kmad-interop: results end$' "$results"; then
	fail+=("no results block at the end of the guest; judging the whole log")
	cp "$log" "$results"
fi
# Every exchange the guest announced must have printed its result line.
while read -r name; do
	grep -q "^interop: $name: \(ok\|FAILED\|SKIPPED\)" "$results" ||
		fail+=("no result line for $name")
done < <(sed -n 's/^kmad-interop: expect \(.*\)$/\1/p' "$results" | sort -u)
grep -q '^kmad-interop: expect ' "$results" || fail+=("the guest announced no exchange")
while read -r line; do
	fail+=("$line")
done < <({ grep '^interop: .*: FAILED' "$results"
	   grep -E 'kmad_interop: .*FAILED|kmad-interop: FAILED' "$log"; } || true)
# Kernel splats (lib.sh's kernel_splats: make check's patterns).
splats=$(kernel_splats "$log") || fail+=("cannot scan the log for splats")
if [ -n "$splats" ]; then
	echo "kernel splats in $log:"
	echo "$splats" | head -n 20
	fail+=("kernel splat in the console log ($(echo "$splats" | wc -l) lines)")
fi

ok=$(grep -c '^interop: .*: ok' "$results" || true)
failed=$(grep -c '^interop: .*: FAILED' "$results" || true)
skipped=$(grep -c '^interop: .*: SKIPPED' "$results" || true)
# Every part (kmad_ib, its bridge, kmad_umad, kmad_interop) is in the
# tree, so an exchange SKIPPED is one that should have run and did not:
# ib_mad answering class 0x0b itself, say, is the bridge broken.
[ -d "$root/drivers/kmad/ib" ] && [ "$skipped" != 0 ] &&
	fail+=("$skipped exchange(s) SKIPPED with kmad_ib in the tree")
echo
echo "== make interop results"
grep '^interop: ' "$results" || true
say "$kernel kernel: guest ran ${guest_s}s; make interop took $((SECONDS - start_all))s in all"
if [ ${#fail[@]} -ne 0 ]; then
	for f in "${fail[@]}"; do echo "interop.sh: FAILED: $f" >&2; done
	echo "interop: summary: $ok ok, $failed failed, $skipped skipped; verdict: FAILED"
	exit 1
fi
verdict=PASSED
[ "$skipped" = 0 ] || verdict="PASSED, but $skipped exchange(s) SKIPPED (not run, not passed)"
echo "interop: summary: $ok ok, $failed failed, $skipped skipped; verdict: $verdict"
