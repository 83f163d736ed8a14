// SPDX-License-Identifier: GPL-2.0
/*
 * kmad send tracking: the life of a posted MAD.
 *
 * Every state change of a send goes through send_set_state(), which checks
 * that the transition is allowed, that the send holds exactly the number of
 * references the contract gives its new state, and derives the send's
 * membership in the agent's TID table, deadline wheel and send list from the
 * state.  The events that drive it are:
 *
 *   post            kmad_post_send()                       caller context
 *   send completion kmad_send_hw_done()                    CQ drain
 *   response        kmad_send_response()                   CQ drain
 *   timeout         agent_expire()                         agent work
 *   cancel/flush    send_cancel_locked()                   caller context
 *
 * References, as in the 2004 design: a send that expects a response holds
 * two (send completion, response-or-timeout), one without a timeout.
 * Cancel drops the response reference only if a timeout was set.  The
 * callback runs when the count reaches zero, which can only happen after
 * the send completion dropped its reference.
 *
 * Timeouts: one delayed work per agent, queued for the next time the
 * agent's timing wheel (wheel.c: O(1) add, remove and expiry, exact to the
 * tick) needs it, and only re-queued when a new deadline comes sooner.
 * With a provider clock (step mode) no timer is armed;
 * kmad_device_clock_changed() kicks the work instead.
 */

#include <linux/jiffies.h>
#include <linux/slab.h>

#include "kmad_priv.h"
#include "trace.h"

static const char *const kmad_send_state_names[KMAD_SS_NR_STATES] = {
	[KMAD_SS_INIT] = "init",
	[KMAD_SS_SENDING] = "sending",
	[KMAD_SS_EARLY_RESP] = "early_resp",
	[KMAD_SS_WAIT_RESP] = "wait_resp",
	[KMAD_SS_CANCELED] = "canceled",
	[KMAD_SS_DONE] = "done",
};

/* The only transitions a send may make; see Documentation/. */
static const bool kmad_send_allowed[KMAD_SS_NR_STATES][KMAD_SS_NR_STATES] = {
	[KMAD_SS_INIT] = {
		[KMAD_SS_SENDING] = true,
	},
	[KMAD_SS_SENDING] = {
		[KMAD_SS_EARLY_RESP] = true,
		[KMAD_SS_WAIT_RESP] = true,
		[KMAD_SS_CANCELED] = true,
		[KMAD_SS_DONE] = true,
	},
	[KMAD_SS_EARLY_RESP] = {
		[KMAD_SS_DONE] = true,
	},
	[KMAD_SS_WAIT_RESP] = {
		[KMAD_SS_SENDING] = true,	/* retry after a timeout */
		[KMAD_SS_DONE] = true,
	},
	[KMAD_SS_CANCELED] = {
		[KMAD_SS_DONE] = true,
	},
	[KMAD_SS_DONE] = {
		[KMAD_SS_INIT] = true,	/* callback delivered */
	},
};

const char *kmad_send_state_name(enum kmad_send_state state)
{
	if (state >= KMAD_SS_NR_STATES)
		return "invalid";
	return kmad_send_state_names[state];
}

/* The references the contract gives a send in @state. */
static unsigned int send_expected_refs(const struct kmad_send_wr *wr,
				       enum kmad_send_state state)
{
	switch (state) {
	case KMAD_SS_SENDING:
		return wr->expects_resp ? 2 : 1;
	case KMAD_SS_EARLY_RESP:	/* send completion */
	case KMAD_SS_WAIT_RESP:	/* response or timeout */
	case KMAD_SS_CANCELED:	/* send completion */
		return 1;
	default:
		return 0;
	}
}

/* Whether a response may match the send in @state. */
static bool send_matchable(const struct kmad_send_wr *wr,
			   enum kmad_send_state state)
{
	return state == KMAD_SS_WAIT_RESP ||
	       (state == KMAD_SS_SENDING && wr->expects_resp);
}

static bool send_on_agent_list(enum kmad_send_state state)
{
	return state != KMAD_SS_INIT && state != KMAD_SS_DONE;
}

/*
 * The TID table has grown (or shrunk) past its size: have the agent's work
 * resize it, once.  Resizing allocates, which cannot be done here: the
 * agent lock may be held with interrupts off.
 */
static void agent_tids_check_size(struct kmad_agent_priv *agent)
{
	lockdep_assert_held(&agent->lock);
	if (agent->tids_resize ||
	    kmad_tid_wanted_bits(&agent->tids) == agent->tids.bits)
		return;
	agent->tids_resize = true;
	kmad_agent_run_now(agent);
}

/*
 * send_set_state() - the one place a send changes state.
 *
 * The caller has already adjusted wr->refs for the event; this checks the
 * transition and the count, and moves the send in or out of the TID table
 * (matchable states), the deadline wheel (WAIT_RESP) and the agent's send
 * list (posted and not DONE).  Returns 0, or -EEXIST when entering a
 * matchable state would duplicate an outstanding TID (post only).
 */
static int send_set_state(struct kmad_send_wr *wr, enum kmad_send_state new)
{
	struct kmad_agent_priv *agent = wr->agent;
	enum kmad_send_state old = wr->state;
	bool was_match, is_match;
	int ret;

	lockdep_assert_held(&agent->lock);

	if (WARN_ONCE(!kmad_send_allowed[old][new] ||
		      wr->refs != send_expected_refs(wr, new),
		      "kmad: send tid %#llx: bad transition %s -> %s with %u refs\n",
		      wr->tid.tid, kmad_send_state_name(old),
		      kmad_send_state_name(new), wr->refs))
		return -EINVAL;

	was_match = send_matchable(wr, old);
	is_match = send_matchable(wr, new);
	if (!was_match && is_match) {
		ret = kmad_tid_add(&agent->tids, &wr->tid);
		if (ret)
			return ret;
		agent_tids_check_size(agent);
	} else if (was_match && !is_match) {
		kmad_tid_del(&agent->tids, &wr->tid);
		agent_tids_check_size(agent);
	}

	if (old == KMAD_SS_WAIT_RESP)
		kmad_wheel_del(&agent->deadlines, &wr->deadline_node);
	if (new == KMAD_SS_WAIT_RESP)
		kmad_wheel_add(&agent->deadlines, &wr->deadline_node,
			       wr->deadline);

	if (!send_on_agent_list(old) && send_on_agent_list(new))
		list_add_tail(&wr->agent_entry, &agent->sends);
	else if (send_on_agent_list(old) && !send_on_agent_list(new))
		list_del_init(&wr->agent_entry);

	wr->state = new;
	return 0;
}

static void send_put_ref(struct kmad_send_wr *wr)
{
	lockdep_assert_held(&wr->agent->lock);
	if (!WARN_ON_ONCE(!wr->refs))
		wr->refs--;
}

static bool agent_has_clock(struct kmad_agent_priv *agent)
{
	struct kmad_device *dev = agent->qpi->port->dev;

	return !READ_ONCE(dev->gone) && dev->ops->now;
}

/*
 * Queue the agent's work for when its wheel next needs it (real clock
 * only), unless it is already queued for then or sooner.
 */
static void agent_arm_timer(struct kmad_agent_priv *agent)
{
	u64 when, now;

	lockdep_assert_held(&agent->lock);
	if (!list_empty(&agent->done)) {
		/* A callback is pending: run now, re-arm after. */
		kmad_agent_run_now(agent);
		return;
	}
	if (agent_has_clock(agent) ||
	    !kmad_wheel_next(&agent->deadlines, &when) ||
	    when >= agent->timer_at)
		return;
	now = kmad_now(agent->qpi->port);
	agent->timer_at = when;
	kmad_agent_queue_work(agent,
			      when > now ? (unsigned long)(when - now) : 0);
}

static void agent_stat_inc(struct kmad_agent_priv *agent,
			   enum kmad_agent_stat s)
{
	atomic64_inc(&agent->stats[s]);
}

/*
 * How late a timeout callback runs: from the deadline that expired to now.
 * The worst is kept for kmad_agent_get_stats() and debugfs.  Not counted
 * once the device is gone: kmad_now() would then answer in jiffies, which
 * the deadline may not have been measured in.
 */
static void agent_note_lateness(struct kmad_agent_priv *agent,
				struct kmad_send_wr *wr)
{
	u64 now;

	lockdep_assert_held(&agent->lock);
	if (!kmad_port_clock(agent->qpi->port, &now))
		return;
	if (now > wr->deadline && now - wr->deadline > agent->timeout_late_max)
		agent->timeout_late_max = now - wr->deadline;
}

/* A send reached DONE in caller context: queue its callback to the work. */
static void send_defer_done(struct kmad_send_wr *wr)
{
	struct kmad_agent_priv *agent = wr->agent;

	lockdep_assert_held(&agent->lock);
	list_add_tail(&wr->agent_entry, &agent->done);
	kmad_agent_run_now(agent);
}

static void send_count_outcome(struct kmad_send_wr *wr)
{
	struct kmad_agent_priv *agent = wr->agent;
	struct kmad_port *port = agent->qpi->port;

	switch (wr->status) {
	case KMAD_SEND_RESP_TIMEOUT:
		agent_stat_inc(agent, KMAD_ASTAT_TIMEOUTS);
		kmad_port_stat_inc(port, KMAD_PSTAT_TIMEOUTS);
		break;
	case KMAD_SEND_CANCELED:
		agent_stat_inc(agent, KMAD_ASTAT_CANCELED);
		kmad_port_stat_inc(port, KMAD_PSTAT_CANCELED);
		break;
	case KMAD_SEND_FLUSHED:
		agent_stat_inc(agent, KMAD_ASTAT_FLUSHED);
		kmad_port_stat_inc(port, KMAD_PSTAT_FLUSHED);
		break;
	default:
		break;
	}
	agent_stat_inc(agent, KMAD_ASTAT_COMPLETED);
}

/*
 * Deliver a DONE send's outcome: a parked response first, then the send
 * callback.  Runs in the agent's work with no lock held.  While
 * recv_handler runs the send stays DONE, so the buffer is still posted for
 * the ULP (post: -EINVAL, cancel/modify: -EALREADY); it becomes INIT, free
 * to be freed or posted again, just before send_handler.  The send may be
 * freed or reposted by send_handler, so it is not touched afterwards; the
 * agent reference the send held is dropped last.
 */
static void send_deliver(struct kmad_send_wr *wr)
{
	struct kmad_agent_priv *agent = wr->agent;
	struct kmad_recv_priv *resp;
	struct kmad_send_wc wc;
	unsigned long flags;

	spin_lock_irqsave(&agent->lock, flags);
	resp = wr->early_resp;
	wr->early_resp = NULL;
	wc.send_buf = &wr->buf;
	wc.status = wr->status;
	if (wc.status == KMAD_SEND_RESP_TIMEOUT)
		agent_note_lateness(agent, wr);
	trace_kmad_send_callback(wr);
	send_count_outcome(wr);
	if (!resp)
		send_set_state(wr, KMAD_SS_INIT);
	spin_unlock_irqrestore(&agent->lock, flags);

	if (resp) {
		if (agent->agent.recv_handler)
			agent->agent.recv_handler(&agent->agent, &wr->buf,
						  &resp->wc);
		else
			kmad_recv_free(resp);
		spin_lock_irqsave(&agent->lock, flags);
		send_set_state(wr, KMAD_SS_INIT);
		spin_unlock_irqrestore(&agent->lock, flags);
	}
	agent->agent.send_handler(&agent->agent, &wc);
	kmad_agent_put(agent);
}

static enum kmad_send_status send_status_from_wc(enum kmad_wc_status s)
{
	return s == KMAD_WC_FLUSH_ERR ? KMAD_SEND_FLUSHED :
					KMAD_SEND_LOCAL_ERROR;
}

/**
 * kmad_send_hw_done() - the hardware completed a send.
 * @wr: the send.
 * @status: its completion status.
 *
 * Context: CQ drain (kmad_wq), no lock held.  The send's callback, if this
 * ends it, runs later from the agent's work: no ULP handler runs in a CQ
 * drain, so a handler may wait for anything that needs the drain
 * (unregistering another agent of the QP, device removal).
 */
void kmad_send_hw_done(struct kmad_send_wr *wr, enum kmad_wc_status status)
{
	struct kmad_agent_priv *agent = wr->agent;
	unsigned long flags;
	u64 now;

	spin_lock_irqsave(&agent->lock, flags);
	trace_kmad_send_hw_done(wr);
	switch (wr->state) {
	case KMAD_SS_SENDING:
		send_put_ref(wr);			/* send completion */
		if (status != KMAD_WC_SUCCESS) {
			if (wr->expects_resp)
				send_put_ref(wr);	/* no response now */
			wr->status = send_status_from_wc(status);
			send_set_state(wr, KMAD_SS_DONE);
			send_defer_done(wr);
		} else if (wr->expects_resp) {
			now = kmad_now(agent->qpi->port);
			wr->deadline = now + msecs_to_jiffies(wr->timeout_ms);
			kmad_wheel_sync(&agent->deadlines, now);
			send_set_state(wr, KMAD_SS_WAIT_RESP);
			agent_arm_timer(agent);
		} else {
			wr->status = KMAD_SEND_OK;
			send_set_state(wr, KMAD_SS_DONE);
			send_defer_done(wr);
		}
		break;
	case KMAD_SS_EARLY_RESP:
	case KMAD_SS_CANCELED:
		send_put_ref(wr);			/* send completion */
		send_set_state(wr, KMAD_SS_DONE);
		send_defer_done(wr);
		break;
	default:
		WARN_ONCE(1, "kmad: send completion for a send in state %s\n",
			  kmad_send_state_name(wr->state));
		break;
	}
	spin_unlock_irqrestore(&agent->lock, flags);
}

/*
 * Did @wc come back to the address request @wr left from (ib_mad's
 * rcv_has_same_gid(), request to response)?  With a GRH both ways, to the
 * GID the request was sent from; without, to the request's source path
 * bits (0: kmad sends from the base LID) within the port's LMC.  A
 * directed-route SMP is not checked (its LIDs are permissive), as in
 * ib_mad.
 */
static bool resp_same_addr(struct kmad_port *port,
			   const struct kmad_send_wr *wr,
			   const struct kmad_recv_wc *wc)
{
	u8 mask;

	if (wr->mad.mad_hdr.mgmt_class == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		return true;
	if (wr->ah_attr.grh_present != wc->grh_present)
		return false;
	if (wc->grh_present)
		return !memcmp(&wc->grh.dgid, &wr->sgid, sizeof(wr->sgid));
	mask = (1U << kmad_port_lmc(port)) - 1;
	return !(wc->dlid_path_bits & mask);
}

/**
 * kmad_send_response() - a response arrived for one of @agent's requests.
 * @agent: the agent whose hi_tid the response carries (a reference held).
 * @recv: the validated response; ownership passes to this function.
 *
 * Context: CQ drain.  Matches by TID (O(1) average, tid.c) and
 * management class, and by the address it came back to (resp_same_addr()),
 * not by the LID the response comes from: IBTA lets a port answer from any
 * LID of its LMC range, which the requester cannot know, and ib_mad does
 * not compare the responder's LID either (see
 * Documentation/send-lifecycle.rst).  A response that fails the address
 * check is unmatched (and counted as misaddressed too).  A response that arrives before the
 * send completion is parked on the send until the send completion.
 */
void kmad_send_response(struct kmad_agent_priv *agent,
			struct kmad_recv_priv *recv)
{
	const struct kmad_mad_hdr *hdr = &recv->mad.mad_hdr;
	struct kmad_port *port = agent->qpi->port;
	u64 tid = be64_to_cpu(hdr->tid);
	struct kmad_tid_entry *ent;
	struct kmad_send_wr *wr;
	unsigned long flags;

	spin_lock_irqsave(&agent->lock, flags);
	ent = kmad_tid_find(&agent->tids, tid);
	wr = ent ? container_of(ent, struct kmad_send_wr, tid) : NULL;
	/* Same TID and class; from whichever LID. */
	if (!wr || wr->mad.mad_hdr.mgmt_class != hdr->mgmt_class) {
		spin_unlock_irqrestore(&agent->lock, flags);
		kmad_port_stat_inc(port, KMAD_PSTAT_RESP_UNMATCHED);
		kmad_recv_free(recv);
		return;
	}
	/* To where the request came from. */
	if (!resp_same_addr(port, wr, &recv->wc)) {
		spin_unlock_irqrestore(&agent->lock, flags);
		kmad_port_stat_inc(port, KMAD_PSTAT_RESP_MISADDRESSED);
		kmad_port_stat_inc(port, KMAD_PSTAT_RESP_UNMATCHED);
		kmad_recv_free(recv);
		return;
	}

	trace_kmad_resp_match(wr);
	send_put_ref(wr);				/* response */
	wr->early_resp = recv;
	wr->status = KMAD_SEND_OK;
	if (wr->state == KMAD_SS_SENDING) {
		send_set_state(wr, KMAD_SS_EARLY_RESP);
	} else {
		send_set_state(wr, KMAD_SS_DONE);
		send_defer_done(wr);
	}
	spin_unlock_irqrestore(&agent->lock, flags);

	agent_stat_inc(agent, KMAD_ASTAT_RESP_MATCHED);
	kmad_port_stat_inc(port, KMAD_PSTAT_RESP_MATCHED);
}

/**
 * kmad_agent_queue_recv() - hand an unsolicited MAD to @agent's work.
 * @agent: the agent it was dispatched to; the caller's reference passes to
 *	the queued MAD and is dropped after recv_handler returns.
 * @recv: the validated request.
 *
 * Context: CQ drain.  recv_handler runs from the agent's work, as every
 * ULP handler does.
 */
void kmad_agent_queue_recv(struct kmad_agent_priv *agent,
			   struct kmad_recv_priv *recv)
{
	unsigned long flags;

	spin_lock_irqsave(&agent->lock, flags);
	list_add_tail(&recv->agent_entry, &agent->recvs);
	kmad_agent_run_now(agent);
	spin_unlock_irqrestore(&agent->lock, flags);
}

/*
 * Cancel or flush one send, under its agent's lock.  Returns 0 if this
 * decided its outcome, -EALREADY if it was already decided, -EINVAL if it
 * is not posted.  Sends that end here are queued to the agent's work; a
 * send still waiting for a QP slot is taken back from the QP (it never
 * reached the hardware) and ends at once.
 */
static int send_cancel_locked(struct kmad_send_wr *wr,
			      enum kmad_send_status status)
{
	struct kmad_agent_priv *agent = wr->agent;

	lockdep_assert_held(&agent->lock);
	switch (wr->state) {
	case KMAD_SS_SENDING:
		trace_kmad_cancel(wr);
		if (wr->expects_resp)
			send_put_ref(wr);		/* response */
		wr->status = status;
		send_set_state(wr, KMAD_SS_CANCELED);
		/* Under the agent lock, so the send cannot complete and be
		 * posted again in between.  If the provider holds it, its
		 * CQE ends it, even a flush: it is not sent again.
		 */
		if (kmad_qp_cancel(agent->qpi, wr)) {
			send_put_ref(wr);		/* send completion */
			send_set_state(wr, KMAD_SS_DONE);
			send_defer_done(wr);
		}
		return 0;
	case KMAD_SS_WAIT_RESP:
		trace_kmad_cancel(wr);
		send_put_ref(wr);			/* response */
		wr->status = status;
		send_set_state(wr, KMAD_SS_DONE);
		send_defer_done(wr);
		return 0;
	case KMAD_SS_INIT:
		return -EINVAL;
	default:
		return -EALREADY;
	}
}

/**
 * kmad_agent_flush_sends() - end everything @agent has outstanding.
 * @agent: an agent that is DYING (no new posts).
 * @status: the status the sends end with.
 *
 * Sends waiting for a response end at once; sends the hardware holds end
 * at their send completion.  Callbacks run from the agent's work.  One
 * walk under one hold of the agent lock: no send can end, and no handler
 * free it, while the walk looks at it.
 */
void kmad_agent_flush_sends(struct kmad_agent_priv *agent,
			    enum kmad_send_status status)
{
	struct kmad_send_wr *wr, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&agent->lock, flags);
	/* send_cancel_locked() may move @wr to the done list, never
	 * another send.
	 */
	list_for_each_entry_safe(wr, tmp, &agent->sends, agent_entry)
		send_cancel_locked(wr, status);
	spin_unlock_irqrestore(&agent->lock, flags);
}

/* Expire deadlines that have passed: retry or end with a timeout. */
static void agent_expire(struct kmad_agent_priv *agent)
{
	struct kmad_port *port = agent->qpi->port;
	struct kmad_send_wr *wr, *tmp;
	struct kmad_wheel_entry *due;
	unsigned long flags;
	LIST_HEAD(ended);

	spin_lock_irqsave(&agent->lock, flags);
	agent->timer_at = U64_MAX;	/* running now */
	/* No deadline, no clock: the agent of a removed device has none,
	 * and its provider must not be called any more.
	 */
	if (!agent->deadlines.count) {
		spin_unlock_irqrestore(&agent->lock, flags);
		return;
	}
	kmad_wheel_advance(&agent->deadlines, kmad_now(port));
	/* Each due send leaves the wheel as its state changes below. */
	while ((due = kmad_wheel_first_due(&agent->deadlines))) {
		wr = container_of(due, struct kmad_send_wr, deadline_node);
		if (wr->retries_left && agent->state == KMAD_AGENT_ACTIVE) {
			trace_kmad_retry(wr);
			wr->retries_left--;
			wr->refs++;			/* the new send completion */
			if (send_set_state(wr, KMAD_SS_SENDING))
				break;	/* warned; do not spin on it */
			/* Under the agent lock, as in kmad_post_send(). */
			kmad_qp_send(agent->qpi, wr);
			agent_stat_inc(agent, KMAD_ASTAT_RETRIES);
			kmad_port_stat_inc(port, KMAD_PSTAT_RETRIES);
		} else {
			trace_kmad_timeout(wr);
			send_put_ref(wr);		/* timeout */
			wr->status = KMAD_SEND_RESP_TIMEOUT;
			if (send_set_state(wr, KMAD_SS_DONE))
				break;	/* warned; do not spin on it */
			list_add_tail(&wr->agent_entry, &ended);
		}
	}
	agent_arm_timer(agent);
	spin_unlock_irqrestore(&agent->lock, flags);

	list_for_each_entry_safe(wr, tmp, &ended, agent_entry) {
		list_del_init(&wr->agent_entry);
		send_deliver(wr);
	}
}

/*
 * Give the TID table the size its count wants (agent_tids_check_size()).
 * The buckets are allocated here, in process context, and swapped in under
 * the lock if the count still wants that size.
 */
static void agent_resize_tids(struct kmad_agent_priv *agent)
{
	struct hlist_head *bucket;
	unsigned int bits;
	unsigned long flags;

	spin_lock_irqsave(&agent->lock, flags);
	agent->tids_resize = false;
	bits = kmad_tid_wanted_bits(&agent->tids);
	if (bits == agent->tids.bits) {
		spin_unlock_irqrestore(&agent->lock, flags);
		return;
	}
	spin_unlock_irqrestore(&agent->lock, flags);

	bucket = kmad_tid_alloc_buckets(bits);
	if (!bucket)
		return;	/* longer chains until the next change of size */
	spin_lock_irqsave(&agent->lock, flags);
	if (kmad_tid_wanted_bits(&agent->tids) == bits)
		bucket = kmad_tid_swap(&agent->tids, bucket, bits);
	spin_unlock_irqrestore(&agent->lock, flags);
	kmad_tid_free_buckets(bucket);
}

/**
 * kmad_agent_work() - an agent's deferred work: callbacks of sends that
 * ended in caller context, and expired deadlines.
 * @work: &kmad_agent_priv.work.
 */
void kmad_agent_work(struct work_struct *work)
{
	struct kmad_agent_priv *agent =
		container_of(to_delayed_work(work), struct kmad_agent_priv,
			     work);
	struct kmad_recv_priv *recv;
	struct kmad_send_wr *wr;
	unsigned long flags;

	/* The reference kmad_agent_queue_work() took for this run is ours
	 * until the end.
	 */
	agent_resize_tids(agent);
	agent_expire(agent);
	for (;;) {
		spin_lock_irqsave(&agent->lock, flags);
		wr = list_first_entry_or_null(&agent->done,
					      struct kmad_send_wr, agent_entry);
		if (wr)
			list_del_init(&wr->agent_entry);
		recv = wr ? NULL :
			list_first_entry_or_null(&agent->recvs,
						 struct kmad_recv_priv,
						 agent_entry);
		if (recv)
			list_del_init(&recv->agent_entry);
		spin_unlock_irqrestore(&agent->lock, flags);
		if (wr) {
			send_deliver(wr);
		} else if (recv) {
			agent->agent.recv_handler(&agent->agent, NULL,
						  &recv->wc);
			kmad_agent_put(agent);	/* the dispatch's */
		} else {
			break;
		}
	}
	kmad_agent_put(agent);	/* the queued work's; touch nothing after */
}

/* The agent's TID table and deadline wheel, empty. */
int kmad_agent_tables_init(struct kmad_agent_priv *agent)
{
	int ret;

	ret = kmad_wheel_init(&agent->deadlines, kmad_now(agent->qpi->port),
			      GFP_KERNEL);
	if (ret)
		return ret;
	ret = kmad_tid_init(&agent->tids, GFP_KERNEL);
	if (ret)
		kmad_wheel_destroy(&agent->deadlines);
	return ret;
}

void kmad_agent_tables_destroy(struct kmad_agent_priv *agent)
{
	kmad_tid_destroy(&agent->tids);
	kmad_wheel_destroy(&agent->deadlines);
}

/**
 * kmad_alloc_send_buf() - allocate a send buffer for @agent.
 * @agent: the agent that will post it.
 * @dest: where it goes.
 * @gfp: allocation flags.
 *
 * The MAD is zeroed; the caller fills it, and may set timeout_ms, retries
 * and context before posting.
 *
 * Context: any but hard interrupt with GFP_ATOMIC (see <kmad/mad.h>);
 * process context with GFP_KERNEL.
 *
 * Return: the buffer, or an ERR_PTR: -EINVAL for bad arguments, -ENOMEM.
 */
struct kmad_send_buf *kmad_alloc_send_buf(struct kmad_agent *agent,
					  const struct kmad_dest *dest,
					  gfp_t gfp)
{
	struct kmad_send_wr *wr;

	if (!agent || !dest)
		return ERR_PTR(-EINVAL);
	wr = kzalloc(sizeof(*wr), gfp);
	if (!wr)
		return ERR_PTR(-ENOMEM);
	wr->agent = kmad_agent_priv(agent);
	wr->cqe.done = kmad_qp_send_cqe_done;
	wr->state = KMAD_SS_INIT;
	wr->hw = KMAD_HW_IDLE;
	INIT_LIST_HEAD(&wr->agent_entry);
	INIT_LIST_HEAD(&wr->qp_entry);
	wr->buf.agent = agent;
	wr->buf.mad = &wr->mad;
	wr->buf.dest = *dest;
	return &wr->buf;
}
EXPORT_SYMBOL_GPL(kmad_alloc_send_buf);

/**
 * kmad_free_send_buf() - free a send buffer that is not posted.
 * @buf: the buffer; NULL is ignored.
 *
 * Freeing a posted buffer before its send_handler ran is a caller bug: it
 * is refused with a warning and the buffer is leaked rather than freed
 * under the hardware.
 *
 * Context: any but hard interrupt.
 */
void kmad_free_send_buf(struct kmad_send_buf *buf)
{
	struct kmad_send_wr *wr;

	if (!buf)
		return;
	wr = kmad_send_wr(buf);
	/* No agent lock: the agent may be gone already.  A buffer that is
	 * not posted is INIT and nobody else writes its state.
	 */
	if (WARN_ONCE(READ_ONCE(wr->state) != KMAD_SS_INIT,
		      "kmad: freeing a posted send buffer\n"))
		return;
	kfree(wr);
}
EXPORT_SYMBOL_GPL(kmad_free_send_buf);

/*
 * A directed-route SMP leaving this port takes the SMI's send step (hop
 * pointer, path check, IBTA C14-9/C14-13) as an HCA's SMI must; one whose
 * path does not start at this port is refused, unchanged.  A request whose
 * DrSLID, or a response whose DrDLID, is not permissive starts LID-routed:
 * no directed step here.  The step writes the MAD, so it is a post's last
 * check.
 */
static int send_smi_step(struct kmad_agent_priv *agent,
			 struct kmad_send_wr *wr)
{
	struct kmad_smp *smp = (struct kmad_smp *)&wr->mad;
	struct kmad_smi_node node;
	__be16 first_lid;

	lockdep_assert_held(&agent->lock);
	if (smp->mgmt_class != KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		return 0;
	first_lid = kmad_smp_is_returning(smp) ? smp->dr_dlid : smp->dr_slid;
	if (first_lid != cpu_to_be16(KMAD_PERMISSIVE_LID))
		return 0;
	kmad_port_smi_node(agent->qpi->port, &node);
	return kmad_smi_send(smp, &node) == KMAD_SMI_HANDLE ? 0 : -EINVAL;
}

/**
 * kmad_send_buf_set_dr_path() - address an SMP by directed route.
 * @buf: a send buffer of an agent on QP0, not posted.
 * @path: the outgoing port at each hop, @hop_cnt entries.
 * @hop_cnt: number of hops, 1-63.
 *
 * Makes the MAD a directed-route SMP (class 0x81) with an initial path of
 * @path, hop pointer 0, permissive DrSLID and DrDLID, and sends it to the
 * permissive LID on QP0.  The caller fills the rest of the SMP.
 *
 * Return: 0, or -EINVAL for bad arguments.
 */
int kmad_send_buf_set_dr_path(struct kmad_send_buf *buf, const u8 *path,
			      u8 hop_cnt)
{
	struct kmad_smp *smp;

	if (!buf || !buf->agent || buf->agent->qpt != KMAD_QPT_SMI || !path ||
	    !hop_cnt || hop_cnt > KMAD_SMP_DR_MAX_HOP_CNT ||
	    READ_ONCE(kmad_send_wr(buf)->state) != KMAD_SS_INIT)
		return -EINVAL;
	smp = (struct kmad_smp *)buf->mad;
	smp->mgmt_class = KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	smp->hop_ptr = 0;
	smp->hop_cnt = hop_cnt;
	smp->dr_slid = cpu_to_be16(KMAD_PERMISSIVE_LID);
	smp->dr_dlid = cpu_to_be16(KMAD_PERMISSIVE_LID);
	memset(smp->initial_path, 0, sizeof(smp->initial_path));
	memcpy(&smp->initial_path[1], path, hop_cnt);
	buf->dest.dlid = KMAD_PERMISSIVE_LID;
	buf->dest.remote_qpn = 0;
	return 0;
}
EXPORT_SYMBOL_GPL(kmad_send_buf_set_dr_path);

/*
 * The address of a send as the hardware gets it, zeroed and filled (the
 * address handle cache compares it with memcmp()), and for a GRH the
 * port's GID it leaves from.  -EINVAL for a GRH on QP0 (SMPs never carry
 * one), none on an Ethernet port, from_qp1 on QP0 or on a provider without
 * a bridge, or a source GID index the port's table
 * does not hold.  Reads nothing but @dest; may call the provider's
 * query_gid().
 */
static int send_build_addr(struct kmad_agent_priv *agent,
			   const struct kmad_dest *dest,
			   struct kmad_ah_attr *attr, union kmad_gid *sgid)
{
	struct kmad_port *port = agent->qpi->port;
	bool eth = kmad_port_link_layer(port) == KMAD_LINK_LAYER_ETHERNET;

	memset(attr, 0, sizeof(*attr));
	memset(sgid, 0, sizeof(*sgid));
	attr->dlid = dest->dlid;
	attr->sl = dest->sl;
	if (dest->from_qp1) {
		/* Only a provider with a bridge has a real QP1 to send from. */
		if (kmad_qpt_is_smi(agent->agent.qpt) ||
		    !port->dev->ops->bridge_add)
			return -EINVAL;
		attr->from_qp1 = true;
	}
	if (!dest->grh_present)
		return eth ? -EINVAL : 0;
	if (kmad_qpt_is_smi(agent->agent.qpt))
		return -EINVAL;
	if (kmad_port_query_gid(port, dest->grh.sgid_index, sgid))
		return -EINVAL;
	attr->grh_present = true;
	attr->grh.dgid = dest->grh.dgid;
	attr->grh.flow_label = dest->grh.flow_label & 0xfffff;
	attr->grh.sgid_index = dest->grh.sgid_index;
	attr->grh.hop_limit = dest->grh.hop_limit;
	attr->grh.traffic_class = dest->grh.traffic_class;
	/* 0 would not leave the host on RoCE. */
	if (eth && !attr->grh.hop_limit)
		attr->grh.hop_limit = KMAD_ETH_HOP_LIMIT;
	return 0;
}

/**
 * kmad_post_send() - send a MAD.
 * @buf: a buffer from kmad_alloc_send_buf(), not currently posted.
 *
 * For a request, kmad puts the agent's hi_tid in the upper 32 bits of the
 * TID; a response (kmad_mad_is_response(), as on receive: a response
 * method, TrapRepress, or a baseboard management MAD with bit 0 of its
 * AttributeModifier set) keeps the requester's TID and may not have a
 * timeout.  With @buf->timeout_ms set, the send waits for a response
 * matching its TID and class, resending up to @buf->retries times with the
 * same TID.  Exactly one send_handler call follows a 0 return.
 *
 * Context: any but hard interrupt, interrupts possibly disabled (see
 * <kmad/mad.h>); does not sleep.
 * A directed-route SMP takes the SMI send step here (its hop pointer
 * advances); its path must leave through this port.  A post that fails
 * leaves the MAD as it was, byte for byte.
 *
 * Return: 0; -EINVAL for a bad buffer or one already posted, a timeout
 * above %KMAD_MAX_TIMEOUT_MS, a directed-route SMP whose path fails
 * the SMI checks, a GRH on QP0, no GRH on an Ethernet port, or a GRH
 * whose sgid_index is not an entry of the port's GID table,
 * &kmad_dest.from_qp1 on QP0 or on a provider without a bridge; -EBUSY if
 * another outstanding request of the agent has
 * the same TID, -ESHUTDOWN if the agent is unregistering or its port is
 * going away.
 */
int kmad_post_send(struct kmad_send_buf *buf)
{
	struct kmad_agent_priv *agent;
	struct kmad_ah_attr ah_attr;
	struct kmad_send_wr *wr;
	struct kmad_mad_hdr *hdr;
	union kmad_gid sgid;
	unsigned long flags;
	int addr_ret;
	u64 tid;
	int ret;

	if (!buf || !buf->agent)
		return -EINVAL;
	wr = kmad_send_wr(buf);
	agent = wr->agent;
	if (buf->agent != &agent->agent || buf->mad != &wr->mad)
		return -EINVAL;
	hdr = &wr->mad.mad_hdr;

	/* A post may race with kmad_unregister_agent(), which frees the
	 * agent after an RCU grace period.
	 */
	rcu_read_lock();
	/* Outside the agent lock: it may ask the provider for a GID.  Its
	 * verdict counts only once the send is known not to be posted.
	 */
	addr_ret = send_build_addr(agent, &buf->dest, &ah_attr, &sgid);
	spin_lock_irqsave(&agent->lock, flags);
	/* port->dying is set first thing when the port goes away; a post
	 * that slips past this check is flushed with its callback.
	 */
	if (agent->state != KMAD_AGENT_ACTIVE ||
	    READ_ONCE(agent->qpi->port->dying)) {
		ret = -ESHUTDOWN;
		goto out_unlock;
	}
	/* Only now may the MAD be read: a posted one may be in DMA. */
	if (wr->state != KMAD_SS_INIT ||
	    buf->timeout_ms > KMAD_MAX_TIMEOUT_MS ||
	    hdr->base_version != KMAD_MGMT_BASE_VERSION ||
	    kmad_is_smp_class(hdr->mgmt_class) !=
	    kmad_qpt_is_smi(agent->agent.qpt) ||
	    /* A response is never answered, so it cannot wait for one. */
	    (kmad_mad_is_response(hdr) && buf->timeout_ms) || addr_ret) {
		ret = -EINVAL;
		goto out_unlock;
	}
	/* A refused post leaves the MAD as the ULP left it: every check
	 * comes before kmad writes it.  A request's TID gets the agent's
	 * hi_tid, and may not be that of another outstanding request.
	 */
	tid = be64_to_cpu(hdr->tid);
	if (!kmad_mad_is_response(hdr))
		tid = (u64)agent->agent.hi_tid << 32 | (tid & 0xffffffffULL);
	if (buf->timeout_ms && kmad_tid_find(&agent->tids, tid)) {
		ret = -EBUSY;
		goto out_unlock;
	}
	/* The last check: it moves the hop pointer only if it passes. */
	ret = send_smi_step(agent, wr);
	if (ret)
		goto out_unlock;
	hdr->tid = cpu_to_be64(tid);
	wr->tid.tid = tid;
	wr->ah_attr = ah_attr;
	wr->sgid = sgid;
	wr->expects_resp = buf->timeout_ms != 0;
	wr->timeout_ms = buf->timeout_ms;
	wr->retries_left = buf->retries;
	wr->status = KMAD_SEND_OK;
	wr->refs = wr->expects_resp ? 2 : 1;
	/* Cannot fail: the TID is free, checked under this lock. */
	ret = send_set_state(wr, KMAD_SS_SENDING);
	if (ret) {
		wr->refs = 0;
		ret = ret == -EEXIST ? -EBUSY : ret;
		goto out_unlock;
	}
	/* Cannot fail: the registration reference is held while ACTIVE. */
	refcount_inc(&agent->refs);
	trace_kmad_post(wr);
	agent_stat_inc(agent, KMAD_ASTAT_POSTED);
	/* Queue it before dropping the agent lock (A -> Q): a flush that
	 * finds the send SENDING then also finds it on its QP and can take
	 * it back.  Queued later, it could reach a QP that port teardown
	 * has already stopped, whose drain kmad_qp_destroy() cancels.
	 */
	kmad_qp_send(agent->qpi, wr);
	spin_unlock_irqrestore(&agent->lock, flags);
	rcu_read_unlock();
	return 0;

out_unlock:
	spin_unlock_irqrestore(&agent->lock, flags);
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(kmad_post_send);

/**
 * kmad_cancel_send() - cancel a posted send.
 * @buf: the send.
 *
 * If its outcome is not decided yet, the send ends as
 * %KMAD_SS_CANCELED: at once if it was waiting for a response, or at its
 * send completion if the hardware still holds it.  From this call on no
 * response matches it.  The callback never runs inside this call.
 *
 *
 * Context: any but hard interrupt, interrupts possibly disabled (see
 * <kmad/mad.h>); does not sleep.
 * Return: 0 if canceled; -EALREADY if the send already got its response,
 * was canceled, or ended; -EINVAL if it is not posted.
 */
int kmad_cancel_send(struct kmad_send_buf *buf)
{
	struct kmad_agent_priv *agent;
	struct kmad_send_wr *wr;
	unsigned long flags;
	int ret;

	if (!buf || !buf->agent)
		return -EINVAL;
	wr = kmad_send_wr(buf);
	agent = wr->agent;
	rcu_read_lock();
	spin_lock_irqsave(&agent->lock, flags);
	ret = send_cancel_locked(wr, KMAD_SEND_CANCELED);
	spin_unlock_irqrestore(&agent->lock, flags);
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(kmad_cancel_send);

/**
 * kmad_modify_send() - change the response timeout of a posted send.
 * @buf: the send.
 * @timeout_ms: new timeout, at most %KMAD_MAX_TIMEOUT_MS; 0 cancels (as
 *	kmad_cancel_send()).
 *
 * A send waiting for its response gets a new deadline @timeout_ms from
 * now; one still being sent uses @timeout_ms once its send completes.
 *
 *
 * Context: any but hard interrupt, interrupts possibly disabled (see
 * <kmad/mad.h>); does not sleep.
 * Return: 0; -EINVAL if @timeout_ms is above %KMAD_MAX_TIMEOUT_MS, or the
 * send is not posted or was posted without a timeout; -EALREADY if its
 * outcome is already decided.
 */
int kmad_modify_send(struct kmad_send_buf *buf, unsigned int timeout_ms)
{
	struct kmad_agent_priv *agent;
	struct kmad_send_wr *wr;
	unsigned long flags;
	int ret = 0;
	u64 now;

	if (!buf || !buf->agent || timeout_ms > KMAD_MAX_TIMEOUT_MS)
		return -EINVAL;
	if (!timeout_ms)
		return kmad_cancel_send(buf);
	wr = kmad_send_wr(buf);
	agent = wr->agent;

	rcu_read_lock();
	spin_lock_irqsave(&agent->lock, flags);
	switch (wr->state) {
	case KMAD_SS_SENDING:
		if (wr->expects_resp)
			wr->timeout_ms = timeout_ms;
		else
			ret = -EINVAL;
		break;
	case KMAD_SS_WAIT_RESP:
		wr->timeout_ms = timeout_ms;
		kmad_wheel_del(&agent->deadlines, &wr->deadline_node);
		now = kmad_now(agent->qpi->port);
		wr->deadline = now + msecs_to_jiffies(timeout_ms);
		kmad_wheel_sync(&agent->deadlines, now);
		kmad_wheel_add(&agent->deadlines, &wr->deadline_node,
			       wr->deadline);
		agent_arm_timer(agent);
		break;
	case KMAD_SS_INIT:
		ret = -EINVAL;
		break;
	default:
		ret = -EALREADY;
		break;
	}
	spin_unlock_irqrestore(&agent->lock, flags);
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(kmad_modify_send);
