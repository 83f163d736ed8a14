/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad fuzz compat: the error number wire.c returns, the kernel's value.
 * Not from <errno.h>: glibc's includes <linux/errno.h>, this file.
 */
#ifndef KMAD_FUZZ_COMPAT_LINUX_ERRNO_H
#define KMAD_FUZZ_COMPAT_LINUX_ERRNO_H

#define EBADMSG		74

#endif
