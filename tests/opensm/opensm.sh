#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make opensm`: Debian's OpenSM, unmodified, bringing up kmad_sim's fabric
# through kmad_umad on the stock Debian kernel in QEMU, side by side with
# the same OpenSM over ibsim (the user-space simulator, ibsim-utils) on the
# same fabric, in the same guest.  Documentation/opensm.rst says what is
# checked.
#
#   1. install what is missing: tests/qemu/deps.sh run (the stock kernel
#      image and headers, QEMU, busybox), opensm, infiniband-diags,
#      ibsim-utils (ibsim, libumad2sim.so), libibumad-dev;
#   2. build kmad, kmad_sim and kmad_umad against the stock headers in a
#      copy of the tree (build/opensm/src), umad_reg_probe and umad_peer
#      (tests/interop: it sends a GMP at a chosen P_Key index);
#   3. pack a busybox initramfs with the modules, OpenSM, ibsim,
#      libumad2sim.so and the tools, with the libraries ldd names (all
#      copied unmodified);
#   4. boot /boot/vmlinuz-<version> in QEMU (TCG, 2 vCPUs, hard timeout);
#      the guest's /init (tests/opensm/guest.sh) runs OpenSM over kmad,
#      cuts and mends a cable, then runs OpenSM over ibsim, and powers off;
#   5. tests/opensm/check.py checks the tools' output against the fabric's
#      netlist, makes wrong answers out of the log and counts a failure
#      unless the check catches each, prints the side-by-side table and
#      "N passed, N failed", and exits non-zero on any failure.
#
# Environment:
#   OPENSM_TOPO='<kmad_sim parameters>'  the fabric (default: a tree of four
#                           one-port HCAs under two leaves; the checks
#                           assume one-port HCAs and an HCA named sim3)
#   OPENSM_SIM_ARGS='...'   more kmad_sim parameters; "sm=0" (the SM-less
#                           mode) is added when kmad_sim has it
#   KMAD_OPENSM_TIMEOUT=<s> hard limit for the guest (default 420)
#   KMAD_OPENSM_VERBOSE=1   show the whole kernel boot log
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/opensm
qemu_dir=$root/tests/qemu
# shellcheck source=tests/qemu/lib.sh
. "$qemu_dir/lib.sh"
out=$root/build/opensm
timeout=${KMAD_OPENSM_TIMEOUT:-420}
start_all=$SECONDS

TOPO=${OPENSM_TOPO:-topology=tree hcas=4 leaves=2 hca_ports=1}
# The cable cut and mended (kmad_sim's parameter "link"): the last HCA's
# port 1, to its leaf.
LAST_HCA=sim3
LINK=sim3:1
UMAD2SIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so

say() { echo ">> $*"; }
die() { echo "opensm.sh: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

# 1. Packages.
say "checking packages (tests/qemu/deps.sh run)"
"$qemu_dir/deps.sh" run
need=()
for p in opensm infiniband-diags ibsim-utils libumad2sim0 libibumad-dev; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		need+=("$p")
done
if [ ${#need[@]} -ne 0 ]; then
	say "apt-get install -y ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}" > /dev/null ||
		die "apt-get install ${need[*]} failed"
fi
[ -r "$UMAD2SIM" ] || die "$UMAD2SIM missing"

stock_kernel
kernel_check
say "stock kernel $kver: $vmlinuz, build tree $kdir"

# 2. Build in a copy of the tree.
harness_build_kmad "$root" "$out"
kos=()
for m in kmad kmad_sim kmad_umad; do
	ko=$(find "$src/drivers" -name "$m.ko" | head -n 1)
	[ -n "$ko" ] || die "$m.ko was not built"
	kos+=("$ko")
done
build umad_reg_probe gcc -std=gnu11 -O2 -Wall -Wextra -Werror \
	-o "$src/tests/opensm/umad_reg_probe" "$src/tests/opensm/umad_reg_probe.c"
build umad_peer gcc -std=gnu11 -O2 -Wall -Wextra -Werror \
	-o "$src/tests/interop/umad_peer" "$src/tests/interop/umad_peer.c" -libumad
say "built in $((SECONDS - build_t0))s: ${kos[*]##*/} umad_reg_probe umad_peer"

/sbin/modinfo -F parm "${kos[1]}" | grep -q '^link:' ||
	die "kmad_sim has no \"link\" parameter (fault injection)"
# The SM-less mode (issue 13 item 4), once kmad_sim has it.
SIM_ARGS="$TOPO ${OPENSM_SIM_ARGS:-}"
if /sbin/modinfo -F parm "${kos[1]}" | grep -q '^sm:'; then
	case " $SIM_ARGS " in
	*" sm="*) ;;
	*) SIM_ARGS+=" sm=0" ;;
	esac
	say "kmad_sim has sm=: SM-less fabric (sm=0 unless OPENSM_SIM_ARGS says)"
else
	say "kmad_sim has no sm= parameter: its own SM assigns the LIDs, OpenSM takes over"
fi
SIM_ARGS=$(xargs <<< "$SIM_ARGS")

# 3. The initramfs: busybox, the programs as Debian ships them, their
#    libraries (and glibc's loader) at their own paths.
stage=$out/initramfs
rm -rf "$stage"
mkdir -p "$stage"/{bin,sbin,dev,proc,sys,tmp,var,kmad,lib64,etc} \
	"$stage/lib/modules/$kver/updates/kmad"
cp /bin/busybox "$stage/bin/busybox"
for t in opensm ibsim ibstat ibnetdiscover ibroute ibtracert sminfo saquery \
	 smpquery ibqueryerrors; do
	p=$(command -v "$t" || true)
	[ -n "$p" ] || p=/usr/sbin/$t
	[ -x "$p" ] || die "$t not found"
	add_prog "$p" "/sbin/$t"
done
add_prog "$UMAD2SIM" "$UMAD2SIM"
add_prog "$src/tests/opensm/umad_reg_probe" /bin/umad_reg_probe
add_prog "$src/tests/interop/umad_peer" /bin/umad_peer
# glibc loads it for pthread_cancel(), which OpenSM and ibsim's clients use.
add_lib /lib/x86_64-linux-gnu/libgcc_s.so.1
[ -d /etc/infiniband-diags ] && cp -r /etc/infiniband-diags "$stage/etc/"
cp "$here/guest.sh" "$stage/init"
cp "$qemu_dir/guest-lib.sh" "$stage/kmad/"
chmod 755 "$stage/init"
cp "${kos[@]}" "$stage/lib/modules/$kver/updates/kmad/"
for f in modules.order modules.builtin modules.builtin.modinfo; do
	: > "$stage/lib/modules/$kver/$f"
done
/sbin/depmod -b "$stage" "$kver"
{
	printf 'KVER=%q\n' "$kver"
	printf 'SIM_ARGS=%q\n' "$SIM_ARGS"
	printf 'LAST_HCA=%q\n' "$LAST_HCA"
	printf 'LINK=%q\n' "$LINK"
	printf 'UMAD2SIM=%q\n' "$UMAD2SIM"
	printf 'SUBNET_UP_S=%q\n' 60
	printf 'LINK_S=%q\n' 30
} > "$stage/kmad/opensm.conf"
pack_initramfs "$stage" "$out/initramfs.cpio.gz"

# 4. Boot.
append="console=ttyS0 panic=-1 oops=panic panic_on_warn=1 no_timer_check"
[ "${KMAD_OPENSM_VERBOSE:-0}" = 1 ] || append+=" quiet"
say "booting $vmlinuz in QEMU (TCG, 2 vCPUs, timeout ${timeout}s); console log: $out/console.log"
QEMU_QUIET=1 QEMU_SMP=2 QEMU_MEM=2G \
	qemu_boot "$timeout" "$vmlinuz" "$out/initramfs.cpio.gz" "$append" \
	"$out/console.log"
say "guest ran ${qemu_guest_s}s (qemu exit $qemu_rc)"

# 5. The verdict: the checks, the table, then "N passed, N failed" as the
#    last line (.ci/run adds it to its own count).
say "make opensm took $((SECONDS - start_all))s until the verdict (console log: $out/console.log)"
exec python3 "$here/check.py" "$out/console.log"
