# SPDX-License-Identifier: GPL-2.0
#
# kmad: entry points for building and testing out of tree.  The modules
# themselves are described by Kbuild files; this Makefile only drives kbuild
# and the QEMU harness in tests/qemu/.
#
#   make                    build the modules against KDIR
#   make KDIR=/lib/modules/$(uname -r)/build
#   make modules_install    install them (INSTALL_MOD_PATH=, INSTALL_MOD_DIR=)
#   make check              build the debug kernel (cached), boot it, run KUnit
#                           (KERNEL=kcsan: KCSAN in place of KASAN)
#   make run                kmad_sim + kmad_discover on the stock kernel in QEMU
#                           (TOPO=<topology> FAULTS=drop=5,dup=1,...)
#   make bench              benchmarks on a non-debug kernel in QEMU, and
#                           kmad vs ib_mad over rxe on the stock one
#                           (QUICK=1; RXE=0: without the rxe part)
#   make interop            kmad, ib_mad and libibumad over rxe, stock kernel,
#                           in QEMU (INTEROP_CASES=... INTEROP_ARGS=...;
#                           KERNEL=debug: on make check's debug kernel,
#                           KERNEL=kcsan: on its KCSAN twin)
#   make diags              infiniband-diags over kmad_umad and kmad_sim, stock
#                           kernel, in QEMU, checked against the fabric
#                           (KERNEL=debug or kcsan, as make interop)
#   make opensm             Debian's OpenSM over kmad_umad and kmad_sim, stock
#                           kernel, in QEMU, side by side with OpenSM over
#                           ibsim on the same fabric
#   make fakeib             kmad_fakeib's InfiniBand link layer devices, stock
#                           kernel, in QEMU: infiniband-diags over ib_mad,
#                           kmad_ib bound to them, GSI round trips
#                           (KERNEL=debug or kcsan, as make interop)
#   make lint               checkpatch --strict, sparse and W=1
#   make fuzz               libFuzzer on wire.c and smi.c in user space
#                           (FUZZ_S=<seconds per target>)
#   make fuzz-replay        regenerate tests/fuzz/replay.h
#   make clean

KMAD_VERSION := 0.1.0
KMAD_CACHE ?= /var/cache/kmad
export KMAD_CACHE

# Default KDIR: the cached debug test kernel, built on first use.  Resolved
# lazily and once, so targets that do not need it never build it.
ifeq ($(origin KDIR),undefined)
KDIR = $(eval KDIR := $$(shell $(CURDIR)/tests/qemu/kernel.sh debug | tail -n 1))$(KDIR)
endif

# Out of tree there is no Kconfig pass: set the symbols here.  The KUnit
# modules are built only when the target kernel has KUnit.
kunit_in_kdir = $(shell grep -qs '^CONFIG_KUNIT=[ym]' $(KDIR)/.config && echo m)
KMAD_KCONFIG = CONFIG_KMAD=m CONFIG_KMAD_SIM=m CONFIG_KMAD_EXAMPLE=m \
	CONFIG_KMAD_DISCOVER=m CONFIG_KMAD_BENCH=m CONFIG_KMAD_IB=m \
	CONFIG_KMAD_UMAD=m \
	CONFIG_KMAD_KUNIT_TEST=$(kunit_in_kdir) \
	CONFIG_KMAD_DISCOVER_KUNIT_TEST=$(kunit_in_kdir)
KBUILD_ARGS = -C $(KDIR) M=$(CURDIR) $(KMAD_KCONFIG)

.PHONY: all modules modules_install check bench run interop diags opensm fakeib \
	lint fuzz fuzz-replay clean help

all: modules

modules:
	@test -d "$(KDIR)" || { echo "KDIR=$(KDIR) is not a kernel build tree" >&2; exit 1; }
	$(MAKE) $(KBUILD_ARGS) modules

modules_install: modules
	$(MAKE) $(KBUILD_ARGS) INSTALL_MOD_DIR=$(or $(INSTALL_MOD_DIR),updates/kmad) modules_install

# SUITE=<glob> runs a subset; KMAD_EXTRA_TESTS=<dir> adds outside KUnit modules;
# KMAD_TEST_ARGS='<module> <param>=<value>...' sets test module parameters.
# KERNEL=kcsan: on the data race detector's kernel (tests/qemu/config/).
check:
	@KERNEL='$(KERNEL)' SUITE='$(SUITE)' KMAD_EXTRA_TESTS='$(KMAD_EXTRA_TESTS)' \
		KMAD_TEST_ARGS='$(KMAD_TEST_ARGS)' $(CURDIR)/tests/qemu/check.sh

# TOPO=<name> FAULTS=<spec> SIM_ARGS=... DISCOVER_ARGS=...: see tests/qemu/run.sh.
run:
	@TOPO='$(TOPO)' FAULTS='$(FAULTS)' SIM_ARGS='$(SIM_ARGS)' \
		DISCOVER_ARGS='$(DISCOVER_ARGS)' $(CURDIR)/tests/qemu/run.sh

# QUICK=1: the short run CI does; REPEATS=<n>; RXE=0: no rxe part.  See
# tests/bench/bench.sh.
bench:
	@QUICK='$(QUICK)' REPEATS='$(REPEATS)' RXE='$(RXE)' $(CURDIR)/tests/bench/bench.sh

# INTEROP_CASES=<list> INTEROP_ARGS='k=v ...': kmad_interop's parameters;
# KERNEL=debug: the debug kernel of make check instead of the stock one
# (KERNEL=kcsan: its KCSAN twin).
# See tests/interop/interop.sh and Documentation/interop.rst.
interop:
	@KERNEL='$(KERNEL)' INTEROP_CASES='$(INTEROP_CASES)' \
		INTEROP_ARGS='$(INTEROP_ARGS)' $(CURDIR)/tests/interop/interop.sh

# Debian's infiniband-diags over kmad_umad: see tests/diags/diags.sh and
# Documentation/umad.rst.  KERNEL=debug (or kcsan): on make check's debug
# kernel (or its KCSAN twin).
diags:
	@KERNEL='$(KERNEL)' $(CURDIR)/tests/diags/diags.sh

# Debian's OpenSM on kmad_sim's fabric through kmad_umad, and over ibsim on
# the same fabric: see tests/opensm/opensm.sh and Documentation/opensm.rst.
# OPENSM_SIM_ARGS: more kmad_sim parameters.
opensm:
	@OPENSM_SIM_ARGS='$(OPENSM_SIM_ARGS)' \
		$(CURDIR)/tests/opensm/opensm.sh

# kmad_fakeib (tests/fakeib/): fake ib_core devices with an InfiniBand link
# layer, checked with infiniband-diags and kmad_ib.  See tests/fakeib/fakeib.sh
# and Documentation/testing.rst.  KERNEL=debug (or kcsan): on make check's
# debug kernel (or its KCSAN twin).
fakeib:
	@KERNEL='$(KERNEL)' $(CURDIR)/tests/fakeib/fakeib.sh

lint:
	@$(CURDIR)/tests/lint.sh

# FUZZ_S=<seconds> per target instead of FUZZ_RUNS (10 million) executions;
# FUZZ_TARGETS='wire' or 'smi' for one.  See tests/fuzz/run.sh.
fuzz:
	@FUZZ_S='$(FUZZ_S)' FUZZ_RUNS='$(FUZZ_RUNS)' FUZZ_TARGETS='$(FUZZ_TARGETS)' \
		$(CURDIR)/tests/fuzz/run.sh

fuzz-replay:
	@python3 $(CURDIR)/tests/fuzz/mkreplay.py

clean:
	find . \( -path ./build -o -path ./.git \) -prune -o -type f \
		\( -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
		-o -name '.*.cmd' -o -name '*.a' -o -name 'modules.order' \
		-o -name 'Module.symvers' -o -name '*.dwo' \) -print0 | xargs -0r rm -f
	rm -rf build

help:
	@sed -n '3,35p' Makefile
