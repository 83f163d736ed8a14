#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of `make diags` (tests/diags/diags.sh): loads kmad_sim with the
# topology of /kmad/diags.conf, kmad_diags_fabric (the sim's own
# description, for check.py) and kmad_umad, runs umad_abi_test and
# Debian's infiniband-diags, each between "=== cmd: <command>" and
# "=== rc: <exit status>" lines, then unloads everything and powers off.
# The verdict is check.py's, on the host, over the console log.
#
# No `set -e`: if /init exits the kernel panics and nothing more is
# printed, so the script always ends with finish(), which powers off.
# shellcheck shell=dash

/bin/busybox --install -s /bin
mount -t devtmpfs devtmpfs /dev
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
export PATH=/sbin:/bin

# shellcheck source=/dev/null
. /kmad/diags.conf

say() { echo "kmad-diags: $*"; }
# check.py wants the fault-injection cases on the debug kernel.
say "kernel: ${KERNEL:-stock}"
finish() {
	say "end"
	sync
	poweroff -f
}
# run <command...>: the command and its output between markers.
run() {
	local t0 t1 rc
	echo "=== cmd: $*"
	t0=$(cut -d' ' -f1 /proc/uptime)
	"$@" 2>&1
	rc=$?
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "=== time: $t0 $t1"
	echo "=== rc: $rc"
}

say "kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs"
if [ "$(uname -r)" != "$KVER" ]; then
	say "FAILED: modules were built for $KVER, the kernel is $(uname -r)"
	finish
fi
# The scale figure (diags.sh, DIAGS_SCALE=1): a fattree, ibnetdiscover
# through kmad_umad, then kmad_discover in the kernel, over the same
# fabric; check.py --scale reads the "kmad-diags: scale" lines.
if [ "${SCALE:-0}" = 1 ]; then
	# shellcheck disable=SC2086
	if ! modprobe kmad_sim $SIM_ARGS || ! modprobe kmad_umad; then
		say "FAILED: modprobe kmad_sim $SIM_ARGS, kmad_umad"
		finish
	fi
	say "scale: kmad_sim $SIM_ARGS"
	t0=$(cut -d' ' -f1 /proc/uptime)
	ibnetdiscover -C sim0 -P 1 > /tmp/net 2>&1
	rc=$?
	t1=$(cut -d' ' -f1 /proc/uptime)
	say "scale: ibnetdiscover rc $rc from $t0 to $t1 switches $(grep -c '^Switch' /tmp/net) cas $(grep -c '^Ca' /tmp/net)"
	[ "$rc" = 0 ] || tail -n 20 /tmp/net
	modprobe kmad_discover dev=sim0 port=1 max_nodes=4096
	i=0
	while ! dmesg | grep -q 'kmad_discover: done:' && [ $i -lt 600 ]; do
		sleep 1
		i=$((i + 1))
	done
	say "scale: $(dmesg | grep -o 'kmad_discover: done:.*' | head -n 1)"
	rmmod kmad_discover
	rmmod kmad_umad
	rmmod kmad_sim
	rmmod kmad
	grep -q '^kmad' /proc/modules || say "modules unloaded"
	finish
fi
echo 7 > /proc/sys/kernel/printk
# umad_abi_test's fail_nth cases (a kernel with fault injection, make
# diags KERNEL=debug): failslab fails sleeping allocations too, quietly;
# nothing fails unless a thread asks through fail-nth.
if [ -d /sys/kernel/debug/failslab ]; then
	echo N > /sys/kernel/debug/failslab/ignore-gfp-wait
	echo 0 > /sys/kernel/debug/failslab/verbose
fi
# shellcheck disable=SC2086 # the arguments are words on purpose
if ! modprobe kmad_sim $SIM_ARGS; then
	say "FAILED: modprobe kmad_sim"
	finish
fi
if ! modprobe kmad_diags_fabric sm_dev="$SM_DEV"; then
	say "FAILED: modprobe kmad_diags_fabric"
	finish
fi
if ! modprobe kmad_umad; then
	say "FAILED: modprobe kmad_umad"
	finish
fi
dmesg | grep 'kmad_diags: '
# The tools' output must not be cut by kernel messages, so the console
# shows errors only from here; the ring buffer, emptied now (all of it
# was on the console), keeps the rest and is printed after the tools:
# a warning-level report (lockdep's) would otherwise never reach
# check.py's splat scan.
dmesg -c > /dev/null
echo 4 > /proc/sys/kernel/printk
ls -l /dev/infiniband/
for f in /sys/class/infiniband_mad/*/ibdev; do
	echo "$f: $(cat "$f") port $(cat "${f%/ibdev}/port")"
done

t0=$(cut -d' ' -f1 /proc/uptime)
# The ABI test: umad0 is sim0's port 1; sim1's port 1 has LID 2.
run /bin/umad_abi_test 0 2
# Again as a 32-bit process: the ioctls through compat_ioctl (only on a
# kernel that runs 32-bit programs: diags.sh packs it then).
if [ -x /bin/umad_abi_test32 ]; then
	run /bin/umad_abi_test32 0 2
else
	say "no 32-bit umad_abi_test"
fi

# One line per tool run, so the checker knows what to expect.
run ibstat
run ibstat -l
run ibstat -p
run ibstat sim1 1
run ibstatus
# Everything from sim0's port 1 (-C sim0 -P 1), where the directed
# routes start; ibstat and one ibnetdiscover pick their port themselves.
ca="-C sim0 -P 1"
run ibnetdiscover
# shellcheck disable=SC2086
{
run ibnetdiscover $ca
run ibnetdiscover $ca -p
for lid in $LIDS; do
	run smpquery $ca nodeinfo "$lid"
	run smpquery $ca nodedesc "$lid"
	run smpquery $ca portinfo "$lid"
	run smpquery $ca -x portinfo "$lid"
	run smpquery $ca pkeys "$lid"
	run smpquery $ca GI "$lid"
	run smpquery $ca sl2vl "$lid"
	run smpquery $ca vlarb "$lid"
done
for lid in $SWITCH_LIDS; do
	run smpquery $ca switchinfo "$lid"
	run ibroute $ca "$lid"
	run ibroute $ca -M "$lid"
	# Every external port (port 0 has no VLArbitrationTable): its
	# VLArbitrationTable, its state with its peer's, and the peer by a
	# combined route (which node answers); then the counters port by port.
	nports=$(smpquery $ca nodeinfo "$lid" | sed -n 's/^NumPorts:\.*//p')
	[ -n "$nports" ] || say "FAILED: no NumPorts for LID $lid"
	for p in $(seq 1 "${nports:-0}"); do
		run smpquery $ca vlarb "$lid" "$p"
		run ibportstate $ca "$lid" "$p" query
		run smpquery $ca -c nodeinfo "$lid,0,$p"
	done
	run perfquery $ca -a -l "$lid"
done
for path in $DR_PATHS; do
	run smpquery $ca -D nodeinfo "$path"
	run smpquery $ca -D nodedesc "$path"
	run smpquery $ca -D portinfo "$path"
	run smpquery $ca -D pkeys "$path"
done
for path in $DR_SWITCH_PATHS; do
	run smpquery $ca -D switchinfo "$path"
	run ibroute $ca -D "$path"
	run ibroute $ca -M -D "$path"
done
for lid in $HCA_LIDS; do
	run perfquery $ca "$lid" 1
	run perfquery $ca -x "$lid" 1
done
for lid in $SWITCH_LIDS; do
	run perfquery $ca -a "$lid"
	run perfquery $ca -x -a "$lid"
done
run perfquery $ca -R "$LAST_HCA_LID" 1
run perfquery $ca "$LAST_HCA_LID" 1
for pair in $TRACES; do
	run ibtracert $ca ${pair%,*} ${pair#*,}
done
# SMInfo goes to the test SM agent kmad_diags_fabric registered on
# $SM_DEV (LID 1, every port's MasterSMLID): from sim0 itself (no address:
# the port's SM LID; by LID; by a directed route of 0 hops, whose answer
# stays in the port) and from the last HCA across the fabric (by the SM
# LID and by directed route).
run sminfo $ca
run sminfo $ca 1
run sminfo $ca -D 0
run sminfo -C "$LAST_HCA" -P 1
run sminfo -C "$LAST_HCA" -P 1 -D "$SM_DR_PATH"
# A vendor class with an OUI (0x32, OpenIB): ibping's server on sim1
# answers with its host name.
hostname diags-host
echo kmad > /proc/sys/kernel/domainname
ibping -S -C sim1 -P 1 &
ping_pid=$!
sleep 1
run ibping $ca -c 3 2
kill "$ping_pid"
wait "$ping_pid"
# The node lists, the links every port sees, addresses, raw SMPs, every
# switch's tables (found by the tool itself), the HCA ports' state, the
# last HCA's counters port by port, and combined routes (a LID, then a
# directed route from there).  The switch ports' are in the loop above.
run ibhosts $ca
run ibswitches $ca
run ibnodes $ca
run iblinkinfo $ca
run iblinkinfo $ca -l
run iblinkinfo $ca -D 0
run ibaddr $ca
for lid in $LIDS; do
	run ibaddr $ca "$lid"
	run smpdump $ca "$lid" 0x11
	run smpdump $ca "$lid" 0x15
done
run ibaddr $ca -g "$LAST_HCA_LID"
run ibaddr $ca -l "$LAST_HCA_LID"
for path in $DR_PATHS; do
	run ibaddr $ca -D "$path"
	run smpdump $ca -D "$path" 0x11
	run smpdump $ca -s -D "$path" 0x10
done
run dump_fts $ca
run dump_fts $ca 2 6
run dump_fts $ca -M
for lid in $HCA_LIDS; do
	run ibportstate $ca "$lid" 1 query
done
run ibportstate $ca -D 0 1 query
run perfquery $ca -a -l "$LAST_HCA_LID"
for route in $COMBINED_ROUTES; do
	run smpquery $ca -c nodeinfo "$route"
	run smpquery $ca -c nodedesc "$route"
	run smpquery $ca -c portinfo "$route"
done
# The OpenIB sysstat vendor class: its server on the last HCA.
ibsysstat -S -C "$LAST_HCA" -P 1 &
sysstat_pid=$!
sleep 1
run ibsysstat $ca "$LAST_HCA_LID"
run ibsysstat $ca "$LAST_HCA_LID" host
run ibsysstat $ca "$LAST_HCA_LID" cpu
kill "$sysstat_pid"
wait "$sysstat_pid"
}
t1=$(cut -d' ' -f1 /proc/uptime)
say "tools ran from ${t0}s to ${t1}s of uptime"
# kmad's own counters (timeouts, drops) and the sim's, for the record.
for f in /sys/kernel/debug/kmad/*/port*/stats; do
	[ -e "$f" ] || continue
	say "$f"
	cat "$f"
done

# The ports go away under open umad and issm files: kmad_sim is removed
# while they are open, with sends outstanding.
run /bin/umad_abi_test --port-gone 0 2 "rmmod kmad_diags_fabric && rmmod kmad_sim"
if [ -d /sys/class/infiniband/sim0 ] || [ -e /dev/infiniband/umad0 ]; then
	say "FAILED: sim0's files outlived it"
fi
echo 7 > /proc/sys/kernel/printk
echo "=== kernel log while the console was quiet:"
dmesg
echo "=== end of that kernel log"
for m in kmad_umad kmad; do
	rmmod "$m" || say "FAILED: rmmod $m"
done
if grep -q '^kmad' /proc/modules; then
	say "FAILED: still loaded: $(grep '^kmad' /proc/modules | cut -d' ' -f1 | tr '\n' ' ')"
else
	say "modules unloaded"
fi
# The debug kernel: kmemleak reports only objects unchanged between two
# scans, and ignores ones younger than 5 s.
# The file's size is always 0 (a debugfs file): read it to see whether it
# holds a report.  A scan refused (kmemleak switched itself off) fails.
if [ -w /sys/kernel/debug/kmemleak ]; then
	sleep 5
	if ! echo scan > /sys/kernel/debug/kmemleak ||
	   ! echo scan > /sys/kernel/debug/kmemleak; then
		say "FAILED: kmemleak scan refused"
	fi
	leaks=$(cat /sys/kernel/debug/kmemleak)
	if [ -n "$leaks" ]; then
		# check.py judges each object (boot's own are let through).
		say "kmemleak output follows"
		echo "$leaks"
	else
		say "kmemleak: nothing"
	fi
fi
finish
