#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of `make opensm` (tests/opensm/opensm.sh).  Loads kmad_sim with the
# topology of /kmad/opensm.conf and kmad_umad, prints
# kmad_sim's ibsim netlist, then runs Debian's OpenSM twice on the same
# fabric and the same tools against each:
#
#   side kmad:  OpenSM on sim0 port 1 through kmad_umad and kmad_sim;
#               then a cable is cut and mended (kmad_sim's parameter
#               "link"); then OpenSM once more, with an M_Key and
#               a partition (run "mkey");
#   side ibsim: ibsim on the netlist, OpenSM and the tools with
#               libumad2sim.so preloaded (no kernel involved).
#
# Each tool run is printed between "=== cmd: <side> <command>" and
# "=== rc: <exit status>"; OpenSM's log between "=== osmlog: <side>" and
# "=== osmlog end".  The verdict is check.py's, on the host, over the
# console log.  No `set -e`: if /init exits the kernel panics, so the
# script always ends with finish(), which powers off.
# shellcheck shell=dash

# shellcheck source=tests/qemu/guest-lib.sh
. /kmad/guest-lib.sh
guest_mounts
mount -t tmpfs tmpfs /var
mkdir -p /var/log /var/cache/opensm /var/run /tmp/osm-kmad /tmp/osm-ibsim \
	/tmp/ibsim-run
export PATH=/sbin:/bin

# shellcheck source=/dev/null
. /kmad/opensm.conf

say() { echo "kmad-opensm: $*"; }
now() { cut -d' ' -f1 /proc/uptime; }
# run <side> <command...>: the command and its output between markers.
run() {
	local side=$1 rc
	shift
	echo "=== cmd: $side $*"
	"$@" 2>&1
	rc=$?
	echo "=== rc: $rc"
}
# wait_log <file> <pattern> <count> <seconds>: until <pattern> appears
# <count> times in <file>; 0 if it did, 1 after <seconds> or as soon as
# OpenSM ($osm_pid) has exited.
wait_log() {
	local i=0 n
	while :; do
		n=$(grep -c "$2" "$1" 2>/dev/null)
		[ "${n:-0}" -ge "$3" ] && break
		[ $i -ge $(($4 * 5)) ] && return 1
		kill -0 "$osm_pid" 2>/dev/null || return 1
		sleep 0.2
		i=$((i + 1))
	done
	return 0
}
# OpenSM's options on both sides: log level ERROR + INFO + VERBOSE (the
# sweep banners), flushed after each line (-d 2), a sweep every 2 s.
OSM_OPTS="-d 2 -D 0x07 -s 2"
# start_opensm <side> <port GUID> [options...]: OpenSM in the background,
# log in /tmp/osm-<side>.log; sets osm_pid and osm_t0.
start_opensm() {
	local side=$1 guid=$2
	shift 2
	mkdir -p "/tmp/osm-$side"
	rm -f "/tmp/osm-$side.log"
	osm_t0=$(now)
	say "$side: opensm -g $guid $OSM_OPTS $* started at ${osm_t0}s"
	# shellcheck disable=SC2086
	OSM_CACHE_DIR=/tmp/osm-$side OSM_TMP_DIR=/tmp/osm-$side \
		opensm -g "$guid" $OSM_OPTS "$@" -f "/tmp/osm-$side.log" \
		--dump_files_dir "/tmp/osm-$side" > "/tmp/osm-$side.out" 2>&1 &
	osm_pid=$!
}
# wait_subnet_up <side>: up to SUBNET_UP_S seconds for "SUBNET UP".
wait_subnet_up() {
	if wait_log "/tmp/osm-$1.log" 'SUBNET UP' 1 "$SUBNET_UP_S"; then
		say "$1: SUBNET UP seen at $(now)s (OpenSM started at ${osm_t0}s)"
	else
		say "$1: no SUBNET UP within ${SUBNET_UP_S}s"
		cat "/tmp/osm-$1.out"
	fi
}
stop_opensm() {
	kill "$osm_pid" 2>/dev/null
	wait "$osm_pid"
	echo "=== osmlog: $1"
	cat "/tmp/osm-$1.log"
	echo "=== osmlog end"
}
# LIDs of the fabric as OpenSM assigned them: from `ibnetdiscover -p`,
# "<CA|SW> <lid>" of each end of each link ("SW 6 1 0x... 4x QDR - CA 1 1
# 0x... ( ... )"), sorted and unique.
lids_of() {
	awk '{ print $1, $2; print $8, $9 }' "$1" | sort -u
}
# tools <side> <ca args>: the checks common to both sides.
tools() {
	local side=$1 ca=$2 a b
	# shellcheck disable=SC2086
	{
	run "$side" sminfo $ca
	run "$side" ibnetdiscover $ca
	run "$side" ibnetdiscover $ca -p
	ibnetdiscover $ca -p > "/tmp/ports-$side" 2>/dev/null
	sw_lids=$(lids_of "/tmp/ports-$side" | awk '$1 == "SW" { print $2 }')
	ca_lids=$(lids_of "/tmp/ports-$side" | awk '$1 == "CA" { print $2 }')
	for lid in $sw_lids; do
		run "$side" ibroute $ca "$lid"
	done
	for lid in $sw_lids; do
		run "$side" ibroute $ca -M "$lid"
	done
	# Every cabled port, switch and HCA: Active?
	for lid in $sw_lids; do
		# shellcheck disable=SC2013 # port numbers, one word each
		for p in $(awk -v l="$lid" '$1 == "SW" && $2 == l { print $3 }
			$8 == "SW" && $9 == l { print $10 }' "/tmp/ports-$side" |
			sort -un); do
			run "$side" smpquery $ca portinfo "$lid" "$p"
		done
	done
	for lid in $ca_lids; do
		run "$side" smpquery $ca portinfo "$lid"
	done
	for a in $ca_lids; do
		for b in $ca_lids; do
			[ "$a" = "$b" ] && continue
			run "$side" ibtracert $ca "$a" "$b"
		done
	done
	# NodeRecords one LID at a time (a single-MAD answer each), then the
	# whole table (several MADs: RMPP).
	for lid in $ca_lids $sw_lids; do
		run "$side" saquery $ca NR "$lid"
	done
	run "$side" saquery $ca NR
	# PathRecords between every pair of HCA ports (one record each).
	for a in $ca_lids; do
		for b in $ca_lids; do
			[ "$a" = "$b" ] && continue
			run "$side" saquery $ca PR --slid "$a" --dlid "$b"
		done
	done
	# LinkRecords (one answer MAD), PortInfoRecords (several: RMPP), the
	# SM's own records, the SA's ClassPortInfo and multicast groups.
	run "$side" saquery $ca LR
	run "$side" saquery $ca PIR
	run "$side" saquery $ca SMIR
	run "$side" saquery $ca -s
	run "$side" saquery $ca ClassPortInfo
	run "$side" saquery $ca -g
	# Every port's error counters (PMA), its SL table from PathRecords.
	run "$side" ibqueryerrors $ca
	}
}

say "kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs"
if [ "$(uname -r)" != "$KVER" ]; then
	say "FAILED: modules were built for $KVER, the kernel is $(uname -r)"
	finish
fi
# shellcheck disable=SC2086 # the arguments are words on purpose
if ! modprobe kmad_sim $SIM_ARGS || ! modprobe kmad_umad; then
	say "FAILED: modprobe kmad_sim $SIM_ARGS, kmad_umad"
	finish
fi
say "kmad_sim $SIM_ARGS"
net=/sys/kernel/debug/kmad_sim/sim/ibsim.net
if ! cp "$net" /tmp/ibsim.net; then
	say "FAILED: no $net"
	finish
fi
echo "=== netlist"
cat /tmp/ibsim.net
echo "=== netlist end"
sm_guid=$(ibstat -p sim0 | head -n 1)
say "sim0 port 1 GUID $sm_guid"

# Side kmad.
t0=$(now)
run kmad ibstat
# OpenSM's registrations one by one (a diagnostic: OpenSM's log only says
# that one failed).
/bin/umad_reg_probe 0
start_opensm kmad "$sm_guid"
wait_subnet_up kmad
dmesg | grep -i 'umad\|kmad' | tail -n 5
run kmad ibstat
ca="-C sim0 -P 1"
tools kmad "$ca"
# The cable of the last HCA's port 1: cut, swept, mended, swept back.
# Its leaf switch sends OpenSM Trap 128 each time (kmad_sim's traps=1).
sweeps() { grep -c 'INITIATING HEAVY SWEEP' /tmp/osm-kmad.log; }
traps() {
	grep -o 'Received Generic Notice type:1 num:128 (Link state change) Producer:2 (Switch) from LID:[0-9]*' \
		/tmp/osm-kmad.log | sed 's/.*from LID:/LID /' | tr '\n' ' '
}
n=$(sweeps)
up=$(grep -c 'SUBNET UP' /tmp/osm-kmad.log)
say "kmad: link $LINK cut at $(now)s"
echo "$LINK down" > /sys/module/kmad_sim/parameters/link
run kmad ibstat "$LAST_HCA" 1
if wait_log /tmp/osm-kmad.log 'INITIATING HEAVY SWEEP' $((n + 1)) "$LINK_S"; then
	say "kmad: OpenSM swept the cut at $(now)s"
else
	say "kmad: OpenSM did not sweep within ${LINK_S}s of the cut"
fi
# The heavy sweep that saw the cut must end before the mend.
wait_log /tmp/osm-kmad.log 'SUBNET UP' $((up + 1)) "$LINK_S"
say "kmad: Trap 128 after the cut: $(traps)"
n=$(sweeps)
up=$(grep -c 'SUBNET UP' /tmp/osm-kmad.log)
t1=$(now)
say "kmad: link $LINK mended at ${t1}s"
echo "$LINK up" > /sys/module/kmad_sim/parameters/link
i=0
while ! ibstat "$LAST_HCA" 1 | grep -q 'State: Active' && [ $i -lt $((LINK_S * 5)) ]; do
	sleep 0.2
	i=$((i + 1))
done
say "kmad: $LAST_HCA port 1 Active again at $(now)s (mended at ${t1}s)"
if wait_log /tmp/osm-kmad.log 'SUBNET UP' $((up + 1)) "$LINK_S"; then
	say "kmad: OpenSM swept the mend: SUBNET UP at $(now)s"
else
	say "kmad: no SUBNET UP within ${LINK_S}s of the mend"
fi
say "kmad: Trap 128 after the mend: $(traps)"
run kmad ibstat "$LAST_HCA" 1
stop_opensm kmad
say "kmad: side took from ${t0}s to $(now)s"

# M_Key: OpenSM again on the same fabric, from its configuration file,
# with an M_Key at ProtectBits 2 on every port.  The SMAs then answer
# only SMPs with that key: OpenSM's sweeps carry it, a tool's must give
# it (-y).  The first HCA other than the SM's, and the first switch.
# Partitions too: the default one for every port, and P1 (0x8001) for the
# SM's port only, so that a GMP it sends in P1 breaks another port's P_Key
# check (below).
MKEY=0x00000000c0ffee01
printf 'Default=0x7fff, ipoib : ALL=full ;\nP1=0x0001 : SELF=full ;\n' \
	> /tmp/osm-partitions.conf
printf 'm_key %s\nm_key_protection_level 2\nm_key_lease_period 0\npartition_config_file %s\n' \
	"$MKEY" /tmp/osm-partitions.conf > /tmp/osm-mkey.conf
mkey_ca=$(awk -v me="$(ibstat sim0 1 | awk '/Base lid:/ { print $3 }')" \
	'$1 == "CA" && $2 != me { print $2; exit }' "/tmp/ports-kmad")
mkey_sw=$(echo "$sw_lids" | head -n 1)
say "mkey: HCA LID $mkey_ca, switch LID $mkey_sw, M_Key $MKEY"
start_opensm mkey "$sm_guid" -F /tmp/osm-mkey.conf
wait_subnet_up mkey
# A light sweep or two (every 2 s), all of whose SMPs need the key.
sleep 5
# shellcheck disable=SC2086
{
run mkey smpquery $ca portinfo "$mkey_ca"
run mkey smpquery $ca -y "$MKEY" portinfo "$mkey_ca"
run mkey smpquery $ca nodeinfo "$mkey_sw"
run mkey smpquery $ca -y "$MKEY" nodeinfo "$mkey_sw"
run mkey smpquery $ca -y 0x99 portinfo "$mkey_ca"
# sysfs (ibstat reads it) asks each port's SMA as a driver asks its
# firmware, without the M_Key check: no EIO, no violation, no trap.
run mkey ibstat
run mkey smpquery $ca -y "$MKEY" portinfo "$mkey_ca"
}
# Trap 257 (Bad P_Key): a GMP from the SM's port in P1, at its entry of
# 0x8001, to the HCA, which has no such key; unanswered, dropped, trapped.
pidx=
for f in /sys/class/infiniband/sim0/ports/1/pkeys/*; do
	[ "$(cat "$f")" = 0x8001 ] && pidx=${f##*/}
done
say "pkey: sim0 port 1 LID $(ibstat sim0 1 | awk '/Base lid:/ { print $3 }'), 0x8001 at index ${pidx:-none}"
[ -n "$pidx" ] && run mkey umad_peer query --ca sim0 --port 1 \
	--dlid "$mkey_ca" --count 1 --pkey-index "$pidx" --timeout-ms 500 \
	--retries 0
# The SMAs' Trap 256 (Bad M_Key) for each refused SMP, and the HCA's Trap
# 257, in OpenSM's log.
sleep 1
stop_opensm mkey

# Side ibsim: the same fabric from the netlist, in user space.
t0=$(now)
cd /tmp/ibsim-run || finish
ibsim -s -n /tmp/ibsim.net > /tmp/ibsim.out 2>&1 &
ibsim_pid=$!
sleep 1
export LD_PRELOAD=$UMAD2SIM
start_opensm ibsim "$sm_guid"
wait_subnet_up ibsim
tools ibsim ""
stop_opensm ibsim
unset LD_PRELOAD
kill "$ibsim_pid"
wait "$ibsim_pid"
echo "=== ibsim output"
cat /tmp/ibsim.out
echo "=== ibsim output end"
cd / || finish
say "ibsim: side took from ${t0}s to $(now)s"

echo 7 > /proc/sys/kernel/printk
for m in kmad_umad kmad_sim kmad; do
	rmmod "$m" || say "FAILED: rmmod $m"
done
if grep -q '^kmad' /proc/modules; then
	say "FAILED: still loaded: $(grep '^kmad' /proc/modules | cut -d' ' -f1 | tr '\n' ' ')"
else
	say "modules unloaded"
fi
finish
