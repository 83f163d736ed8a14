/* SPDX-License-Identifier: GPL-2.0 */
/* kmad fuzz compat: unaligned big-endian load, byte by byte. */
#ifndef KMAD_FUZZ_COMPAT_ASM_UNALIGNED_H
#define KMAD_FUZZ_COMPAT_ASM_UNALIGNED_H

#include <linux/types.h>

static inline u16 get_unaligned_be16(const void *p)
{
	const u8 *b = p;

	return (u16)(b[0] << 8 | b[1]);
}

#endif
