/* SPDX-License-Identifier: GPL-2.0 */
/* kmad fuzz compat: compile-time assertions, as the kernel spells them. */
#ifndef KMAD_FUZZ_COMPAT_LINUX_BUILD_BUG_H
#define KMAD_FUZZ_COMPAT_LINUX_BUILD_BUG_H

#define BUILD_BUG_ON(cond) _Static_assert(!(cond), "BUILD_BUG_ON(" #cond ")")
#define static_assert(expr, ...) __static_assert(expr, ##__VA_ARGS__, #expr)
#define __static_assert(expr, msg, ...) _Static_assert(expr, msg)

#endif
