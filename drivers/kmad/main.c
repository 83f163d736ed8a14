// SPDX-License-Identifier: GPL-2.0
/*
 * kmad: InfiniBand management datagram layer — module init and exit.
 */

#include <kunit/visibility.h>
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "kmad_priv.h"

struct dentry *kmad_debugfs_root;
struct workqueue_struct *kmad_wq;
struct workqueue_struct *kmad_agent_wq;
struct workqueue_struct *kmad_event_wq;
struct workqueue_struct *kmad_ah_wq;
atomic_t kmad_work_ends = ATOMIC_INIT(0);
struct kmem_cache *kmad_send_cache;

#if IS_ENABLED(CONFIG_KUNIT)
kmad_test_alloc_hook_t kmad_test_alloc_hook;
EXPORT_SYMBOL_IF_KUNIT(kmad_test_alloc_hook);
#endif

static int __init kmad_init(void)
{
	kmad_send_cache = KMEM_CACHE(kmad_send_wr, 0);
	if (!kmad_send_cache)
		return -ENOMEM;
	/*
	 * High priority and unbound, like ib_core's ib_comp_unbound_wq that
	 * ib_mad's CQ uses: a CQ event is queued from the provider's softirq,
	 * which on a software device (rxe) runs in ksoftirqd.  On a bound,
	 * normal-priority queue the CQ drain and then the agent's work (the
	 * callback) wait on that CPU behind ksoftirqd and the poster, at the
	 * same priority, often until the scheduler tick (4 ms at HZ=250), while
	 * another CPU is idle (and, it seems, rxe's next tasklets behind
	 * them in turn).  Measured with tests/bench/rxe
	 * (Documentation/benchmarks.rst, "kmad's latency at small N"): round
	 * trip medians at N=16 of 0.19-0.63 ms instead of 3.6-4.7 ms; either
	 * flag alone was not enough.
	 */
	kmad_wq = alloc_workqueue("kmad", WQ_MEM_RECLAIM | WQ_HIGHPRI |
					  WQ_UNBOUND, 0);
	if (!kmad_wq)
		goto err_destroy_send_cache;
	/*
	 * The agents' work (the handlers) is bound, high priority: it is
	 * queued from a CQ drain, a timer or a kmad call, and then runs on
	 * the CPU that queued it, right after, instead of waking another
	 * (idle) CPU.  On kmad_wq (unbound) kmad_unregister_agent(), which
	 * queues the work and sleeps until it has delivered the flushed
	 * callbacks, paid two cross-CPU wake-ups: the work started on the
	 * other vCPU 0.2-3.9 ms after being queued and woke the caller back
	 * 0.02-6.4 ms after the last callback (tests/bench/rxe, QEMU TCG on
	 * a loaded host: 0.7-8 ms at N=16 against ib_mad's 0.1-1.2 ms,
	 * which calls the handlers in the caller).  The CQ drain stays
	 * unbound (above).
	 */
	kmad_agent_wq = alloc_workqueue("kmad_agent", WQ_MEM_RECLAIM |
					WQ_HIGHPRI, 0);
	if (!kmad_agent_wq)
		goto err_destroy_wq;
	kmad_event_wq = alloc_workqueue("kmad_events", 0, 0);
	if (!kmad_event_wq)
		goto err_destroy_agent_wq;
	kmad_ah_wq = alloc_workqueue("kmad_ah", 0, 0);
	if (!kmad_ah_wq)
		goto err_destroy_event_wq;
	kmad_debugfs_root = debugfs_create_dir("kmad", NULL);
	return 0;

err_destroy_event_wq:
	destroy_workqueue(kmad_event_wq);
err_destroy_agent_wq:
	destroy_workqueue(kmad_agent_wq);
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
	destroy_workqueue(kmad_agent_wq);
	destroy_workqueue(kmad_wq);
	kmem_cache_destroy(kmad_send_cache);
}

module_init(kmad_init);
module_exit(kmad_exit);

MODULE_AUTHOR("kmad developers");
MODULE_DESCRIPTION("InfiniBand management datagram (MAD) layer");
MODULE_LICENSE("GPL");
