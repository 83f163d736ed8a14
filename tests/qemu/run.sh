#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make run`: kmad on the stock Debian kernel, in QEMU.
#
#   1. install what is missing (tests/qemu/deps.sh run): the stock kernel
#      image and its headers, QEMU, busybox;
#   2. build kmad, kmad_sim and kmad_discover against the stock headers,
#      in a copy of the tree (build/run/src), so the debug-kernel objects
#      `make check` keeps in the source tree are left alone;
#   3. pack a busybox initramfs with the modules in
#      /lib/modules/<version>/updates/kmad/ and a modules.dep made by the
#      host's depmod;
#   4. boot /boot/vmlinuz-<version> in QEMU (TCG, 2 vCPUs, hard timeout).
#      The guest's /init (tests/qemu/run-init.sh) modprobes kmad_sim with
#      the topology and faults, then kmad_discover, waits for its "done"
#      line, prints kmad's debugfs statistics, unloads everything and
#      powers off.
#
# Environment (the Makefile passes its variables of the same names):
#   TOPO=<name>            kmad_sim topology= (default: the sim's default)
#   FAULTS=<spec>          fault injection for kmad_sim, e.g.
#                          drop=5,dup=1,dead=sw0:2 (see below)
#   SIM_ARGS='k=v ...'     more kmad_sim module parameters, verbatim
#   DISCOVER_ARGS='k=v ...' kmad_discover module parameters, verbatim
#                          (dev=, port=, timeout_ms=, retries=, ...)
#   KMAD_RUN_TIMEOUT=<s>   hard limit for the guest (default 300)
#   KMAD_RUN_WAIT=<s>      how long the guest waits for kmad_discover
#                          (default 120)
#   KMAD_RUN_VERBOSE=1     show the whole kernel boot log
#
# FAULTS is a comma-separated list of key=value items, handed to kmad_sim
# as module parameters.  If kmad_sim has a "faults" parameter the whole
# spec is passed as faults=<spec>.  Otherwise each key becomes the
# parameter of that name, or <key>_pct if only that exists (drop=5 ->
# drop_pct=5); a key given several times is joined with commas
# (dead=sw0:2,dead=sw1:1 -> dead=sw0:2,sw1:1), the syntax of array and
# list parameters.  Keys the built kmad_sim does not have are an error
# that lists the parameters it does have.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/qemu
# shellcheck source=tests/qemu/lib.sh
. "$here/lib.sh"
out=$root/build/run
timeout=${KMAD_RUN_TIMEOUT:-300}
wait_s=${KMAD_RUN_WAIT:-120}
topo=${TOPO:-}
faults=${FAULTS:-}
sim_args=${SIM_ARGS:-}
discover_args=${DISCOVER_ARGS:-}
start_all=$SECONDS

say() { echo ">> $*"; }
die() { echo "run.sh: $*" >&2; exit 1; }

# Module arguments travel through a shell file and the kernel's parser,
# which splits on blanks: keep them to a safe alphabet.
check_args() {
	local what=$1 val=$2
	[[ $val =~ ^[A-Za-z0-9_=,:.\ /+-]*$ ]] ||
		die "$what='$val': only letters, digits, blanks and _=,:./+- are allowed"
}
check_args TOPO "$topo"
check_args FAULTS "$faults"
check_args SIM_ARGS "$sim_args"
check_args DISCOVER_ARGS "$discover_args"
[[ $topo != *[\ =,]* ]] || die "TOPO='$topo': one topology name expected"

# 1. Packages.
say "checking packages (tests/qemu/deps.sh run)"
"$here/deps.sh" run

# The stock kernel: the version linux-headers-amd64 depends on, whose
# image linux-image-amd64 must have installed too.
stock_kernel
img_deps=$(dpkg-query -W -f='${Depends}' linux-image-amd64)
[[ $img_deps == *"linux-image-$kver"* ]] ||
	die "linux-image-amd64 ($img_deps) does not match the headers ($kver)"
kernel_check
say "stock kernel $kver: $vmlinuz, headers $kdir"

# 2. Build in a copy of the tree.  Objects there survive between runs
#    (rsync neither copies nor deletes excluded files), so a second run
#    only rebuilds what changed.
src=$out/src
"$here/copy-tree.sh" "$root" "$src"
say "building kmad against $kdir in $src"
t0=$SECONDS
make -C "$src" KDIR="$kdir" -j"$(nproc)" modules 2>&1 |
	sed -u -n -e 's/^ *\(CC \[M\]\|LD \[M\]\|MODPOST\) */   \1 /p' \
		  -e '/[Ee]rror\|[Ww]arning/p'
[ "${PIPESTATUS[0]}" = 0 ] || die "build failed"
mapfile -t kos < <(find "$src/drivers" -name '*.ko' | LC_ALL=C sort)
for m in kmad kmad_sim kmad_discover; do
	printf '%s\n' "${kos[@]}" | grep -q "/$m\.ko$" || die "$m.ko was not built"
done
say "built ${#kos[@]} modules in $((SECONDS - t0))s"

# FAULTS and TOPO -> kmad_sim parameters, checked against the module.
sim_ko=$(printf '%s\n' "${kos[@]}" | grep '/kmad_sim\.ko$')
mapfile -t sim_params < <(/sbin/modinfo -F parm "$sim_ko" | sed -n 's/^\([a-z0-9_]*\):.*/\1/p')
has_param() {
	local p
	for p in "${sim_params[@]}"; do [ "$p" = "$1" ] && return 0; done
	return 1
}
sim_modargs=()
if [ -n "$topo" ]; then
	has_param topology || die "kmad_sim has no topology parameter"
	sim_modargs+=("topology=$topo")
fi
if [ -n "$faults" ]; then
	if has_param faults; then
		sim_modargs+=("faults=$faults")
	else
		declare -A fvals=()
		forder=()
		IFS=, read -r -a items <<< "$faults"
		for item in "${items[@]}"; do
			[ -n "$item" ] || continue
			[[ $item == *=* ]] || die "FAULTS item '$item': key=value expected"
			key=${item%%=*} val=${item#*=}
			if has_param "$key"; then
				param=$key
			elif has_param "${key}_pct"; then
				param=${key}_pct
			else
				die "FAULTS key '$key': kmad_sim has no parameter $key or ${key}_pct (it has: ${sim_params[*]})"
			fi
			if [ -n "${fvals[$param]:-}" ]; then
				fvals[$param]+=",$val"
			else
				fvals[$param]=$val
				forder+=("$param")
			fi
		done
		for param in "${forder[@]}"; do
			sim_modargs+=("$param=${fvals[$param]}")
		done
	fi
fi
read -r -a extra <<< "$sim_args"
sim_modargs+=("${extra[@]}")

# 3. The initramfs.
stage=$out/initramfs
rm -rf "$stage"
mkdir -p "$stage"/{bin,dev,proc,sys,tmp,kmad} "$stage/lib/modules/$kver/updates/kmad"
cp /bin/busybox "$stage/bin/busybox"
cp "$here/run-init.sh" "$stage/init"
cp "$here/guest-lib.sh" "$stage/kmad/"
chmod 755 "$stage/init"
cp "${kos[@]}" "$stage/lib/modules/$kver/updates/kmad/"
# depmod wants these; none of the stock kernel's modules are in the guest.
for f in modules.order modules.builtin modules.builtin.modinfo; do
	: > "$stage/lib/modules/$kver/$f"
done
/sbin/depmod -b "$stage" "$kver"
grep -q '^updates/kmad/kmad_discover.ko: updates/kmad/kmad.ko' \
	"$stage/lib/modules/$kver/modules.dep" ||
	die "depmod: kmad_discover's dependency on kmad not found"
{
	printf 'KVER=%q\n' "$kver"
	printf 'SIM_ARGS=%q\n' "${sim_modargs[*]}"
	printf 'DISCOVER_ARGS=%q\n' "$discover_args"
	printf 'WAIT=%q\n' "$wait_s"
} > "$stage/kmad/run.conf"
pack_initramfs "$stage" "$out/initramfs.cpio.gz"

# 4. Boot.
# panic_on_warn: under "quiet" a WARN's lines (KERN_WARNING) never reach
# the console; the panic's do.
append="console=ttyS0 panic=-1 oops=panic panic_on_warn=1 no_timer_check"
[ "${KMAD_RUN_VERBOSE:-0}" = 1 ] || append+=" quiet"
say "modprobe kmad_sim ${sim_modargs[*]}"
say "modprobe kmad_discover $discover_args"
say "booting $vmlinuz in QEMU (TCG, 2 vCPUs, timeout ${timeout}s); console log: $out/console.log"
qemu_boot "$timeout" "$vmlinuz" "$out/initramfs.cpio.gz" "$append" "$out/console.log"
rc=$qemu_rc guest_s=$qemu_guest_s

# The verdict: the guest got to its end, discovery finished, no splat.
fail=()
grep -q 'kmad-run: end' "$out/console.log" || fail+=("the guest did not reach its end (qemu exit $rc)")
done_line=$(grep -m1 -o 'kmad_discover: done: .*' "$out/console.log" || true)
if [ -z "$done_line" ]; then
	fail+=("kmad_discover did not finish")
elif [ -z "$faults$sim_args$discover_args" ] &&
     { ! [[ $done_line =~ \ 0\ unreachable,\ 0\ errors\ \([0-9]+\ queries,\ [0-9]+\ sends,\ 0\ send\ errors ]] ||
       [[ $done_line == *truncated* ]]; }; then
	# Without FAULTS (and no SIM_ARGS or DISCOVER_ARGS, which may set
	# faults, tight timeouts or limits) every node answers and fits the
	# limits: "done" alone is no pass.
	fail+=("discovery without faults was not clean: $done_line")
fi
grep -q 'kmad-run: FAILED' "$out/console.log" && fail+=("$(grep -m1 'kmad-run: FAILED' "$out/console.log")")
if grep -Eq 'WARNING: |BUG: |kernel BUG at|Oops|general protection fault|Kernel panic|UBSAN: |Call Trace:|blocked for more than|soft lockup|rcu: INFO: |ODEBUG: ' \
	"$out/console.log"; then
	fail+=("kernel splat in the console log")
fi
say "guest ran ${guest_s}s; make run took $((SECONDS - start_all))s in all"
if [ ${#fail[@]} -ne 0 ]; then
	for f in "${fail[@]}"; do echo "run.sh: FAILED: $f" >&2; done
	exit 1
fi
say "ok"
