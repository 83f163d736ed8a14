/* SPDX-License-Identifier: GPL-2.0 */
/* kmad fuzz compat: the kernel's fixed-width and wire-order types. */
#ifndef KMAD_FUZZ_COMPAT_LINUX_TYPES_H
#define KMAD_FUZZ_COMPAT_LINUX_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t __u8;
typedef uint16_t __u16;
typedef uint32_t __u32;
typedef uint64_t __u64;
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
/* No sparse here: the __bitwise wire-order types are plain integers. */
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u64 __be64;
typedef unsigned int gfp_t;

#endif
