// SPDX-License-Identifier: GPL-2.0
/*
 * kmad solicited flow control: a limit on how many requests an agent has
 * waiting for their responses, and a backlog for the ones above it, as
 * the kernel's 2025 MAD layer ("IB/mad: Add flow control for solicited
 * MADs") does for the SA, CM and SMP classes.  A burst of requests then
 * reaches the wire, and the responder, only as fast as answers (or
 * timeouts) come back, instead of all at once to time out and be resent
 * together.
 *
 * What counts (kmad_flow_is_solicited()): a request posted with a timeout,
 * of the SA (0x03), CM (0x07) or SMP (0x01, 0x81) class, that is not an
 * RMPP-active MAD of an agent kmad does RMPP for (RMPP has its own
 * window).  Other sends, responses, and requests without a timeout go to
 * the QP at once, whatever the backlog holds.
 *
 * Slots: a solicited send holds one of its agent's &kmad_flow.limit slots
 * while it is SENDING or WAIT_RESP, i.e. until its response arrives
 * (EARLY_RESP, DONE), it is canceled (CANCELED, DONE), or it ends by
 * timeout or a local error (DONE).  A retry after a timeout goes from
 * WAIT_RESP back to SENDING in the slot it holds: it is never counted
 * twice, and is resent at once, not queued behind the backlog.  The
 * accounting follows the send's state, in send_set_state()
 * (kmad_flow_account()), so no path can forget it.
 *
 * Backlog: a solicited post that finds no free slot, or older sends still
 * waiting, becomes BACKLOG (kmad_priv.h) on &kmad_flow.backlog, in posting
 * order.  When a slot frees, send_set_state() hands the oldest to its QP
 * (kmad_send_drain_backlog(), send.c), in the context that freed it: the
 * CQ drain (send completion, response), the agent's work (timeout), or the
 * ULP's call (cancel, modify, kmad_agent_set_flow_limit()), under the
 * agent lock, which is the lock order of kmad_post_send() (A, then Q for
 * kmad_qp_send()), with interrupts possibly off: nothing here sleeps.  A
 * backlogged send's timeout starts at its send completion, as every
 * send's does, so time spent in the backlog is not counted.  Only an
 * ACTIVE agent's backlog drains, on a port not going away; a DYING
 * agent's is flushed (kmad_agent_flush_sends()), each send ending with
 * its callback, FLUSHED, never having reached the QP.
 *
 * Limits: an agent takes its limit when it registers, from the module
 * parameter of its class (flow_limit_sa, flow_limit_cm, flow_limit_smp;
 * flow_limit_send_only for a send-only agent; an agent of any other class,
 * or without a recv_handler, has none), and kmad_agent_set_flow_limit()
 * changes it at any time.  The
 * defaults are the ones upstream gets from its default receive queue of
 * 512: a quarter (128) for CM, SMP and send-only agents, a 32nd (16) for
 * the SA.  0 is "no limit".
 */

#include <linux/moduleparam.h>
#include <linux/seq_file.h>

#include "kmad_priv.h"

/* Upstream's defaults: its 512-entry receive queue / 4, and / 32 for SA. */
#define KMAD_FLOW_DEFAULT		128
#define KMAD_FLOW_DEFAULT_SA		16

static unsigned int flow_limit_sa = KMAD_FLOW_DEFAULT_SA;
module_param(flow_limit_sa, uint, 0644);
MODULE_PARM_DESC(flow_limit_sa,
		 "Outstanding solicited sends per SA agent (0: no limit; default 16; read when an agent registers)");

static unsigned int flow_limit_cm = KMAD_FLOW_DEFAULT;
module_param(flow_limit_cm, uint, 0644);
MODULE_PARM_DESC(flow_limit_cm,
		 "Outstanding solicited sends per CM agent (0: no limit; default 128; read when an agent registers)");

static unsigned int flow_limit_smp = KMAD_FLOW_DEFAULT;
module_param(flow_limit_smp, uint, 0644);
MODULE_PARM_DESC(flow_limit_smp,
		 "Outstanding solicited sends per SMP agent (0: no limit; default 128; read when an agent registers)");

static unsigned int flow_limit_send_only = KMAD_FLOW_DEFAULT;
module_param(flow_limit_send_only, uint, 0644);
MODULE_PARM_DESC(flow_limit_send_only,
		 "Outstanding solicited sends per send-only agent (0: no limit; default 128; read when an agent registers)");

/* The limit an agent registering for @agent->reg starts with. */
static unsigned int flow_default_limit(const struct kmad_agent_priv *agent)
{
	/* No recv_handler, no responses to wait for (as upstream). */
	if (!agent->agent.recv_handler)
		return 0;
	if (agent->send_only)
		return READ_ONCE(flow_limit_send_only);
	switch (agent->reg.mgmt_class) {
	case KMAD_MGMT_CLASS_SUBN_ADM:
		return READ_ONCE(flow_limit_sa);
	case KMAD_MGMT_CLASS_CM:
		return READ_ONCE(flow_limit_cm);
	case KMAD_MGMT_CLASS_SUBN_LID_ROUTED:
	case KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE:
		return READ_ONCE(flow_limit_smp);
	default:
		return 0;
	}
}

/**
 * kmad_flow_init() - an agent's flow control, before it registers.
 * @agent: the agent being created; its registration is set.
 *
 * Context: process context; the agent is not yet visible.
 */
void kmad_flow_init(struct kmad_agent_priv *agent)
{
	memset(&agent->flow, 0, sizeof(agent->flow));
	INIT_LIST_HEAD(&agent->flow.backlog);
	agent->flow.limit = flow_default_limit(agent);
}

/**
 * kmad_flow_is_solicited() - is @wr a send flow control counts?
 * @agent: its agent.
 * @wr: a send being posted: its MAD and &kmad_send_buf.timeout_ms are
 *	the ULP's final ones.
 *
 * Context: the agent lock held (the MAD is read as the post reads it).
 * Return: true for a request with a timeout of the SA, CM or SMP class
 * that is not an RMPP send (kmad_alloc_send_buf_rmpp()) nor RMPP-active
 * on an agent kmad does RMPP for.
 */
bool kmad_flow_is_solicited(const struct kmad_agent_priv *agent,
			    const struct kmad_send_wr *wr)
{
	u8 cls = wr->mad.mad_hdr.mgmt_class;

	lockdep_assert_held(&agent->lock);
	if (!wr->buf.timeout_ms || kmad_mad_is_response(&wr->mad.mad_hdr))
		return false;
	if (wr->rmpp || (agent->reg.rmpp_version && kmad_rmpp_active(&wr->mad)))
		return false;
	return cls == KMAD_MGMT_CLASS_SUBN_ADM || cls == KMAD_MGMT_CLASS_CM ||
	       cls == KMAD_MGMT_CLASS_SUBN_LID_ROUTED ||
	       cls == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
}

/* Is there a free slot for one more solicited send? */
static bool flow_slot_free(const struct kmad_flow *flow)
{
	return !flow->limit || flow->outstanding < flow->limit;
}

/**
 * kmad_flow_admit() - may a send being posted go to its QP now?
 * @agent: its agent, ACTIVE.
 * @wr: the send; &kmad_send_wr.solicited is set here.
 *
 * Context: the agent lock held, by kmad_post_send().
 * Return: true if it goes to its QP now (SENDING); false if it waits on
 * the backlog (BACKLOG): it is solicited, and no slot is free or older
 * sends wait there already (first come, first served).
 */
bool kmad_flow_admit(struct kmad_agent_priv *agent, struct kmad_send_wr *wr)
{
	struct kmad_flow *flow = &agent->flow;

	lockdep_assert_held(&agent->lock);
	wr->solicited = kmad_flow_is_solicited(agent, wr);
	if (!wr->solicited)
		return true;
	return list_empty(&flow->backlog) && flow_slot_free(flow);
}

/* Does a send in @state hold a slot? */
static bool flow_holds_slot(const struct kmad_send_wr *wr,
			    enum kmad_send_state state)
{
	return wr->solicited &&
	       (state == KMAD_SS_SENDING || state == KMAD_SS_WAIT_RESP);
}

/**
 * kmad_flow_account() - a send goes from @old to @new: its slot and its
 * place on the backlog follow.
 * @wr: the send.
 * @old: its state.
 * @new: the state it enters; send_set_state() checked the transition.
 *
 * Context: the agent lock held, from send_set_state() only.
 * Return: true if this freed a slot and the backlog holds sends: the
 * caller then drains it (kmad_send_drain_backlog()).
 */
bool kmad_flow_account(struct kmad_send_wr *wr, enum kmad_send_state old,
		       enum kmad_send_state new)
{
	struct kmad_agent_priv *agent = kmad_send_agent(wr);
	struct kmad_flow *flow = &agent->flow;
	bool held = flow_holds_slot(wr, old), holds = flow_holds_slot(wr, new);

	lockdep_assert_held(&agent->lock);
	if (new == KMAD_SS_BACKLOG) {
		list_add_tail(&wr->backlog_entry, &flow->backlog);
		flow->backlogged++;
		flow->backlog_total++;
		flow->backlog_max = max(flow->backlog_max, flow->backlogged);
	} else if (old == KMAD_SS_BACKLOG) {
		list_del(&wr->backlog_entry);
		flow->backlogged--;
	}
	if (!held && holds) {
		flow->outstanding++;
	} else if (held && !holds) {
		if (!WARN_ON_ONCE(!flow->outstanding))
			flow->outstanding--;
		return flow->backlogged;
	}
	return false;
}

/**
 * kmad_flow_next() - the backlogged send to hand to its QP next, if any.
 * @agent: the agent.
 *
 * Context: the agent lock held.
 * Return: the oldest BACKLOG send if the agent is ACTIVE, its port is not
 * going away and a slot is free, else NULL.  The caller moves it to SENDING, which takes the slot
 * and takes it off the backlog.
 */
struct kmad_send_wr *kmad_flow_next(struct kmad_agent_priv *agent)
{
	struct kmad_flow *flow = &agent->flow;

	lockdep_assert_held(&agent->lock);
	/* A port going away flushes its agents: the backlog waits for it. */
	if (agent->state != KMAD_AGENT_ACTIVE ||
	    READ_ONCE(agent->qpi->port->dying) || !flow_slot_free(flow))
		return NULL;
	return list_first_entry_or_null(&flow->backlog, struct kmad_send_wr,
					backlog_entry);
}

/**
 * kmad_agent_set_flow_limit() - change an agent's solicited flow control
 *	limit.
 * @agent: a registered agent.
 * @limit: how many solicited sends (see <kmad/mad.h>) it may have waiting
 *	for their responses; 0: no limit.
 *
 * Takes effect at once: a higher limit (or none) hands backlogged sends
 * to the QP now, oldest first; a lower one lets no new send out until
 * enough of the outstanding ones have ended (none is taken back).
 *
 * Context: any but hard interrupt, interrupts possibly disabled; does not
 * sleep.
 */
void kmad_agent_set_flow_limit(struct kmad_agent *agent, unsigned int limit)
{
	struct kmad_agent_priv *priv;
	unsigned long flags;

	if (WARN_ON_ONCE(IS_ERR_OR_NULL(agent)))
		return;
	priv = kmad_agent_priv(agent);
	spin_lock_irqsave(&priv->lock, flags);
	priv->flow.limit = limit;
	kmad_send_drain_backlog(priv);
	spin_unlock_irqrestore(&priv->lock, flags);
}
EXPORT_SYMBOL_GPL(kmad_agent_set_flow_limit);

/**
 * kmad_flow_show() - one agent's line of the port's debugfs "flow" file.
 * @m: the file.
 * @agent: an agent of the port (RCU or a reference keeps it).
 *
 * Context: process context; takes the agent lock.
 */
void kmad_flow_show(struct seq_file *m, struct kmad_agent_priv *agent)
{
	struct kmad_flow f;
	unsigned long flags;

	spin_lock_irqsave(&agent->lock, flags);
	f = agent->flow;
	spin_unlock_irqrestore(&agent->lock, flags);
	seq_printf(m, "%#x qp%u 0x%02x %u %u %u %u %llu\n", agent->agent.hi_tid,
		   agent->qpi->qp.qpn, agent->reg.mgmt_class, f.limit,
		   f.outstanding, f.backlogged, f.backlog_max,
		   f.backlog_total);
}
