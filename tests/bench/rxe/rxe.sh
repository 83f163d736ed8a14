#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The rxe part of `make bench`: kmad against the kernel's ib_mad on the
# same soft-RoCE pair, Debian's stock kernel, in QEMU.  See
# Documentation/benchmarks.rst, "kmad vs ib_mad".
#
# It is make interop's harness (tests/interop/interop.sh, RXE_BENCH=1):
# the same build of kmad and kmad_ib against the stock headers, the same
# initramfs and the same rxe0/rxe1 veth pair set up by the same /init
# (tests/interop/guest.sh), booted by the same qemu_boot
# (tests/qemu/lib.sh); then, instead of the exchanges, the guest loads
# kmad_ib and tests/bench/rxe/rxe_bench.ko.  Its console log,
# build/rxebench/console.log, is what tests/bench/report.py --rxe reads.
#
#   rxe.sh [quick] [repeats]
#
# quick=1: N up to 4096, fewer probes, shorter rate runs, at most 3
# repetitions.  Exit status: interop.sh's (0 when the guest ran the bench
# to its end with no error and no kernel splat).
set -euo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
quick=${1:-0}
repeats=${2:-5}
[ "$quick" = 1 ] || quick=0
if [ "$quick" = 1 ] && [ "$repeats" -gt 3 ]; then
	repeats=3
fi
echo ">> rxe bench: kmad vs ib_mad over rxe, stock kernel, quick=$quick repeats=$repeats"
RXE_BENCH=1 RXE_BENCH_ARGS="quick=$quick repeats=$repeats" \
	QEMU_QUIET=${QEMU_QUIET:-1} KERNEL=stock \
	"$root/tests/interop/interop.sh"
