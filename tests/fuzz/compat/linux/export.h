/* SPDX-License-Identifier: GPL-2.0 */
/* kmad fuzz compat: no module symbol table in user space. */
#ifndef KMAD_FUZZ_COMPAT_LINUX_EXPORT_H
#define KMAD_FUZZ_COMPAT_LINUX_EXPORT_H

#define EXPORT_SYMBOL(sym)
#define EXPORT_SYMBOL_GPL(sym)

#endif
