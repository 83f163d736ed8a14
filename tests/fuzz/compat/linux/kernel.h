/* SPDX-License-Identifier: GPL-2.0 */
/* kmad fuzz compat: the one <linux/kernel.h> helper wire.c uses. */
#ifndef KMAD_FUZZ_COMPAT_LINUX_KERNEL_H
#define KMAD_FUZZ_COMPAT_LINUX_KERNEL_H

#define ARRAY_SIZE(arr) (sizeof(arr) / sizeof((arr)[0]))

#endif
