// SPDX-License-Identifier: GPL-2.0
/*
 * kmad: InfiniBand management datagram layer — module init and exit.
 */

#include <linux/module.h>
#include <linux/debugfs.h>

#include "kmad_priv.h"

struct dentry *kmad_debugfs_root;

static int __init kmad_init(void)
{
	kmad_debugfs_root = debugfs_create_dir("kmad", NULL);
	pr_info("kmad: loaded\n");
	return 0;
}

static void __exit kmad_exit(void)
{
	debugfs_remove_recursive(kmad_debugfs_root);
}

module_init(kmad_init);
module_exit(kmad_exit);

MODULE_AUTHOR("kmad developers");
MODULE_DESCRIPTION("InfiniBand management datagram (MAD) layer");
MODULE_LICENSE("GPL");
