/* SPDX-License-Identifier: GPL-2.0 */
/* kmad fuzz compat: byte order conversions for a little-endian host. */
#ifndef KMAD_FUZZ_COMPAT_ASM_BYTEORDER_H
#define KMAD_FUZZ_COMPAT_ASM_BYTEORDER_H

#include <linux/types.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the kmad fuzz compat headers assume a little-endian host"
#endif

#define cpu_to_be16(x)	((__be16)__builtin_bswap16((u16)(x)))
#define cpu_to_be32(x)	((__be32)__builtin_bswap32((u32)(x)))
#define cpu_to_be64(x)	((__be64)__builtin_bswap64((u64)(x)))
#define be16_to_cpu(x)	((u16)__builtin_bswap16((__be16)(x)))
#define be32_to_cpu(x)	((u32)__builtin_bswap32((__be32)(x)))
#define be64_to_cpu(x)	((u64)__builtin_bswap64((__be64)(x)))

#endif
