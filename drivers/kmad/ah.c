// SPDX-License-Identifier: GPL-2.0
/*
 * kmad address handles: the per-port cache for a provider with create_ah()
 * (a real HCA, or kmad_sim with its ah option).
 *
 * kmad_post_send() may run in atomic context, create_ah() may sleep: so
 * every send looks its address (&struct kmad_ah_attr, zeroed then filled,
 * hashed with jhash() and compared with memcmp()) up in its port's cache
 * when it is queued on its QP (kmad_qp_send(), under Q).  The lookup is a
 * fixed hash of 2^%KMAD_AH_HASH_BITS buckets: the cache holds at most
 * %KMAD_AH_CACHE_MAX entries, two a bucket, so it never resizes (tid.c's
 * table resizes because an agent's sends are unbounded).  A hit holds the
 * entry and goes on as before; a miss adds a NEW entry (GFP_ATOMIC) and
 * the send waits on its QP's ah_wait list, in state %KMAD_HW_WAITING
 * exactly like a send on the overflow list: cancel, flush, QP error, port
 * removal and unregister take it back or fail it the same way.  The cache
 * work (on kmad_ah_wq, process context) creates NEW entries one at a
 * time, then hands the waiting sends of every QP of the port on
 * (kmad_qp_ah_resolved()): to the overflow list if it worked, to the
 * failed list with a local error if it did not (the entry is then dropped
 * from the cache, so the next send tries again).
 *
 * References: an entry's users are the sends holding it and the work while
 * it creates it.  A send holds its entry from kmad_qp_send() until it is
 * idle again (its CQE polled, or it failed or was taken back while
 * waiting); a replayed send keeps it.  Unused entries stay cached, and
 * leave the cache in three ways:
 *
 * - eviction: beyond %KMAD_AH_CACHE_MAX the least recently looked up
 *   unused one goes.  Entries in use or being created are not evicted,
 *   so the cache may hold more, but never more than
 *   %KMAD_AH_CACHE_LIMIT: a miss that finds that many (a flood of
 *   requests whose answers each need their own handle: other flow
 *   labels) fails its send with a local error, counted as a failed
 *   creation, and nothing grows without bound;
 * - expiry: the expire work (a delayed work on kmad_ah_wq, armed while the
 *   cache holds entries) uncaches every entry that no send holds and that
 *   nothing looked up for &kmad_ah_cache.idle_jiffies (%KMAD_AH_IDLE_MS,
 *   60 s).  An entry unused when its last lookup becomes that old goes
 *   then; one a send still holds is skipped, however old, and goes at
 *   most one idle time after its release;
 * - age, on an Ethernet port: a lookup that finds a ready entry made an
 *   idle time ago or more uncaches it and makes another.  A RoCE handle
 *   holds the peer's MAC as resolved when it was made (kmad_ib: from the
 *   neighbour table), which a peer may change under the same GID; one
 *   kept in use for ever would never learn it (ib_umad makes a handle
 *   for every send);
 * - kmad_device_port_changed() (GIDs or P_Keys may have changed) and port
 *   removal uncache them all.
 *
 * An uncached entry is destroyed by the work once its last user is gone:
 * never before the CQE of a send that used it.
 *
 * Locks: H (&kmad_ah_cache.lock), irq-safe, taken under Q and nowhere
 * else nested; the provider is never called with it held.
 */

#include <kunit/visibility.h>
#include <linux/jhash.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "kmad_priv.h"

static struct kmad_ah_cache *port_ah(struct kmad_port *port)
{
	return &port->ah;
}

static void ah_work(struct work_struct *work);
static void ah_expire_work(struct work_struct *work);

/* Set up the (empty) cache of @port; at device allocation. */
void kmad_ah_cache_init(struct kmad_port *port)
{
	struct kmad_ah_cache *c = port_ah(port);

	spin_lock_init(&c->lock);
	hash_init(c->hash);
	INIT_LIST_HEAD(&c->lru);
	INIT_LIST_HEAD(&c->pending);
	INIT_LIST_HEAD(&c->reap);
	init_waitqueue_head(&c->idle);
	INIT_WORK(&c->work, ah_work);
	INIT_DELAYED_WORK(&c->expire, ah_expire_work);
	c->idle_jiffies = msecs_to_jiffies(KMAD_AH_IDLE_MS);
}

/* Whether sends on @port need an address handle (the provider makes them). */
bool kmad_ah_cache_used(const struct kmad_port *port)
{
	return port->dev->ops->create_ah;
}

static void ah_queue_work(struct kmad_ah_cache *c)
{
	lockdep_assert_held(&c->lock);
	if (!c->dead) {
		c->queued = true;
		queue_work(kmad_ah_wq, &c->work);
	}
}

/* The hash key of @attr: every byte, padding included (zeroed). */
static u32 ah_key(const struct kmad_ah_attr *attr)
{
	return jhash(attr, sizeof(*attr), 0);
}

/*
 * Take @ah off the cache's lookup list; it goes when its users do.  An
 * unused one goes now: to the reap list if it has a handle to destroy,
 * else freed (a NEW entry nobody waits for any more is never created).
 */
static void ah_uncache(struct kmad_port *port, struct kmad_ah *ah)
{
	struct kmad_ah_cache *c = port_ah(port);

	lockdep_assert_held(&c->lock);
	if (ah->cached) {
		hash_del(&ah->node);
		list_del_init(&ah->lru);
		ah->cached = false;
		c->count--;
	}
	if (ah->users)
		return;
	if (ah->state == KMAD_AH_READY) {
		list_add_tail(&ah->lru, &c->reap);
		ah_queue_work(c);
		return;
	}
	if (ah->state == KMAD_AH_NEW)
		list_del_init(&ah->pend);
	kfree(ah);
}

/* Over the bound: evict unused ready entries, least recently used first. */
static void ah_evict(struct kmad_port *port)
{
	struct kmad_ah_cache *c = port_ah(port);
	struct kmad_ah *ah, *tmp;

	lockdep_assert_held(&c->lock);
	list_for_each_entry_safe(ah, tmp, &c->lru, lru) {
		if (c->count <= KMAD_AH_CACHE_MAX)
			return;
		if (!ah->users && ah->state == KMAD_AH_READY)
			ah_uncache(port, ah);
	}
}

/* A RoCE handle to make again: ready and made an idle time ago. */
static bool ah_aged(struct kmad_port *port, const struct kmad_ah *ah)
{
	struct kmad_ah_cache *c = port_ah(port);

	lockdep_assert_held(&c->lock);
	return kmad_port_link_layer(port) == KMAD_LINK_LAYER_ETHERNET &&
	       ah->state == KMAD_AH_READY &&
	       !time_before(jiffies, ah->made + c->idle_jiffies);
}

/**
 * kmad_ah_get() - the cached address handle for @attr, held for a send.
 * @port: the port.
 * @attr: the address, zeroed and filled (it is hashed and compared
 *	byte for byte).
 * @ready: set true if the handle exists, false if the send must wait.
 *
 * Context: any; the QP's lock (Q) held.  Allocates with GFP_ATOMIC.
 * Return: the entry with a user reference, or NULL if no memory or the
 * cache holds %KMAD_AH_CACHE_LIMIT entries none of which may go.
 */
struct kmad_ah *kmad_ah_get(struct kmad_port *port,
			    const struct kmad_ah_attr *attr, bool *ready)
{
	struct kmad_ah_cache *c = port_ah(port);
	u32 key = ah_key(attr);
	struct kmad_ah *ah;
	unsigned long flags;

	spin_lock_irqsave(&c->lock, flags);
	hash_for_each_possible(c->hash, ah, node, key) {
		if (memcmp(&ah->attr, attr, sizeof(*attr)))
			continue;
		if (ah_aged(port, ah)) {
			ah_uncache(port, ah);
			break;
		}
		ah->users++;
		ah->got = jiffies;
		list_move_tail(&ah->lru, &c->lru);
		*ready = ah->state == KMAD_AH_READY;
		spin_unlock_irqrestore(&c->lock, flags);
		kmad_port_stat_inc(port, *ready ? KMAD_PSTAT_AH_HITS :
					  KMAD_PSTAT_AH_MISSES);
		return ah;
	}
	ah = NULL;
	/* Entries released since the last miss may go now. */
	if (c->count >= KMAD_AH_CACHE_LIMIT)
		ah_evict(port);
	if (c->count < KMAD_AH_CACHE_LIMIT)
		ah = kzalloc(sizeof(*ah), GFP_ATOMIC);
	if (ah) {
		ah->attr = *attr;
		ah->state = KMAD_AH_NEW;
		ah->users = 1;
		ah->got = jiffies;
		ah->cached = true;
		hash_add(c->hash, &ah->node, key);
		list_add_tail(&ah->lru, &c->lru);
		c->count++;
		list_add_tail(&ah->pend, &c->pending);
		ah_evict(port);
		ah_queue_work(c);
		if (!c->dead)
			queue_delayed_work(kmad_ah_wq, &c->expire,
					   c->idle_jiffies);
	}
	spin_unlock_irqrestore(&c->lock, flags);
	kmad_port_stat_inc(port, ah ? KMAD_PSTAT_AH_MISSES :
				      KMAD_PSTAT_AH_FAILURES);
	*ready = false;
	return ah;
}

/**
 * kmad_ah_put() - a send is done with its address handle.
 * @port: its port.
 * @ah: the entry.
 *
 * Context: any (a QP's lock may be held).
 */
void kmad_ah_put(struct kmad_port *port, struct kmad_ah *ah)
{
	struct kmad_ah_cache *c = port_ah(port);
	unsigned long flags;

	spin_lock_irqsave(&c->lock, flags);
	if (!WARN_ON_ONCE(!ah->users))
		ah->users--;
	if (!ah->users && !ah->cached)
		ah_uncache(port, ah);
	else if (!ah->users && ah->state == KMAD_AH_NEW)
		ah_uncache(port, ah);	/* nobody waits for it any more */
	spin_unlock_irqrestore(&c->lock, flags);
}

/**
 * kmad_ah_cache_flush() - forget every cached address handle of @port
 * (its GIDs, P_Keys or addresses changed).
 * @port: the port.
 *
 * Handles in use stay valid for the sends holding them and are destroyed
 * after the last one's CQE; sends waiting for a handle being created get
 * it all the same.  The next send to any address creates a new handle.
 *
 * Context: any.
 */
void kmad_ah_cache_flush(struct kmad_port *port)
{
	struct kmad_ah_cache *c = port_ah(port);
	struct kmad_ah *ah, *tmp;
	unsigned long flags;

	if (!kmad_ah_cache_used(port))
		return;
	spin_lock_irqsave(&c->lock, flags);
	list_for_each_entry_safe(ah, tmp, &c->lru, lru)
		ah_uncache(port, ah);
	spin_unlock_irqrestore(&c->lock, flags);
}

/* Destroy the handles on @list, unused and uncached, and free them. */
static void ah_destroy_list(struct kmad_port *port, struct list_head *list)
{
	const struct kmad_provider_ops *ops = port->dev->ops;
	struct kmad_ah *ah, *tmp;

	list_for_each_entry_safe(ah, tmp, list, lru) {
		list_del(&ah->lru);
		ops->destroy_ah(port->dev, port->port_num, ah->hw);
		kmad_port_stat_inc(port, KMAD_PSTAT_AH_DESTROYED);
		kfree(ah);
	}
}

/* Hand the sends waiting for @ah on, on every QP of @port. */
static void ah_resolved(struct kmad_port *port, struct kmad_ah *ah, bool ok)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(port->qpi); i++)
		if (kmad_qp_exists(&port->qpi[i]))
			kmad_qp_ah_resolved(&port->qpi[i], ah, ok);
}

#if IS_ENABLED(CONFIG_KUNIT)
kmad_test_ah_hook_t kmad_test_ah_work_hook;
EXPORT_SYMBOL_IF_KUNIT(kmad_test_ah_work_hook);
#endif

/* Create the NEW entries, one at a time, then destroy the dead ones. */
static void ah_work(struct work_struct *work)
{
	struct kmad_ah_cache *c = container_of(work, struct kmad_ah_cache,
					       work);
	struct kmad_port *port = container_of(c, struct kmad_port, ah);
	const struct kmad_provider_ops *ops = port->dev->ops;
	struct kmad_ah *ah;
	unsigned long flags;
	LIST_HEAD(reap);
	void *hw = NULL;
	int ret;

#if IS_ENABLED(CONFIG_KUNIT)
	kmad_test_ah_hook_t hook = READ_ONCE(kmad_test_ah_work_hook);

	if (hook)
		hook(port);
#endif
	spin_lock_irqsave(&c->lock, flags);
	/* Every queueing before this point is served by this run. */
	c->queued = false;
	c->running = true;
	spin_unlock_irqrestore(&c->lock, flags);
	for (;;) {
		spin_lock_irqsave(&c->lock, flags);
		ah = list_first_entry_or_null(&c->pending, struct kmad_ah,
					      pend);
		if (ah) {
			list_del_init(&ah->pend);
			ah->state = KMAD_AH_CREATING;
			ah->users++;			/* ours, while creating */
			c->in_provider = true;
		}
		spin_unlock_irqrestore(&c->lock, flags);
		if (!ah)
			break;
		wake_up_all(&c->idle);

		ret = ops->create_ah(port->dev, port->port_num, &ah->attr,
				     &hw);

		spin_lock_irqsave(&c->lock, flags);
		c->in_provider = false;
		if (!ret) {
			ah->hw = hw;
			ah->state = KMAD_AH_READY;
			ah->made = jiffies;
		} else {
			ah->state = KMAD_AH_FAILED;
			if (ah->cached)
				ah_uncache(port, ah);	/* users: not freed */
		}
		spin_unlock_irqrestore(&c->lock, flags);
		if (ret) {
			kmad_port_stat_inc(port, KMAD_PSTAT_AH_FAILURES);
			pr_debug_ratelimited("kmad: %s port %u: create_ah failed: %d\n",
					     port->dev->name, port->port_num,
					     ret);
		}
		ah_resolved(port, ah, !ret);
		kmad_ah_put(port, ah);
	}

	spin_lock_irqsave(&c->lock, flags);
	list_splice_init(&c->reap, &reap);
	spin_unlock_irqrestore(&c->lock, flags);
	ah_destroy_list(port, &reap);

	spin_lock_irqsave(&c->lock, flags);
	c->running = false;
	spin_unlock_irqrestore(&c->lock, flags);
	wake_up_all(&c->idle);
	kmad_work_ended();
}

/*
 * Uncache the entries nothing holds or looked up for an idle time, then
 * come back when the next one may be due: when the oldest entry looked
 * up within the idle time reaches it, or an idle time from now if an
 * entry was skipped because a send holds it.  Not re-armed once the
 * cache is empty (the next miss arms it) or dead.
 */
static void ah_expire_work(struct work_struct *work)
{
	struct kmad_ah_cache *c = container_of(to_delayed_work(work),
					       struct kmad_ah_cache, expire);
	struct kmad_port *port = container_of(c, struct kmad_port, ah);
	unsigned long now = jiffies, idle, delay = 0;
	struct kmad_ah *ah, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&c->lock, flags);
	idle = c->idle_jiffies;
	/* Least recently looked up first: stop at the first one too new. */
	list_for_each_entry_safe(ah, tmp, &c->lru, lru) {
		if (time_before(now, ah->got + idle)) {
			delay = ah->got + idle - now;
			break;
		}
		if (ah->users || ah->state != KMAD_AH_READY) {
			delay = idle;
			continue;
		}
		ah_uncache(port, ah);
	}
	if (delay && !c->dead)
		queue_delayed_work(kmad_ah_wq, &c->expire, delay);
	spin_unlock_irqrestore(&c->lock, flags);
	kmad_work_ended();
}

/**
 * kmad_ah_cache_teardown() - destroy every address handle of a port that
 * is going away.
 * @port: the port, its QPs stopped: no send holds or waits for a handle.
 *
 * Context: process context, before the device is gone.
 */
void kmad_ah_cache_teardown(struct kmad_port *port)
{
	struct kmad_ah_cache *c = port_ah(port);
	struct kmad_ah *ah, *tmp;
	unsigned long flags;
	LIST_HEAD(reap);

	if (!kmad_ah_cache_used(port))
		return;
	spin_lock_irqsave(&c->lock, flags);
	c->dead = true;
	list_for_each_entry_safe(ah, tmp, &c->lru, lru)
		ah_uncache(port, ah);
	spin_unlock_irqrestore(&c->lock, flags);
	cancel_delayed_work_sync(&c->expire);
	cancel_work_sync(&c->work);

	spin_lock_irqsave(&c->lock, flags);
	WARN_ON_ONCE(!list_empty(&c->pending));
	list_splice_init(&c->reap, &reap);
	/* A run the cancel took off the queue will not clear it. */
	c->queued = false;
	spin_unlock_irqrestore(&c->lock, flags);
	wake_up_all(&c->idle);
	ah_destroy_list(port, &reap);
}

/*
 * Whether kmad_ah_cache_flush_work() may stop waiting: the work is neither
 * queued nor running, or it is in (or has yet to go into) create_ah().
 * "Queued" is @queued, not work_pending(): the workqueue clears the
 * pending bit before the work begins, and a wait that looked then would
 * miss the whole run.
 */
static bool ah_work_settled(struct kmad_ah_cache *c)
{
	unsigned long flags;
	bool settled;

	spin_lock_irqsave(&c->lock, flags);
	settled = c->in_provider || !list_empty(&c->pending) ||
		  (!c->running && !c->queued);
	spin_unlock_irqrestore(&c->lock, flags);
	return settled;
}

/**
 * kmad_ah_cache_flush_work() - wait for the cache work of @port, except
 * for what it does in the provider's create_ah(), which may wait for as
 * long as a test likes (kmad_sim's %KMAD_SIM_AH_HOLD): never waits for a
 * creation, even one that starts meanwhile.
 * @port: the port.
 *
 * Context: process context.
 */
void kmad_ah_cache_flush_work(struct kmad_port *port)
{
	struct kmad_ah_cache *c = port_ah(port);

	if (kmad_ah_cache_used(port))
		wait_event(c->idle, ah_work_settled(c));
}
