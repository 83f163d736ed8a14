// SPDX-License-Identifier: GPL-2.0
/*
 * kmad: InfiniBand management datagram layer — module init and exit.
 */

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "kmad_priv.h"

struct dentry *kmad_debugfs_root;
struct workqueue_struct *kmad_wq;
struct workqueue_struct *kmad_event_wq;
struct workqueue_struct *kmad_ah_wq;
struct kmem_cache *kmad_send_cache;

static int __init kmad_init(void)
{
	kmad_send_cache = KMEM_CACHE(kmad_send_wr, 0);
	if (!kmad_send_cache)
		return -ENOMEM;
	kmad_wq = alloc_workqueue("kmad", WQ_MEM_RECLAIM, 0);
	if (!kmad_wq)
		goto err_destroy_send_cache;
	kmad_event_wq = alloc_workqueue("kmad_events", 0, 0);
	if (!kmad_event_wq)
		goto err_destroy_wq;
	kmad_ah_wq = alloc_workqueue("kmad_ah", 0, 0);
	if (!kmad_ah_wq)
		goto err_destroy_event_wq;
	kmad_debugfs_root = debugfs_create_dir("kmad", NULL);
	return 0;

err_destroy_event_wq:
	destroy_workqueue(kmad_event_wq);
err_destroy_wq:
	destroy_workqueue(kmad_wq);
err_destroy_send_cache:
	kmem_cache_destroy(kmad_send_cache);
	return -ENOMEM;
}

static void __exit kmad_exit(void)
{
	debugfs_remove_recursive(kmad_debugfs_root);
	destroy_workqueue(kmad_ah_wq);
	destroy_workqueue(kmad_event_wq);
	destroy_workqueue(kmad_wq);
	kmem_cache_destroy(kmad_send_cache);
}

module_init(kmad_init);
module_exit(kmad_exit);

MODULE_AUTHOR("kmad developers");
MODULE_DESCRIPTION("InfiniBand management datagram (MAD) layer");
MODULE_LICENSE("GPL");
