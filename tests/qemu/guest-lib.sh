# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# Shell functions shared by the guests' /init scripts (tests/qemu/run-init.sh,
# tests/opensm/guest.sh, tests/interop/guest.sh, tests/fakeib/guest.sh).
# The harness packs it as /kmad/guest-lib.sh in the initramfs
# (tests/qemu/run.sh, tests/opensm/opensm.sh, tests/interop/interop.sh,
# tests/fakeib/fakeib.sh); /init sources it
# first:
#
#   . /kmad/guest-lib.sh
#   guest_mounts

# guest_mounts
#
# Installs busybox's applets in /bin and mounts devtmpfs on /dev, proc,
# sysfs, debugfs and a tmpfs on /tmp.
guest_mounts() {
	/bin/busybox --install -s /bin
	mount -t devtmpfs devtmpfs /dev
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t debugfs debugfs /sys/kernel/debug
	mount -t tmpfs tmpfs /tmp
}

# finish
#
# The end of every run: says "end" (with the caller's say) and powers off.
# If /init exits the kernel panics, so each guest ends here.  A guest
# with more to do at its end defines its own finish after sourcing this.
finish() {
	say "end"
	sync
	poweroff -f
}

# kmemleak_scan
#
# On a kernel with kmemleak (the debug kernel; the stock one has none), as
# make check's /init (tests/qemu/init.sh): wait until what the last step
# allocated is 5 s old, scan twice, and print the report through the
# kernel log, where the host's splat check finds it.
kmemleak_scan() {
	[ -e /sys/kernel/debug/kmemleak ] || return 0
	say "kmemleak scan"
	sleep 5
	echo scan > /sys/kernel/debug/kmemleak
	echo scan > /sys/kernel/debug/kmemleak
	leaks=$(cat /sys/kernel/debug/kmemleak)
	[ -n "$leaks" ] || return 0
	say "kmemleak report follows"
	echo "$leaks" | while IFS= read -r line; do
		echo "$line" > /dev/kmsg
	done
}
