// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sim: simulated CQs.  The CQE ring, completion events and the CQ
 * provider operations (create, destroy, poll, req_notify).
 *
 * Locks: C (&sim_cq.lock), described in hw.h with every field it guards.
 *
 * Notification.  A CQ is armed by req_notify_cq() and disarmed when an
 * event is raised.  In both modes a CQE added to an armed CQ raises an
 * event.  With %KMAD_SIM_NOTIFY_MISSED, req_notify_cq() also raises one
 * at once if a CQE added since the last event was raised is still in the
 * ring.  With %KMAD_CQ_REPORT_MISSED_EVENTS, req_notify_cq() returns 1 if
 * the ring is not empty once armed, in either mode.  To raise an event:
 * in step mode, mark it pending until kmad_sim_fire_cq_event(); in async
 * mode, or once the device is being torn down, queue &sim_cq.event_work,
 * which calls kmad_cq_event().  Raising an event already pending or queued
 * adds nothing: events coalesce, as interrupts do.
 *
 * Depth and overflow.  The ring holds the depth kmad asked for, which
 * covers every work request of its QP.  A test may advertise a smaller
 * depth (&kmad_sim_config.cq_depth, &sim_cq.limit): a CQE added to a CQ
 * already holding that many is an overflow.  It is counted and reported,
 * and the QP that owns it goes to the error state (kmad is told with
 * %KMAD_QP_EVENT_FATAL from &sim_qp.fatal_work), but the CQE itself is
 * kept: kmad's contract is one CQE per work request, and kmad only
 * recovers a QP once all of them are back.  Only a CQE that finds the
 * whole ring full is lost (kmad gave a CQ too small for its QPs).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/lockdep.h>
#include <linux/slab.h>

#include "hw.h"

/* Raise a completion event on @cq (see the notification rules above). */
static void sim_cq_raise_locked(struct sim_cq *cq)
{
	struct kmad_sim_fabric *fab = cq->sdev->fab;

	lockdep_assert_held(&cq->lock);
	cq->armed = false;
	cq->unreaped_since_event = false;
	if (fab->cfg.mode == KMAD_SIM_STEP && !READ_ONCE(cq->sdev->teardown))
		cq->event_pending = true;
	else
		queue_work(fab->wq, &cq->event_work);
}

/*
 * A CQE of @owner arrived at a CQ holding &sim_cq.limit CQEs or more.
 * Reported once per QP error: the flush CQEs that follow are only counted.
 */
static void sim_cq_overflow_locked(struct sim_cq *cq, struct sim_qp *owner)
{
	lockdep_assert_held(&cq->lock);
	sim_port_count(owner->port, SIM_STAT_CQ_OVERFLOWS);
	if (owner->state == KMAD_QPS_ERR)
		return;
	pr_err_ratelimited("%s: QP%u: CQ overflow (depth %u): QP moved to the error state\n",
			   owner->port->node->name, owner->qpn, cq->limit);
	kmad_sim_qp_error_locked(owner);
	queue_work(cq->sdev->fab->wq, &owner->fatal_work);
}

/**
 * kmad_sim_cq_add_locked() - add a CQE and raise an event if armed.
 * @cq: the CQ.
 * @owner: the QP whose work request @wc completes.
 * @wc: the completion.
 *
 * Context: @cq's lock held.
 */
void kmad_sim_cq_add_locked(struct sim_cq *cq, struct sim_qp *owner,
			    const struct kmad_wc *wc)
{
	struct sim_cqe *e;
	bool overflow;

	lockdep_assert_held(&cq->lock);
	sim_progress(cq->sdev->fab);
	overflow = cq->count >= cq->limit;
	if (cq->count == cq->depth) {
		pr_err_ratelimited("%s: QP%u: CQ full (%u entries): CQE lost\n",
				   owner->port->node->name, owner->qpn,
				   cq->depth);
	} else {
		e = &cq->ring[(cq->head + cq->count) % cq->depth];
		e->wc = *wc;
		e->owner = owner;
		cq->count++;
		if (cq->armed)
			sim_cq_raise_locked(cq);
		else
			cq->unreaped_since_event = true;
	}
	/* After the CQE: the flush CQEs this adds complete later posts. */
	if (overflow)
		sim_cq_overflow_locked(cq, owner);
}

/**
 * kmad_sim_cq_clean_locked() - remove a QP's CQEs from the ring, keeping
 * the others in order, as HCA drivers do when a QP is reset or destroyed.
 * @cq: the CQ.
 * @owner: the QP.
 *
 * Context: @cq's lock held.
 */
void kmad_sim_cq_clean_locked(struct sim_cq *cq, struct sim_qp *owner)
{
	unsigned int i, kept = 0;
	struct sim_cqe *e;

	lockdep_assert_held(&cq->lock);
	for (i = 0; i < cq->count; i++) {
		e = &cq->ring[(cq->head + i) % cq->depth];
		if (e->owner == owner)
			continue;
		cq->ring[(cq->head + kept) % cq->depth] = *e;
		kept++;
	}
	cq->count = kept;
	if (!cq->count)
		cq->unreaped_since_event = false;
}

/**
 * kmad_sim_cq_deliver_event() - deliver a completion event to kmad.
 * @cq: the CQ.
 *
 * Context: any, no sim lock held; the caller keeps @cq alive.
 */
void kmad_sim_cq_deliver_event(struct sim_cq *cq)
{
	struct sim_port *port = READ_ONCE(cq->port);

	kmad_cq_event(cq->kcq);
	if (port)
		sim_port_count(port, SIM_STAT_CQ_EVENTS);
	sim_progress(cq->sdev->fab);
}

static void sim_cq_event_work(struct work_struct *work)
{
	kmad_sim_cq_deliver_event(container_of(work, struct sim_cq,
					       event_work));
}

/**
 * kmad_sim_cq_teardown() - hand a step-mode pending event to event_work.
 * @cq: a CQ of a device whose &sim_dev.teardown is already set.
 *
 * Whoever takes @cq's lock after this sees the flag, so every event
 * raised later is queued too, not left pending.  An arm hook the test
 * left set (kmad_sim_set_arm_hook()) is forgotten: kmad's teardown arms
 * the CQ once more, when the test's @arg may be gone.
 *
 * Context: any, no sim lock held.
 */
void kmad_sim_cq_teardown(struct sim_cq *cq)
{
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	cq->arm_hook = NULL;
	cq->arm_hook_arg = NULL;
	if (cq->event_pending) {
		cq->event_pending = false;
		queue_work(cq->sdev->fab->wq, &cq->event_work);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
}

/**
 * kmad_sim_create_cq() - &kmad_provider_ops.create_cq.
 * @kcq: kmad's CQ.
 * @depth: CQEs it must hold.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int kmad_sim_create_cq(struct kmad_cq *kcq, unsigned int depth)
{
	struct sim_dev *sdev = kmad_device_priv(kmad_cq_device(kcq));
	struct sim_cq *cq;

	cq = kmad_sim_cq_alloc(sdev, depth);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	cq->kcq = kcq;
	kmad_cq_set_priv(kcq, cq);
	return 0;
}

/**
 * kmad_sim_cq_alloc() - a CQ of @sdev with room for @depth CQEs, with no
 * kmad CQ (&sim_cq.kcq), which the caller sets if it has one.
 * @sdev: the device.
 * @depth: CQEs it must hold.
 *
 * Context: process context.
 * Return: the CQ, or ERR_PTR(-EINVAL) or ERR_PTR(-ENOMEM).
 */
struct sim_cq *kmad_sim_cq_alloc(struct sim_dev *sdev, unsigned int depth)
{
	unsigned int limit = sdev->fab->cfg.cq_depth;
	struct sim_cq *cq;

	if (!depth)
		return ERR_PTR(-EINVAL);
	cq = kzalloc(sizeof(*cq), GFP_KERNEL);
	if (!cq)
		return ERR_PTR(-ENOMEM);
	cq->ring = kcalloc(depth, sizeof(*cq->ring), GFP_KERNEL);
	if (!cq->ring) {
		kfree(cq);
		return ERR_PTR(-ENOMEM);
	}
	cq->sdev = sdev;
	cq->depth = depth;
	cq->limit = limit && limit < depth ? limit : depth;
	cq->notify = sdev->fab->cfg.notify;
	spin_lock_init(&cq->lock);
	INIT_WORK(&cq->event_work, sim_cq_event_work);
	return cq;
}

/**
 * kmad_sim_cq_free() - free a CQ from kmad_sim_cq_alloc(), whose QPs are
 * destroyed already.  An event not delivered yet is dropped.
 * @cq: the CQ.
 *
 * Context: process context.
 */
void kmad_sim_cq_free(struct sim_cq *cq)
{
	cancel_work_sync(&cq->event_work);
	kfree(cq->ring);
	kfree(cq);
}

/**
 * kmad_sim_destroy_cq() - &kmad_provider_ops.destroy_cq.
 * @kcq: kmad's CQ, whose QPs are destroyed already.
 *
 * Context: process context.
 */
void kmad_sim_destroy_cq(struct kmad_cq *kcq)
{
	struct sim_cq *cq = kmad_cq_priv(kcq);

	kmad_cq_set_priv(kcq, NULL);
	kmad_sim_cq_free(cq);
}

/* A CQE was polled: its work request's queue slot is free again. */
static void sim_qp_reap_locked(struct sim_qp *qp, const struct kmad_wc *wc)
{
	lockdep_assert_held(&qp->cq->lock);
	if (wc->opcode == KMAD_WC_SEND)
		qp->sq_unpolled--;
	else
		qp->rq_unpolled--;
}

/**
 * kmad_sim_poll_cq() - &kmad_provider_ops.poll_cq.
 * @kcq: kmad's CQ.
 * @nent: room in @wc.
 * @wc: where to move the oldest CQEs.
 *
 * Context: any.
 * Return: the number of CQEs moved.
 */
int kmad_sim_poll_cq(struct kmad_cq *kcq, int nent, struct kmad_wc *wc)
{
	return kmad_sim_cq_poll(kmad_cq_priv(kcq), nent, wc);
}

/**
 * kmad_sim_cq_poll() - move up to @nent of @cq's oldest CQEs into @wc.
 * @cq: the CQ.
 * @nent: room in @wc.
 * @wc: where to move them.
 *
 * Context: any.
 * Return: the number of CQEs moved.
 */
int kmad_sim_cq_poll(struct sim_cq *cq, int nent, struct kmad_wc *wc)
{
	struct sim_cqe *e;
	unsigned long flags;
	int n;

	spin_lock_irqsave(&cq->lock, flags);
	for (n = 0; n < nent && cq->count; n++) {
		e = &cq->ring[cq->head];
		wc[n] = e->wc;
		sim_qp_reap_locked(e->owner, &e->wc);
		cq->head = (cq->head + 1) % cq->depth;
		cq->count--;
	}
	if (!cq->count)
		cq->unreaped_since_event = false;
	spin_unlock_irqrestore(&cq->lock, flags);
	if (n)
		sim_progress(cq->sdev->fab);
	return n;
}

/**
 * kmad_sim_req_notify_cq() - &kmad_provider_ops.req_notify_cq.
 * @kcq: kmad's CQ.
 * @flags: %KMAD_CQ_NEXT_COMP, optionally with
 *	%KMAD_CQ_REPORT_MISSED_EVENTS.
 *
 * The arm hook, if one is set, runs first, in kmad's context with no sim
 * lock held: a CQE it adds lands between kmad's last poll and the arming.
 *
 * Context: any.
 * Return: 1 if %KMAD_CQ_REPORT_MISSED_EVENTS was given and the CQ is not
 * empty once armed, else 0; -EINVAL for bad flags.
 */
int kmad_sim_req_notify_cq(struct kmad_cq *kcq, unsigned int flags)
{
	const unsigned int known = KMAD_CQ_NEXT_COMP |
				   KMAD_CQ_REPORT_MISSED_EVENTS;
	struct sim_cq *cq = kmad_cq_priv(kcq);
	void (*hook)(void *arg);
	unsigned long irqflags;
	void *hook_arg;
	int ret = 0;

	if (!(flags & KMAD_CQ_NEXT_COMP) || (flags & ~known))
		return -EINVAL;

	spin_lock_irqsave(&cq->lock, irqflags);
	hook = cq->arm_hook;
	hook_arg = cq->arm_hook_arg;
	cq->arm_hook = NULL;
	cq->arm_hook_arg = NULL;
	spin_unlock_irqrestore(&cq->lock, irqflags);

	if (hook)
		hook(hook_arg);

	spin_lock_irqsave(&cq->lock, irqflags);
	cq->armed = true;
	if (cq->notify == KMAD_SIM_NOTIFY_MISSED && cq->unreaped_since_event)
		sim_cq_raise_locked(cq);
	if ((flags & KMAD_CQ_REPORT_MISSED_EVENTS) && cq->count)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
