#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Mirror kmad's source tree into a build copy, for builds against another
# kernel that must leave the source tree's objects alone (make run, make
# bench):
#   copy-tree.sh ROOT DEST
# Build products are excluded, and rsync neither copies nor deletes
# excluded files, so objects in DEST survive and a second build only
# rebuilds what changed.
set -euo pipefail
root=$1 dest=$2
mkdir -p "$dest"
rsync -a --delete \
	--exclude=/build/ --exclude=/.git/ --exclude='*.o' --exclude='*.ko' \
	--exclude='*.mod' --exclude='*.mod.c' --exclude='.*.cmd' \
	--exclude='*.a' --exclude='modules.order' --exclude='Module.symvers' \
	--exclude='*.dwo' --exclude='.cache.mk' \
	"$root/" "$dest/"
