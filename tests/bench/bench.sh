#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: kmad's benchmarks in a non-debug guest kernel.
#
#   1. install what is missing (tests/qemu/deps.sh check);
#   2. build (or reuse) the bench kernel: tests/qemu/kernel.sh bench, i.e.
#      base.config + bench.config (make check's guest without KASAN,
#      lockdep and the other debug options), cached like the debug kernel;
#   3. build kmad, kmad_sim and kmad_bench against it in a copy of the tree
#      (build/bench/src), leaving make check's objects alone;
#   4. boot it twice in QEMU (TCG, multi-threaded): with 1 vCPU for the
#      round-trip benchmark, with 2 vCPUs for all of them;
#   5. the rxe part, tests/bench/rxe/rxe.sh: Debian's stock kernel with
#      make interop's rxe0/rxe1 pair, kmad against the kernel's ib_mad on
#      the same devices, in one boot (RXE=0 leaves it out);
#   6. tests/bench/report.py prints the tables ("kmad vs ib_mad" first)
#      and writes the JSON.
#
# Environment (the Makefile passes QUICK):
#   QUICK=1                 smaller sizes, shorter runs (CI)
#   REPEATS=<n>             repeats per measurement (default 5; the rxe
#                           part does at most 3 with QUICK=1)
#   RXE=0                   without the rxe part
#   KMAD_BENCH_TIMEOUT=<s>  hard limit per guest (default 3600, less than
#                           7200: kmad_bench's far deadlines are 2 hours off)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/qemu
out=$root/build/bench
quick=${QUICK:-0}
[ "$quick" = 1 ] || quick=0
repeats=${REPEATS:-5}
timeout=${KMAD_BENCH_TIMEOUT:-3600}
start_all=$SECONDS

[[ $repeats =~ ^[0-9]+$ ]] && [ "$repeats" -ge 1 ] ||
	{ echo "bench.sh: REPEATS=$repeats: a positive number expected" >&2; exit 2; }
[[ $timeout =~ ^[0-9]+$ ]] && [ "$timeout" -ge 1 ] && [ "$timeout" -lt 7200 ] ||
	{ echo "bench.sh: KMAD_BENCH_TIMEOUT=$timeout: 1 to 7199 s expected" >&2; exit 2; }

"$here/deps.sh" check run
kdir=$("$here/kernel.sh" bench | tail -n 1)

mkdir -p "$out"
src=$out/src
"$here/copy-tree.sh" "$root" "$src"
echo ">> building kmad, kmad_sim and kmad_bench against $kdir"
make -s -C "$kdir" M="$src" -j"$(nproc)" \
	CONFIG_KMAD=m CONFIG_KMAD_SIM=m CONFIG_KMAD_BENCH=m modules
kos=("$src/drivers/kmad/kmad.ko" "$src/drivers/kmad/sim/kmad_sim.ko"
     "$src/tests/bench/kmad_bench.ko")

boot() {
	local cpus=$1 run=$2 log=$out/console-${1}cpu.log
	printf '%s\n' kmad "kmad_sim topology=none" \
		"kmad_bench run=$run quick=$quick repeats=$repeats" > "$out/load"
	"$here/initramfs.sh" "$out/initramfs.cpio.gz" "$out/load" "${kos[@]}"
	echo ">> guest with $cpus vCPU(s): kmad_bench run=$run quick=$quick repeats=$repeats"
	local t0=$SECONDS rc=0
	# no_timer_check: the kernel's boot-time test of the timer interrupt
	# wants 5 ticks within 40M TSC cycles (10-40 ms); when a loaded host
	# does not run QEMU's timers in that window, they do not come and the
	# guest panics ("IO-APIC + timer doesn't work!").  A timer that really
	# did not work would hang the guest, and the timeout catches that.
	timeout --foreground -k 10 "$timeout" \
		qemu-system-x86_64 -machine q35 -cpu max -smp "$cpus" -m 1G \
		-accel tcg,thread=multi \
		-nodefaults -display none -serial stdio -no-reboot \
		-kernel "$kdir/arch/x86/boot/bzImage" \
		-initrd "$out/initramfs.cpio.gz" \
		-append "console=ttyS0 panic=-1 oops=panic panic_on_warn=1 loglevel=7 printk.devkmsg=on no_timer_check" \
		> "$log" 2>&1 || rc=$?
	[ "$rc" = 124 ] && echo "HARNESS: QEMU killed after ${timeout}s" >> "$log"
	echo ">> guest finished in $((SECONDS - t0))s (qemu exit $rc), console log: $log"
}

rm -f "$out"/console-*.log "$out/results.json"
boot 1 rtt
boot 2 rtt,scale,storm,rmpp,flow

rxe_args=()
if [ "${RXE:-1}" != 0 ]; then
	rxe_log=$root/build/rxebench/console.log
	rm -f "$rxe_log"
	t0=$SECONDS
	rxe_rc=0
	"$root/tests/bench/rxe/rxe.sh" "$quick" "$repeats" || rxe_rc=$?
	echo ">> rxe part finished in $((SECONDS - t0))s (exit $rxe_rc), console log: $rxe_log"
	rxe_args=(--rxe "$rxe_log")
fi

cmd="make bench"
[ "$quick" = 1 ] && cmd="make bench QUICK=1"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
rc=0
python3 "$root/tests/bench/report.py" --json "$out/results.json" \
	--machine "command=$cmd" --machine "repeats=$repeats" \
	--machine "quick=$quick" --machine "host_cpu=$cpu" \
	--machine "host_cpus=$(nproc)" \
	--machine "qemu=$(qemu-system-x86_64 --version | head -n 1 | sed 's/^QEMU emulator version //')" \
	--machine "guest_kernel=$(basename "$kdir")" \
	--machine "rxe_guest_kernel=$(dpkg-query -W -f='${Depends}' linux-image-amd64 |
		grep -o 'linux-image-[^ ,]*-amd64' | head -n 1 | sed 's/^linux-image-//')" \
	"${rxe_args[@]}" \
	--machine "date=$(date -u +%Y-%m-%d)" \
	"$out/console-1cpu.log" "$out/console-2cpu.log" || rc=$?
echo ">> make bench took $((SECONDS - start_all))s"
exit $rc
