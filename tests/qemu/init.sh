#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of kmad's test initramfs.  Loads the modules listed in /kmad/load
# (one per line, in order), which run their KUnit suites as they load, then
# unloads them in reverse order, asks kmemleak for a scan and powers off.
# Every line meant for the host goes through /dev/kmsg so it lands in the
# console log in order with the kernel's own messages.

/bin/busybox --install -s /bin
mount -t devtmpfs devtmpfs /dev
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp

say() { echo "kmad-harness: $*" > /dev/kmsg; }

say "begin"
# kmad_faults fails allocations of its own task on purpose (fail-nth):
# let failslab fail sleeping allocations too, without a stack dump each.
# Nothing fails unless a task asks (probability stays 0).
if [ -d /sys/kernel/debug/failslab ]; then
	echo N > /sys/kernel/debug/failslab/ignore-gfp-wait
	echo 0 > /sys/kernel/debug/failslab/verbose
fi
say "cpus: $(grep -c ^processor /proc/cpuinfo)"
# Top-level KTAP header; each module's suites follow as numbered subtests.
echo "KTAP version 1" > /dev/kmsg
loaded=""
while read -r mod args; do
	[ -n "$mod" ] || continue
	if insmod "/kmad/$mod.ko" $args; then
		loaded="$mod $loaded"
	else
		say "FAILED to load $mod"
	fi
done < /kmad/load
say "tests done"

for mod in $loaded; do
	rmmod "$mod" || say "FAILED to unload $mod"
done
say "modules unloaded"

if [ -e /sys/kernel/debug/kmemleak ]; then
	# kmemleak reports only objects older than 5 s, and only ones it
	# found unreferenced and unchanged in two scans: wait until whatever
	# the last suite allocated is that old, then scan twice (one scan
	# was tried: it misses a deliberate leak).  Boot-time reports (ACPI
	# caches allocated from start_kernel) are told apart by the host.
	sleep 5
	echo scan > /sys/kernel/debug/kmemleak
	echo scan > /sys/kernel/debug/kmemleak
	leaks=$(cat /sys/kernel/debug/kmemleak)
	if [ -n "$leaks" ]; then
		say "kmemleak report follows"
		# Through the kernel log, line by line, so the report keeps
		# its place among the kernel's own messages.
		echo "$leaks" | while IFS= read -r line; do
			echo "$line" > /dev/kmsg
		done
	fi
fi
say "end"
sync
reboot -f
