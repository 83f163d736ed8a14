// SPDX-License-Identifier: GPL-2.0
/*
 * kmad agents: registration, lookup for dispatch, and unregistration.
 *
 * Each agent owns a hi_tid, allocated from one xarray for all of kmad, that
 * kmad puts in the upper 32 bits of the TID of every request the agent
 * sends; a response finds its agent with one xa_load() under RCU and then
 * its request in the agent's TID table.  Requests find their agent by
 * walking the port's (short) RCU list of registrations.
 *
 * Why no callback can follow kmad_unregister_agent(): it turns DYING under
 * its lock, so no new post can take a reference and no dispatch that reads
 * its state afterwards does; it is unlinked from dispatch and its hi_tid
 * erased, so no new receive can reach it after a grace period, and one
 * that found it before holds a reference that is waited for below; its
 * sends are flushed, so each one ends (at once, or at its send completion)
 * and runs its callback before dropping its reference; the registration
 * reference is dropped and unregister waits until the count is zero, i.e.
 * until every send callback and every receive handler that held a
 * reference has returned.  A queued run of the agent's work holds a
 * reference too, dropped last, so a count of zero also means no run is
 * queued and a running one touches the agent no more: no synchronous
 * cancel is needed (kmad_agent_queue_work()).
 */

#include <kunit/visibility.h>
#include <linux/bitmap.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "kmad_priv.h"

#if IS_ENABLED(CONFIG_KUNIT)
kmad_test_agent_hook_t kmad_test_port_flush_hook;
EXPORT_SYMBOL_GPL(kmad_test_port_flush_hook);
#endif

/* hi_tid -> agent.  Writers: register (an agent is stored only once its
 * registration can no longer fail) and unregister; readers: RCU.
 */
static DEFINE_XARRAY_ALLOC1(kmad_agents);
static u32 kmad_next_hi_tid;

/*
 * hi_tids are 1 to 2^24 - 1, as ib_mad's (ib_register_mad_agent()): the
 * TID's top byte stays 0, for a driver that uses it (mlx4 marks there
 * which virtual function a MAD came from).
 */
#define KMAD_HI_TID_LIMIT	XA_LIMIT(1, (1U << 24) - 1)

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * kmad_test_set_next_hi_tid() - KUnit seam: where the next registration
 * starts looking for a free hi_tid, as if the counter had come round.
 * @next: the hi_tid.
 */
void kmad_test_set_next_hi_tid(u32 next)
{
	xa_lock(&kmad_agents);
	kmad_next_hi_tid = next;
	xa_unlock(&kmad_agents);
}
EXPORT_SYMBOL_GPL(kmad_test_set_next_hi_tid);
#endif

bool kmad_agent_get(struct kmad_agent_priv *agent)
{
	return refcount_inc_not_zero(&agent->refs);
}

void kmad_agent_put(struct kmad_agent_priv *agent)
{
	if (refcount_dec_and_test(&agent->refs))
		complete(&agent->released);
}
EXPORT_SYMBOL_IF_KUNIT(kmad_agent_put);

/* kmad_agent_put() @n times at once: for a batch of callbacks. */
void kmad_agent_put_many(struct kmad_agent_priv *agent, unsigned int n)
{
	if (refcount_sub_and_test(n, &agent->refs))
		complete(&agent->released);
}

/**
 * kmad_timer_delay() - the delay to give a timer that must fire by @delay
 * jiffies from now.
 * @delay: jiffies.
 *
 * Linux's timer wheel fires a timer up to one granule of its level after
 * its expiry (kernel/time/timer.c, calc_index(): rounded up to the
 * level's granule, never early): a tick below 63 ticks, up to 8/63 of the
 * delay beyond.  Queued for @delay, a work asked to run "by then" would
 * run up to an eighth of it late, and &kmad_agent_priv.timer_at, which
 * promises "by then", would hide a sooner deadline that comes in between
 * (the arm is skipped as not sooner).  From 63 ticks on, the delay is cut
 * by an eighth and a tick, so that the timer fires by @delay:
 * (7/8 d) * (1 + 8/63) < d.  Run early, the work finds nothing due and
 * queues itself again for what is left, in finer granules, until the
 * last, under 63 ticks, fires within a tick.
 *
 * Return: the delay to queue with.
 */
unsigned long kmad_timer_delay(unsigned long delay)
{
	return delay < 63 ? delay : delay - delay / 8 - 1;
}
EXPORT_SYMBOL_IF_KUNIT(kmad_timer_delay);

/**
 * kmad_agent_queue_work() - (re)queue the agent's work to run in @delay.
 * @agent: the agent; the caller holds a reference and the agent lock.
 * @delay: jiffies from now.
 *
 * A queued work holds a reference of its own, which the run drops last:
 * so once the count is zero no work of the agent is queued or running,
 * and kmad_unregister_agent() needs no synchronous cancel (which, called
 * from another agent's handler, would wait for one agent's work inside
 * another's).
 */
void kmad_agent_queue_work(struct kmad_agent_priv *agent, unsigned long delay)
{
	lockdep_assert_held(&agent->lock);
	if (!mod_delayed_work(kmad_agent_wq, &agent->work,
			      kmad_timer_delay(delay)))
		refcount_inc(&agent->refs);	/* was idle: now queued */
}

/**
 * kmad_agent_run_now() - run the agent's work as soon as possible.
 * @agent: the agent; the caller holds a reference and the agent lock.
 *
 * For callbacks to deliver, a table to resize, or a clock that moved.
 * Setting timer_at with the queueing, under the lock, keeps a later
 * deadline from postponing this run (agent_arm_timer()).
 */
void kmad_agent_run_now(struct kmad_agent_priv *agent)
{
	lockdep_assert_held(&agent->lock);
	agent->timer_at = 0;
	kmad_agent_queue_work(agent, 0);
}
EXPORT_SYMBOL_IF_KUNIT(kmad_agent_run_now);

/**
 * kmad_agent_find_by_tid() - the agent a response is for, with a reference.
 * @qpi: the QP the response arrived on.
 * @tid: the response's TID.
 *
 * Return: the agent whose hi_tid is the upper half of @tid, registered on
 * @qpi, or NULL.
 */
struct kmad_agent_priv *kmad_agent_find_by_tid(struct kmad_qp_info *qpi,
					       u64 tid)
{
	struct kmad_agent_priv *agent;

	rcu_read_lock();
	agent = xa_load(&kmad_agents, (unsigned long)(tid >> 32));
	if (agent && (agent->qpi != qpi || !kmad_agent_get(agent)))
		agent = NULL;
	rcu_read_unlock();
	return agent;
}
EXPORT_SYMBOL_IF_KUNIT(kmad_agent_find_by_tid);

static bool reg_same_class(const struct kmad_reg_req *a,
			   const struct kmad_reg_req *b)
{
	if (a->mgmt_class != b->mgmt_class ||
	    a->class_version != b->class_version)
		return false;
	return !kmad_mgmt_class_is_vendor_range2(a->mgmt_class) ||
	       !memcmp(a->oui, b->oui, sizeof(a->oui));
}

/**
 * kmad_agent_find_for_request() - the agent registered for a request.
 * @qpi: the QP it arrived on.
 * @mad: the validated request.
 * @class_known: set true if some agent has the class and version, even if
 *	not the method.
 *
 * Return: the agent with a reference, NULL, or ERR_PTR(-EAGAIN) if the
 * agent for it is still registering (KMAD_AGENT_REGISTERING).
 */
struct kmad_agent_priv *kmad_agent_find_for_request(struct kmad_qp_info *qpi,
						    const struct kmad_mad *mad,
						    bool *class_known)
{
	const struct kmad_mad_hdr *hdr = &mad->mad_hdr;
	const struct kmad_vendor_mad *vmad = (const void *)mad;
	struct kmad_agent_priv *agent, *found = NULL;
	enum kmad_agent_state state;
	struct kmad_reg_req want = {
		.mgmt_class = hdr->mgmt_class,
		.class_version = hdr->class_version,
	};

	if (kmad_mgmt_class_is_vendor_range2(hdr->mgmt_class))
		memcpy(want.oui, vmad->oui, sizeof(want.oui));

	rcu_read_lock();
	list_for_each_entry_rcu(agent, &qpi->port->agents, port_entry) {
		if (agent->qpi != qpi || agent->send_only ||
		    !reg_same_class(&agent->reg, &want))
			continue;
		*class_known = true;
		if (!test_bit(hdr->method & KMAD_METHOD_MASK,
			      agent->reg.method_mask))
			continue;
		state = READ_ONCE(agent->state);
		if (state == KMAD_AGENT_REGISTERING) {
			found = ERR_PTR(-EAGAIN);
			break;
		}
		if (state == KMAD_AGENT_ACTIVE && kmad_agent_get(agent)) {
			found = agent;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

static bool class_reserved(u8 cls)
{
	return cls == 0 || cls == 0x02 || (cls >= 0x50 && cls <= 0x80) ||
	       cls >= 0x82;
}

/* Is @req a well-formed registration for QP type @qpt? */
static int reg_validate(enum kmad_qp_type qpt, const struct kmad_reg_req *req)
{
	static const u8 no_oui[3];
	bool range2;

	if (qpt != KMAD_QPT_SMI && qpt != KMAD_QPT_GSI)
		return -EINVAL;
	/* RMPP: the one version IBTA defines, on QP1 (no SMP class has the
	 * RMPP header), for a class that has the header or a send-only
	 * agent (whose sends' class kmad_post_send() checks).
	 */
	if (req && req->rmpp_version &&
	    (req->rmpp_version != KMAD_RMPP_VERSION ||
	     kmad_qpt_is_smi(qpt) ||
	     (req->mgmt_class && !kmad_mgmt_class_has_rmpp(req->mgmt_class))))
		return -EINVAL;
	if (!req || !req->mgmt_class)
		return 0;	/* send-only */
	if (class_reserved(req->mgmt_class) || !req->class_version ||
	    req->class_version >= KMAD_MAX_CLASS_VERSION)
		return -EINVAL;
	if (kmad_is_smp_class(req->mgmt_class) != kmad_qpt_is_smi(qpt))
		return -EINVAL;
	/* Reserved methods, 0 among them, are taken but never used. */
	if (bitmap_empty(req->method_mask, KMAD_METHODS))
		return -EINVAL;
	range2 = kmad_mgmt_class_is_vendor_range2(req->mgmt_class);
	if (range2 == !memcmp(req->oui, no_oui, sizeof(no_oui)))
		return -EINVAL;	/* OUI required for, and only for, range 2 */
	return 0;
}

/* Context: P held.  Does @agent's registration overlap an existing one? */
static bool reg_conflicts(struct kmad_port *port,
			  struct kmad_agent_priv *agent)
{
	struct kmad_agent_priv *other;

	lockdep_assert_held(&port->reg_mutex);
	list_for_each_entry(other, &port->agents, port_entry) {
		if (other->qpi == agent->qpi && !other->send_only &&
		    reg_same_class(&other->reg, &agent->reg) &&
		    bitmap_intersects(other->reg.method_mask,
				      agent->reg.method_mask, KMAD_METHODS))
			return true;
	}
	return false;
}

static struct kmad_agent_priv *
agent_create(struct kmad_port *port, enum kmad_qp_type qpt,
	     const struct kmad_reg_req *req, kmad_send_handler send_handler,
	     kmad_recv_handler recv_handler, void *context, bool internal)
{
	struct kmad_agent_priv *agent;
	u32 id;
	int ret;

	agent = kzalloc(sizeof(*agent), GFP_KERNEL);
	if (!agent)
		return ERR_PTR(-ENOMEM);
	agent->agent.port = port;
	agent->agent.qpt = qpt;
	agent->agent.send_handler = send_handler;
	agent->agent.recv_handler = recv_handler;
	agent->agent.context = context;
	agent->qpi = &port->qpi[qpt];
	agent->send_only = !req || !req->mgmt_class;
	if (!agent->send_only)
		agent->reg = *req;
	else if (req)	/* a send-only agent may do RMPP too */
		agent->reg.rmpp_version = req->rmpp_version;
	agent->internal = internal;
	refcount_set(&agent->refs, 1);
	init_completion(&agent->released);
	spin_lock_init(&agent->lock);
	agent->state = KMAD_AGENT_ACTIVE;
	INIT_LIST_HEAD(&agent->sends);
	INIT_LIST_HEAD(&agent->waiting);
	INIT_LIST_HEAD(&agent->done);
	INIT_LIST_HEAD(&agent->recvs);
	INIT_LIST_HEAD(&agent->rmpp_sends);
	INIT_LIST_HEAD(&agent->port_entry);
	INIT_LIST_HEAD(&agent->rmpp_recvs);
	agent->timer_at = U64_MAX;
	INIT_DELAYED_WORK(&agent->work, kmad_agent_work);
	kmad_flow_init(agent);

	ret = kmad_agent_tables_init(agent);
	if (ret)
		goto err_free;
	/* The hi_tid is reserved (a NULL entry, which xa_load() does not
	 * return) until nothing can fail any more: a response whose TID
	 * named an agent that then failed to register would hold a
	 * reference to freed memory.
	 */
	ret = xa_alloc_cyclic(&kmad_agents, &id, NULL, KMAD_HI_TID_LIMIT,
			      &kmad_next_hi_tid, GFP_KERNEL);
	if (ret < 0)
		goto err_tids;
	agent->agent.hi_tid = id;

	mutex_lock(&port->reg_mutex);
	if (port->dying) {
		ret = -ENODEV;
		goto err_unlock;
	}
	if (!agent->send_only && reg_conflicts(port, agent)) {
		ret = -EBUSY;
		goto err_unlock;
	}
	/*
	 * A provider whose QP1 is another MAD layer's passes requests for
	 * the registration on (provider.h, bridge_add), maybe before
	 * bridge_add() returns: the agent is in the port's list by then,
	 * REGISTERING, so that such a request is dropped (its sender tries
	 * again) rather than answered "unsupported class" as for no agent.
	 */
	if (!agent->send_only && !internal && port->dev->bridges) {
		agent->state = KMAD_AGENT_REGISTERING;
		list_add_tail_rcu(&agent->port_entry, &port->agents);
		ret = port->dev->ops->bridge_add(port->dev, port->port_num, qpt,
						 &agent->reg);
		if (ret) {
			list_del_rcu(&agent->port_entry);
			mutex_unlock(&port->reg_mutex);
			/*
			 * Found by no one once the RCU readers that may have
			 * are done; a kick among them (a clock change:
			 * kmad_port_agents_kick()) may have queued the
			 * agent's work with a reference: drop ours and wait
			 * for every one.
			 */
			synchronize_rcu();
			kmad_agent_put(agent);
			wait_for_completion(&agent->released);
			goto err_slot;
		}
		agent->bridged = true;
		spin_lock_irq(&agent->lock);
		WRITE_ONCE(agent->state, KMAD_AGENT_ACTIVE);
		spin_unlock_irq(&agent->lock);
	} else {
		list_add_tail_rcu(&agent->port_entry, &port->agents);
	}
	/* Into the reserved slot: allocates nothing, cannot fail. */
	WARN_ON_ONCE(xa_is_err(xa_store(&kmad_agents, id, agent, GFP_NOWAIT)));
	kref_get(&port->dev->ref);
	mutex_unlock(&port->reg_mutex);
	return agent;

err_unlock:
	mutex_unlock(&port->reg_mutex);
err_slot:
	xa_erase(&kmad_agents, id);
err_tids:
	kmad_agent_tables_destroy(agent);
err_free:
	kfree(agent);
	return ERR_PTR(ret);
}

/**
 * kmad_register_agent() - register an agent on a port's QP0 or QP1.
 * @port: the port (from a client's add callback or kmad_port_get()).
 * @qpt: %KMAD_QPT_SMI (QP0) or %KMAD_QPT_GSI (QP1).
 * @req: class, version, methods (and OUI for classes 0x30-0x4F) of the
 *	unsolicited MADs it takes; NULL or mgmt_class 0 for a send-only agent.
 * @send_handler: called once per posted send; required.
 * @recv_handler: called for responses and unsolicited MADs; required unless
 *	send-only.
 * @context: stored in &kmad_agent.context.
 *
 * Context: process context, may sleep.
 * Return: the agent, or an ERR_PTR: -EINVAL for a NULL port or
 * send_handler, an unknown @qpt, or an invalid registration (SMP class on
 * QP1 or a GMP class on QP0, reserved class, class version 0 or above 7,
 * empty method mask, OUI missing for or given to a class outside
 * 0x30-0x4F, an rmpp_version other than %KMAD_RMPP_VERSION, or one for a
 * class without the RMPP header), -EBUSY if it overlaps an existing
 * registration (same class, version and OUI, a common method) or no
 * hi_tid is free, -EOPNOTSUPP for QP0 on a port without one
 * (kmad_port_has_smi()), -ENODEV if the port is going away, -ENOMEM, or
 * any error of the provider's bridge_add() (mad.h lists kmad_ib's).
 */
struct kmad_agent *kmad_register_agent(struct kmad_port *port,
				       enum kmad_qp_type qpt,
				       const struct kmad_reg_req *req,
				       kmad_send_handler send_handler,
				       kmad_recv_handler recv_handler,
				       void *context)
{
	struct kmad_agent_priv *agent;
	int ret;

	if (IS_ERR_OR_NULL(port) || !send_handler)
		return ERR_PTR(-EINVAL);
	ret = reg_validate(qpt, req);
	if (ret)
		return ERR_PTR(ret);
	if (req && req->mgmt_class && !recv_handler)
		return ERR_PTR(-EINVAL);
	if (kmad_qpt_is_smi(qpt) && !kmad_port_has_smi(port))
		return ERR_PTR(-EOPNOTSUPP);
	agent = agent_create(port, qpt, req, send_handler, recv_handler,
			     context, false);
	if (IS_ERR(agent))
		return ERR_CAST(agent);
	return &agent->agent;
}
EXPORT_SYMBOL_GPL(kmad_register_agent);

/*
 * Unlink from dispatch and flush.  Idempotent, and safe to run twice at
 * once (port removal and the ULP's unregister): the first stop unlinks the
 * agent, under P, and marks it so; the entry is never touched again (a
 * list_del_rcu()'d entry is poisoned, and must not be tested with
 * list_empty() or deleted twice).  The caller holds a reference.
 * Context: may sleep.
 */
static void agent_stop(struct kmad_agent_priv *agent)
{
	struct kmad_port *port = agent->agent.port;
	unsigned long flags;

	/* DYING first: from here on no post takes a reference, and request
	 * dispatch, which may still find the agent on the port's list until
	 * a grace period ends, takes one only if it read ACTIVE before.  Such
	 * a reference is one more the unregister waits for (the handler it
	 * is for runs before unregister returns), so no grace period needs
	 * waiting for here: the agent's memory is freed after one
	 * (kfree_rcu()), which is all RCU readers need.  Waiting for one
	 * (synchronize_rcu()) cost every unregister 6-7 ms.
	 *
	 * The flush in the same hold: from the mark on no response matches
	 * a send (the TID table is empty) and no deadline retries or times
	 * one out (the wheel is empty), even while the unlinking below
	 * waits for P or the provider's bridge_del(): every send not ended
	 * before the mark ends FLUSHED (mad.h).
	 */
	spin_lock_irqsave(&agent->lock, flags);
	WRITE_ONCE(agent->state, KMAD_AGENT_DYING);	/* dispatch reads it */
	kmad_agent_flush_sends(agent, KMAD_SEND_FLUSHED);
	spin_unlock_irqrestore(&agent->lock, flags);

	mutex_lock(&port->reg_mutex);
	if (!agent->unlinked) {
		list_del_rcu(&agent->port_entry);
		agent->unlinked = true;
		if (agent->bridged && !READ_ONCE(port->dev->gone))
			port->dev->ops->bridge_del(port->dev, port->port_num,
						   agent->agent.qpt,
						   &agent->reg);
		/* Once only: port removal stops an agent, then its ULP's
		 * unregister stops it again, by which time a new agent may
		 * hold the hi_tid.
		 */
		xa_erase(&kmad_agents, agent->agent.hi_tid);
	}
	mutex_unlock(&port->reg_mutex);

	kmad_rmpp_recv_flush(agent);
}

/* After a grace period: see struct kmad_device's lifetime. */
static void kmad_device_release(struct kref *ref)
{
	struct kmad_device *dev = container_of(ref, struct kmad_device, ref);

	kfree_rcu(dev, rcu);
}

/**
 * kmad_unregister_agent() - unregister an agent.
 * @agent: the agent; NULL is ignored.
 *
 * Cancels everything the agent has outstanding and waits for it: every
 * send posted before this returns gets its send_handler call (flushed,
 * unless it had already ended), and no handler of the agent runs after it
 * returns.
 *
 * From one of the agent's own handlers it cannot wait for itself: it
 * refuses, does nothing, and returns -EDEADLK (the agent stays registered
 * and usable; unregister it from elsewhere).  Handlers may unregister any
 * other agent.
 *
 * Context: process context, may sleep; the caller holds no lock the
 * agent's handlers take (it waits for them).
 * Return: 0 (also for NULL), -EDEADLK when called from the agent's own
 * handler, -EINVAL for an error pointer.
 */
int kmad_unregister_agent(struct kmad_agent *agent)
{
	struct kmad_agent_priv *priv;
	struct kmad_device *dev;
	unsigned long flags;

	if (!agent)
		return 0;
	if (IS_ERR(agent))
		return -EINVAL;
	priv = kmad_agent_priv(agent);
	dev = agent->port->dev;
	/* Every handler of the agent runs from its work (send.c). */
	if (current_work() == &priv->work.work) {
		pr_warn_ratelimited("kmad: agent %#x: %s() from its own handler refused (-EDEADLK)\n",
				    agent->hi_tid, __func__);
		return -EDEADLK;
	}

	agent_stop(priv);
	/* A queued run of the work holds a reference; one waiting on a far
	 * deadline's timer would hold it that long.  Make it run now: it
	 * delivers whatever is due and drops its reference.  Nothing queues
	 * a deadline any more: the agent is DYING and flushed.
	 */
	spin_lock_irqsave(&priv->lock, flags);
	kmad_agent_run_now(priv);
	spin_unlock_irqrestore(&priv->lock, flags);
	kmad_agent_put(priv);		/* the registration reference */
	wait_for_completion(&priv->released);
	kmad_agent_tables_destroy(priv);
	kfree_rcu(priv, rcu);
	kref_put(&dev->ref, kmad_device_release);
	return 0;
}
EXPORT_SYMBOL_GPL(kmad_unregister_agent);

/**
 * kmad_agent_get_stats() - read an agent's counters.
 * @agent: a registered agent.
 * @stats: filled with the counters since the agent registered.
 *
 * Each counter is read atomically, the set is not a snapshot: sends that
 * end meanwhile may be counted in some fields and not yet in others.
 *
 * Context: any but hard interrupt, any lock of the caller's held.
 */
void kmad_agent_get_stats(struct kmad_agent *agent,
			  struct kmad_agent_stats *stats)
{
	struct kmad_agent_priv *priv;
	u64 late;
	unsigned long flags;

	if (WARN_ON_ONCE(IS_ERR_OR_NULL(agent) || !stats))
		return;
	priv = kmad_agent_priv(agent);
	stats->posted = atomic64_read(&priv->stats[KMAD_ASTAT_POSTED]);
	stats->completed = atomic64_read(&priv->stats[KMAD_ASTAT_COMPLETED]);
	stats->responses = atomic64_read(&priv->stats[KMAD_ASTAT_RESP_MATCHED]);
	stats->unsolicited = atomic64_read(&priv->stats[KMAD_ASTAT_UNSOLICITED]);
	stats->timeouts = atomic64_read(&priv->stats[KMAD_ASTAT_TIMEOUTS]);
	stats->retries = atomic64_read(&priv->stats[KMAD_ASTAT_RETRIES]);
	stats->canceled = atomic64_read(&priv->stats[KMAD_ASTAT_CANCELED]);
	stats->flushed = atomic64_read(&priv->stats[KMAD_ASTAT_FLUSHED]);
	spin_lock_irqsave(&priv->lock, flags);
	late = priv->timeout_late_max;
	spin_unlock_irqrestore(&priv->lock, flags);
	/* A virtual clock's jump may be longer than u64 nanoseconds. */
	if (late > div_u64(U64_MAX, TICK_NSEC))
		stats->timeout_late_max_us = U64_MAX;
	else
		stats->timeout_late_max_us =
			div_u64(jiffies64_to_nsecs(late), NSEC_PER_USEC);
}
EXPORT_SYMBOL_GPL(kmad_agent_get_stats);

void kmad_device_put(struct kmad_device *dev)
{
	kref_put(&dev->ref, kmad_device_release);
}

/**
 * kmad_port_flush_agents() - flush every agent still registered on a port
 * that is going away; their owners unregister them later.
 * @port: the port, already marked dying.
 */
void kmad_port_flush_agents(struct kmad_port *port)
{
	struct kmad_agent_priv *agent;
#if IS_ENABLED(CONFIG_KUNIT)
	kmad_test_agent_hook_t hook;
#endif

	for (;;) {
		mutex_lock(&port->reg_mutex);
		agent = list_first_entry_or_null(&port->agents,
						 struct kmad_agent_priv,
						 port_entry);
		/* Linked means its registration reference is still held
		 * (unregister drops it only after agent_stop() unlinked it
		 * under P), so this cannot be the last: the agent stays
		 * ours even if its ULP unregisters it meanwhile.
		 */
		if (agent)
			refcount_inc(&agent->refs);
		mutex_unlock(&port->reg_mutex);
		if (!agent)
			return;
#if IS_ENABLED(CONFIG_KUNIT)
		hook = READ_ONCE(kmad_test_port_flush_hook);
		if (hook)
			hook(agent);
#endif
		if (!agent->internal)
			pr_info("kmad: %s port %u: agent %#x still registered as the port goes away; flushing it\n",
				port->dev->name, port->port_num,
				agent->agent.hi_tid);
		agent_stop(agent);
		kmad_agent_put(agent);
	}
}

static void responder_send_handler(struct kmad_agent *agent,
				   struct kmad_send_wc *wc)
{
	kmad_free_send_buf(wc->send_buf);
}

int kmad_port_responder_create(struct kmad_port *port)
{
	struct kmad_agent_priv *agent;
	int i;

	for (i = 0; i < ARRAY_SIZE(port->responder); i++) {
		if (!kmad_qp_exists(&port->qpi[i]))
			continue;
		agent = agent_create(port, i, NULL, responder_send_handler,
				     NULL, NULL, true);
		if (IS_ERR(agent)) {
			kmad_port_responder_destroy(port);
			return PTR_ERR(agent);
		}
		/* Published whole: a QP may be running already. */
		smp_store_release(&port->responder[i], agent);
	}
	return 0;
}

/**
 * kmad_port_responder_get() - the port's responder agent on @qpt, with a
 * reference (drop it with kmad_agent_put()), or NULL.
 * @port: the port.
 * @qpt: QP0 or QP1.
 *
 * A receive or an agent's work that answers for kmad may run while the
 * responder is unregistered (register's error path, with the QPs running;
 * port teardown): the pointer is read under RCU and the agent kept only
 * if it still has references (kmad_port_responder_destroy()).
 *
 * Context: any but hard interrupt.
 */
struct kmad_agent_priv *kmad_port_responder_get(struct kmad_port *port,
						enum kmad_qp_type qpt)
{
	struct kmad_agent_priv *responder;

	rcu_read_lock();
	responder = READ_ONCE(port->responder[qpt]);
	if (responder && !kmad_agent_get(responder))
		responder = NULL;
	rcu_read_unlock();
	return responder;
}

/*
 * Each responder is unlinked before it is unregistered: rmpp_post() may
 * still look it up (under RCU, from another agent's work) until the port's
 * agents are flushed, and the grace period unregister's kfree_rcu() waits
 * for covers only readers that can have seen the pointer.
 */
void kmad_port_responder_destroy(struct kmad_port *port)
{
	struct kmad_agent_priv *agent;
	int i;

	for (i = 0; i < ARRAY_SIZE(port->responder); i++) {
		agent = port->responder[i];
		WRITE_ONCE(port->responder[i], NULL);
		if (agent)
			kmad_unregister_agent(&agent->agent);
	}
}

/**
 * kmad_port_agents_kick() - run every agent's work now (the device's
 * virtual clock moved, or a test wants pending callbacks delivered).
 * @port: the port.
 */
void kmad_port_agents_kick(struct kmad_port *port)
{
	struct kmad_agent_priv *agent;
	unsigned long flags;

	rcu_read_lock();
	list_for_each_entry_rcu(agent, &port->agents, port_entry) {
		if (kmad_agent_get(agent)) {
			spin_lock_irqsave(&agent->lock, flags);
			kmad_agent_run_now(agent);
			spin_unlock_irqrestore(&agent->lock, flags);
			kmad_agent_put(agent);
		}
	}
	rcu_read_unlock();
}
