#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make diags`: rdma-core's own tools (Debian's infiniband-diags, unmodified)
# over kmad_umad and kmad_sim, on the stock Debian kernel, in QEMU.
#
#   1. install what is missing: tests/qemu/deps.sh run (the stock kernel
#      image and headers, QEMU, busybox), infiniband-diags and gcc;
#   2. build kmad, kmad_sim and kmad_umad against the stock headers in a
#      copy of the tree (build/diags/src), the test module
#      kmad_diags_fabric (tests/diags/, W=1) and umad_abi_test;
#   3. pack a busybox initramfs with the modules, umad_abi_test and the
#      tools with the libraries ldd names (copied unmodified);
#   4. boot /boot/vmlinuz-<version> in QEMU (TCG, 2 vCPUs, hard timeout);
#      the guest's /init (tests/diags/guest.sh) loads the modules, runs
#      umad_abi_test and the tools, unloads and powers off;
#   5. tests/diags/check.py compares the tools' output with kmad_sim's own
#      description of the fabric (kmad_diags_fabric's lines) and fails on
#      any difference, tool error, failed ABI case or kernel splat; then
#      check.py --selftest makes wrong answers out of the log and fails
#      unless the check catches each.
#
# Environment:
#   KERNEL=debug            boot make check's debug kernel (lockdep, KASAN,
#                           UBSAN, kmemleak: any splat fails) instead of
#                           the stock one; output in build/diags-debug/
#                           (KERNEL=kcsan: its KCSAN twin, build/diags-kcsan/)
#   KMAD_DIAGS_TIMEOUT=<s>  hard limit for the guest (default 600)
#   KMAD_DIAGS_VERBOSE=1    show the whole kernel boot log
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/diags
qemu_dir=$root/tests/qemu
# shellcheck source=tests/qemu/lib.sh
. "$qemu_dir/lib.sh"
kernel=${KERNEL:-stock}
case "$kernel" in
stock) out=$root/build/diags ;;
debug|kcsan) out=$root/build/diags-$kernel ;;
*) echo "diags.sh: KERNEL=$kernel: stock, debug or kcsan expected" >&2; exit 1 ;;
esac
timeout=${KMAD_DIAGS_TIMEOUT:-600}
start_all=$SECONDS

# The fabric: a tree of four one-port HCAs under two leaves.  LIDs
# (Documentation/simulated-fabric.rst): HCAs 1-4, root switch 5, leaves 6
# and 7.  Directed routes from sim0: itself, its leaf, the root, the other
# leaf, an HCA under it.
SIM_ARGS="topology=tree hcas=4 leaves=2 hca_ports=1"
LIDS="1 2 3 4 5 6 7"
HCA_LIDS="1 2 3 4"
SWITCH_LIDS="5 6 7"
LAST_HCA_LID=4
DR_PATHS="0 0,1 0,1,1 0,1,1,2 0,1,1,2,2"
DR_SWITCH_PATHS="0,1 0,1,1 0,1,1,2"
TRACES="1,2 1,4 1,5 3,1"
# The test SM agent's HCA (LID 1), the last HCA, and the directed route
# from the last HCA to the SM: leaf 1 (port 1 up), root (port 1 down), leaf
# 0 (port 2, sim0's).
SM_DEV=sim0
LAST_HCA=sim3
SM_DR_PATH="0,1,1,1,2"
# Combined routes (smpquery -c): LID, then a directed route from there
# (its first hop, 0, is the start): the root itself, the root down to
# leaf 0 and sim1, leaf 0 up to the root and down to leaf 1 and sim3.
# (guest.sh also reads every switch port's peer, "<LID>,0,<port>".)
COMBINED_ROUTES="5,0 5,0,1,3 6,0,1,2 6,0,1,2,3"

say() { echo ">> $*"; }
die() { echo "diags.sh: $*" >&2; exit 1; }

# 1. Packages.
say "checking packages (tests/qemu/deps.sh run)"
"$qemu_dir/deps.sh" run
need=()
for p in infiniband-diags gcc gcc-multilib libc6-dev linux-libc-dev; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		need+=("$p")
done
if [ ${#need[@]} -ne 0 ]; then
	say "apt-get install -y ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}" > /dev/null ||
		die "apt-get install ${need[*]} failed"
fi

if [ "$kernel" = stock ]; then
	stock_kernel
else
	kdir=$("$qemu_dir/kernel.sh" "$kernel" | tail -n 1) ||
		die "building the $kernel kernel (tests/qemu/kernel.sh $kernel)"
	kver=$(cat "$kdir/include/config/kernel.release")
	vmlinuz=$kdir/arch/x86/boot/bzImage
fi
kernel_check
say "$kernel kernel $kver: $vmlinuz, build tree $kdir"
# The ABI test also runs as a 32-bit process where the kernel runs those
# (IA32_EMULATION): Debian's and the debug and kcsan test kernels do.
abi32=0
grep -qs '^CONFIG_IA32_EMULATION=y' "$kdir/.config" && abi32=1

# 2. Build in a copy of the tree.
harness_build_kmad "$root" "$out"
kos=()
for m in kmad kmad_sim kmad_umad kmad_discover; do
	ko=$(find "$src/drivers" -name "$m.ko" | head -n 1)
	[ -n "$ko" ] || die "$m.ko was not built"
	kos+=("$ko")
done
build_test_modules tests/diags
kos+=("$src/tests/diags/kmad_diags_fabric.ko")
build umad_abi_test gcc -std=gnu11 -O2 -Wall -Wextra -Werror \
	-o "$src/tests/diags/umad_abi_test" "$src/tests/diags/umad_abi_test.c"
# The same cases from a 32-bit process (static: the guest has no 32-bit
# libraries), through kmad_umad's compat_ioctl.
if [ "$abi32" = 1 ]; then
	build umad_abi_test32 gcc -m32 -static -std=gnu11 -O2 -Wall -Wextra \
		-Werror -o "$src/tests/diags/umad_abi_test32" \
		"$src/tests/diags/umad_abi_test.c"
fi
say "built in $((SECONDS - build_t0))s: ${kos[*]##*/} umad_abi_test$([ "$abi32" = 1 ] && echo ' umad_abi_test32')"

# 3. The initramfs: busybox, the tools as Debian ships them, their
#    libraries (and glibc's loader) at their own paths.
stage=$out/initramfs
rm -rf "$stage"
mkdir -p "$stage"/{bin,sbin,dev,proc,sys,tmp,kmad,lib64,etc} \
	"$stage/lib/modules/$kver/updates/kmad"
cp /bin/busybox "$stage/bin/busybox"
# ibhosts, ibswitches and ibnodes are scripts that run
# $IBPATH/ibnetdiscover, /usr/sbin by default: where Debian puts it.
mkdir -p "$stage/usr"
ln -s ../sbin "$stage/usr/sbin"
tools=(ibstat ibstatus ibnetdiscover smpquery perfquery ibroute ibtracert
       sminfo smpdump ibaddr ibping iblinkinfo dump_fts ibportstate ibsysstat
       ibhosts ibswitches ibnodes)
for t in "${tools[@]}"; do
	p=$(command -v "$t" || true)
	[ -n "$p" ] || p=/usr/sbin/$t
	[ -x "$p" ] || die "$t not found"
	if head -c 2 "$p" | grep -q '#!'; then
		cp "$p" "$stage/sbin/$t"	# ibstatus is a shell script
	else
		add_prog "$p" "/sbin/$t"
	fi
done
add_prog "$src/tests/diags/umad_abi_test" /bin/umad_abi_test
[ "$abi32" = 0 ] || cp "$src/tests/diags/umad_abi_test32" "$stage/bin/umad_abi_test32"
[ -d /etc/infiniband-diags ] && cp -r /etc/infiniband-diags "$stage/etc/"
cp "$here/guest.sh" "$stage/init"
chmod 755 "$stage/init"
cp "${kos[@]}" "$stage/lib/modules/$kver/updates/kmad/"
for f in modules.order modules.builtin modules.builtin.modinfo; do
	: > "$stage/lib/modules/$kver/$f"
done
/sbin/depmod -b "$stage" "$kver"
grep -q '^updates/kmad/kmad_umad.ko: updates/kmad/kmad.ko' \
	"$stage/lib/modules/$kver/modules.dep" ||
	die "depmod: kmad_umad's dependency on kmad not found"
{
	printf 'KVER=%q\n' "$kver"
	printf 'KERNEL=%q\n' "$kernel"
	printf 'SIM_ARGS=%q\n' "$SIM_ARGS"
	printf 'LIDS=%q\n' "$LIDS"
	printf 'HCA_LIDS=%q\n' "$HCA_LIDS"
	printf 'SWITCH_LIDS=%q\n' "$SWITCH_LIDS"
	printf 'LAST_HCA_LID=%q\n' "$LAST_HCA_LID"
	printf 'DR_PATHS=%q\n' "$DR_PATHS"
	printf 'DR_SWITCH_PATHS=%q\n' "$DR_SWITCH_PATHS"
	printf 'TRACES=%q\n' "$TRACES"
	printf 'SM_DEV=%q\n' "$SM_DEV"
	printf 'LAST_HCA=%q\n' "$LAST_HCA"
	printf 'SM_DR_PATH=%q\n' "$SM_DR_PATH"
	printf 'COMBINED_ROUTES=%q\n' "$COMBINED_ROUTES"
} > "$stage/kmad/diags.conf"
pack_initramfs "$stage" "$out/initramfs.cpio.gz"

# 4. Boot.
# no5lvl: 4-level paging, for the debug kernel (tests/qemu/check.sh says why).
append="console=ttyS0 no5lvl log_buf_len=4M panic=-1 oops=panic panic_on_warn=1 no_timer_check"
[ "${KMAD_DIAGS_VERBOSE:-0}" = 1 ] || append+=" quiet"
# boot <initramfs> <console log>
boot() {
	say "booting $vmlinuz in QEMU (TCG, 2 vCPUs, timeout ${timeout}s); console log: $2"
	QEMU_QUIET=1 QEMU_SMP=2 QEMU_MEM=2G \
		qemu_boot "$timeout" "$vmlinuz" "$1" "$append" "$2"
	say "guest ran ${qemu_guest_s}s (qemu exit $qemu_rc)"
}
boot "$out/initramfs.cpio.gz" "$out/console.log"

# 5. The verdict.
crc=0
python3 "$here/check.py" "$out/console.log" || crc=$?
# Red means red: wrong answers made out of this log must each fail.
[ "$crc" != 0 ] || python3 "$here/check.py" --selftest "$out/console.log" || crc=$?
[ "$crc" = 0 ] || die "FAILED (console log: $out/console.log) after $((SECONDS - start_all))s"

# 6. DIAGS_SCALE=1: the scale figure.  A second boot, a fattree of
# DIAGS_SCALE_ARGS, ibnetdiscover through kmad_umad, then kmad_discover
# in the kernel, over the same fabric; guest.sh prints both.
if [ "${DIAGS_SCALE:-0}" = 1 ]; then
	scale_args=${DIAGS_SCALE_ARGS:-hcas=960 leaves=48 spines=16}
	scale_sim="topology=fattree $scale_args hca_ports=1"
	{
		printf 'KVER=%q\n' "$kver"
		printf 'SCALE=1\n'
		printf 'SIM_ARGS=%q\n' "$scale_sim"
	} > "$stage/kmad/diags.conf"
	pack_initramfs "$stage" "$out/initramfs-scale.cpio.gz"
	boot "$out/initramfs-scale.cpio.gz" "$out/console-scale.log"
	python3 "$here/check.py" --scale "$out/console-scale.log" || crc=$?
	[ "$crc" = 0 ] || die "scale step FAILED (console log: $out/console-scale.log)"
fi
say "make diags took $((SECONDS - start_all))s in all"
say "ok"
