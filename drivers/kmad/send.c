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
 *   flush (waiting) agent_take_done(), send_end_waiting()  agent work
 *   slot freed      kmad_send_drain_backlog()              any of the above
 *
 * References, as in the 2004 design: a send that expects a response holds
 * two (send completion, response-or-timeout), one without a timeout.
 * Cancel drops the response reference only if a timeout was set.  The
 * callback runs when the count reaches zero, which can only happen after
 * the send completion dropped its reference, or, for a send canceled or
 * flushed from the flow control backlog (BACKLOG: its two references taken
 * at post, never given to the QP), at once.
 *
 * Timeouts: one delayed work per agent, queued for the next time the
 * agent's timing wheel (wheel.c: O(1) add, remove and expiry, exact to the
 * tick) needs it, and only re-queued when a new deadline comes sooner.
 * With a provider clock (step mode) no timer is armed;
 * kmad_device_clock_changed() kicks the work instead.
 */

#include <kunit/visibility.h>
#include <linux/jiffies.h>
#include <linux/slab.h>

#include "kmad_priv.h"
#include "rmpp.h"
#include "trace.h"

static const char *const kmad_send_state_names[KMAD_SS_NR_STATES] = {
	[KMAD_SS_INIT] = "init",
	[KMAD_SS_BACKLOG] = "backlog",
	[KMAD_SS_SENDING] = "sending",
	[KMAD_SS_EARLY_RESP] = "early_resp",
	[KMAD_SS_WAIT_RESP] = "wait_resp",
	[KMAD_SS_CANCELED] = "canceled",
	[KMAD_SS_DONE] = "done",
};

/* The only transitions a send may make; see Documentation/. */
static const bool kmad_send_allowed[KMAD_SS_NR_STATES][KMAD_SS_NR_STATES] = {
	[KMAD_SS_INIT] = {
		[KMAD_SS_BACKLOG] = true,	/* no flow control slot */
		[KMAD_SS_SENDING] = true,
	},
	[KMAD_SS_BACKLOG] = {
		[KMAD_SS_SENDING] = true,	/* a slot freed */
		[KMAD_SS_DONE] = true,		/* canceled or flushed */
	},
	[KMAD_SS_SENDING] = {
		[KMAD_SS_SENDING] = true,	/* an RMPP send's next segment */
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

/*
 * Whether the send holds a second reference besides its send completion's
 * while SENDING: one for its response or timeout (posted with a timeout),
 * or, for an RMPP send, for the end of its transfer (rmpp_send.c: the
 * final ACK, a STOP or ABORT, an ACK timeout) and then its response.
 */
static bool send_has_outcome_ref(const struct kmad_send_wr *wr)
{
	return wr->expects_resp || wr->rmpp;
}

/* The references the contract gives a send in @state. */
static unsigned int send_expected_refs(const struct kmad_send_wr *wr,
				       enum kmad_send_state state)
{
	switch (state) {
	case KMAD_SS_BACKLOG:	/* the two it will hold SENDING */
		return 2;
	case KMAD_SS_SENDING:
		return send_has_outcome_ref(wr) ? 2 : 1;
	case KMAD_SS_EARLY_RESP:	/* send completion */
	case KMAD_SS_WAIT_RESP:	/* response or timeout */
	case KMAD_SS_CANCELED:	/* send completion */
		return 1;
	default:
		return 0;
	}
}

/*
 * Whether a response may match the send in @state.  Only a send that
 * expects one: an RMPP send without a timeout is WAIT_RESP while it waits
 * for an ACK, which comes through kmad_rmpp_send_ctl(), not by TID.
 */
static bool send_matchable(const struct kmad_send_wr *wr,
			   enum kmad_send_state state)
{
	return wr->expects_resp &&
	       (state == KMAD_SS_WAIT_RESP || state == KMAD_SS_SENDING);
}

/*
 * Whether the send in @state is in the TID table: matchable, or BACKLOG,
 * whose TID is reserved (a post of the same TID is -EBUSY) but which no
 * response matches (it has not been sent).
 */
static bool send_holds_tid(const struct kmad_send_wr *wr,
			   enum kmad_send_state state)
{
	return send_matchable(wr, state) || state == KMAD_SS_BACKLOG;
}

/*
 * The agent list a send in @state is on: none when idle or DONE (then it
 * is on the done list or a batch, or on none), @waiting while it waits
 * for its response (not an RMPP send, whose transfer rmpp_send.c moves
 * on), @sends otherwise.  kmad_agent_flush_sends() ends the sends of
 * @sends at once and leaves @waiting's to the agent's work.
 */
static struct list_head *send_agent_list(const struct kmad_send_wr *wr,
					 enum kmad_send_state state)
{
	struct kmad_agent_priv *agent = kmad_send_agent(wr);

	if (state == KMAD_SS_INIT || state == KMAD_SS_DONE)
		return NULL;
	if (state == KMAD_SS_WAIT_RESP && !wr->rmpp)
		return &agent->waiting;
	return &agent->sends;
}

/*
 * The TID table has grown (or shrunk) past its size: have the agent's work
 * resize it, once.  Resizing allocates, which cannot be done here: the
 * agent lock may be held with interrupts off.  A size whose allocation
 * failed is not asked for again (every post and response would run the
 * work and try once more): the table keeps its chains until the count
 * wants yet another size, or has gone back past the size it has, to half
 * the count that wanted a failed growth or twice the count that wanted a
 * failed shrink.
 */
static void agent_tids_check_size(struct kmad_agent_priv *agent)
{
	unsigned int bits, failed = agent->tids_failed_bits;
	unsigned int size = 1U << agent->tids.bits;

	lockdep_assert_held(&agent->lock);
	if (agent->tids_resize)
		return;
	bits = kmad_tid_wanted_bits(&agent->tids);
	/* The next growth, or shrink, tries again (not at every crossing
	 * of the count that wanted the failed size).
	 */
	if ((failed > agent->tids.bits && agent->tids.count <= size) ||
	    (failed && failed < agent->tids.bits &&
	     agent->tids.count >= size / 4))
		agent->tids_failed_bits = 0;
	if (bits == agent->tids.bits || bits == agent->tids_failed_bits)
		return;
	agent->tids_resize = true;
	kmad_agent_run_now(agent);
}

/*
 * Move @wr in or out of the agent's TID table (send_holds_tid()) and
 * deadline wheel (WAIT_RESP) as it goes from its state to @new.  Returns
 * 0, or -EEXIST when entering the table would duplicate an outstanding
 * TID.
 */
static int send_set_tables(struct kmad_send_wr *wr, enum kmad_send_state new)
{
	struct kmad_agent_priv *agent = kmad_send_agent(wr);
	enum kmad_send_state old = wr->state;
	bool was_match, is_match;
	int ret;

	was_match = send_holds_tid(wr, old);
	is_match = send_holds_tid(wr, new);
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
			       wr->deadline_node.expires);
	return 0;
}

/*
 * The same once kmad_agent_flush_sends() has emptied the TID table and the
 * wheel at once: whatever was in them is out already, and nothing may
 * enter them again (the agent is DYING and no send is SENDING any more).
 */
static int send_tables_emptied(struct kmad_send_wr *wr,
			       enum kmad_send_state new)
{
	if (WARN_ONCE((!send_holds_tid(wr, wr->state) &&
		       send_holds_tid(wr, new)) || new == KMAD_SS_WAIT_RESP,
		      "kmad: send tid %#llx: %s -> %s after its agent's flush\n",
		      wr->tid.tid, kmad_send_state_name(wr->state),
		      kmad_send_state_name(new)))
		return -EINVAL;
	return 0;
}

/*
 * send_set_state() - the one place a send changes state.
 *
 * The caller has already adjusted wr->refs for the event; this checks the
 * transition and the count, and moves the send in or out of the TID table
 * (send_holds_tid()), the deadline wheel (WAIT_RESP), the agent's send
 * list (posted and not DONE) and its flow control backlog (BACKLOG), and
 * takes or frees its flow control slot (kmad_flow_account()).  A send that
 * frees a slot hands the oldest backlogged send of the agent to its QP,
 * here (kmad_send_drain_backlog(): that send's own move, BACKLOG ->
 * SENDING, frees nothing, so this recurses once at most).  Returns 0, or
 * -EEXIST when entering the TID table would duplicate an outstanding TID
 * (post only).
 */
static int send_set_state(struct kmad_send_wr *wr, enum kmad_send_state new)
{
	struct kmad_agent_priv *agent = kmad_send_agent(wr);
	enum kmad_send_state old = wr->state;
	struct list_head *old_list, *new_list;
	bool drain;
	int ret;

	lockdep_assert_held(&agent->lock);

	if (WARN_ONCE(!kmad_send_allowed[old][new] ||
		      wr->refs != send_expected_refs(wr, new),
		      "kmad: send tid %#llx: bad transition %s -> %s with %u refs\n",
		      wr->tid.tid, kmad_send_state_name(old),
		      kmad_send_state_name(new), wr->refs))
		return -EINVAL;

	if (agent->tables_emptied)
		ret = send_tables_emptied(wr, new);
	else
		ret = send_set_tables(wr, new);
	if (ret)
		return ret;

	old_list = send_agent_list(wr, old);
	new_list = send_agent_list(wr, new);
	if (old_list != new_list) {
		if (old_list)
			list_del_init(&wr->agent_entry);
		if (new_list)
			list_add_tail(&wr->agent_entry, new_list);
		if (wr->rmpp && !old_list != !new_list)
			kmad_rmpp_send_listed(wr, !!new_list);
	}

	/* Out of the wheel: what shares its memory (kmad_priv.h) is in
	 * use again and starts empty.  The send is idle on its QP (it was
	 * WAIT_RESP), so nothing under Q looks at its handle now.
	 */
	if (old == KMAD_SS_WAIT_RESP) {
		wr->early_resp = NULL;
		wr->ah = NULL;
	}
	drain = kmad_flow_account(wr, old, new);
	wr->state = new;
	if (drain)
		kmad_send_drain_backlog(agent);
	return 0;
}

/**
 * kmad_send_drain_backlog() - hand backlogged sends to the QP while the
 * agent's flow control has slots for them, oldest first.
 * @agent: the agent.
 *
 * Context: the agent lock held, in any context that ends a send or
 * changes the limit (flow.c lists them); interrupts may be off.  Takes Q
 * (kmad_qp_send()) under A, the legend's order; a send the QP cannot take
 * fails from the CQ drain, not here, so no send ends inside this call.
 */
void kmad_send_drain_backlog(struct kmad_agent_priv *agent)
{
	struct kmad_send_wr *wr;

	lockdep_assert_held(&agent->lock);
	while ((wr = kmad_flow_next(agent))) {
		if (send_set_state(wr, KMAD_SS_SENDING))
			break;	/* warned; do not spin on it */
		trace_kmad_post(wr);
		kmad_qp_send(agent->qpi, wr);
	}
}

static void send_put_ref(struct kmad_send_wr *wr)
{
	lockdep_assert_held(&kmad_send_agent(wr)->lock);
	if (!WARN_ON_ONCE(!wr->refs))
		wr->refs--;
}

static bool agent_has_clock(struct kmad_agent_priv *agent)
{
	struct kmad_device *dev = agent->qpi->port->dev;

	return !READ_ONCE(dev->gone) && dev->has_clock;
}

/*
 * Queue the agent's work for when its wheel next needs it (real clock
 * only), unless it is already queued for then or sooner.  From the
 * agent's work itself (agent_expire()), which goes on to deliver the done
 * list: arming from anywhere else goes through agent_arm_timer().
 */
static void agent_arm_deadline(struct kmad_agent_priv *agent)
{
	u64 when, now;

	lockdep_assert_held(&agent->lock);
	if (agent_has_clock(agent) ||
	    !kmad_wheel_next(&agent->deadlines, &when) ||
	    when >= agent->timer_at)
		return;
	now = kmad_now(agent->qpi->port);
	agent->timer_at = when;
	kmad_agent_queue_work(agent,
			      when > now ? (unsigned long)(when - now) : 0);
}

/*
 * The same, outside the agent's work.  With a callback pending the work
 * is already queued to run at once, and arming a later deadline would
 * postpone it: it is queued to run at once, and re-arms when it runs.
 */
static void agent_arm_timer(struct kmad_agent_priv *agent)
{
	lockdep_assert_held(&agent->lock);
	if (!list_empty(&agent->done)) {
		kmad_agent_run_now(agent);
		return;
	}
	agent_arm_deadline(agent);
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
	u64 now, deadline;

	lockdep_assert_held(&agent->lock);
	if (!kmad_port_clock(agent->qpi->port, &now))
		return;
	deadline = wr->deadline_node.expires;
	if (now > deadline && now - deadline > agent->timeout_late_max)
		agent->timeout_late_max = now - deadline;
}

/*
 * A send reached DONE in caller context: queue its callback to the work.
 * The work is queued only by the first send on an empty done list: while
 * the list is not empty the work is queued to run now, or running and
 * takes the list's sends until it finds it empty (kmad_agent_work()), so
 * the ones added meanwhile need nothing more.  Re-queueing it for every
 * send took the pending work off the workqueue and put it back each time:
 * most of what a flush of many sends cost.
 */
static void send_defer_done(struct kmad_send_wr *wr)
{
	struct kmad_agent_priv *agent = kmad_send_agent(wr);
	bool first;

	lockdep_assert_held(&agent->lock);
	/* Flushed, its waiting sends not all delivered yet: behind them, on
	 * the list the agent's work takes after the done list, so that the
	 * callbacks keep posting order (kmad_agent_flush_sends()); the work
	 * is queued or running until that list is empty.
	 */
	if (agent->tables_emptied && !list_empty(&agent->waiting)) {
		list_add_tail(&wr->agent_entry, &agent->waiting);
		return;
	}
	first = list_empty(&agent->done);
	list_add_tail(&wr->agent_entry, &agent->done);
	if (first)
		kmad_agent_run_now(agent);
}

/*
 * Callbacks are delivered in batches of at most this many sends per hold
 * of the agent lock (kmad_agent_work()): the lock is taken once, not once
 * per send, and held for a bounded time with interrupts off.
 */
#define KMAD_DELIVER_BATCH	64

/* How many of a batch ended with each status (send_count_outcome()). */
struct send_tally {
	unsigned int n;
	unsigned int status[KMAD_SEND_REMOTE_ABORT + 1];
};

static void send_count_outcome(struct send_tally *t, struct kmad_send_wr *wr)
{
	t->n++;
	t->status[wr->status]++;
}

/* Add a batch's outcomes to the agent's and the port's counters. */
static void send_tally_add(struct kmad_agent_priv *agent,
			   const struct send_tally *t)
{
	static const struct {
		enum kmad_send_status status;
		enum kmad_agent_stat astat;
		enum kmad_port_stat pstat;
	} map[] = {
		{ KMAD_SEND_RESP_TIMEOUT, KMAD_ASTAT_TIMEOUTS,
		  KMAD_PSTAT_TIMEOUTS },
		{ KMAD_SEND_CANCELED, KMAD_ASTAT_CANCELED, KMAD_PSTAT_CANCELED },
		{ KMAD_SEND_FLUSHED, KMAD_ASTAT_FLUSHED, KMAD_PSTAT_FLUSHED },
	};
	struct kmad_port *port = agent->qpi->port;
	unsigned int i, n;

	for (i = 0; i < ARRAY_SIZE(map); i++) {
		n = t->status[map[i].status];
		if (!n)
			continue;
		atomic64_add(n, &agent->stats[map[i].astat]);
		kmad_port_stat_add(port, map[i].pstat, n);
	}
	atomic64_add(t->n, &agent->stats[KMAD_ASTAT_COMPLETED]);
}

/*
 * Delivering a DONE send's outcome: a parked response first, then the send
 * callback, from the agent's work.  While recv_handler runs the send stays
 * DONE, so the buffer is still posted for the ULP (post: -EINVAL,
 * cancel/modify: -EALREADY); it becomes INIT, free to be freed or posted
 * again, just before send_handler (send_set_idle()).  The send may be
 * freed or reposted by send_handler, so it is not touched afterwards; the
 * agent reference the send held is dropped after its send_handler
 * returned (by the batch, kmad_agent_work()).
 *
 * send_deliver_prepare() is the part under the agent lock, in the hold
 * that takes the send off the done list: the lateness of a timeout, the
 * tracepoint and the counters, all before any handler of the batch runs.
 */
static void send_deliver_prepare(struct kmad_send_wr *wr,
				 struct send_tally *t)
{
	struct kmad_agent_priv *agent = kmad_send_agent(wr);

	lockdep_assert_held(&agent->lock);
	if (wr->status == KMAD_SEND_RESP_TIMEOUT)
		agent_note_lateness(agent, wr);
	trace_kmad_send_callback(wr);
	send_count_outcome(t, wr);
}

/*
 * DONE -> INIT, the one transition made without the agent lock: a DONE
 * send belongs to its agent's work alone (a post of it fails, cancel and
 * modify return -EALREADY, no response matches it, a flush skips it, and
 * nothing else takes it off the done list), so this is its only writer
 * then; a ULP call that reads the state under the lock meanwhile sees DONE
 * or INIT, either of which is true at that moment, as it would be had the
 * work taken the lock.  The release orders the delivery's reads of the
 * send before it, ahead of whatever the ULP does with the buffer next.
 */
static void send_set_idle(struct kmad_send_wr *wr)
{
	WARN_ONCE(wr->state != KMAD_SS_DONE || wr->refs,
		  "kmad: send tid %#llx: bad transition %s -> init with %u refs\n",
		  wr->tid.tid, kmad_send_state_name(wr->state),
		  (unsigned int)wr->refs);
	/* The delivery's accesses to the send come before the store.  The
	 * ULP call that next reads INIT (under the agent lock, with a plain
	 * load, not an acquire) only writes the send after that read, so a
	 * control dependency orders its side: no acquire pairs with this.
	 */
	smp_store_release(&wr->state, KMAD_SS_INIT);
}

static void send_deliver(struct kmad_agent_priv *agent,
			 struct kmad_send_wr *wr)
{
	struct kmad_recv_priv *resp = wr->early_resp;
	struct kmad_send_wc wc = {
		.send_buf = &wr->buf,
		.status = wr->status,
	};

	if (resp) {
		wr->early_resp = NULL;
		if (agent->agent.recv_handler)
			agent->agent.recv_handler(&agent->agent, &wr->buf,
						  &resp->wc);
		else
			kmad_recv_free(resp);
	}
	send_set_idle(wr);
	agent->agent.send_handler(&agent->agent, &wc);
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
	struct kmad_agent_priv *agent = kmad_send_agent(wr);
	unsigned long flags;
	u64 now;

	spin_lock_irqsave(&agent->lock, flags);
	trace_kmad_send_hw_done(wr);
	switch (wr->state) {
	case KMAD_SS_SENDING:
		send_put_ref(wr);			/* send completion */
		if (status != KMAD_WC_SUCCESS) {
			if (send_has_outcome_ref(wr))
				send_put_ref(wr);	/* no response now */
			wr->status = send_status_from_wc(status);
			send_set_state(wr, KMAD_SS_DONE);
			send_defer_done(wr);
		} else if (wr->rmpp) {
			/* The next segment, the wait for an ACK or the
			 * response, or the end: rmpp_send.c decides.
			 */
			kmad_rmpp_send_hw_done(wr);
		} else if (wr->expects_resp) {
			now = kmad_now(agent->qpi->port);
			wr->deadline_node.expires =
				now + msecs_to_jiffies(wr->buf.timeout_ms);
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

/* @bits within the port's LMC: the path bits of one of its LIDs. */
static u8 port_path_bits(const struct kmad_port *port, u8 bits)
{
	return bits & ((1U << kmad_port_lmc(port)) - 1);
}

/*
 * Did @wc come back to the address request @wr left from (ib_mad's
 * rcv_has_same_gid(), request to response)?  With a GRH both ways, to the
 * GID the request was sent from: the port's GID at its sgid_index, read
 * now, as ib_mad reads it (the send keeps no copy, kmad_priv.h); without,
 * to the request's source path bits (&kmad_dest.src_path_bits) within the
 * port's LMC.  A directed-route SMP is not checked (its LIDs
 * are permissive), as in ib_mad.
 *
 * Context: the agent lock held: query_gid() may be called with
 * interrupts off and does not sleep (&struct kmad_provider_ops).
 */
static bool resp_same_addr(struct kmad_port *port,
			   const struct kmad_send_wr *wr,
			   const struct kmad_recv_wc *wc)
{
	const struct kmad_dest *dest = &wr->buf.dest;
	union kmad_gid sgid;

	lockdep_assert_held(&kmad_send_agent(wr)->lock);
	if (wr->mad.mad_hdr.mgmt_class == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		return true;
	if (dest->grh_present != wc->grh_present)
		return false;
	if (wc->grh_present)
		/* A GID that cannot be read now matches nothing. */
		return !kmad_port_query_gid(port, dest->grh.sgid_index, &sgid) &&
		       !memcmp(&wc->grh.dgid, &sgid, sizeof(sgid));
	return !port_path_bits(port, wc->dlid_path_bits ^ dest->src_path_bits);
}

/*
 * The send of @agent that response @hdr answers: same TID and class; from
 * whichever LID; sent (not BACKLOG) and still waiting.  NULL if none.  The
 * address it came back to is resp_same_addr()'s to check.
 *
 * Context: the agent lock held.
 */
static struct kmad_send_wr *resp_find_send(struct kmad_agent_priv *agent,
					   const struct kmad_mad_hdr *hdr)
{
	struct kmad_tid_entry *ent;
	struct kmad_send_wr *wr;

	lockdep_assert_held(&agent->lock);
	ent = kmad_tid_find(&agent->tids, be64_to_cpu(hdr->tid));
	wr = ent ? container_of(ent, struct kmad_send_wr, tid) : NULL;
	if (!wr || !send_matchable(wr, wr->state) ||
	    wr->mad.mad_hdr.mgmt_class != hdr->mgmt_class)
		return NULL;
	return wr;
}

/*
 * Would kmad_send_response() match @recv to one of @agent's requests (same
 * TID and class, waiting for it, back at the address it left from)?  For
 * the segments of an RMPP response, which start or go on with a transfer
 * only if so, as ib_mad's is_kernel_rmpp_data_response() asks
 * ib_find_send_mad().
 *
 * Context: the agent lock held.
 * Return: 0 if so; -EXDEV if it matches but for the address (a
 * misaddressed response); -ENOENT if no request waits for it.
 */
int kmad_send_resp_match(struct kmad_agent_priv *agent,
			 const struct kmad_recv_priv *recv)
{
	struct kmad_send_wr *wr;

	lockdep_assert_held(&agent->lock);
	wr = resp_find_send(agent, &recv->mad.mad_hdr);
	if (!wr)
		return -ENOENT;
	return resp_same_addr(agent->qpi->port, wr, &recv->wc) ? 0 : -EXDEV;
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
 * check matches nothing (and is counted as misaddressed too).  A response
 * that arrives before the send completion is parked on the send until the send
 * completion, or ends it at once if the hardware does not hold it (it
 * waits on one of the QP's lists: kmad_qp_cancel() takes it back).
 *
 * Return: true if @recv matched and was taken; false if its TID and class
 * match no send of @agent that may still be answered (none, canceled,
 * ended, not sent yet), or it came back to another address (counted
 * misaddressed here): then @recv is still the caller's.
 */
bool kmad_send_response(struct kmad_agent_priv *agent,
			struct kmad_recv_priv *recv)
{
	struct kmad_port *port = agent->qpi->port;
	struct kmad_send_wr *wr;
	unsigned long flags;

	spin_lock_irqsave(&agent->lock, flags);
	wr = resp_find_send(agent, &recv->mad.mad_hdr);
	if (!wr) {
		spin_unlock_irqrestore(&agent->lock, flags);
		return false;
	}
	/* To where the request came from. */
	if (!resp_same_addr(port, wr, &recv->wc)) {
		spin_unlock_irqrestore(&agent->lock, flags);
		kmad_port_stat_inc(port, KMAD_PSTAT_RESP_MISADDRESSED);
		return false;
	}

	trace_kmad_resp_match(wr);
	/* Counted before the callback is queued: the agent's work may run
	 * its handlers as soon as the lock is dropped, and a handler reading
	 * kmad_agent_get_stats() sees its own response counted.
	 */
	agent_stat_inc(agent, KMAD_ASTAT_RESP_MATCHED);
	kmad_port_stat_inc(port, KMAD_PSTAT_RESP_MATCHED);
	send_put_ref(wr);				/* response */
	wr->status = KMAD_SEND_OK;
	/* Parked once out of the wheel, whose entry shares its memory. */
	if (wr->state == KMAD_SS_SENDING) {
		/* The outcome is decided: a flush of the send must not put it
		 * on the wire again after a recovery, and a retry still
		 * waiting for a slot (which the hardware never held) is not
		 * sent at all but ends now.  Taken back before the state
		 * changes: leaving SENDING frees a flow-control slot, and the
		 * backlog that takes it makes the QP post what waits.
		 */
		bool taken = kmad_qp_cancel(agent->qpi, wr);

		send_set_state(wr, KMAD_SS_EARLY_RESP);
		wr->early_resp = recv;
		if (taken) {
			send_put_ref(wr);		/* send completion */
			send_set_state(wr, KMAD_SS_DONE);
			send_defer_done(wr);
		}
	} else {
		send_set_state(wr, KMAD_SS_DONE);
		wr->early_resp = recv;
		send_defer_done(wr);
	}
	spin_unlock_irqrestore(&agent->lock, flags);
	return true;
}

/**
 * kmad_agent_recvs_full() - may one more unsolicited MAD of @len bytes not
 * wait for @agent's recv_handler?
 * @agent: the agent.
 * @len: its &kmad_recv_wc.mad_len.
 *
 * True with %KMAD_AGENT_RECVS_MAX MADs, or %KMAD_AGENT_RECV_BYTES_MAX
 * bytes with it, waiting already; one MAD is always taken when none waits.
 *
 * Context: A held.
 */
bool kmad_agent_recvs_full(const struct kmad_agent_priv *agent, size_t len)
{
	lockdep_assert_held(&agent->lock);
	/* One over the byte bound (rmpp_max_bytes may allow it) is taken
	 * when alone: compare without a wrap.
	 */
	return agent->recvs_queued &&
	       (agent->recvs_queued >= KMAD_AGENT_RECVS_MAX ||
		len > KMAD_AGENT_RECV_BYTES_MAX ||
		agent->recv_bytes > KMAD_AGENT_RECV_BYTES_MAX - len);
}

/**
 * kmad_agent_queue_recv() - hand an unsolicited MAD to @agent's work.
 * @agent: the agent it was dispatched to; the caller's reference passes to
 *	the queued MAD and is dropped after recv_handler returns.
 * @recv: the validated request (or response, recv_user_rmpp()).
 *
 * Not once the agent is marked unregistering (mad.h: no MAD is queued
 * after the mark; the dispatch found the agent before it, without the
 * agent lock, by which the mark is made).  Nor with
 * %KMAD_AGENT_RECVS_MAX MADs, or %KMAD_AGENT_RECV_BYTES_MAX bytes,
 * already waiting for the agent's recv_handler (kmad_agent_recvs_full():
 * a slow handler and a peer's flood cannot take memory without bound:
 * receive buffers are reposted at once).  An RMPP message whose last
 * segment was ACKed (&kmad_recv_priv.acked) is queued all the same past
 * that bound: the backlog was checked before that ACK, and its sender
 * was told it arrived.
 *
 * Context: CQ drain.  recv_handler runs from the agent's work, as every
 * ULP handler does.
 * Return: 0 if queued; else the reference is dropped and @recv is left to
 * the caller: -ESHUTDOWN if the agent is unregistering, -ENOBUFS if its
 * backlog is full.
 */
int kmad_agent_queue_recv(struct kmad_agent_priv *agent,
			  struct kmad_recv_priv *recv)
{
	size_t len = recv->wc.mad_len;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&agent->lock, flags);
	if (agent->state != KMAD_AGENT_ACTIVE) {
		ret = -ESHUTDOWN;
	} else if (!recv->acked && kmad_agent_recvs_full(agent, len)) {
		ret = -ENOBUFS;
	} else {
		list_add_tail(&recv->agent_entry, &agent->recvs);
		agent->recvs_queued++;
		agent->recv_bytes += len;
		atomic64_inc(&agent->stats[KMAD_ASTAT_UNSOLICITED]);
		kmad_agent_run_now(agent);
	}
	spin_unlock_irqrestore(&agent->lock, flags);
	if (ret)
		kmad_agent_put(agent);
	return ret;
}

/*
 * A waiting send the flush left to the agent's work
 * (kmad_agent_flush_sends()): one on &kmad_agent_priv.waiting once the
 * agent is flushed.  To the ULP it has ended already, FLUSHED, as if the
 * flush had ended it at once, so cancel and modify get -EALREADY.  An
 * RMPP send waiting for an ACK is on &kmad_agent_priv.sends: the flush
 * itself ends it.
 */
static bool send_flushed_waiting(const struct kmad_send_wr *wr)
{
	struct kmad_agent_priv *agent = kmad_send_agent(wr);

	lockdep_assert_held(&agent->lock);
	return agent->tables_emptied &&
	       send_agent_list(wr, wr->state) == &agent->waiting;
}

/* A WAIT_RESP send ends, canceled or flushed: DONE, on no list. */
static void send_end_waiting(struct kmad_send_wr *wr,
			     enum kmad_send_status status)
{
	lockdep_assert_held(&kmad_send_agent(wr)->lock);
	trace_kmad_cancel(wr);
	send_put_ref(wr);			/* response */
	wr->status = status;
	send_set_state(wr, KMAD_SS_DONE);
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
	struct kmad_agent_priv *agent = kmad_send_agent(wr);
	bool taken;

	lockdep_assert_held(&agent->lock);
	switch (wr->state) {
	case KMAD_SS_SENDING:
		trace_kmad_cancel(wr);
		/* Under the agent lock, so the send cannot complete and be
		 * posted again in between.  If the provider holds it, its
		 * CQE ends it, even a flush: it is not sent again.  Taken
		 * back before the state changes: leaving SENDING frees a
		 * flow-control slot, and the backlog that takes it makes the
		 * QP post what waits (this send too, were it still there).
		 */
		taken = kmad_qp_cancel(agent->qpi, wr);
		if (send_has_outcome_ref(wr))
			send_put_ref(wr);		/* response */
		wr->status = status;
		send_set_state(wr, KMAD_SS_CANCELED);
		if (taken) {
			send_put_ref(wr);		/* send completion */
			send_set_state(wr, KMAD_SS_DONE);
			send_defer_done(wr);
		}
		return 0;
	case KMAD_SS_WAIT_RESP:
		if (send_flushed_waiting(wr))
			return -EALREADY;	/* the agent's work ends it */
		send_end_waiting(wr, status);
		send_defer_done(wr);
		return 0;
	case KMAD_SS_BACKLOG:
		/* Never given to the QP: it ends here, never sent. */
		trace_kmad_cancel(wr);
		send_put_ref(wr);			/* response */
		send_put_ref(wr);			/* send completion */
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
 * @agent: an agent marked DYING in this hold of its lock (no new posts;
 *	no response matches, no deadline passes from the mark on).
 * @status: the status the sends end with.
 *
 * Sends the hardware holds end at their send completion, backlogged and
 * RMPP sends at once, in one walk under one hold of the agent lock: no
 * send can end, and no handler free it, while the walk looks at it.
 * Sends waiting for a response (&kmad_agent_priv.waiting) are not walked
 * here: with the TID table and the wheel emptied nothing but a cancel
 * can move them any more, and the agent's work ends each one with
 * @status just before its callback (agent_take_done()), so a flush of N
 * of them touches each send once, not twice, and keeps interrupts off
 * for no walk of N.  The sends that end from then on, in the walk or at
 * their send completion, go behind them on the same list
 * (send_defer_done()), so the callbacks keep posting order among the
 * sends that are not RMPP sends (a send retried counts from its last
 * transmission; an RMPP send waiting for an ACK ends in the walk, behind
 * every waiting send).
 * Callbacks run from the agent's work.  Context: the agent lock held.
 */
void kmad_agent_flush_sends(struct kmad_agent_priv *agent,
			    enum kmad_send_status status)
{
	struct kmad_send_wr *wr, *tmp;

	lockdep_assert_held(&agent->lock);
	/* Every matchable or waiting send leaves the TID table and the
	 * wheel in this walk, which no one else sees: empty both at once
	 * rather than unlink each send from its neighbours there, which
	 * are as scattered in memory as the deadlines and TIDs are
	 * random.
	 */
	if (!agent->tables_emptied) {
		kmad_tid_clear(&agent->tids);
		kmad_wheel_clear(&agent->deadlines);
		agent->tables_emptied = true;
	}
	/* send_cancel_locked() may move @wr off this list, never another
	 * send.  Callbacks keep posting order: first the sends that ended
	 * before the flush, then the waiting ones, then the ones that end
	 * from now on, the walk's and later ones at their send completion
	 * (send_defer_done() puts them behind the waiting ones).
	 */
	list_for_each_entry_safe(wr, tmp, &agent->sends, agent_entry)
		send_cancel_locked(wr, status);
	agent->flush_status = status;
	if (!list_empty(&agent->waiting))
		kmad_agent_run_now(agent);
}

/*
 * The moves of an RMPP send's transfer, for rmpp_send.c, which decides
 * them (Documentation/rmpp.rst); each goes through send_set_state().
 * Context: the send's agent lock held.
 */

/**
 * kmad_send_transmit() - hand the segment rmpp_send.c prepared to the QP.
 * @wr: an RMPP send that is WAIT_RESP, or SENDING with its send
 *	completion just reported (its reference dropped, the QP idle).
 *
 * Takes the reference of the new send completion.
 */
void kmad_send_transmit(struct kmad_send_wr *wr)
{
	struct kmad_agent_priv *agent = kmad_send_agent(wr);

	lockdep_assert_held(&agent->lock);
	wr->refs++;				/* the new send completion */
	if (send_set_state(wr, KMAD_SS_SENDING)) {
		wr->refs--;			/* warned */
		return;
	}
	/* Under the agent lock, as in kmad_post_send(). */
	kmad_qp_send(agent->qpi, wr);
}

/**
 * kmad_send_wait() - wait @timeout_ms from now for what comes next (an
 * ACK, or the response).
 * @wr: an RMPP send that is WAIT_RESP (its deadline moves), or SENDING
 *	with its send completion just reported.
 * @timeout_ms: from now.
 */
void kmad_send_wait(struct kmad_send_wr *wr, unsigned int timeout_ms)
{
	struct kmad_agent_priv *agent = kmad_send_agent(wr);
	u64 now;

	lockdep_assert_held(&agent->lock);
	now = kmad_now(agent->qpi->port);
	if (wr->state == KMAD_SS_WAIT_RESP) {
		kmad_wheel_del(&agent->deadlines, &wr->deadline_node);
		kmad_wheel_sync(&agent->deadlines, now);
		kmad_wheel_add(&agent->deadlines, &wr->deadline_node,
			       now + msecs_to_jiffies(timeout_ms));
	} else {
		wr->deadline_node.expires = now + msecs_to_jiffies(timeout_ms);
		kmad_wheel_sync(&agent->deadlines, now);
		if (send_set_state(wr, KMAD_SS_WAIT_RESP))
			return;			/* warned */
	}
	agent_arm_timer(agent);
}

/**
 * kmad_send_finish() - end an RMPP send with @status by dropping its last
 * reference, that of its outcome.
 * @wr: an RMPP send that is WAIT_RESP, or SENDING with its send
 *	completion just reported.
 * @status: how it ended.
 */
void kmad_send_finish(struct kmad_send_wr *wr, enum kmad_send_status status)
{
	lockdep_assert_held(&kmad_send_agent(wr)->lock);
	send_put_ref(wr);			/* the outcome */
	wr->status = status;
	if (send_set_state(wr, KMAD_SS_DONE))
		return;				/* warned */
	send_defer_done(wr);
}

/**
 * kmad_send_abort() - end a send whose outcome is not decided yet with
 * @status, as a cancel does: at once if the hardware does not hold it,
 * else at its send completion.
 * @wr: the send.
 * @status: how it ends.
 *
 * Return: 0, or -EALREADY if its outcome was decided already.
 */
int kmad_send_abort(struct kmad_send_wr *wr, enum kmad_send_status status)
{
	lockdep_assert_held(&kmad_send_agent(wr)->lock);
	return send_cancel_locked(wr, status);
}

#if IS_ENABLED(CONFIG_KUNIT)
kmad_test_agent_hook_t kmad_test_agent_work_hook;
EXPORT_SYMBOL_IF_KUNIT(kmad_test_agent_work_hook);
#endif

/*
 * Retry or end up to KMAD_EXPIRE_BATCH due sends; the ended ones go to the
 * tail of the done list, in order.  Returns true if more may be due.
 */
static bool agent_expire_batch(struct kmad_agent_priv *agent)
{
	struct kmad_port *port = agent->qpi->port;
	struct kmad_wheel_entry *due;
	struct kmad_send_wr *wr;
	unsigned int n = 0;

	lockdep_assert_held(&agent->lock);
	/* No deadline, no clock: the agent of a removed device has none,
	 * and its provider must not be called any more.
	 */
	if (!agent->deadlines.count)
		return false;
	kmad_wheel_advance(&agent->deadlines, kmad_now(port));
	/* Each due send leaves the wheel as its state changes below. */
	while ((due = kmad_wheel_first_due(&agent->deadlines))) {
		if (n++ == KMAD_EXPIRE_BATCH)
			return true;
		wr = container_of(due, struct kmad_send_wr, deadline_node);
		/* An RMPP send retries only while it waits for an ACK, from
		 * the segment after the last one acknowledged (or that one,
		 * in a closed window: kmad_rmpp_send_rewind()).
		 */
		if (wr->retries_left && agent->state == KMAD_AGENT_ACTIVE &&
		    (!wr->rmpp || kmad_rmpp_send_rewind(wr))) {
			trace_kmad_retry(wr);
			wr->retries_left--;
			wr->refs++;			/* the new send completion */
			if (send_set_state(wr, KMAD_SS_SENDING)) {
				/* Warned (a kernel bug): off the wheel, so
				 * that it is not due again at once, for ever;
				 * the other due sends go on.
				 */
				wr->refs--;
				kmad_wheel_del(&agent->deadlines, due);
				continue;
			}
			/* Under the agent lock, as in kmad_post_send(). */
			kmad_qp_send(agent->qpi, wr);
			agent_stat_inc(agent, KMAD_ASTAT_RETRIES);
			kmad_port_stat_inc(port, KMAD_PSTAT_RETRIES);
		} else {
			trace_kmad_timeout(wr);
			send_put_ref(wr);		/* timeout */
			wr->status = KMAD_SEND_RESP_TIMEOUT;
			if (send_set_state(wr, KMAD_SS_DONE)) {
				wr->refs++;		/* warned: as above */
				kmad_wheel_del(&agent->deadlines, due);
				continue;
			}
			list_add_tail(&wr->agent_entry, &agent->done);
		}
	}
	/* Not agent_arm_timer(): this run of the work goes on to deliver the
	 * done list (kmad_agent_work()), the sends that ended here and the
	 * ones already there, such as a response's; queueing it once more
	 * for them cost a second run of the work after every response
	 * (Documentation/benchmarks.rst, "One run of the agent's work per
	 * response").
	 */
	agent_arm_deadline(agent);
	return false;
}

#if IS_ENABLED(CONFIG_KUNIT)
kmad_test_agent_hook_t kmad_test_expire_batch_hook;
EXPORT_SYMBOL_IF_KUNIT(kmad_test_expire_batch_hook);
#endif

/*
 * Expire deadlines that have passed: retry or end with a timeout, in
 * batches, each in its own hold of the agent lock.  Between two, posts,
 * cancels, responses and a flush may change the wheel; each batch reads
 * it afresh.
 */
static void agent_expire(struct kmad_agent_priv *agent)
{
	unsigned long flags;
#if IS_ENABLED(CONFIG_KUNIT)
	kmad_test_agent_hook_t hook = READ_ONCE(kmad_test_agent_work_hook);

	if (hook)
		hook(agent);
#endif

	spin_lock_irqsave(&agent->lock, flags);
	/* Running now: the work is queued for no deadline, unless it was
	 * queued again since this run began (every queueing holds the
	 * agent lock), e.g. at once by kmad_agent_run_now() for a TID table
	 * to resize, which the re-arms below must not postpone.
	 */
	if (!delayed_work_pending(&agent->work))
		agent->timer_at = U64_MAX;
	while (agent_expire_batch(agent)) {
		spin_unlock_irqrestore(&agent->lock, flags);
#if IS_ENABLED(CONFIG_KUNIT)
		hook = READ_ONCE(kmad_test_expire_batch_hook);
		if (hook)
			hook(agent);
#endif
		cond_resched();
		spin_lock_irqsave(&agent->lock, flags);
	}
	spin_unlock_irqrestore(&agent->lock, flags);
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
	/* Every run comes here: a size that failed waits for
	 * agent_tids_check_size() to forget it.
	 */
	if (bits == agent->tids.bits || bits == agent->tids_failed_bits) {
		spin_unlock_irqrestore(&agent->lock, flags);
		return;
	}
	spin_unlock_irqrestore(&agent->lock, flags);

	bucket = kmad_alloc_fails(KMAD_ALLOC_TID_BUCKETS) ? NULL :
		 kmad_tid_alloc_buckets(bits);
	spin_lock_irqsave(&agent->lock, flags);
	if (!bucket) {
		/* Longer chains until the count wants another size. */
		agent->tids_failed_bits = bits;
		spin_unlock_irqrestore(&agent->lock, flags);
		return;
	}
	agent->tids_failed_bits = 0;
	if (kmad_tid_wanted_bits(&agent->tids) == bits)
		bucket = kmad_tid_swap(&agent->tids, bucket, bits);
	spin_unlock_irqrestore(&agent->lock, flags);
	kmad_tid_free_buckets(bucket);
}

/*
 * Take up to KMAD_DELIVER_BATCH sends off the done list onto @batch, in
 * order, and prepare their delivery (send_deliver_prepare()).  Once the
 * done list is empty, a flushed agent's waiting list follows: its WAIT_RESP
 * sends are ended here, one at a time, with the flush's status, and the
 * DONE ones the flush put behind them are taken as they are
 * (kmad_agent_flush_sends()).  Returns how many.
 */
static unsigned int agent_take_done(struct kmad_agent_priv *agent,
				    struct list_head *batch)
{
	struct send_tally t = {};
	struct kmad_send_wr *wr;

	lockdep_assert_held(&agent->lock);
	while (t.n < KMAD_DELIVER_BATCH) {
		wr = list_first_entry_or_null(&agent->done,
					      struct kmad_send_wr, agent_entry);
		if (!wr && agent->tables_emptied) {
			wr = list_first_entry_or_null(&agent->waiting,
						      struct kmad_send_wr,
						      agent_entry);
			if (wr && wr->state == KMAD_SS_WAIT_RESP)
				send_end_waiting(wr, agent->flush_status);
		}
		if (!wr)
			break;
		list_move_tail(&wr->agent_entry, batch);
		send_deliver_prepare(wr, &t);
	}
	if (t.n)
		send_tally_add(agent, &t);
	return t.n;
}

/**
 * kmad_agent_work() - an agent's deferred work: callbacks of sends that
 * ended, expired deadlines, and unsolicited MADs.
 * @work: &kmad_agent_priv.work.
 *
 * Callbacks go in batches (agent_take_done()): one hold of the agent lock
 * takes a batch off the done list, its handlers then run without the
 * lock, and the agent references its sends held are dropped together
 * after the last of them returned.  A batch is taken only once the one
 * before it is delivered, so the callbacks keep the done list's order.
 */
void kmad_agent_work(struct work_struct *work)
{
	struct kmad_agent_priv *agent =
		container_of(to_delayed_work(work), struct kmad_agent_priv,
			     work);
	struct kmad_send_wr *wr, *tmp;
	struct kmad_recv_priv *recv;
	unsigned int n, recvs = 0;
	unsigned long flags;
	LIST_HEAD(batch);

	/* The reference kmad_agent_queue_work() took for this run is ours
	 * until the end.
	 */
	WRITE_ONCE(agent->work_runs, agent->work_runs + 1);
	agent_resize_tids(agent);
	agent_expire(agent);
	kmad_rmpp_recv_expire(agent);
	for (;;) {
		spin_lock_irqsave(&agent->lock, flags);
		n = agent_take_done(agent, &batch);
		recv = n ? NULL :
			list_first_entry_or_null(&agent->recvs,
						 struct kmad_recv_priv,
						 agent_entry);
		if (recv && recvs == KMAD_AGENT_RECV_BUDGET) {
			/* The rest in a run of its own, after its
			 * deadlines and other work of this CPU.
			 */
			kmad_agent_run_now(agent);
			recv = NULL;
		} else if (recv) {
			list_del_init(&recv->agent_entry);
			agent->recvs_queued--;
			agent->recv_bytes -= recv->wc.mad_len;
			recvs++;
		}
		spin_unlock_irqrestore(&agent->lock, flags);
		if (n) {
			/* A handler may free or repost its own send, never
			 * another one still to be delivered.
			 */
			list_for_each_entry_safe(wr, tmp, &batch,
						 agent_entry) {
				list_del_init(&wr->agent_entry);
				send_deliver(agent, wr);
			}
			kmad_agent_put_many(agent, n);	/* the sends' */
		} else if (recv) {
			agent->agent.recv_handler(&agent->agent, NULL,
						  &recv->wc);
			kmad_agent_put(agent);	/* the dispatch's */
		} else {
			break;
		}
	}
	kmad_agent_put(agent);	/* the queued work's; touch nothing after */
	kmad_work_ended();
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
 * kmad_send_wr_init() - make a zeroed send an idle buffer of @agent.
 * @wr: the send, zeroed (its &kmad_send_wr.rmpp bit may be set).
 * @agent: the agent that will post it.
 * @dest: where it goes.
 *
 * Context: any; @wr is not shared yet.
 */
void kmad_send_wr_init(struct kmad_send_wr *wr, struct kmad_agent *agent,
		       const struct kmad_dest *dest)
{
	wr->cqe.done = kmad_qp_send_cqe_done;
	wr->state = KMAD_SS_INIT;
	wr->hw = KMAD_HW_IDLE;
	INIT_LIST_HEAD(&wr->agent_entry);
	INIT_LIST_HEAD(&wr->qp_entry);
	wr->buf.agent = agent;
	wr->buf.mad = &wr->mad;
	wr->buf.dest = *dest;
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

	if (IS_ERR_OR_NULL(agent) || !dest)
		return ERR_PTR(-EINVAL);
	wr = kmem_cache_zalloc(kmad_send_cache, gfp);
	if (!wr)
		return ERR_PTR(-ENOMEM);
	kmad_send_wr_init(wr, agent, dest);
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

	if (IS_ERR_OR_NULL(buf))
		return;
	if (WARN_ONCE(!kmad_send_buf_ours(buf),
		      "kmad: freeing a send buffer kmad did not allocate\n"))
		return;
	wr = kmad_send_wr(buf);
	/* No agent lock: the agent may be gone already.  A buffer that is
	 * not posted is INIT and nobody else writes its state.
	 */
	if (WARN_ONCE(READ_ONCE(wr->state) != KMAD_SS_INIT,
		      "kmad: freeing a posted send buffer\n"))
		return;
	if (wr->rmpp)
		kmad_rmpp_send_free(wr);
	else
		kmem_cache_free(kmad_send_cache, wr);
}
EXPORT_SYMBOL_GPL(kmad_free_send_buf);

/* A buffer the send calls take: kmad's own, of an agent. */
static bool send_buf_usable(const struct kmad_send_buf *buf)
{
	return !IS_ERR_OR_NULL(buf) && buf->agent && kmad_send_buf_ours(buf);
}

/*
 * A directed-route SMP leaving this port takes the SMI's send step (hop
 * pointer, path check, IBTA C14-9/C14-13) as an HCA's SMI must; one whose
 * path does not start at this port is refused, unchanged.  A request whose
 * DrSLID, or a response whose DrDLID, is not permissive starts LID-routed:
 * no directed step here, but its hop fields are checked all the same
 * (C14-6: HopCount at most 63, HopPointer at most HopCount + 1).  The step
 * writes the MAD, so it is a post's last check.
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
	if (!kmad_smi_hops_ok(smp))
		return -EINVAL;
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

	if (!send_buf_usable(buf) || buf->agent->qpt != KMAD_QPT_SMI || !path ||
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
 * Can @dest be sent to from @agent?  -EINVAL for an SL above 15 (four bits
 * on the wire), a P_Key index the port's table does not have, a GRH on
 * QP0 (SMPs never carry one), none on an Ethernet port, from_qp1 on QP0
 * or on a provider without a bridge, or a source GID index the port's
 * table does not hold.  Reads nothing but @dest and the port's
 * attributes; may call the provider's query_gid().
 */
static int send_check_addr(struct kmad_agent_priv *agent,
			   const struct kmad_dest *dest)
{
	struct kmad_port *port = agent->qpi->port;
	bool eth = kmad_port_link_layer(port) == KMAD_LINK_LAYER_ETHERNET;
	union kmad_gid sgid;

	if (dest->sl > KMAD_MAX_SL ||
	    dest->pkey_index >= kmad_port_pkey_count(port))
		return -EINVAL;
	/* Only a provider with a bridge has a real QP1 to send from. */
	if (dest->from_qp1 && (kmad_qpt_is_smi(agent->agent.qpt) ||
			       !port->dev->bridges))
		return -EINVAL;
	if (!dest->grh_present)
		return eth ? -EINVAL : 0;
	if (kmad_qpt_is_smi(agent->agent.qpt))
		return -EINVAL;
	if (kmad_port_query_gid(port, dest->grh.sgid_index, &sgid))
		return -EINVAL;
	return 0;
}

/**
 * kmad_send_ah_attr() - the address of a posted send as the hardware gets
 * it, zeroed and filled (the address handle cache compares it with
 * memcmp()).
 * @wr: a send whose &kmad_send_buf.dest kmad_post_send() accepted; the ULP
 *	does not change it while the send is posted.
 * @attr: filled in.
 *
 * Built from the buffer each time the QP needs it, rather than kept in
 * every send (kmad_priv.h).  Context: any; reads only @wr's buffer, its
 * agent's QP type, the port's link layer and whether its provider
 * bridges (from_qp1 on every send of QP0 then).
 */
void kmad_send_ah_attr(const struct kmad_send_wr *wr,
		       struct kmad_ah_attr *attr)
{
	const struct kmad_dest *dest = &wr->buf.dest;
	struct kmad_port *port = kmad_send_agent(wr)->qpi->port;

	memset(attr, 0, sizeof(*attr));
	attr->dlid = dest->dlid;
	attr->sl = dest->sl;
	/* On a provider with a bridge the real QP0 is another MAD layer's
	 * too: every SMP leaves from it (provider.h, kmad_hw_send.from_qp1).
	 */
	attr->from_qp1 = dest->from_qp1 ||
			 (kmad_qpt_is_smi(kmad_send_agent(wr)->agent.qpt) &&
			  port->dev->bridges);
	attr->src_path_bits = port_path_bits(port, dest->src_path_bits);
	if (!dest->grh_present)
		return;
	attr->grh_present = true;
	attr->grh.dgid = dest->grh.dgid;
	attr->grh.flow_label = dest->grh.flow_label & 0xfffff;
	attr->grh.sgid_index = dest->grh.sgid_index;
	attr->grh.hop_limit = dest->grh.hop_limit;
	attr->grh.traffic_class = dest->grh.traffic_class;
	/* 0 would not leave the host on RoCE. */
	if (!attr->grh.hop_limit &&
	    kmad_port_link_layer(port) == KMAD_LINK_LAYER_ETHERNET)
		attr->grh.hop_limit = KMAD_ETH_HOP_LIMIT;
}

/*
 * Is @wr an RMPP ACK, STOP or ABORT (rmpp.h)?  Never an RMPP send from
 * kmad_alloc_send_buf_rmpp(): kmad writes its RMPP header (DATA) when it
 * transmits, whatever type the ULP left in it.
 */
static bool send_is_rmpp_ctl(const struct kmad_send_wr *wr)
{
	const struct kmad_rmpp_mad *r = (const struct kmad_rmpp_mad *)&wr->mad;

	return !wr->rmpp && kmad_rmpp_active(&wr->mad) &&
	       r->rmpp_hdr.rmpp_type != KMAD_RMPP_TYPE_DATA;
}

/**
 * kmad_post_send() - send a MAD.
 * @buf: a buffer from kmad_alloc_send_buf(), not currently posted.
 *
 * For a request, kmad puts the agent's hi_tid in the upper 32 bits of the
 * TID (not for kmad's own responders, whose RMPP ACK, STOP and ABORT
 * carry the TID of the transfer they are about, rmpp_recv.c); a
 * response (kmad_mad_is_response(), as on receive: a response
 * method, TrapRepress, or a baseboard management MAD with bit 0 of its
 * AttributeModifier set) keeps the requester's TID and may not have a
 * timeout.  With @buf->timeout_ms set, the send waits for a response
 * matching its TID and class, resending up to @buf->retries times with the
 * same TID.  Exactly one send_handler call follows a 0 return.  A
 * solicited request (flow.c) that finds its agent's flow control slots
 * taken is accepted and waits on the agent's backlog (BACKLOG) until one
 * frees; its timeout starts only once it is sent.
 *
 * A buffer from kmad_alloc_send_buf_rmpp() is sent by RMPP
 * (Documentation/rmpp.rst): segment by segment in windows, until the
 * receiver's final ACK; @buf->timeout_ms also bounds the wait for each ACK
 * (2 s at most, and without a timeout), @buf->retries counts the resends
 * after an ACK timeout, and a response may have a timeout (its ACK
 * timeout).  An RMPP ACK, STOP or ABORT keeps its TID: it names a
 * transfer that exists.
 *
 * Context: any but hard interrupt, interrupts possibly disabled (see
 * <kmad/mad.h>); does not sleep.
 * A directed-route SMP takes the SMI send step here (its hop pointer
 * advances); its path must leave through this port.  A post that fails
 * leaves the MAD as it was, byte for byte.
 *
 * Return: 0; -EINVAL for a bad buffer or one already posted, a timeout
 * above %KMAD_MAX_TIMEOUT_MS, an SL above %KMAD_MAX_SL or a P_Key index
 * past the end of the port's table, a directed-route SMP whose path fails
 * the SMI checks (its hop fields are checked even where it starts
 * LID-routed), a GRH on QP0, no GRH on an Ethernet port, or a GRH
 * whose sgid_index is not an entry of the port's GID table,
 * &kmad_dest.from_qp1 on QP0 or on a provider without a bridge, or on a
 * request other than a Send without a timeout (answers would go to the
 * other MAD layer), an RMPP
 * buffer whose class is not one it was allocated for, a response with a
 * timeout (but an RMPP one, whose timeout is its ACK timeout); -EBUSY if
 * the send is a request (with or without a timeout) and a request of the
 * agent that waits for its response (posted with a timeout, its outcome
 * not yet decided) has the same TID, or (an RMPP request, with or without a
 * timeout) another posted RMPP send of the agent has the same TID and
 * class and goes to the same peer (their ACKs could not be told apart);
 * -ESHUTDOWN once kmad_unregister_agent() has marked the agent (its first
 * step) or its port's removal has started.  An
 * RMPP response is not refused so: a responder answers a request the
 * requester sent again with the same TID while the first answer is still
 * on its way, as ib_mad's do.
 */
int kmad_post_send(struct kmad_send_buf *buf)
{
	struct kmad_agent_priv *agent;
	struct kmad_send_wr *wr;
	struct kmad_mad_hdr *hdr;
	unsigned long flags;
	bool expects_resp;
	int addr_ret;
	u64 tid;
	int ret;

	if (!send_buf_usable(buf))
		return -EINVAL;
	wr = kmad_send_wr(buf);
	agent = kmad_send_agent(wr);
	hdr = &wr->mad.mad_hdr;

	/* A post may race with kmad_unregister_agent(), which frees the
	 * agent after an RCU grace period.
	 */
	rcu_read_lock();
	/* Outside the agent lock: it may ask the provider for a GID.  Its
	 * verdict counts only once the send is known not to be posted.
	 */
	addr_ret = send_check_addr(agent, &buf->dest);
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
	    /* A response is never answered, so it cannot wait for one
	     * (an RMPP response's timeout is its ACK timeout).
	     */
	    (kmad_mad_is_response(hdr) && buf->timeout_ms && !wr->rmpp) ||
	    /* From the other layer's QP1, answers (and a transfer's ACKs)
	     * come back to that layer, matched by its own TIDs.
	     */
	    (buf->dest.from_qp1 && !kmad_mad_is_response(hdr) &&
	     (hdr->method != KMAD_METHOD_SEND || buf->timeout_ms ||
	      wr->rmpp)) ||
	    addr_ret || (wr->rmpp && kmad_rmpp_send_check(wr))) {
		ret = -EINVAL;
		goto out_unlock;
	}
	/* A refused post leaves the MAD as the ULP left it: every check
	 * comes before kmad writes it.  A request's TID gets the agent's
	 * hi_tid, and may not be that of another outstanding request.  An
	 * RMPP ACK, STOP or ABORT belongs to a transfer the peer started,
	 * or that its TID already names: it keeps its TID.
	 */
	expects_resp = buf->timeout_ms && !kmad_mad_is_response(hdr);
	tid = be64_to_cpu(hdr->tid);
	if (!kmad_mad_is_response(hdr) && !send_is_rmpp_ctl(wr) &&
	    !agent->internal)
		tid = (u64)agent->agent.hi_tid << 32 | (tid & 0xffffffffULL);
	if ((!kmad_mad_is_response(hdr) && !send_is_rmpp_ctl(wr) &&
	     kmad_tid_find(&agent->tids, tid)) ||
	    (wr->rmpp && !kmad_mad_is_response(hdr) &&
	     kmad_rmpp_send_busy(wr, tid))) {
		ret = -EBUSY;
		goto out_unlock;
	}
	/* The last check: it moves the hop pointer only if it passes. */
	ret = send_smi_step(agent, wr);
	if (ret)
		goto out_unlock;
	hdr->tid = cpu_to_be64(tid);
	wr->tid.tid = tid;
	wr->expects_resp = expects_resp;
	wr->retries_left = buf->retries;
	wr->status = KMAD_SEND_OK;
	wr->refs = send_has_outcome_ref(wr) ? 2 : 1;
	/* Segment 1 goes first; the transfer's state starts over. */
	if (wr->rmpp)
		kmad_rmpp_send_start(wr);
	/* Cannot fail: the TID is free, checked under this lock.  With no
	 * flow control slot free it waits on the backlog (flow.c).
	 */
	ret = send_set_state(wr, kmad_flow_admit(agent, wr) ?
				 KMAD_SS_SENDING : KMAD_SS_BACKLOG);
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
	if (wr->state == KMAD_SS_SENDING)
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

/*
 * kmad_cancel_send(), and kmad_modify_send(@buf, 0) with @modify: a send
 * it cancels gets a timeout of 0, as ib_modify_mad(buf, 0) gives it.
 * Written under the lock: the callback, after which the ULP may free
 * @buf, may run as soon as the lock is dropped.
 */
static int send_cancel(struct kmad_send_buf *buf, bool modify)
{
	struct kmad_agent_priv *agent;
	struct kmad_send_wr *wr;
	unsigned long flags;
	int ret;

	if (!send_buf_usable(buf))
		return -EINVAL;
	wr = kmad_send_wr(buf);
	agent = kmad_send_agent(wr);
	rcu_read_lock();
	spin_lock_irqsave(&agent->lock, flags);
	ret = send_cancel_locked(wr, KMAD_SEND_CANCELED);
	if (!ret && modify)
		buf->timeout_ms = 0;
	spin_unlock_irqrestore(&agent->lock, flags);
	rcu_read_unlock();
	return ret;
}

/**
 * kmad_cancel_send() - cancel a posted send.
 * @buf: the send.
 *
 * If its outcome is not decided yet, the send ends with
 * %KMAD_SEND_CANCELED: at once if it was waiting for a response or for a
 * flow control slot (never sent, then), or at its send completion if the
 * hardware still holds it.  From this call on no
 * response matches it.  The callback never runs inside this call.
 *
 * Context: any but hard interrupt, interrupts possibly disabled (see
 * <kmad/mad.h>); does not sleep.
 * Return: 0 if canceled; -EALREADY if the send already got its response,
 * was canceled, or ended; -EINVAL if it is not posted.
 */
int kmad_cancel_send(struct kmad_send_buf *buf)
{
	return send_cancel(buf, false);
}
EXPORT_SYMBOL_GPL(kmad_cancel_send);

/**
 * kmad_modify_send() - change the response timeout of a posted send.
 * @buf: the send.
 * @timeout_ms: new timeout, at most %KMAD_MAX_TIMEOUT_MS; 0 cancels (as
 *	kmad_cancel_send()).
 *
 * A send waiting for its response gets a new deadline @timeout_ms from
 * now; one still being sent, or still on the flow control backlog, uses
 * @timeout_ms once its send completes.  An RMPP send waiting for an ACK
 * gets its ACK timeout from now: @timeout_ms, at most 2 s.
 * Either way @buf->timeout_ms becomes @timeout_ms (as ib_modify_mad()
 * sets send_buf.timeout_ms): it is the send's timeout, of which kmad
 * keeps no copy.  A send that a @timeout_ms of 0 cancels gets 0 there
 * too; one it cannot cancel keeps its timeout.
 *
 * Context: any but hard interrupt, interrupts possibly disabled (see
 * <kmad/mad.h>); does not sleep.
 * Return: 0; -EINVAL if @timeout_ms is above %KMAD_MAX_TIMEOUT_MS, or the
 * send is not posted, or @timeout_ms is not 0 and the send waits for no
 * response (posted without a timeout, or a response: an RMPP response's
 * timeout is its ACK timeout, which this does not change); -EALREADY if
 * its outcome is already decided.
 */
int kmad_modify_send(struct kmad_send_buf *buf, unsigned int timeout_ms)
{
	struct kmad_agent_priv *agent;
	struct kmad_send_wr *wr;
	unsigned long flags;
	int ret = 0;
	u64 now;

	if (!send_buf_usable(buf) || timeout_ms > KMAD_MAX_TIMEOUT_MS)
		return -EINVAL;
	if (!timeout_ms)
		return send_cancel(buf, true);
	wr = kmad_send_wr(buf);
	agent = kmad_send_agent(wr);

	rcu_read_lock();
	spin_lock_irqsave(&agent->lock, flags);
	switch (wr->state) {
	case KMAD_SS_BACKLOG:	/* solicited: it has a timeout */
		buf->timeout_ms = timeout_ms;
		break;
	case KMAD_SS_SENDING:
		if (wr->expects_resp)
			buf->timeout_ms = timeout_ms;
		else
			ret = -EINVAL;
		break;
	case KMAD_SS_WAIT_RESP:
		/* An RMPP send without a timeout waits for an ACK. */
		if (!wr->expects_resp) {
			ret = -EINVAL;
			break;
		}
		if (send_flushed_waiting(wr)) {
			ret = -EALREADY;
			break;
		}
		buf->timeout_ms = timeout_ms;
		/* An RMPP send waiting for an ACK: its ACK timeout. */
		if (wr->rmpp)
			timeout_ms = kmad_rmpp_send_wait_ms(wr, timeout_ms);
		kmad_wheel_del(&agent->deadlines, &wr->deadline_node);
		now = kmad_now(agent->qpi->port);
		kmad_wheel_sync(&agent->deadlines, now);
		kmad_wheel_add(&agent->deadlines, &wr->deadline_node,
			       now + msecs_to_jiffies(timeout_ms));
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
