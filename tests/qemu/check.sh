#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: build the cached debug (or kcsan) kernel, build kmad and its
# KUnit modules against it, run the host-side ABI check, boot QEMU with the
# modules in an initramfs and judge the console log.
#
# Environment:
#   SUITE=<glob>            run only the KUnit suites matching the glob
#   KMAD_EXTRA_TESTS=<dir>  also build and run the KUnit modules in <dir>
#   KMAD_TEST_ARGS='<module> <param>=<value>...[; <module> ...]'
#                           module parameters for test modules, e.g.
#                           'kmad_race_test seed=0x1234 post_ms=10000'
#   KMAD_TIMEOUT=<seconds>  hard limit for the guest (default 900)
#   KMAD_CACHE=<dir>        kernel cache (default /var/cache/kmad)
#   KERNEL=debug|kcsan      the guest kernel: debug (default: lockdep, KASAN,
#                           UBSAN, kmemleak...) or kcsan (the same with KCSAN,
#                           the data race detector, in place of KASAN, plus
#                           RCU list checks; tests/qemu/config/kcsan.config)
#   KMAD_KCSAN_SKIP_WATCH=<n> KERNEL=kcsan: KCSAN watches one access in n
#                           (default 500; the kernel's default is 4000)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/qemu
out=$root/build/check
timeout=${KMAD_TIMEOUT:-900}
suite=${SUITE:-*}
[ -n "$suite" ] || suite='*'

"$here/deps.sh" check
kernel=${KERNEL:-debug}
case "$kernel" in
debug|kcsan) ;;
*) echo "check.sh: KERNEL=$kernel: debug or kcsan expected" >&2; exit 2 ;;
esac
kdir=$("$here/kernel.sh" "$kernel" | tail -n 1)
# KCSAN watches one access in kcsan.skip_watch (4000 by default, made
# random): a denser watch finds more races for some more time.
extra_append=
[ "$kernel" != kcsan ] || extra_append=" kcsan.skip_watch=${KMAD_KCSAN_SKIP_WATCH:-500}"
ksrc=$(readlink -f "$kdir/source")

echo ">> building kmad against $kdir"
make -s -C "$root" KDIR="$kdir" modules

testdirs=("$root/tests/kunit")
if [ -n "${KMAD_EXTRA_TESTS:-}" ]; then
	extra=$(cd "$KMAD_EXTRA_TESTS" && pwd)
	echo ">> building extra KUnit modules in $extra"
	make -s -C "$kdir" M="$extra" KCFLAGS="-I$root/include" \
		KBUILD_EXTRA_SYMBOLS="$root/Module.symvers" modules
	testdirs+=("$extra")
fi

rm -rf "$out"
mkdir -p "$out"

host_results=()
if [ "$suite" = '*' ] || [[ abi == $suite ]]; then
	echo ">> host ABI check against rdma-core's headers"
	gcc -std=gnu11 -Wall -Wextra -Werror -I"$root/include" \
		-o "$out/abi_check" "$root/tests/abi/abi_check.c"
	# A crash part way would leave only PASS lines: the exit status and
	# the clean summary count too.
	abi_rc=0
	"$out/abi_check" > "$out/abi.txt" || abi_rc=$?
	if [ "$abi_rc" != 0 ] || ! grep -q '^abi: [0-9]* passed, 0 failed$' "$out/abi.txt"; then
		echo "FAIL abi_check_exit (exit $abi_rc, no clean summary)" >> "$out/abi.txt"
	fi
	host_results+=(--host-results "$out/abi.txt")
fi

# Exit 3: no KUnit suite matches.  SUITE=abi (a glob that matches the host
# check alone): report the host check, no guest.  Any other failure of the
# plan (a module without a suite, none built) stops here, as it says.
prc=0
python3 "$here/harness.py" plan --suite "$suite" --out "$out" \
	"${testdirs[@]}" || prc=$?
if [ "$prc" = 3 ] && [ ${#host_results[@]} -gt 0 ]; then
	echo ">> only the host ABI check matches SUITE=$suite"
	exec python3 "$here/harness.py" report --host-only \
		--kernel-src "$ksrc" --out "$out" "${host_results[@]}"
fi
[ "$prc" = 0 ] || exit "$prc"

# The core modules load first, in dependency order, then the test modules.
# kmad_discover only provides the kmad_discover suite's library here
# (run=0): it does not discover the default fabric by itself.
core=("$root/drivers/kmad/kmad.ko" "$root/drivers/kmad/sim/kmad_sim.ko"
      "$root/samples/kmad_example/kmad_example.ko"
      "$root/drivers/kmad/discover/kmad_discover.ko")
{
	for ko in "${core[@]}"; do
		case "$ko" in
		*/kmad_discover.ko) echo "kmad_discover run=0" ;;
		*) basename "$ko" .ko ;;
		esac
	done
	cat "$out/load"
} > "$out/load.all"
mapfile -t tests < "$out/modules"
# Append KMAD_TEST_ARGS' parameters to their modules' lines of the load list.
if [ -n "${KMAD_TEST_ARGS:-}" ]; then
	IFS=';' read -ra specs <<< "$KMAD_TEST_ARGS"
	for spec in "${specs[@]}"; do
		read -r mod args <<< "$spec"
		[ -n "$mod" ] || continue
		grep -qx "$mod" "$out/load.all" || {
			echo "KMAD_TEST_ARGS: module $mod is not loaded (SUITE=$suite)" >&2
			exit 1
		}
		sed -i "s|^$mod\$|$mod $args|" "$out/load.all"
		echo ">> $mod $args"
	done
fi
"$here/initramfs.sh" "$out/initramfs.cpio.gz" "$out/load.all" "${core[@]}" "${tests[@]}"

echo ">> booting $kdir/arch/x86/boot/bzImage in QEMU (TCG, 2 vCPUs, timeout ${timeout}s)"
echo ">> suites: $(tr '\n' ' ' < "$out/expected")"
# no5lvl: 4-level paging.  With -cpu max the guest has LA57, and the
# 6.1 kernel's identify_cpu() zeroes boot_cpu_data's capabilities for a
# moment before the alternatives are patched, so pgtable_l5_enabled()
# reads false there; an interrupt in that window sends KASAN to a "wild"
# shadow address (a KASAN report in handle_edge_irq during identify_cpu,
# before /init).  The other harnesses that boot the debug kernel
# (interop.sh, diags.sh, fakeib.sh) pass it too.
boot() {
	timeout --foreground -k 10 "$timeout" \
		qemu-system-x86_64 -machine q35 -cpu max -smp 2 -m 1G \
		-nodefaults -display none -serial stdio -no-reboot \
		-kernel "$kdir/arch/x86/boot/bzImage" \
		-initrd "$out/initramfs.cpio.gz" \
		-append "console=ttyS0 no5lvl panic=-1 oops=panic panic_on_warn=1 loglevel=7 kmemleak=on printk.devkmsg=on no_timer_check$extra_append" \
		> "$out/console.log" 2>&1
}
start=$SECONDS
rc=0
boot || rc=$?
# Should the guest still crash before /init runs (no kmad module exists
# yet: the early-boot KASAN report above was such a crash before
# no5lvl), boot once more, and say so; the failed log is kept.
if ! grep -q 'kmad-harness: begin' "$out/console.log"; then
	mv "$out/console.log" "$out/console-boot-failure.log"
	echo ">> guest crashed before /init ran (qemu exit $rc); log kept in $out/console-boot-failure.log; booting again once"
	rc=0
	boot || rc=$?
fi
echo ">> guest finished in $((SECONDS - start))s (qemu exit $rc), console log: $out/console.log"
[ "$rc" = 124 ] && echo "HARNESS: QEMU killed after ${timeout}s" >> "$out/console.log"

python3 "$here/harness.py" report --kernel-src "$ksrc" --out "$out" "${host_results[@]}"
