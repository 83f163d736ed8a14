/* SPDX-License-Identifier: GPL-2.0 */
/* kmad fuzz compat: struct list_head for <kmad/mad.h>'s declarations. */
#ifndef KMAD_FUZZ_COMPAT_LINUX_LIST_H
#define KMAD_FUZZ_COMPAT_LINUX_LIST_H

struct list_head {
	struct list_head *next, *prev;
};

#endif
