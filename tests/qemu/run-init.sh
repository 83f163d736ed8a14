#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of `make run`'s initramfs (tests/qemu/run.sh).  Loads kmad_sim and
# kmad_discover with modprobe (modules.dep comes from the host's depmod),
# waits for kmad_discover's "done" line, prints kmad's debugfs statistics,
# unloads the modules and powers off.  /kmad/run.conf sets KVER, SIM_ARGS,
# DISCOVER_ARGS and WAIT.
#
# No `set -e`: if /init exits the kernel panics and nothing more is
# printed, so every step checks its own result and the script always ends
# with finish(), which powers off.
# shellcheck shell=dash

# shellcheck source=tests/qemu/guest-lib.sh
. /kmad/guest-lib.sh
guest_mounts

# shellcheck source=/dev/null
. /kmad/run.conf

say() { echo "kmad-run: $*"; }

say "kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs"
if [ "$(uname -r)" != "$KVER" ] || [ ! -f "/lib/modules/$(uname -r)/modules.dep" ]; then
	say "FAILED: modules were built for $KVER, the kernel is $(uname -r)"
	finish
fi
if [ ! -d /sys/kernel/debug/kmad ] && [ ! -d /sys/kernel/debug ]; then
	say "no debugfs"
fi

# From here on every kernel message goes to the console as it is printed.
echo 7 > /proc/sys/kernel/printk

say "modprobe kmad_sim $SIM_ARGS"
# shellcheck disable=SC2086 # the arguments are words on purpose
if ! modprobe kmad_sim $SIM_ARGS; then
	say "FAILED: modprobe kmad_sim"
	finish
fi
say "modprobe kmad_discover $DISCOVER_ARGS"
# shellcheck disable=SC2086
if ! modprobe kmad_discover $DISCOVER_ARGS; then
	say "FAILED: modprobe kmad_discover"
	finish
fi

t=0
while ! dmesg | grep -q 'kmad_discover: done:'; do
	if [ "$t" -ge "$WAIT" ]; then
		say "FAILED: kmad_discover did not finish within ${WAIT}s"
		break
	fi
	sleep 1
	t=$((t + 1))
done
echo 4 > /proc/sys/kernel/printk

say "loaded modules:"
cat /proc/modules
for f in /sys/kernel/debug/kmad/*/port*/stats; do
	[ -e "$f" ] || continue
	say "$f"
	cat "$f"
done

echo 7 > /proc/sys/kernel/printk
for m in kmad_discover kmad_sim kmad; do
	rmmod "$m" || say "FAILED: rmmod $m"
done
if grep -q '^kmad' /proc/modules; then
	say "FAILED: still loaded: $(grep '^kmad' /proc/modules | cut -d' ' -f1 | tr '\n' ' ')"
else
	say "modules unloaded"
fi
finish
