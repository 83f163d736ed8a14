/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad internal declarations shared by the core's source files.
 */
#ifndef KMAD_PRIV_H
#define KMAD_PRIV_H

struct dentry;

/* The kmad/ directory in debugfs; NULL or an error pointer if unavailable. */
extern struct dentry *kmad_debugfs_root;

#endif /* KMAD_PRIV_H */
