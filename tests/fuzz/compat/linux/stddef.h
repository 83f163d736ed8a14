/* SPDX-License-Identifier: GPL-2.0 */
/* kmad fuzz compat: offsetof() and sizeof_field(). */
#ifndef KMAD_FUZZ_COMPAT_LINUX_STDDEF_H
#define KMAD_FUZZ_COMPAT_LINUX_STDDEF_H

#include <stddef.h>

#define sizeof_field(TYPE, MEMBER) sizeof((((TYPE *)0)->MEMBER))

#endif
