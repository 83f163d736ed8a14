// SPDX-License-Identifier: GPL-2.0
/*
 * kmad QPs: each port's QP0 and QP1, their send queues and their CQ drain.
 *
 * Send queue: the provider holds at most sq_depth sends; the rest wait on
 * the overflow list in post order and are posted as send completions free
 * slots.  A send's position is its &kmad_send_wr.hw state (Q).
 *
 * CQ drain: one work item per CQ, queued by every completion event.  It
 * polls until the CQ is empty, re-arms notification, and polls again:
 * with an HCA that raises events only for CQEs arriving after the re-arm
 * (IBTA), a CQE that landed between the last poll and the re-arm is found
 * by that last poll; with one that reports missed events, the re-arm says
 * so.  Either way no CQE is stranded, and an event for an empty CQ is
 * harmless.  A drain handles at most KMAD_CQ_BUDGET CQEs per run, then
 * requeues itself behind other work so one busy CQ cannot starve others.
 *
 * A new QP's CQ is armed before its receive buffers are posted, so that
 * with an IBTA HCA the first receive cannot complete unseen.
 *
 * Error recovery: a flushed completion on a running QP (or a fatal QP
 * event) puts the QP in RECOVERING, and the recovery work first moves the
 * QP to the error state (qp_flush_seen(): hardware in SQE flushes sends
 * only, and would keep its receives).  Flushed sends go to the replay list,
 * not back to their agents, except sends canceled meanwhile
 * (KMAD_HW_CANCELED), which end at their flush; once the provider holds
 * nothing more, the recovery work resets the QP to RTS, reposts receive
 * buffers and posts the replay list ahead of the overflow list.  A reset,
 * or a move to the error state, that fails is retried with backoff; after
 * KMAD_QP_RECOVER_TRIES the QP
 * is FAILED and every send queued on it ends with a local error.  On a
 * DYING QP (port removal) flushed sends complete as flushed instead.
 * Only a flush means the QP is in error: a receive that fails otherwise
 * is dropped by recv.c.
 *
 * Address handles (a provider with create_ah()): a send queued on a
 * running QP takes its handle from the port's cache (ah.c) and waits on
 * the ah_wait list while it is being created, as WAITING as a send on the
 * overflow list: cancel takes it back, a stop or a failed recovery fails
 * it with the rest.  It holds the handle until it is idle again.
 *
 * Teardown marks the QP DOWN before it cancels the drain, so that a drain
 * queued by a late CQ event finds it down (qp_mark_down()).
 */

#include <linux/delay.h>
#include <linux/slab.h>

#include "kmad_priv.h"

#if IS_ENABLED(CONFIG_KUNIT)
static void (*qp_test_hooks[KMAD_TEST_QP_SEAMS])(struct kmad_qp_info *qpi);

/**
 * kmad_test_set_qp_hook() - KUnit seams in a QP's life.
 * @seam: where: %KMAD_TEST_QP_DESTROY, in teardown once the QP is marked
 *	down and its drain cancelled, before the provider destroys it;
 *	%KMAD_TEST_QP_RESET, in the recovery work once it found the QP
 *	quiet, before it resets it (no lock held); %KMAD_TEST_QP_STOP,
 *	first in kmad_qp_stop() (no kmad lock held at a device's removal;
 *	kmad_devices_lock on a failed registration's way back).
 * @hook: the function, or NULL.
 *
 * So that a test can raise a CQ or QP event exactly there.
 */
void kmad_test_set_qp_hook(enum kmad_test_qp_seam seam,
			   void (*hook)(struct kmad_qp_info *qpi))
{
	WRITE_ONCE(qp_test_hooks[seam], hook);
}
EXPORT_SYMBOL_GPL(kmad_test_set_qp_hook);

static void qp_test_hook(enum kmad_test_qp_seam seam,
			 struct kmad_qp_info *qpi)
{
	void (*hook)(struct kmad_qp_info *qpi);

	hook = READ_ONCE(qp_test_hooks[seam]);
	if (hook)
		hook(qpi);
}
#else
static inline void qp_test_hook(enum kmad_test_qp_seam seam,
				struct kmad_qp_info *qpi)
{
}
#endif

static const struct kmad_provider_ops *qp_ops(struct kmad_qp_info *qpi)
{
	return qpi->port->dev->ops;
}

/*
 * The work request for @wr.  Its address is built in @attr, which must
 * outlive only the provider's post_send() call: the provider copies what
 * it needs (&struct kmad_hw_send).
 */
static void qp_hw_send(struct kmad_send_wr *wr, struct kmad_hw_send *hw,
		       struct kmad_ah_attr *attr)
{
	const struct kmad_dest *d = &wr->buf.dest;

	lockdep_assert_held(&kmad_send_agent(wr)->qpi->lock);
	kmad_send_ah_attr(wr, attr);
	hw->cqe = &wr->cqe;
	hw->mad = wr->rmpp ? kmad_rmpp_send_wire_mad(wr) : &wr->mad;
	hw->len = sizeof(wr->mad);
	hw->dlid = attr->dlid;
	hw->remote_qpn = d->remote_qpn;
	hw->remote_qkey = d->remote_qkey;
	hw->sl = attr->sl;
	hw->pkey_index = d->pkey_index;
	hw->ah_attr = attr;
	hw->ah = wr->ah ? wr->ah->hw : NULL;
	hw->from_qp1 = attr->from_qp1;
	/* Written at post, before the send reaches a QP, and constant while
	 * the QP holds it: read here under Q, not A.  No bit of its byte
	 * changes meanwhile (kmad_priv.h).
	 */
	hw->expects_resp = wr->expects_resp;
}

/*
 * Context: Q held.  @wr leaves the QP: it is idle, and drops the address
 * handle it held.
 */
static void qp_send_idle(struct kmad_qp_info *qpi, struct kmad_send_wr *wr)
{
	lockdep_assert_held(&qpi->lock);
	wr->hw = KMAD_HW_IDLE;
	if (wr->ah) {
		kmad_ah_put(qpi->port, wr->ah);
		wr->ah = NULL;
	}
}

/**
 * kmad_qp_exists() - whether kmad creates this QP on its port.
 * @qpi: the QP.
 *
 * Return: false for QP0 of a port without an SMI (Ethernet, or no_smi).
 */
bool kmad_qp_exists(const struct kmad_qp_info *qpi)
{
	return !kmad_qpt_is_smi(qpi->qpt) || kmad_port_has_smi(qpi->port);
}

/*
 * Context: Q held, the QP running or recovering.  Queue @wr for a slot, or,
 * with a provider that needs address handles, for its handle first.
 * Returns true if it failed (on the failed list, for the drain).
 */
static bool qp_queue_send(struct kmad_qp_info *qpi, struct kmad_send_wr *wr)
{
	struct kmad_ah_attr attr;
	bool ready = true;

	lockdep_assert_held(&qpi->lock);
	if (kmad_ah_cache_used(qpi->port)) {
		kmad_send_ah_attr(wr, &attr);
		wr->ah = kmad_ah_get(qpi->port, &attr, &ready);
		if (!wr->ah) {
			wr->hw_status = KMAD_WC_LOC_ERR;
			list_add_tail(&wr->qp_entry, &qpi->failed);
			return true;
		}
	}
	list_add_tail(&wr->qp_entry, ready ? &qpi->overflow : &qpi->ah_wait);
	return false;
}

/*
 * Post waiting sends while there are free slots: the replay list first
 * (sends the hardware flushed, in their original order), then the
 * overflow list.  Returns true if a send was refused by the provider and
 * moved to the failed list, which the drain completes.
 */
static bool qp_post_waiting(struct kmad_qp_info *qpi)
{
	struct kmad_ah_attr attr;
	struct kmad_hw_send hw;
	struct kmad_send_wr *wr;
	bool failed = false;

	lockdep_assert_held(&qpi->lock);
	while (qpi->run == KMAD_QP_RUNNING && qpi->sq_posted < qpi->sq_depth) {
		wr = list_first_entry_or_null(&qpi->replay, struct kmad_send_wr,
					      qp_entry);
		if (!wr)
			wr = list_first_entry_or_null(&qpi->overflow,
						      struct kmad_send_wr,
						      qp_entry);
		if (!wr)
			break;
		list_del_init(&wr->qp_entry);
		qp_hw_send(wr, &hw, &attr);
		if (qp_ops(qpi)->post_send(&qpi->qp, &hw)) {
			wr->hw = KMAD_HW_WAITING;
			wr->hw_status = KMAD_WC_LOC_ERR;
			list_add_tail(&wr->qp_entry, &qpi->failed);
			failed = true;
			continue;
		}
		wr->hw = KMAD_HW_POSTED;
		qpi->sq_posted++;
	}
	return failed;
}

/**
 * kmad_qp_send() - queue a send on its QP.
 * @qpi: the QP.
 * @wr: a send in state SENDING that the QP does not hold.
 *
 * Context: any but hard interrupt (kmad_post_send()'s), the send's agent
 * lock held (A -> Q), so
 * that a cancel or flush of the send finds it queued.  Never completes the
 * send itself: a send the provider refuses, or one queued on a dying QP,
 * is completed by the CQ drain.
 */
void kmad_qp_send(struct kmad_qp_info *qpi, struct kmad_send_wr *wr)
{
	bool kick;
	unsigned long flags;

	lockdep_assert_held(&kmad_send_agent(wr)->lock);
	spin_lock_irqsave(&qpi->lock, flags);
	WARN_ON_ONCE(wr->hw != KMAD_HW_IDLE);
	wr->hw = KMAD_HW_WAITING;
	if (qpi->run == KMAD_QP_DYING || qpi->run == KMAD_QP_DOWN) {
		wr->hw_status = KMAD_WC_FLUSH_ERR;
		list_add_tail(&wr->qp_entry, &qpi->failed);
		kick = true;
	} else if (qpi->run == KMAD_QP_FAILED) {
		wr->hw_status = KMAD_WC_LOC_ERR;
		list_add_tail(&wr->qp_entry, &qpi->failed);
		kick = true;
	} else {
		kick = qp_queue_send(qpi, wr);
		kick |= qp_post_waiting(qpi);
	}
	spin_unlock_irqrestore(&qpi->lock, flags);
	if (kick)
		queue_work(kmad_wq, &qpi->cq.drain_work);
}

/**
 * kmad_qp_ah_resolved() - the address handle some sends waited for was
 * created (@ok), or could not be.
 * @qpi: a QP of the handle's port.
 * @ah: the handle.
 * @ok: created: its sends go to the overflow list, in their order; else
 *	they fail with a local error (%KMAD_SEND_LOCAL_ERROR), from the drain.
 *
 * Context: the cache work (process context), no lock held.
 */
void kmad_qp_ah_resolved(struct kmad_qp_info *qpi, struct kmad_ah *ah,
			 bool ok)
{
	struct kmad_send_wr *wr, *tmp;
	bool kick = false;
	unsigned long flags;

	spin_lock_irqsave(&qpi->lock, flags);
	list_for_each_entry_safe(wr, tmp, &qpi->ah_wait, qp_entry) {
		if (wr->ah != ah)
			continue;
		if (ok) {
			list_move_tail(&wr->qp_entry, &qpi->overflow);
		} else {
			wr->hw_status = KMAD_WC_LOC_ERR;
			list_move_tail(&wr->qp_entry, &qpi->failed);
			kick = true;
		}
	}
	if (ok)
		kick = qp_post_waiting(qpi);
	spin_unlock_irqrestore(&qpi->lock, flags);
	if (kick)
		queue_work(kmad_wq, &qpi->cq.drain_work);
}

/**
 * kmad_qp_cancel() - a send's outcome was decided before its send
 * completion (canceled, flushed, or its response matched): take it back if
 * the provider does not hold it yet, else mark it so that its CQE ends it.
 * @qpi: its QP.
 * @wr: the send, still %KMAD_SS_SENDING: its caller makes it
 *	%KMAD_SS_CANCELED or %KMAD_SS_EARLY_RESP right after, under the same
 *	agent lock (taken back first, so that the backlog the state change
 *	may hand to the QP cannot post it).
 *
 * A send the provider holds is marked %KMAD_HW_CANCELED: if the QP goes
 * to error, its flushed CQE completes it instead of putting it on the
 * replay list.  The mark is made under both locks, so the drain, which
 * holds only Q (it cannot take A there: A -> Q), reads it safely.
 *
 * Context: the send's agent lock held (lock order A -> Q).
 * Return: true if @wr was waiting for a slot and is now idle, so its send
 * completion is the caller's to report; false if the provider holds it (a
 * CQE will come) or it already completed.
 */
bool kmad_qp_cancel(struct kmad_qp_info *qpi, struct kmad_send_wr *wr)
{
	bool taken = false;
	unsigned long flags;

	lockdep_assert_held(&kmad_send_agent(wr)->lock);
	spin_lock_irqsave(&qpi->lock, flags);
	if (wr->hw == KMAD_HW_WAITING) {
		list_del_init(&wr->qp_entry);
		qp_send_idle(qpi, wr);
		taken = true;
	} else if (wr->hw == KMAD_HW_POSTED) {
		wr->hw = KMAD_HW_CANCELED;
	}
	spin_unlock_irqrestore(&qpi->lock, flags);
	return taken;
}

/* Whether the provider holds nothing, so a recovering QP may be reset. */
static bool qp_quiet(struct kmad_qp_info *qpi)
{
	lockdep_assert_held(&qpi->lock);
	return !qpi->sq_posted && !qpi->rq_posted;
}

/* Context: Q held.  Enter RECOVERING; start recovery once quiet. */
static void qp_start_recovery(struct kmad_qp_info *qpi)
{
	lockdep_assert_held(&qpi->lock);
	if (qpi->run == KMAD_QP_RUNNING)
		qpi->run = KMAD_QP_RECOVERING;
	if (qpi->run == KMAD_QP_RECOVERING && qp_quiet(qpi))
		queue_delayed_work(kmad_wq, &qpi->recover_work, 0);
}

/* Context: Q held.  Have the recovery work move the QP to the error state
 * before it waits for the provider to give everything back.
 */
static void qp_recover_via_err(struct kmad_qp_info *qpi)
{
	lockdep_assert_held(&qpi->lock);
	set_bit(KMAD_QP_FLUSH_PENDING, &qpi->flags);
	queue_delayed_work(kmad_wq, &qpi->recover_work, 0);
}

/*
 * Context: Q held.  A flush CQE came while the QP ran: the first sign of
 * an error state kmad did not ask for.  The whole QP may not be in it: a
 * UD send error leaves real hardware in SQE ("send queue error"), which
 * flushes sends but goes on receiving, so the receives would stay posted
 * and the recovery, which waits for the QP to give everything back, would
 * wait until as many MADs arrived (ib_mad moves such a QP back to RTS).
 * Move it to the error state for certain: the receives flush too, and
 * the recovery goes on.  For a QP already there it is one more
 * modify_qp().
 */
static void qp_flush_seen(struct kmad_qp_info *qpi)
{
	lockdep_assert_held(&qpi->lock);
	if (qpi->run != KMAD_QP_RUNNING)
		return;
	qpi->run = KMAD_QP_RECOVERING;
	qp_recover_via_err(qpi);
}

/*
 * Context: Q held.  A CQE of @qpi was reaped, @flushed if with a flush
 * status: it may start a recovery, or be the last thing the provider held
 * for one to go on.
 */
static void qp_cqe_reaped(struct kmad_qp_info *qpi, bool flushed)
{
	lockdep_assert_held(&qpi->lock);
	if (flushed)
		qp_flush_seen(qpi);
	if (qpi->run == KMAD_QP_RECOVERING)
		qp_start_recovery(qpi);
}

/**
 * kmad_qp_send_cqe_done() - a send's CQE was polled.
 * @cq: the CQ.
 * @wc: the completion; @wc->cqe is the send's &kmad_send_wr.cqe.
 *
 * Context: CQ drain.
 */
void kmad_qp_send_cqe_done(struct kmad_cq *cq, struct kmad_wc *wc)
{
	struct kmad_send_wr *wr = container_of(wc->cqe, struct kmad_send_wr,
					       cqe);
	unsigned long flags;
	struct kmad_qp_info *qpi = cq->info;
	enum kmad_wc_status status = wc->status;
	bool replay = false, canceled, flushed, kick;

	spin_lock_irqsave(&qpi->lock, flags);
	if (WARN_ON_ONCE(wr->hw != KMAD_HW_POSTED &&
			 wr->hw != KMAD_HW_CANCELED)) {
		spin_unlock_irqrestore(&qpi->lock, flags);
		return;
	}
	canceled = wr->hw == KMAD_HW_CANCELED;
	qpi->sq_posted--;
	flushed = wc->status == KMAD_WC_FLUSH_ERR &&
		  (qpi->run == KMAD_QP_RUNNING ||
		   qpi->run == KMAD_QP_RECOVERING);
	if (flushed && !canceled) {
		/* The hardware never sent it: send it again after recovery,
		 * with the address handle it holds.
		 */
		wr->hw = KMAD_HW_WAITING;
		list_add_tail(&wr->qp_entry, &qpi->replay);
		replay = true;
	} else {
		qp_send_idle(qpi, wr);
	}
	/* A given-up QP's sends end with a local error (provider.h), also
	 * one its provider flushes at last: FLUSHED is for a port going away
	 * (dying is set before its QPs stop, QP0 first) or an agent
	 * unregistering.
	 */
	if (status == KMAD_WC_FLUSH_ERR && qpi->run == KMAD_QP_FAILED &&
	    !READ_ONCE(qpi->port->dying))
		status = KMAD_WC_LOC_ERR;
	/* A flush puts the QP in recovery; any CQE may have been the last
	 * thing the provider held for a recovery to go on.
	 */
	qp_cqe_reaped(qpi, flushed);
	kick = qp_post_waiting(qpi);
	spin_unlock_irqrestore(&qpi->lock, flags);

	kmad_port_stat_inc(qpi->port, KMAD_PSTAT_SENT);
	/* Every completion with an error, a flush replayed included. */
	if (wc->status != KMAD_WC_SUCCESS)
		kmad_port_stat_inc(qpi->port, KMAD_PSTAT_SEND_ERRORS);
	if (kick)
		queue_work(kmad_wq, &qpi->cq.drain_work);
	if (replay)
		return;
	kmad_send_hw_done(wr, status);
}

/**
 * kmad_qp_recv_returned() - the provider gave back a receive buffer.
 * @qpi: the QP.
 * @flushed: it came back flushed (the QP is in error).
 *
 * Context: CQ drain.
 */
void kmad_qp_recv_returned(struct kmad_qp_info *qpi, bool flushed)
{
	unsigned long flags;

	spin_lock_irqsave(&qpi->lock, flags);
	qpi->rq_posted--;
	qp_cqe_reaped(qpi, flushed);
	spin_unlock_irqrestore(&qpi->lock, flags);
}

/* Complete the sends the provider refused or a dying QP did not take. */
static void qp_complete_failed(struct kmad_qp_info *qpi)
{
	struct kmad_send_wr *wr;
	enum kmad_wc_status status;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&qpi->lock, flags);
		wr = list_first_entry_or_null(&qpi->failed, struct kmad_send_wr,
					      qp_entry);
		if (wr) {
			list_del_init(&wr->qp_entry);
			qp_send_idle(qpi, wr);
			status = wr->hw_status;
			/* A given-up QP's sends end with a local error, as its
			 * flushes do (kmad_qp_send_cqe_done()), FLUSHED once the
			 * port is going away.
			 */
			if (status == KMAD_WC_LOC_ERR &&
			    qpi->run == KMAD_QP_FAILED &&
			    READ_ONCE(qpi->port->dying))
				status = KMAD_WC_FLUSH_ERR;
		}
		spin_unlock_irqrestore(&qpi->lock, flags);
		if (!wr)
			return;
		kmad_port_stat_inc(qpi->port, KMAD_PSTAT_SEND_ERRORS);
		kmad_send_hw_done(wr, status);
	}
}

/*
 * Poll up to @max CQEs and handle them; returns how many.  A provider
 * that breaks poll_cq()'s rules (more entries than asked, an entry
 * without the context kmad posted) is a kernel bug: warned,
 * and what cannot be handled is left alone rather than followed.
 */
static int cq_poll(struct kmad_cq *cq, int max)
{
	const struct kmad_provider_ops *ops = qp_ops(cq->info);
	struct kmad_wc wc[KMAD_POLL_BATCH];
	int total = 0, asked, n, i;

	while (total < max) {
		asked = min(max - total, KMAD_POLL_BATCH);
		n = ops->poll_cq(cq, asked, wc);
		if (n <= 0)
			break;	/* a negative value: empty (provider.h) */
		if (WARN_ON_ONCE(n > asked))
			n = asked;
		for (i = 0; i < n; i++) {
			if (WARN_ON_ONCE(!wc[i].cqe))
				continue;
			wc[i].cqe->done(cq, &wc[i]);
		}
		total += n;
	}
	return total;
}

/* Reap @cq: poll, re-arm, poll again (kmad_cq_drain_work()). */
static void cq_drain(struct kmad_cq *cq)
{
	struct kmad_qp_info *qpi = cq->info;
	const struct kmad_provider_ops *ops = qp_ops(qpi);
	bool armed = false;
	int done = 0, n;
	unsigned long flags;

	if (test_and_clear_bit(KMAD_QP_FATAL_PENDING, &qpi->flags)) {
		spin_lock_irqsave(&qpi->lock, flags);
		qp_start_recovery(qpi);
		/* The event may come late, after its flush completions were
		 * reaped and a recovery already reset the QP: have the
		 * recovery work move the QP to the error state, so that the
		 * provider gives everything back and recovery can go on.  At
		 * worst that costs one more recovery.
		 */
		if (qpi->run == KMAD_QP_RECOVERING)
			qp_recover_via_err(qpi);
		spin_unlock_irqrestore(&qpi->lock, flags);
	}
	qp_complete_failed(qpi);
	spin_lock_irqsave(&qpi->lock, flags);
	if (qpi->run == KMAD_QP_DOWN) {
		/* Destroyed: the CQ belongs to nobody now. */
		spin_unlock_irqrestore(&qpi->lock, flags);
		return;
	}
	spin_unlock_irqrestore(&qpi->lock, flags);
	for (;;) {
		n = cq_poll(cq, cq->budget - done);
		done += n;
		if (done >= cq->budget) {
			/* Out of budget: go to the back of the queue. */
			kmad_port_stat_inc(qpi->port, KMAD_PSTAT_CQ_REQUEUES);
			queue_work(kmad_wq, &cq->drain_work);
			return;
		}
		if (n) {
			armed = false;
			continue;
		}
		/* Empty.  If we re-armed before this poll, we are done:
		 * anything arriving from now on raises an event.  Else
		 * re-arm and poll once more, for a CQE that landed between
		 * the last poll and the re-arm (an IBTA HCA raises no event
		 * for it).  This does not rely on the provider's
		 * KMAD_CQ_REPORT_MISSED_EVENTS support.
		 */
		if (armed)
			break;
		armed = true;
		/* provider.h: it must not fail, or the CQ stays silent. */
		WARN_ON_ONCE(ops->req_notify_cq(cq, KMAD_CQ_NEXT_COMP) < 0);
	}
	if (!done)
		kmad_port_stat_inc(qpi->port, KMAD_PSTAT_CQ_EMPTY_EVENTS);
}

/**
 * kmad_cq_drain_work() - reap a CQ: poll, re-arm, poll again.
 * @work: &kmad_cq.drain_work.
 */
void kmad_cq_drain_work(struct work_struct *work)
{
	cq_drain(container_of(work, struct kmad_cq, drain_work));
	kmad_work_ended();
}

/**
 * kmad_cq_event() - the provider signals a completion event on @cq.
 * @cq: the CQ.
 *
 * Context: any, including hard interrupt context.
 */
void kmad_cq_event(struct kmad_cq *cq)
{
	kmad_port_stat_inc(cq->info->port, KMAD_PSTAT_CQ_EVENTS);
	queue_work(kmad_wq, &cq->drain_work);
}
EXPORT_SYMBOL_GPL(kmad_cq_event);

/**
 * kmad_qp_event() - the provider reports an asynchronous QP event.
 * @qp: the QP.
 * @event: what happened.
 *
 * Context: any.  A fatal event starts error recovery: everything the
 * provider holds must come back flushed, then the QP is reset.
 */
void kmad_qp_event(struct kmad_qp *qp, enum kmad_qp_event_type event)
{
	struct kmad_qp_info *qpi = qp->info;

	if (event != KMAD_QP_EVENT_FATAL)
		return;
	/* The drain starts recovery in process context; it also reaps the
	 * flush CQEs, which may come with no completion event.
	 */
	set_bit(KMAD_QP_FATAL_PENDING, &qpi->flags);
	queue_work(kmad_wq, &qpi->cq.drain_work);
}
EXPORT_SYMBOL_GPL(kmad_qp_event);

/*
 * The provider failed to move the QP to the error state, or to reset it
 * to RTS.  Try again later, backing off, or after KMAD_QP_RECOVER_TRIES
 * tries give the QP up: it becomes FAILED, and every send waiting for it
 * (replay and overflow lists), and every send queued on it later, ends
 * with a local error from the drain.
 * Context: recover_work.
 */
static void qp_recover_failed(struct kmad_qp_info *qpi, int err)
{
	struct kmad_send_wr *wr;
	unsigned long flags;
	unsigned int delay_ms;
	bool given_up;

	if (++qpi->recover_tries < KMAD_QP_RECOVER_TRIES) {
		delay_ms = KMAD_QP_RECOVER_BACKOFF_MS << (qpi->recover_tries - 1);
		pr_warn_ratelimited("kmad: %s port %u QP%u: recovery failed: %d; retrying in %u ms\n",
				    qpi->port->dev->name, qpi->port->port_num,
				    qpi->qp.qpn, err, delay_ms);
		queue_delayed_work(kmad_wq, &qpi->recover_work,
				   msecs_to_jiffies(delay_ms));
		return;
	}
	/* Unless the port went away meanwhile (its stop moves the QP). */
	spin_lock_irqsave(&qpi->lock, flags);
	given_up = qpi->run == KMAD_QP_RECOVERING;
	if (given_up) {
		qpi->run = KMAD_QP_FAILED;
		list_splice_tail_init(&qpi->replay, &qpi->failed);
		list_splice_tail_init(&qpi->ah_wait, &qpi->failed);
		list_splice_tail_init(&qpi->overflow, &qpi->failed);
		list_for_each_entry(wr, &qpi->failed, qp_entry)
			wr->hw_status = KMAD_WC_LOC_ERR;
	}
	spin_unlock_irqrestore(&qpi->lock, flags);
	if (!given_up)
		return;
	pr_err("kmad: %s port %u QP%u: recovery failed %u times (last: %d); giving the QP up: its sends fail until the port goes away\n",
	       qpi->port->dev->name, qpi->port->port_num, qpi->qp.qpn,
	       qpi->recover_tries, err);
	queue_work(kmad_wq, &qpi->cq.drain_work);
}

static void qp_recover(struct kmad_qp_info *qpi)
{
	unsigned long flags;
	const struct kmad_provider_ops *ops = qp_ops(qpi);
	bool kick, recovering;
	int ret;

	/*
	 * Every modify_qp of a recovery runs here, one at a time.  A move
	 * to the error state that fails leaves the provider holding the
	 * receives (and any send) the recovery waits for: tried again
	 * after the same backoff as a failed reset, or the QP given up.
	 */
	if (test_and_clear_bit(KMAD_QP_FLUSH_PENDING, &qpi->flags)) {
		/*
		 * Asked for by a fatal event handled while a recovery reset
		 * the QP, it may come once that recovery ended: the move
		 * starts a recovery as a flush does (its refusals count, and
		 * give the QP up, only in one).  A QP given up or going away
		 * has nothing to recover.
		 */
		spin_lock_irqsave(&qpi->lock, flags);
		if (qpi->run == KMAD_QP_RUNNING)
			qpi->run = KMAD_QP_RECOVERING;
		recovering = qpi->run == KMAD_QP_RECOVERING;
		spin_unlock_irqrestore(&qpi->lock, flags);
		if (!recovering)
			return;
		ret = ops->modify_qp(&qpi->qp, KMAD_QPS_ERR);
		if (ret) {
			set_bit(KMAD_QP_FLUSH_PENDING, &qpi->flags);
			qp_recover_failed(qpi, ret);
			return;
		}
	}

	spin_lock_irqsave(&qpi->lock, flags);
	if (qpi->run != KMAD_QP_RECOVERING || !qp_quiet(qpi)) {
		spin_unlock_irqrestore(&qpi->lock, flags);
		return;
	}
	spin_unlock_irqrestore(&qpi->lock, flags);

	qp_test_hook(KMAD_TEST_QP_RESET, qpi);
	ret = ops->modify_qp(&qpi->qp, KMAD_QPS_RESET);
	if (!ret)
		ret = ops->modify_qp(&qpi->qp, KMAD_QPS_RTS);
	if (ret) {
		qp_recover_failed(qpi, ret);
		return;
	}
	qpi->recover_tries = 0;

	spin_lock_irqsave(&qpi->lock, flags);
	if (qpi->run == KMAD_QP_RECOVERING)
		qpi->run = KMAD_QP_RUNNING;
	spin_unlock_irqrestore(&qpi->lock, flags);
	kmad_port_stat_inc(qpi->port, KMAD_PSTAT_QP_RECOVERIES);
	kmad_recv_refill(qpi);

	spin_lock_irqsave(&qpi->lock, flags);
	kick = qp_post_waiting(qpi);
	spin_unlock_irqrestore(&qpi->lock, flags);
	if (kick)
		queue_work(kmad_wq, &qpi->cq.drain_work);
}

static void qp_recover_work(struct work_struct *work)
{
	qp_recover(container_of(to_delayed_work(work), struct kmad_qp_info,
				recover_work));
	kmad_work_ended();
}

static void qp_refill_work(struct work_struct *work)
{
	kmad_recv_refill(container_of(to_delayed_work(work),
				      struct kmad_qp_info, refill_work));
	kmad_work_ended();
}

/*
 * First step of teardown: mark the QP down, then wait for its works.  In
 * that order: a drain already past its check of the run state finishes
 * before this returns, and every drain queued from now on (by a CQ event
 * the provider still raises) finds the QP down and touches neither QP nor
 * CQ, so the provider may destroy them.
 */
static void qp_mark_down(struct kmad_qp_info *qpi)
{
	unsigned long flags;

	spin_lock_irqsave(&qpi->lock, flags);
	qpi->run = KMAD_QP_DOWN;
	spin_unlock_irqrestore(&qpi->lock, flags);
	cancel_work_sync(&qpi->cq.drain_work);
	qp_test_hook(KMAD_TEST_QP_DESTROY, qpi);
	cancel_delayed_work_sync(&qpi->recover_work);
	cancel_delayed_work_sync(&qpi->refill_work);
}

/*
 * Last step of teardown, once the provider destroyed the CQ: an event it
 * raised until then may have queued one more drain.  That drain finds
 * the QP down and does nothing, but must not run after the QP is freed.
 */
static void qp_forget_drain(struct kmad_qp_info *qpi)
{
	cancel_work_sync(&qpi->cq.drain_work);
}

/**
 * kmad_qp_create() - create a port's QP and CQ, bring it to RTS, arm the
 * CQ and post its receive buffers.
 * @qpi: the QP info, with port and qpt set.
 *
 * Context: process context (device registration).
 * Return: 0 or a negative errno; nothing is left behind on error.
 */
int kmad_qp_create(struct kmad_qp_info *qpi)
{
	const struct kmad_provider_ops *ops = qp_ops(qpi);
	struct kmad_port *port = qpi->port;
	int ret;
	unsigned long flags;

	spin_lock_init(&qpi->lock);
	INIT_LIST_HEAD(&qpi->overflow);
	INIT_LIST_HEAD(&qpi->replay);
	INIT_LIST_HEAD(&qpi->failed);
	INIT_LIST_HEAD(&qpi->ah_wait);
	INIT_DELAYED_WORK(&qpi->recover_work, qp_recover_work);
	INIT_DELAYED_WORK(&qpi->refill_work, qp_refill_work);
	qpi->recover_tries = 0;
	qpi->sq_depth = port->attr.sq_depth ?: KMAD_DEFAULT_SQ_DEPTH;
	qpi->rq_depth = port->attr.rq_depth ?: KMAD_DEFAULT_RQ_DEPTH;
	qpi->run = KMAD_QP_DOWN;
	qpi->qp.info = qpi;
	qpi->qp.qpn = qpi->qpt == KMAD_QPT_SMI ? 0 : 1;
	qpi->qp.hw_qpn = qpi->qp.qpn;
	qpi->cq.info = qpi;
	qpi->cq.budget = KMAD_CQ_BUDGET;
	INIT_WORK(&qpi->cq.drain_work, kmad_cq_drain_work);

	ret = ops->create_cq(&qpi->cq, qpi->sq_depth + qpi->rq_depth);
	if (ret)
		return ret;
	ret = ops->create_qp(&qpi->qp, &qpi->cq, qpi->sq_depth,
			     qpi->rq_depth);
	if (ret)
		goto err_destroy_cq;
	ret = ops->modify_qp(&qpi->qp, KMAD_QPS_RTS);
	if (ret)
		goto err_destroy_qp;
	spin_lock_irqsave(&qpi->lock, flags);
	qpi->run = KMAD_QP_RUNNING;
	spin_unlock_irqrestore(&qpi->lock, flags);
	/* Arm before the first receive buffer is posted: on a CQ that
	 * raises events only for CQEs arriving after arming (IBTA), a
	 * receive completing before the arming would raise none, and no
	 * drain would run to reap it.
	 */
	ret = ops->req_notify_cq(&qpi->cq, KMAD_CQ_NEXT_COMP);
	if (ret < 0)
		goto err_stop;
	ret = kmad_recv_refill(qpi);
	if (ret)
		goto err_stop;
	return 0;

err_stop:
	kmad_qp_stop(qpi);
err_destroy_qp:
	qp_mark_down(qpi);
	ops->destroy_qp(&qpi->qp);
err_destroy_cq:
	ops->destroy_cq(&qpi->cq);
	qp_forget_drain(qpi);
	return ret;
}

/**
 * kmad_qp_stop() - flush a QP for good: move it to the error state and reap
 * until the provider holds nothing.
 * @qpi: the QP.
 *
 * Every send the provider held, and every send still waiting for a slot,
 * completes as flushed; receive buffers are freed.  Does not rely on
 * completion events: it drains the CQ itself.  A move to the error state
 * that fails is tried again while the provider holds anything.
 *
 * Context: process context, may sleep.
 */
void kmad_qp_stop(struct kmad_qp_info *qpi)
{
	const struct kmad_provider_ops *ops = qp_ops(qpi);
	struct kmad_send_wr *wr, *tmp;
	int rounds = 0, err;
	unsigned int sends, recvs;
	bool quiet;
	unsigned long flags;

	qp_test_hook(KMAD_TEST_QP_STOP, qpi);
	spin_lock_irqsave(&qpi->lock, flags);
	qpi->run = KMAD_QP_DYING;
	list_splice_tail_init(&qpi->replay, &qpi->failed);
	list_splice_tail_init(&qpi->ah_wait, &qpi->failed);
	list_splice_tail_init(&qpi->overflow, &qpi->failed);
	list_for_each_entry_safe(wr, tmp, &qpi->failed, qp_entry)
		wr->hw_status = KMAD_WC_FLUSH_ERR;
	spin_unlock_irqrestore(&qpi->lock, flags);

	cancel_delayed_work_sync(&qpi->recover_work);
	/* Until it succeeds: else the provider keeps the receives. */
	err = ops->modify_qp(&qpi->qp, KMAD_QPS_ERR);
	do {
		queue_work(kmad_wq, &qpi->cq.drain_work);
		flush_work(&qpi->cq.drain_work);
		spin_lock_irqsave(&qpi->lock, flags);
		quiet = qp_quiet(qpi) && list_empty(&qpi->failed);
		sends = qpi->sq_posted;
		recvs = qpi->rq_posted;
		spin_unlock_irqrestore(&qpi->lock, flags);
		if (!quiet && ++rounds % 1000 == 0)
			pr_warn("kmad: %s port %u QP%u: %u sends, %u receives still held by the provider\n",
				qpi->port->dev->name, qpi->port->port_num,
				qpi->qp.qpn, sends, recvs);
		if (!quiet && err)
			err = ops->modify_qp(&qpi->qp, KMAD_QPS_ERR);
		if (!quiet)
			usleep_range(100, 1000);
	} while (!quiet);
}

/**
 * kmad_qp_destroy() - destroy a stopped QP and its CQ.
 * @qpi: the QP, after kmad_qp_stop().
 */
void kmad_qp_destroy(struct kmad_qp_info *qpi)
{
	const struct kmad_provider_ops *ops = qp_ops(qpi);

	qp_mark_down(qpi);
	ops->destroy_qp(&qpi->qp);
	ops->destroy_cq(&qpi->cq);
	qp_forget_drain(qpi);
}

void kmad_qp_set_priv(struct kmad_qp *qp, void *priv)
{
	qp->priv = priv;
}
EXPORT_SYMBOL_GPL(kmad_qp_set_priv);

void *kmad_qp_priv(const struct kmad_qp *qp)
{
	return qp->priv;
}
EXPORT_SYMBOL_GPL(kmad_qp_priv);

u32 kmad_qp_num(const struct kmad_qp *qp)
{
	return qp->qpn;
}
EXPORT_SYMBOL_GPL(kmad_qp_num);

/**
 * kmad_qp_set_hw_num() - the provider's own number for a QP.
 * @qp: the QP, from create_qp().
 * @qpn: the number its peers see as the source QP of its sends.
 *
 * Context: create_qp(), before kmad uses the QP.
 */
void kmad_qp_set_hw_num(struct kmad_qp *qp, u32 qpn)
{
	WRITE_ONCE(qp->hw_qpn, qpn);
}
EXPORT_SYMBOL_GPL(kmad_qp_set_hw_num);

/**
 * kmad_qp_hw_num() - the QP's number on the wire.
 * @qp: the QP.
 *
 * Return: what the provider set with kmad_qp_set_hw_num(), else
 * kmad_qp_num() (0 or 1).
 */
u32 kmad_qp_hw_num(const struct kmad_qp *qp)
{
	return READ_ONCE(qp->hw_qpn);
}
EXPORT_SYMBOL_GPL(kmad_qp_hw_num);

u8 kmad_qp_port_num(const struct kmad_qp *qp)
{
	return qp->info->port->port_num;
}
EXPORT_SYMBOL_GPL(kmad_qp_port_num);

struct kmad_device *kmad_qp_device(const struct kmad_qp *qp)
{
	return qp->info->port->dev;
}
EXPORT_SYMBOL_GPL(kmad_qp_device);

void kmad_cq_set_priv(struct kmad_cq *cq, void *priv)
{
	cq->priv = priv;
}
EXPORT_SYMBOL_GPL(kmad_cq_set_priv);

void *kmad_cq_priv(const struct kmad_cq *cq)
{
	return cq->priv;
}
EXPORT_SYMBOL_GPL(kmad_cq_priv);

struct kmad_device *kmad_cq_device(const struct kmad_cq *cq)
{
	return cq->info->port->dev;
}
EXPORT_SYMBOL_GPL(kmad_cq_device);
