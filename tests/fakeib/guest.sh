#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of `make fakeib`'s initramfs (tests/fakeib/fakeib.sh).  Loads
# ib_core, ib_umad, ib_cm and kmad_fakeib (two devices, fakeib0 LID 1 and
# fakeib1 LID 2), runs Debian's infiniband-diags against them through
# ib_umad and ib_mad, then kmad and kmad_ib and kmad_interop's GSI cases
# from fakeib0 to fakeib1, kmad_fakeib_smi's SMI cases through kmad_ib's
# QP0 bridge (and smpquery against a kmad SMA), and unloads everything.  One line per check:
#   fakeib: <check>: ok|FAILED <detail>
# repeated at the end between "kmad-fakeib: results begin" and "results
# end" with the console quiet.  /kmad/fakeib.conf sets KVER and CHECKS.
#
# No `set -e`: if /init exits the kernel panics, so every step checks its
# own result and the script always ends with finish(), which powers off.
# shellcheck shell=dash

# shellcheck source=tests/qemu/guest-lib.sh
. /kmad/guest-lib.sh
guest_mounts
export PATH=/sbin:/bin

# shellcheck source=/dev/null
. /kmad/fakeib.conf

say() { echo "kmad-fakeib: $*"; }
result() {
	echo "fakeib: $1: $2"
	echo "fakeib: $1: $2" >> /tmp/results
}
finish() {
	kmemleak_scan
	echo 4 > /proc/sys/kernel/printk
	say "results begin"
	[ ! -f /tmp/results ] || cat /tmp/results
	say "results end"
	say "end"
	sync
	poweroff -f
}
# run <command...>: its output indented on the console and in /tmp/out,
# its exit code in $rc.
run() {
	say "\$ $*"
	"$@" > /tmp/out 2>&1
	rc=$?
	sed 's/^/    /' /tmp/out
	say "exit $rc"
}
has() { grep -q "$1" /tmp/out; }
mark() { echo "kmad-fakeib: mark $1" > /dev/kmsg; }
since() { dmesg | sed -n "/kmad-fakeib: mark $1\$/,\$p"; }
# bounded <seconds> <command...>: its exit code, or 124 if it still runs.
bounded() {
	bt=$1
	shift
	rm -f /tmp/bounded.rc
	("$@"; echo $? > /tmp/bounded.rc) &
	while [ ! -s /tmp/bounded.rc ]; do
		if [ "$bt" -le 0 ]; then
			say "still running after its time: $*"
			return 124
		fi
		sleep 1
		bt=$((bt - 1))
	done
	return "$(cat /tmp/bounded.rc)"
}
sysattr() { cat "/sys/class/infiniband/$1/$2" 2>/dev/null; }

say "kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs; checks: $CHECKS"
if [ "$(uname -r)" != "$KVER" ]; then
	result load "FAILED modules were built for $KVER, the kernel is $(uname -r)"
	finish
fi
echo 7 > /proc/sys/kernel/printk

# ---- load: ib_core's modules and kmad_fakeib.
for m in ib_core ib_umad ib_cm kmad_fakeib; do
	if ! modprobe "$m"; then
		result load "FAILED modprobe $m"
		finish
	fi
done
if [ -d /sys/class/infiniband/fakeib0 ] && [ -d /sys/class/infiniband/fakeib1 ]; then
	n=0
	for u in /sys/class/infiniband_mad/umad*; do
		[ -e "$u" ] && n=$((n + 1))
	done
	result load "ok fakeib0 and fakeib1 registered with ib_core ($n umad ports)"
else
	result load "FAILED /sys/class/infiniband has: $(ls /sys/class/infiniband)"
	finish
fi

# ---- sysfs: what ib_core shows of the ports.
bad=
for d in 0 1; do
	lid=$((d + 1))
	ll=$(sysattr "fakeib$d" ports/1/link_layer)
	st=$(sysattr "fakeib$d" ports/1/state)
	ps=$(sysattr "fakeib$d" ports/1/phys_state)
	l=$(sysattr "fakeib$d" ports/1/lid)
	pk=$(sysattr "fakeib$d" ports/1/pkeys/0)
	gid=$(sysattr "fakeib$d" ports/1/gids/0)
	say "fakeib$d: link_layer $ll, state $st, phys_state $ps, lid $l, pkey $pk, gid $gid"
	[ "$ll" = InfiniBand ] || bad="$bad fakeib$d link_layer '$ll';"
	[ "$st" = "4: ACTIVE" ] || bad="$bad fakeib$d state '$st';"
	[ "$ps" = "5: LinkUp" ] || bad="$bad fakeib$d phys_state '$ps';"
	[ "$l" = "0x$lid" ] || bad="$bad fakeib$d lid '$l';"
	[ "$pk" = 0xffff ] || bad="$bad fakeib$d pkey '$pk';"
	[ "$gid" = "fe80:0000:0000:0000:0002:c903:00fa:000$((2 * d + 1))" ] ||
		bad="$bad fakeib$d gid '$gid';"
done
if [ -z "$bad" ]; then
	result sysfs "ok link layer InfiniBand, ACTIVE/LinkUp, LIDs 1 and 2, P_Key 0xffff, GIDs fe80::<port GUID>"
else
	result sysfs "FAILED$bad"
fi

# ---- ibstat: libibumad's view through ib_umad's sysfs.
run ibstat fakeib0
if [ "$rc" = 0 ] && has "Link layer: InfiniBand" && has "State: Active" &&
   has "Physical state: LinkUp" && has "Base lid: 1\$" && has "SM lid: 1\$" &&
   has "Port GUID: 0x0002c90300fa0001"; then
	result ibstat "ok fakeib0 port 1: Active, LinkUp, Base lid 1, SM lid 1, Link layer InfiniBand"
else
	result ibstat "FAILED exit $rc: $(tr '\n' ' ' < /tmp/out | tr -s ' \t' '  ')"
fi

# ---- smpquery: a LID-routed SubnGet(NodeInfo) from fakeib0's QP0 (ib_umad,
# ib_mad) to LID 2.  fakeib has no process_mad and nothing on fakeib1 is an
# SMA, so fakeib1's ib_mad answers GetResp with status 0x000c (unsupported
# method/attribute; generate_unmatched_resp): smpquery must fail with that
# status, not with a timeout.  To LID 9, which no port has, it must time
# out instead: the answer above came over the wire, not from fakeib0.
run smpquery -e -C fakeib0 -P 1 -t 500 nodeinfo 2
s_rc=$rc
s_out=$(tr '\n' ' ' < /tmp/out | tr -s ' \t' '  ')
s_ok=0
[ "$rc" != 0 ] && grep -qi "status 0xc\|status 0x000c\|status: 0xc" /tmp/out && s_ok=1
run smpquery -e -C fakeib0 -P 1 -t 200 nodeinfo 9
n_out=$(tr '\n' ' ' < /tmp/out | tr -s ' \t' '  ')
n_ok=0
[ "$rc" != 0 ] && ! grep -qi "status 0x" /tmp/out && grep -qi "timed out" /tmp/out && n_ok=1
if [ "$s_ok" = 1 ] && [ "$n_ok" = 1 ]; then
	result smpquery "ok nodeinfo 2: MAD status 0xc from fakeib1's ib_mad (no SMA); nodeinfo 9: no answer"
else
	result smpquery "FAILED nodeinfo 2 (exit $s_rc): $s_out / nodeinfo 9 (exit $rc): $n_out"
fi

# ---- perfquery: PerfMgt Get(ClassPortInfo) on QP1 to LID 2: no PMA there
# either (no process_mad, no agent), so status 0x000c again.
run perfquery -e -C fakeib0 -P 1 -t 500 2 1
if [ "$rc" != 0 ] && grep -qi "status 0xc\|status 0x000c\|status: 0xc" /tmp/out; then
	result perfquery "ok LID 2 port 1: MAD status 0xc from fakeib1's ib_mad (no PMA)"
else
	result perfquery "FAILED exit $rc: $(tr '\n' ' ' < /tmp/out | tr -s ' \t' '  ')"
fi

# ---- kmad-bind: kmad and kmad_ib make kmad devices of both.
mark 1
for m in kmad kmad_ib; do
	modprobe "$m" || say "modprobe $m failed"
done
sleep 1
since 1 | grep 'kmad' | sed 's/^/    /'
bad=
for d in fakeib0 fakeib1; do
	since 1 | grep -q "kmad_ib: $d: kmad device with 1 port(s) (InfiniBand)" ||
		bad="$bad no 'kmad_ib: $d: kmad device with 1 port(s) (InfiniBand)';"
	since 1 | grep -q "kmad_ib: $d port 1: kmad's QP1 is UD QP [0-9]" ||
		bad="$bad no 'kmad_ib: $d port 1: kmad's QP1 is UD QP';"
done
# bridge_smp_timeout_ms takes 1 to 2^31 - 1 ms only (0 would take no
# answer; ib_mad's timeout is an int).
p=/sys/module/kmad_ib/parameters/bridge_smp_timeout_ms
for v in 0 2147483648; do
	if echo "$v" 2>/dev/null > "$p"; then
		bad="$bad bridge_smp_timeout_ms took $v;"
	fi
done
echo 10000 > "$p" || bad="$bad bridge_smp_timeout_ms refused 10000;"
[ "$(cat "$p")" = 10000 ] || bad="$bad bridge_smp_timeout_ms reads $(cat "$p");"
if [ -z "$bad" ]; then
	qps=$(since 1 | sed -n "s/.*kmad_ib: \(fakeib[0-9]\) port 1: kmad's QP1 is UD QP \([0-9]*\).*/\1 QP \2/p" | tr '\n' ',')
	result kmad-bind "ok kmad_ib bound fakeib0 and fakeib1 as InfiniBand kmad devices ($qps); bridge_smp_timeout_ms refused 0 and 2^31"
else
	result kmad-bind "FAILED$bad"
fi

# ---- gsi/*: kmad_interop's cases from fakeib0 to fakeib1: a kmad agent's
# Gets answered by ib_mad (unsupported), by ibmad_peer's ib_mad agent, by
# a kmad agent on fakeib1; Gets to a dead QPN timing out; and a Get with
# P_Key index 1, an entry fakeib has, which kmad_ib's UD QP refuses
# (LOCAL_ERROR).
mark 2
if ! modprobe ibmad_peer dev=fakeib1; then
	say "modprobe ibmad_peer failed"
fi
bounded 200 modprobe kmad_interop dev=fakeib0 peer=fakeib1 \
	cases=ibmad_unsupported,ibmad_peer,kmad_kmad,timeout_retry,pkey_index
i_rc=$?
since 2 | grep 'kmad_interop' | sed 's/^/    /'
for c in ibmad_unsupported ibmad_peer kmad_kmad timeout_retry pkey_index; do
	line=$(since 2 | grep -m1 "kmad_interop: $c: \(ok\|FAILED\)" |
	       sed 's/.*kmad_interop: [a-z_]*: //')
	case "$line" in
	ok*) result "gsi/$c" "$line" ;;
	"") result "gsi/$c" "FAILED no result line from kmad_interop (modprobe exit $i_rc)" ;;
	*) result "gsi/$c" "$line" ;;
	esac
done

# gsi/rdma-to-kmad: rdma-core's Gets to a kmad agent, LID routed.  While
# loaded, kmad_interop keeps an agent for vendor class 0x0b on fakeib0;
# Debian's libibumad (umad_peer, through ib_umad on fakeib1) sends Gets to
# LID 1's QP1, which only ib_mad receives: kmad_ib's bridge hands them to
# that agent, and its answers leave from ib_mad's QP1 (umad_peer checks
# the data, the TID and source QP 1).  ib_mad's own 0x000c would mean the
# bridge did not carry the class.
if ! grep -q '^kmad_interop ' /proc/modules; then
	result gsi/rdma-to-kmad "FAILED kmad_interop is not loaded"
else
	run umad_peer query --ca fakeib1 --dlid 1 --class 0x0b --mult 17 --count 16
	case $rc in
	0) result gsi/rdma-to-kmad "ok $(sed -n 's/^umad_peer: query: ok //p' /tmp/out | head -n 1), kmad agent on fakeib0 answered through the bridge" ;;
	*) result gsi/rdma-to-kmad "FAILED exit $rc: $(tr '\n' ' ' < /tmp/out | tr -s ' \t' '  ')" ;;
	esac
fi

# gsi/rdma-to-kmad-pkey: the same with P_Key index 1 (partition 0x8001,
# fakeib's second P_Key): the request reaches the kmad agent with index 1
# through ib_mad and the bridge, and kmad's answer (from ib_mad's QP1,
# which takes an index per send) must come back in that partition:
# umad_peer checks the answer's P_Key index.
if ! grep -q '^kmad_interop ' /proc/modules; then
	result gsi/rdma-to-kmad-pkey "FAILED kmad_interop is not loaded"
else
	run umad_peer query --ca fakeib1 --dlid 1 --class 0x0b --mult 17 --count 8 --pkey-index 1
	case $rc in
	0) result gsi/rdma-to-kmad-pkey "ok $(sed -n 's/^umad_peer: query: ok //p' /tmp/out | head -n 1), the kmad agent's answers in the request's partition" ;;
	*) result gsi/rdma-to-kmad-pkey "FAILED exit $rc: $(tr '\n' ' ' < /tmp/out | tr -s ' \t' '  ')" ;;
	esac
fi

# ---- smi/*: kmad SMI agents through kmad_ib's QP0 bridge, from fakeib0 to
# fakeib1 (LID 2), LID routed (tests/fakeib/smi_test.c).  First with a kmad
# SMA on fakeib1 answering SubnGet(NodeInfo) with NodeGUID
# 0x6b6d61642d534d41 and Revision 0x00c0ffee: kmad's requests, timeouts
# and the refused directed route, then Debian's smpquery, whose SubnGet
# reaches the kmad SMA through ib_mad and kmad_ib.
smi_result() { # <case> <mark>: kmad_fakeib_smi's line for <case>
	line=$(since "$2" | grep -m1 "kmad_fakeib_smi: $1: \(ok\|FAILED\)" |
	       sed 's/.*kmad_fakeib_smi: [a-z_]*: //')
	case "$line" in
	"") result "smi/$1" "FAILED no result line from kmad_fakeib_smi (modprobe exit $s_rc)" ;;
	*) result "smi/$1" "$line" ;;
	esac
}
mark 3
bounded 120 modprobe kmad_fakeib_smi sma=1 cases=smi_kmad,smi_timeout,smi_dr,rereg,smi_set_tid
s_rc=$?
since 3 | grep 'kmad_fakeib_smi\|kmad_ib' | sed 's/^/    /'
for c in smi_kmad smi_timeout smi_dr rereg smi_set_tid; do
	smi_result "$c" 3
done
run smpquery -e -C fakeib0 -P 1 -t 500 nodeinfo 2
if [ "$rc" = 0 ] && grep -qi "guid.*0x6b6d61642d534d41" /tmp/out &&
   grep -qi "revision.*0x00c0ffee" /tmp/out; then
	result smi/smpquery-sma "ok smpquery nodeinfo 2 from fakeib0: NodeGuid 0x6b6d61642d534d41, Revision 0x00c0ffee from the kmad SMA on fakeib1"
else
	result smi/smpquery-sma "FAILED exit $rc: $(tr '\n' ' ' < /tmp/out | tr -s ' \t' '  ')"
fi

# smi/ibmad-flush: ib_mad reports the kmad SMA's answer as flushed
# (kmad_fakeib's flush_smi_resp drops it as an HCA flushing its send
# queue would).  kmad_ib must end that send with a local error, not
# report a flush of kmad's QP0, which kmad would wait to empty and
# recover (it never empties: it holds its receives).  The smpquery whose
# answer is flushed gets none (libibmad gives up when its receive times
# out: exit 255 here); the next one must be answered (before the fix in
# kmad_ib it timed out too: kmad's QP0 stayed in recovery).
fp=/sys/module/kmad_fakeib/parameters/flush_smi_resp
bad=
if ! echo 1 > "$fp"; then
	bad=" cannot write $fp;"
else
	run smpquery -e -C fakeib0 -P 1 -t 500 nodeinfo 2
	first=$rc
	left=$(cat "$fp")
	[ "$left" = 0 ] || bad="$bad the flush was not injected ($left left);"
	run smpquery -e -C fakeib0 -P 1 -t 500 nodeinfo 2
	grep -qi "guid.*0x6b6d61642d534d41" /tmp/out ||
		bad="$bad second smpquery: exit $rc, $(tr '\n' ' ' < /tmp/out | tr -s ' \t' '  ');"
fi
if [ -z "$bad" ]; then
	result smi/ibmad-flush "ok the SMA's answer flushed by ib_mad once (that smpquery exit $first); the next smpquery nodeinfo 2 answered by the kmad SMA"
else
	result smi/ibmad-flush "FAILED$bad"
fi
bounded 60 rmmod kmad_fakeib_smi || say "rmmod kmad_fakeib_smi failed"

# Then with no kmad SMA (ib_mad answers 0x000c), and SubnGets left
# outstanding to LID 9 while kmad_ib unloads: kmad_ib cancels the copies
# lingering in ib_mad, and every send is called back once (hold-exit, at
# rmmod kmad_fakeib_smi).  With kmad_ib gone, ib_mad on fakeib1 answers
# smpquery with 0x000c again: the bridge's ib_mad agent went with it.
mark 4
bounded 120 modprobe kmad_fakeib_smi cases=smi_ibmad,hold hold_sends=32
s_rc=$?
smi_result smi_ibmad 4
bad=
hold=$(since 4 | grep -m1 "kmad_fakeib_smi: hold: \(ok\|FAILED\)" | sed 's/.*hold: //')
case "$hold" in
ok*) ;;
*) bad="$bad hold: '$hold';" ;;
esac
bounded 60 rmmod kmad_ib || bad="$bad rmmod kmad_ib failed;"
bounded 60 rmmod kmad_fakeib_smi || bad="$bad rmmod kmad_fakeib_smi failed;"
since 4 | grep 'kmad_fakeib_smi\|kmad_ib' | sed 's/^/    /'
lingering=$(since 4 | sed -n 's/.*kmad_ib: fakeib0 port 1: canceled \([0-9]*\) SMP requests lingering in ib_mad.*/\1/p' | head -n 1)
[ -n "$lingering" ] || bad="$bad no 'canceled N SMP requests lingering' from kmad_ib;"
exit_line=$(since 4 | grep -m1 "kmad_fakeib_smi: hold-exit: " | sed 's/.*hold-exit: //')
case "$exit_line" in
"ok 32 sends, 32 callbacks"*) ;;
*) bad="$bad hold-exit: '$exit_line';" ;;
esac
run smpquery -e -C fakeib0 -P 1 -t 500 nodeinfo 2
[ "$rc" != 0 ] && grep -qi "status 0xc\|status 0x000c\|status: 0xc" /tmp/out ||
	bad="$bad smpquery after kmad_ib: exit $rc, $(tr '\n' ' ' < /tmp/out | tr -s ' \t' '  ');"
if [ -z "$bad" ]; then
	result smi/unload "ok rmmod kmad_ib with 32 SubnGets outstanding: $lingering copies canceled in ib_mad, $exit_line; then smpquery gets 0x000c from ib_mad again"
else
	result smi/unload "FAILED$bad"
fi

# ---- unload: everything, in dependency order; no device may be left.
bad=
for m in kmad_fakeib_smi kmad_interop ibmad_peer kmad_ib kmad kmad_fakeib ib_cm ib_umad; do
	grep -q "^$m " /proc/modules || continue
	bounded 60 rmmod "$m" || bad="$bad rmmod $m failed;"
done
[ -z "$(ls /sys/class/infiniband 2>/dev/null)" ] ||
	bad="$bad left in /sys/class/infiniband: $(ls /sys/class/infiniband);"
if [ -z "$bad" ]; then
	result unload "ok every module still loaded (kmad_fakeib_smi, kmad_interop, ibmad_peer, kmad_ib, kmad, kmad_fakeib, ib_cm, ib_umad) unloaded; no device left"
else
	result unload "FAILED$bad"
fi
finish
