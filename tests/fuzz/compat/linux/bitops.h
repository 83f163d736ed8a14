/* SPDX-License-Identifier: GPL-2.0 */
/* kmad fuzz compat: DECLARE_BITMAP() for <kmad/mad.h>'s declarations. */
#ifndef KMAD_FUZZ_COMPAT_LINUX_BITOPS_H
#define KMAD_FUZZ_COMPAT_LINUX_BITOPS_H

#define BITS_PER_LONG		(8 * (int)sizeof(long))
#define BITS_TO_LONGS(nr)	(((nr) + BITS_PER_LONG - 1) / BITS_PER_LONG)
#define DECLARE_BITMAP(name, bits) unsigned long name[BITS_TO_LONGS(bits)]

#endif
