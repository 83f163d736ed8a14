#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of `make interop`'s initramfs (tests/interop/interop.sh).  Creates
# rxe0/rxe1 on a veth pair, then runs the exchanges, one result line each:
#   interop: <name>: ok|FAILED|SKIPPED <detail>
# Every exchange is announced first ("kmad-interop: expect <name>"), so
# that the host can tell a missing result line; at the end both come again
# between "kmad-interop: results begin" and "results end".  /kmad/interop.conf sets
# KVER and INTEROP_ARGS (kmad_interop's parameters).
#
# With RXE_BENCH=1 in /kmad/interop.conf (make bench's rxe part,
# tests/bench/rxe/rxe.sh) the same setup is followed by one step,
# "rxebench", instead of the exchanges: kmad_ib and rxe_bench.ko with
# RXE_BENCH_ARGS; its "rxe_bench: ..." lines come again in the results
# block.
#
# No `set -e`: if /init exits the kernel panics and nothing more is
# printed, so every step checks its own result and the script always ends
# with finish(), which powers off.
# shellcheck shell=dash

# shellcheck source=tests/qemu/guest-lib.sh
. /kmad/guest-lib.sh
guest_mounts

# shellcheck source=/dev/null
. /kmad/interop.conf

IP=/bin/iproute2-ip
MODDIR=/lib/modules/$KVER/updates/kmad

say() { echo "kmad-interop: $*"; }
expect() {
	say "expect $1"
	echo "$1" >> /tmp/expected
}
result() {
	name=$1
	shift
	echo "interop: $name: $*"
	echo "interop: $name: $*" >> /tmp/results
}
# The announced exchanges and every result again, in one block, with the
# console quiet: a kernel message printed in the middle of a line above
# cannot garble the lines the host judges.
finish() {
	kmemleak_scan
	echo 4 > /proc/sys/kernel/printk
	say "results begin"
	[ ! -f /tmp/expected ] || sed 's/^/kmad-interop: expect /' /tmp/expected
	[ ! -f /tmp/results ] || cat /tmp/results
	[ ! -f /tmp/bench ] || cat /tmp/bench
	say "results end"
	say "end"
	sync
	poweroff -f
}
# Run a command, print its output indented, return its exit code.
run() {
	"$@" > /tmp/out 2>&1
	rc=$?
	sed 's/^/    /' /tmp/out
	return $rc
}
# The detail of a result: umad_peer's own line, without its prefix.
detail() {
	grep -m1 'umad_peer: query:' /tmp/out | sed 's/^umad_peer: query: [A-Z]* *//;s/^ok //'
}
wait_for() {	# wait_for <seconds> <command...>
	t=$1
	shift
	while ! "$@"; do
		[ "$t" -gt 0 ] || return 1
		sleep 1
		t=$((t - 1))
	done
}
port_ready() {	# ACTIVE, and a non-zero GID at index 0
	grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null &&
		gid=$(cat "/sys/class/infiniband/$1/ports/1/gids/0" 2>/dev/null) &&
		[ "$gid" != "0000:0000:0000:0000:0000:0000:0000:0000" ]
}

# Helpers of both the exchanges and the benchmark.
have() { [ -f "$MODDIR/$1.ko" ]; }
has_param() { grep -qx "$1" /kmad/interop.params 2>/dev/null; }
loaded() { grep -q "^$1 " /proc/modules; }
kmad_dev() { [ -d "/sys/kernel/debug/kmad/$1" ]; }
# bounded <seconds> <command...>: its exit code, or 124 if it still runs
# then (a hang in the kernel: the run goes on to report it).
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
since() { dmesg | sed -n "/kmad-interop: mark $1\$/,\$p"; }
since_has() { since "$1" | grep -q "$2"; }
mark() { echo "kmad-interop: mark $1" > /dev/kmsg; }

say "kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs"
if [ "$(uname -r)" != "$KVER" ]; then
	say "FAILED: modules were built for $KVER, the kernel is $(uname -r)"
	finish
fi
echo 7 > /proc/sys/kernel/printk

# The fabric: rxe0 on veth0, rxe1 on veth1, IPv6 link-local GIDs.  rdma_rxe
# needs crc32_generic before it loads.
expect setup
for m in crc32_generic veth rdma_rxe ib_umad; do
	if ! modprobe "$m"; then
		result setup "FAILED modprobe $m"
		finish
	fi
done
$IP link set lo up
if ! $IP link add veth0 type veth peer name veth1 ||
   ! $IP link set veth0 up || ! $IP link set veth1 up; then
	result setup "FAILED creating the veth pair"
	finish
fi
# DAD done: the link-local addresses are no longer tentative.
if ! wait_for 20 sh -c "! $IP -6 addr show | grep -q tentative"; then
	say "IPv6 addresses still tentative after 20s"
fi
$IP -6 -br addr show
if ! rdma link add rxe0 type rxe netdev veth0 ||
   ! rdma link add rxe1 type rxe netdev veth1; then
	result setup "FAILED rdma link add"
	finish
fi
if ! wait_for 30 port_ready rxe0 || ! wait_for 30 port_ready rxe1; then
	rdma link show
	result setup "FAILED rxe0/rxe1 not ACTIVE with a GID within 30s"
	finish
fi
rdma link show
G0=$(cat /sys/class/infiniband/rxe0/ports/1/gids/0)
G1=$(cat /sys/class/infiniband/rxe1/ports/1/gids/0)
say "rxe0 gid[0] $G0 ($(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/0))"
say "rxe1 gid[0] $G1 ($(cat /sys/class/infiniband/rxe1/ports/1/gid_attrs/types/0))"
ls /dev/infiniband
result setup "ok rxe0 and rxe1 ACTIVE on veth0/veth1"

# ---- make bench's rxe part (RXE_BENCH=1, tests/bench/rxe/rxe.sh):
# instead of the exchanges, kmad_ib and rxe_bench, which runs everything
# from its init and prints "rxe_bench: sample {...}" lines; those come
# again in the results block, where the host's report.py reads them.
rxe_bench() {
	expect rxebench
	if ! modprobe kmad_ib || ! wait_for 10 kmad_dev rxe0; then
		result rxebench "FAILED kmad_ib did not load or made no kmad device rxe0"
		return
	fi
	mark 5
	say "modprobe rxe_bench $RXE_BENCH_ARGS"
	t0=$(date +%s)
	[ "${RXE_PERF:-0}" != 1 ] || perf_start
	# shellcheck disable=SC2086 # the arguments are words on purpose
	bounded "${RXE_BENCH_WAIT:-2900}" modprobe rxe_bench $RXE_BENCH_ARGS
	rc=$?
	[ "${RXE_PERF:-0}" != 1 ] || perf_stop
	since 5 | grep 'rxe_bench: ' | sed 's/^\[[ 0-9.]*\] //' > /tmp/bench
	done_line=$(grep -m1 'rxe_bench: done' /tmp/bench | sed 's/.*rxe_bench: //')
	samples=$(grep -c 'rxe_bench: sample ' /tmp/bench)
	case "$rc:$done_line" in
	"0:done, 0 errors") result rxebench "ok $samples samples in $(($(date +%s) - t0))s" ;;
	124:*) result rxebench "FAILED modprobe rxe_bench still running after its time ($samples samples)"
	       return ;;
	*) result rxebench "FAILED modprobe rxe_bench exit $rc, '$done_line', $samples samples" ;;
	esac
	for m in rxe_bench kmad_ib kmad; do
		loaded "$m" || continue
		bounded 120 rmmod "$m" || say "FAILED: rmmod $m"
	done
}
# RXE_PERF=1 (interop.sh): rxe_bench under perf record, system-wide,
# kernel call chains, CLOCK_MONOTONIC timestamps (the clock of rxe_bench's
# "prof: window" lines); then, for every window, a flat profile by
# symbol, its folded call chains and a profile by task and module,
# between "kmad-interop: perf: window ..." and "kmad-interop: perf: end".
perf_start() {
	echo 0 > /proc/sys/kernel/kptr_restrict
	echo -1 > /proc/sys/kernel/perf_event_paranoid
	echo 32 > /proc/sys/kernel/perf_event_max_stack
	say "perf: clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" \
		"(available: $(cat /sys/devices/system/clocksource/clocksource0/available_clocksource))"
	for f in /sys/devices/system/cpu/vulnerabilities/*; do
		say "perf: vulnerability ${f##*/}: $(cat "$f")"
	done
	say "perf: cmdline $(cat /proc/cmdline)"
	HOME=/tmp perf record -a -g -k mono -F "$RXE_PERF_FREQ" -e cpu-clock \
		-N -B -o /tmp/perf.data > /tmp/perf.rec 2>&1 &
	perf_pid=$!
	sleep 2
}
perf_stop() {
	kill -INT "$perf_pid"
	wait "$perf_pid"
	sed 's/^/kmad-perf: record: /' /tmp/perf.rec
	say "perf: data $(ls -l /tmp/perf.data)"
	since 5 | sed -n 's/.*rxe_bench: prof: window //p' > /tmp/windows
	while read -r what stack a b; do
		say "perf: window $what $stack $a $b"
		HOME=/tmp perf report -i /tmp/perf.data --stdio --no-children \
			--time "$a,$b" --sort sym -g none --percent-limit 0.5 \
			2>/dev/null | grep -v '^$'
		HOME=/tmp perf report -i /tmp/perf.data --stdio --no-children \
			--time "$a,$b" --sort sym -g folded,0.5,caller \
			--percent-limit 0.8 2>/dev/null | grep -v '^$\|^#'
		HOME=/tmp perf report -i /tmp/perf.data --stdio --no-children \
			--time "$a,$b" --sort comm,dso -g none \
			--percent-limit 0.5 2>/dev/null | grep -v '^$\|^#'
	done < /tmp/windows
	say "perf: end"
}
if [ "${RXE_BENCH:-0}" = 1 ]; then
	rxe_bench
	finish
fi

# ---- Baseline, without kmad: the peers work with each other and ib_mad.

expect baseline/umad-to-ibmad_peer
if ! modprobe ibmad_peer dev=rxe1; then
	result baseline/umad-to-ibmad_peer "FAILED modprobe ibmad_peer"
elif run umad_peer query --ca rxe0 --dgid "$G1" --class 0x09 --mult 7 --count 16; then
	result baseline/umad-to-ibmad_peer "ok $(detail), ib_mad agent on rxe1 answered"
else
	result baseline/umad-to-ibmad_peer "FAILED $(detail)"
fi

expect baseline/umad-to-ib_mad-unsupported
if run umad_peer query --ca rxe0 --dgid "$G1" --class 0x0f --count 4 --expect-status 0x0c; then
	result baseline/umad-to-ib_mad-unsupported "ok $(detail), ib_mad on rxe1 answered for an unregistered class"
else
	result baseline/umad-to-ib_mad-unsupported "FAILED $(detail)"
fi

expect baseline/umad-to-umad
umad_peer serve --ca rxe1 --class 0x0a --count 8 --timeout 30 > /tmp/serve 2>&1 &
spid=$!
if ! wait_for 10 grep -q 'serve: ready' /tmp/serve; then
	cat /tmp/serve
	result baseline/umad-to-umad "FAILED umad_peer serve did not register"
elif run umad_peer query --ca rxe0 --dgid "$G1" --class 0x0a --mult 13 --count 8; then
	result baseline/umad-to-umad "ok $(detail), umad_peer serve on rxe1 answered"
else
	result baseline/umad-to-umad "FAILED $(detail)"
fi
wait $spid
sed 's/^/    /' /tmp/serve

expect baseline/umad-to-rxe0-qp1
if run umad_peer query --ca rxe1 --dgid "$G0" --class 0x0b --count 2 --expect-status 0x0c; then
	result baseline/umad-to-rxe0-qp1 "ok $(detail), rxe0's QP1 reachable, class 0x0b unclaimed"
else
	result baseline/umad-to-rxe0-qp1 "FAILED $(detail)"
fi

# ---- kmad: kmad_ib over the same devices, kmad_interop's cases.

# The exchanges that need kmad: announced always, SKIPPED when the tree
# has no module for them.
KMAD_STEPS="kmad/load kmad/rename kmad/umad-refused kmad_interop rdma-to-kmad remove/rmmod-interop-first remove/rdma-link-delete remove/rmmod-kmad_ib-first"
for s in $KMAD_STEPS; do
	expect "$s"
done
skip_all() {	# skip_all <reason>: the kmad steps not reported yet
	for s in $KMAD_STEPS; do
		grep -q "^$s\$" /tmp/done 2>/dev/null || result "$s" "SKIPPED $1"
	done
}
fail_rest() {	# fail_rest <reason>: the kmad steps not reported yet
	for s in $KMAD_STEPS; do
		grep -q "^$s\$" /tmp/done 2>/dev/null || result "$s" "FAILED $1"
	done
}
report() {	# report <step> <text>: a result, remembered
	result "$1" "$2"
	echo "$1" >> /tmp/done
}

# kmad_interop's result lines since mark <n>, as interop lines named
# <prefix>/<case>.  A case FAILED in kmad_interop is a FAILED exchange.
interop_lines() {
	since "$1" |
		sed -n 's/.*kmad_interop: \([A-Za-z0-9_/-]*\): \(ok\|FAILED\|SKIPPED\)\(.*\)/\1 \2\3/p' |
		while read -r c verdict rest; do
			result "$2/$c" "$verdict $rest"
		done
}
# kmad_interop's own summary since mark <n>: ok when it says "0 failed".
interop_done() {	# interop_done <mark> <step>
	interop_lines "$1" "$2"
	done_line=$(since "$1" | grep -m1 'kmad_interop: done' | sed 's/.*kmad_interop: done *//')
	case "$done_line" in
	"") report "$2" "FAILED no 'kmad_interop: done' line" ;;
	*" 0 failed"*) report "$2" "ok $done_line" ;;
	*) report "$2" "FAILED $done_line" ;;
	esac
}
# remove_exit <armed mark> <unload mark> <step>: if kmad_interop armed its
# remove case after the first mark, its unload after the second must
# have printed the count line ("remove-exit: ok|FAILED ...").
remove_exit() {
	since "$1" | grep -q 'kmad_interop: remove: ok' || return 0
	since_has "$2" 'kmad_interop: remove-exit: ' ||
		result "$3/remove-exit" "FAILED kmad_interop armed its remove case but printed no remove-exit line at unload"
}
# rmmod_all <step> <module...>: unload in that order, each bounded.
rmmod_all() {
	step=$1
	shift
	order=$(echo "$*" | sed 's/ /, /g')
	for m in "$@"; do
		loaded "$m" || continue
		bounded 60 rmmod "$m"
		case $? in
		0) ;;
		124) report "$step" "FAILED rmmod $m hangs (order $order)"
		     return 1 ;;
		*) report "$step" "FAILED rmmod $m (order $order)"
		   return 0 ;;
		esac
	done
	if loaded kmad; then
		report "$step" "FAILED kmad still loaded after rmmod $order"
	else
		report "$step" "ok rmmod $order"
	fi
}

# Returns 1 after a hang: nothing more can be unloaded then.
kmad_steps() {
	if ! have kmad || ! have kmad_ib; then
		skip_all "(no kmad_ib.ko in the tree: issue 10 item 3 not merged)"
		return 0
	fi
	if ! modprobe kmad_ib; then
		report kmad/load "FAILED modprobe kmad_ib"
		skip_all "(kmad_ib did not load)"
		return 0
	fi
	# kmad_ib makes a kmad device of the same name per ib_core device.
	if ! wait_for 10 kmad_dev rxe0 || ! wait_for 10 kmad_dev rxe1; then
		report kmad/load "FAILED no kmad devices rxe0 and rxe1 in /sys/kernel/debug/kmad/ (there: $(echo /sys/kernel/debug/kmad/*))"
		skip_all "(kmad_ib made no kmad devices)"
		for m in kmad_ib kmad; do
			bounded 60 rmmod "$m" || say "FAILED: rmmod $m"
		done
		return 0
	fi
	report kmad/load "ok kmad and kmad_ib loaded, kmad devices rxe0 and rxe1"
	# ib_core renames a device (rdma-core's udev rule does, at boot):
	# its kmad device keeps the name it was added with, and kmad_ib says
	# so; renamed back, the rest of the run sees rxe0 again.
	mark 6
	if ! bounded 30 rdma dev set rxe0 name rxer; then
		report kmad/rename "FAILED rdma dev set rxe0 name rxer"
	else
		if wait_for 10 since_has 6 'rxer: renamed by ib_core; its kmad device keeps the name rxe0 ' &&
		   kmad_dev rxe0 && ! kmad_dev rxer; then
			verdict="ok rxe0 renamed rxer: kmad device rxe0 kept, kmad_ib warned"
		else
			verdict="FAILED no warning, or kmad devices: $(echo /sys/kernel/debug/kmad/*)"
		fi
		if bounded 30 rdma dev set rxer name rxe0; then
			report kmad/rename "$verdict"
		else
			report kmad/rename "FAILED rdma dev set rxer name rxe0 (after: $verdict)"
		fi
	fi
	# kmad_umad's classes (infiniband, infiniband_mad) are ib_core's and
	# ib_umad's here: it refuses to load, and says why.
	# (busybox's modprobe may exit 0 when the init failed: what counts is
	# whether the module is loaded, and what the log says.)
	mark 7
	if ! have kmad_umad; then
		report kmad/umad-refused "SKIPPED (no kmad_umad.ko in the tree)"
	else
		bounded 30 modprobe kmad_umad
		if [ $? = 124 ]; then
			report kmad/umad-refused "FAILED modprobe kmad_umad hangs"
			fail_rest "(after the hang above)"
			return 1
		fi
		if loaded kmad_umad; then
			report kmad/umad-refused "FAILED kmad_umad loaded beside ib_core"
			bounded 30 rmmod kmad_umad || say "FAILED: rmmod kmad_umad"
		elif since_has 7 'cannot create duplicate\|symbol_get'; then
			report kmad/umad-refused "FAILED kmad_umad did not see ib_core: $(since 7 | grep -m1 'cannot create duplicate\|symbol_get')"
		elif since_has 7 "kmad_umad: the kernel's ib_core is present"; then
			report kmad/umad-refused "ok modprobe kmad_umad refused: ib_core is present"
		else
			report kmad/umad-refused "FAILED modprobe kmad_umad failed without saying why"
		fi
	fi
	if ! have kmad_interop; then
		skip_all "(no tests/interop/kmad_interop.c in the tree)"
		return 0
	fi

	# kmad's requests to rdma-core: umad_peer answers class 0x0a on rxe1.
	umad_peer serve --ca rxe1 --class 0x0a --timeout 300 > /tmp/serve 2>&1 &
	spid=$!
	wait_for 10 grep -q 'serve: ready' /tmp/serve || say "umad_peer serve not ready"
	# kmad_interop runs its cases in its init: modprobe returns after
	# them (each case gives up after 30 s).
	mark 1
	say "modprobe kmad_interop $INTEROP_ARGS"
	# shellcheck disable=SC2086 # the arguments are words on purpose
	bounded 280 modprobe kmad_interop $INTEROP_ARGS
	case $? in
	0) interop_done 1 kmad_interop ;;
	124) interop_lines 1 kmad_interop
	     report kmad_interop "FAILED modprobe kmad_interop hangs"
	     fail_rest "(after a hang)"
	     return 1 ;;
	*) interop_lines 1 kmad_interop
	   report kmad_interop "FAILED modprobe kmad_interop" ;;
	esac

	# rdma-core's requests to kmad: Gets from rxe1 to rxe0's QP1 for
	# class 0x0b, which only a kmad agent on rxe0 answers (kmad_interop
	# keeps one while loaded), through kmad_ib's bridge to ib_mad.
	# ib_mad's own "unsupported" answer means no kmad agent got the
	# class there: the kmad side does not do it (yet), SKIPPED, not
	# passed.
	if ! loaded kmad_interop; then
		report rdma-to-kmad "SKIPPED kmad_interop is not loaded"
	else
		run umad_peer query --ca rxe1 --dgid "$G0" --class 0x0b --mult 17 --count 16
		case $? in
		0) report rdma-to-kmad "ok $(detail), kmad agent on rxe0 answered through the bridge, from ib_mad's QP1" ;;
		3) report rdma-to-kmad "SKIPPED ib_mad on rxe0 answered class 0x0b itself: no kmad agent registered it through kmad_ib's bridge" ;;
		*) report rdma-to-kmad "FAILED $(detail)" ;;
		esac
	fi
	kill "$spid" 2>/dev/null
	wait "$spid"
	sed 's/^/    /' /tmp/serve

	# Removal, first order: kmad_interop (its "remove" case left sends
	# outstanding; it counts their callbacks at unload), kmad_ib, kmad.
	mark 2
	rmmod_all remove/rmmod-interop-first kmad_interop kmad_ib kmad || {
		fail_rest "(after a hang)"
		return 1
	}
	interop_lines 2 remove/rmmod-interop-first
	remove_exit 1 2 remove/rmmod-interop-first

	# Device removal under load: kmad_ib and kmad_interop again, only
	# its remove case (sends left outstanding on rxe0 and rxe1; hold=1
	# when it has the parameter), then rdma link delete rxe1, then the
	# other order: kmad_ib, kmad_interop, kmad.
	args="cases=remove"
	for a in $INTEROP_ARGS; do
		case "$a" in cases=*) ;; *) args="$args $a" ;; esac
	done
	has_param hold && args="$args hold=1"
	mark 3
	say "modprobe kmad_interop $args"
	# shellcheck disable=SC2086
	if ! modprobe kmad_ib || ! wait_for 10 kmad_dev rxe1 ||
	   ! bounded 120 modprobe kmad_interop $args; then
		report remove/rdma-link-delete "FAILED loading kmad_ib and kmad_interop $args again"
	else
		interop_lines 3 remove/rdma-link-delete
		bounded 60 rdma link delete rxe1
		case $? in
		0) if wait_for 10 sh -c '! [ -d /sys/kernel/debug/kmad/rxe1 ]'; then
			report remove/rdma-link-delete "ok rxe1 deleted under kmad_interop $args, its kmad device gone"
		   else
			report remove/rdma-link-delete "FAILED kmad device rxe1 still there 10s after rdma link delete"
		   fi ;;
		124) report remove/rdma-link-delete "FAILED rdma link delete rxe1 hangs"
		     fail_rest "(after a hang)"
		     return 1 ;;
		*) report remove/rdma-link-delete "FAILED rdma link delete rxe1" ;;
		esac
	fi
	mark 4
	rmmod_all remove/rmmod-kmad_ib-first kmad_ib kmad_interop kmad || return 1
	interop_lines 4 remove/rmmod-kmad_ib-first
	remove_exit 3 4 remove/rmmod-kmad_ib-first
	return 0
}
if ! kmad_steps; then
	say "FAILED: a hang; not unloading ibmad_peer"
	finish
fi

# ibmad_peer's count: it answered every Get the baseline sent it.
expect baseline/ibmad_peer-unload
mark 9
if ! rmmod ibmad_peer; then
	result baseline/ibmad_peer-unload "FAILED rmmod ibmad_peer"
else
	line=$(since 9 | grep -m1 'ibmad_peer: answered' | sed 's/.*ibmad_peer: //')
	n=$(echo "$line" | sed -n 's/^answered \([0-9]*\) Gets, 0 errors$/\1/p')
	# 16 from the baseline, more if kmad_interop asked it too.
	if [ -n "$n" ] && [ "$n" -ge 16 ]; then
		result baseline/ibmad_peer-unload "ok $line"
	else
		result baseline/ibmad_peer-unload "FAILED '$line', want 'answered N Gets, 0 errors' with N >= 16"
	fi
fi
finish
