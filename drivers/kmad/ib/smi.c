// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_ib: kmad's SMI QP on an InfiniBand port, through ib_mad's QP0.
 *
 * ib_mad owns every port's QP0 (a driver refuses a second SMI QP), so
 * kmad's SMI QP here is a software QP with no ib_core QP behind it:
 *
 * - Receives kmad posts are only held, and come back flushed when kmad
 *   moves the QP to the error state.  SMPs reach kmad another way:
 *   unsolicited ones through a bridge (bridge.c: an ib_mad agent on
 *   IB_QPT_SMI per kmad registration), responses to kmad's requests
 *   through the port's QP0 agent below; both with
 *   kmad_device_bridge_recv_qp(), which copies the MAD.
 * - Every send leaves through ib_mad's QP0 on the port's agent
 *   (&kmad_ib_port.qp0_agent, registered without methods, with the
 *   handlers below): ib_create_send_mad(), ib_post_send_mad().  Only
 *   LID-routed SMPs (class 0x01): a directed-route one (class 0x81) is
 *   refused at the post (kmad completes it with a local error), because
 *   kmad did the SMI's directed-route step already and ib_mad would do it
 *   again (handle_outgoing_dr_smp()).
 * - A send that expects no response (an answer, a Set without timeout)
 *   completes for kmad when ib_mad reports it, like a send from the real
 *   QP1 (verbs.c).  A request among them (a Set or Trap without timeout)
 *   leaves with a TID of our QP0 agent's, as below, not kmad's: its
 *   answer, which kmad does not wait for, must not reach an ib_mad agent
 *   whose hi_tid is kmad's agent's, nor match a lingering copy.
 * - A request kmad waits a response for (&kmad_hw_send.expects_resp)
 *   must be an ib_mad send that waits too: ib_mad routes a response by the
 *   upper 32 bits of its TID to the agent with that hi_tid, and drops it
 *   unless ib_find_send_mad() finds an outstanding send of that agent
 *   with that TID.  So the copy given to ib_mad carries a TID of its own,
 *   our QP0 agent's hi_tid in the upper half and the port's next
 *   sequence number (&kmad_ib_port.smi_tid) in the lower (kmad's TID is
 *   kept in a &struct kmad_ib_smp), and a timeout of
 *   bridge_smp_timeout_ms.  The lower half cannot stay kmad's: kmad's
 *   agents differ in the upper half only, and ib_mad matches a LID-routed
 *   response without a GRH by TID and class alone (rcv_has_same_gid()
 *   checks no LID), so two copies lingering with one TID would take each
 *   other's responses (seen on fakeib: a late SubnGet copy to a dead LID
 *   took the answer from LID 2 of another agent's SubnGet).  kmad
 *   gets the send's completion as soon as ib_mad has the copy (its own
 *   buffer is no longer read, and its response timer starts), while the
 *   copy lingers in ib_mad, holding an address handle of its own (kmad's
 *   may go once the send completed), until the response comes, the
 *   timeout ends it, or destroy_qp cancels it.  A response reaches
 *   kmad_ib_smi_recv_handler() with the copy; it gets kmad's TID back and
 *   goes to kmad's SMI QP, which matches it as any response.  ib_mad then
 *   reports the copy done (kmad_ib_smi_linger_done()).  kmad's retries
 *   are new posts, so new copies with the same TID.
 *
 * Lifetimes.  A &struct kmad_ib_smp lives from the post to ib_mad's report
 * of its copy (and a canceller's reference, if one holds it then), on its
 * QP's lingering list (Q) until the report, and counted in
 * &kmad_ib_qp.ibmad_sends until freed.  destroy_qp cancels every
 * lingering copy (ib_cancel_mad(), one at a time with a reference, Q
 * dropped) and waits for the count to drop to zero, so the QP outlives every handler
 * of its copies; the QP0 agent is unregistered only after the kmad
 * device.  Responses are given to kmad only while the QP is ready to
 * send (&kmad_ib_qp.state RTS, checked under Q with &kmad_ib_qp.feeding
 * raised): moving to the error state, which kmad does before it tears
 * the port down, waits for the feeders to finish.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include <kmad/wire.h>

#include "kmad_ib.h"

/* 1 ms to ib_mad's longest timeout (an int); 0 would take no answer. */
static int bridge_smp_timeout_set(const char *val,
				  const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, KMAD_MAX_TIMEOUT_MS);
}

static const struct kernel_param_ops bridge_smp_timeout_ops = {
	.set = bridge_smp_timeout_set,
	.get = param_get_uint,
};

static unsigned int bridge_smp_timeout_ms = 10000;
module_param_cb(bridge_smp_timeout_ms, &bridge_smp_timeout_ops,
		&bridge_smp_timeout_ms, 0644);
MODULE_PARM_DESC(bridge_smp_timeout_ms,
		 "how long after it leaves a response to a kmad SMP request is still accepted, in ms, 1-2147483647 (default 10000); kmad's own timeout and retries still apply");

/**
 * struct kmad_ib_smp - a request of the SMI QP lingering in ib_mad.
 * @entry: in &kmad_ib_qp.lingering (Q).
 * @iqp: the QP.
 * @msg: ib_mad's copy; its context[1] points here, context[0] is NULL.
 * @ah: the copy's address handle, ours.
 * @tid: kmad's TID of the request, given back to the response.
 * @refs: ib_mad's report holds one, a canceller (kmad_ib_smi_cancel_lingering())
 *	one more while it calls ib_cancel_mad() without Q; the last put
 *	frees the copy, its handle and this.
 * @canceled: kmad_ib_smi_cancel_lingering() has taken it (Q).
 */
struct kmad_ib_smp {
	struct list_head entry;
	struct kmad_ib_qp *iqp;
	struct ib_mad_send_buf *msg;
	struct ib_ah *ah;
	u64 tid;
	refcount_t refs;
	bool canceled;
};

static struct kmad_ib_port *smi_port(struct kmad_ib_qp *iqp)
{
	return &iqp->kdev->ports[iqp->port_num - 1];
}

/**
 * kmad_ib_smi_qp_init() - make @iqp kmad's software SMI QP.
 * @iqp: the QP, its slots set up.
 *
 * Context: process context (create_qp).
 * Return: 0, or -EOPNOTSUPP without a QP0 agent (the port is then
 * registered with no_smi, and kmad does not ask).
 */
int kmad_ib_smi_qp_init(struct kmad_ib_qp *iqp)
{
	if (!smi_port(iqp)->qp0_agent)
		return -EOPNOTSUPP;
	pr_info("%s port %u: kmad's QP0 sends through ib_mad's QP0 (LID-routed SMPs only)\n",
		dev_name(&iqp->kdev->ibdev->dev), iqp->port_num);
	return 0;
}

static bool smi_not_feeding(struct kmad_ib_qp *iqp)
{
	unsigned long flags;
	bool idle;

	spin_lock_irqsave(&iqp->lock, flags);
	idle = !iqp->feeding;
	spin_unlock_irqrestore(&iqp->lock, flags);
	return idle;
}

/*
 * The error state: every held receive completes flushed; no response goes
 * to kmad from here on, and none is going when this returns.
 */
static void smi_flush(struct kmad_ib_qp *iqp)
{
	struct kmad_ib_wr *w, *tmp;
	LIST_HEAD(flushed);
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&iqp->lock, flags);
	iqp->state = KMAD_QPS_ERR;
	for (i = 0; i < iqp->nr_wrs; i++) {
		w = &iqp->wrs[i];
		if (!w->busy || !w->held)
			continue;
		/* It completes through the software list now. */
		w->held = false;
		w->sw = true;
		list_add_tail(&w->sw_entry, &flushed);
	}
	spin_unlock_irqrestore(&iqp->lock, flags);
	list_for_each_entry_safe(w, tmp, &flushed, sw_entry) {
		list_del_init(&w->sw_entry);
		kmad_ib_sw_complete(w, KMAD_WC_FLUSH_ERR);
	}
	wait_var_event(&iqp->feeding, smi_not_feeding(iqp));
}

/**
 * kmad_ib_smi_modify_qp() - modify_qp of the SMI QP.
 * @iqp: the QP.
 * @state: the new state.
 *
 * Context: process context.
 * Return: 0, or -EINVAL for a state kmad does not use.
 */
int kmad_ib_smi_modify_qp(struct kmad_ib_qp *iqp, enum kmad_qp_state state)
{
	unsigned long flags;

	switch (state) {
	case KMAD_QPS_RTS:
	case KMAD_QPS_RESET:
		spin_lock_irqsave(&iqp->lock, flags);
		iqp->state = state;
		spin_unlock_irqrestore(&iqp->lock, flags);
		/* kmad resets only after reaping every completion. */
		if (state == KMAD_QPS_RESET)
			kmad_ib_qp_reclaim(iqp);
		return 0;
	case KMAD_QPS_ERR:
		smi_flush(iqp);
		return 0;
	default:
		return -EINVAL;
	}
}

/**
 * kmad_ib_smi_post_recv() - hold a receive buffer of the SMI QP.
 * @iqp: the QP.
 * @wr: the receive.
 *
 * Held until the QP is flushed; in the error state flushed at once.  Any
 * context but hard interrupt, interrupts possibly off.
 * Return: 0, or -ENOBUFS with every slot taken.
 */
int kmad_ib_smi_post_recv(struct kmad_ib_qp *iqp,
			  const struct kmad_hw_recv *wr)
{
	struct kmad_ib_wr *w;
	unsigned long flags;
	bool flush;

	spin_lock_irqsave(&iqp->lock, flags);
	w = kmad_ib_wr_get_sw_locked(iqp, wr->cqe);
	if (!w) {
		spin_unlock_irqrestore(&iqp->lock, flags);
		return -ENOBUFS;
	}
	w->buf = wr->buf;
	w->recv = true;
	flush = iqp->state == KMAD_QPS_ERR;
	if (!flush) {
		w->sw = false;
		w->held = true;
	}
	spin_unlock_irqrestore(&iqp->lock, flags);
	if (flush)
		kmad_ib_sw_complete(w, KMAD_WC_FLUSH_ERR);
	return 0;
}

/* An address handle for a LID-routed SMP to @wr's DLID, in ib_mad's PD.
 * Atomic context: no RDMA_CREATE_AH_SLEEPABLE (an InfiniBand AH needs no
 * resolution).
 */
static struct ib_ah *smi_ah(struct kmad_ib_qp *iqp, struct ib_mad_agent *agent,
			    const struct kmad_hw_send *wr)
{
	struct rdma_ah_attr aa = {};

	aa.type = rdma_ah_find_type(iqp->kdev->ibdev, iqp->port_num);
	rdma_ah_set_port_num(&aa, iqp->port_num);
	rdma_ah_set_dlid(&aa, wr->dlid);
	rdma_ah_set_sl(&aa, wr->sl);
	if (wr->ah_attr)
		rdma_ah_set_path_bits(&aa, wr->ah_attr->src_path_bits);
	return rdma_create_ah(agent->qp->pd, &aa, 0);
}

/*
 * A TID for a copy of a request given to ib_mad: our QP0 agent's hi_tid
 * and the port's next sequence number (see the top of this file).
 */
static __be64 smi_new_tid(struct kmad_ib_qp *iqp, struct ib_mad_agent *agent)
{
	u32 seq = atomic_inc_return(&smi_port(iqp)->smi_tid);

	return cpu_to_be64((u64)agent->hi_tid << 32 | seq);
}

/*
 * Post a request that waits for a response: ib_mad's copy lingers (see the
 * top of this file), kmad's send completes now.
 */
static int smi_post_request(struct kmad_ib_qp *iqp, struct ib_mad_agent *agent,
			    const struct kmad_hw_send *wr)
{
	struct ib_mad_hdr *hdr;
	struct kmad_ib_smp *sm;
	struct kmad_ib_wr *w;
	unsigned long flags;
	int ret;

	sm = kzalloc(sizeof(*sm), GFP_ATOMIC);
	if (!sm)
		return -ENOMEM;
	sm->iqp = iqp;
	refcount_set(&sm->refs, 1);		/* ib_mad's report */
	sm->ah = smi_ah(iqp, agent, wr);
	if (IS_ERR(sm->ah)) {
		ret = PTR_ERR(sm->ah);
		goto err_free_sm;
	}
	sm->msg = ib_create_send_mad(agent, wr->remote_qpn, wr->pkey_index, 0,
				     IB_MGMT_MAD_HDR,
				     wr->len - IB_MGMT_MAD_HDR, GFP_ATOMIC,
				     IB_MGMT_BASE_VERSION);
	if (IS_ERR(sm->msg)) {
		ret = PTR_ERR(sm->msg);
		goto err_destroy_ah;
	}
	memcpy(sm->msg->mad, wr->mad, wr->len);
	hdr = sm->msg->mad;
	sm->tid = be64_to_cpu(hdr->tid);
	hdr->tid = smi_new_tid(iqp, agent);
	sm->msg->ah = sm->ah;
	/* ib_mad's timeout_ms is an int: a larger value would wrap and
	 * make the copy linger until the port goes.
	 */
	sm->msg->timeout_ms = READ_ONCE(bridge_smp_timeout_ms);
	sm->msg->retries = 0;
	sm->msg->context[0] = NULL;
	sm->msg->context[1] = sm;

	spin_lock_irqsave(&iqp->lock, flags);
	w = kmad_ib_wr_get_sw_locked(iqp, wr->cqe);
	if (!w) {
		spin_unlock_irqrestore(&iqp->lock, flags);
		ret = -ENOBUFS;
		goto err_free_msg;
	}
	list_add_tail(&sm->entry, &iqp->lingering);
	/* Counted before ib_mad can report it. */
	atomic_inc(&iqp->ibmad_sends);
	spin_unlock_irqrestore(&iqp->lock, flags);
	ret = ib_post_send_mad(sm->msg, NULL);
	if (ret) {
		/* Not posted: ib_mad will not report it. */
		spin_lock_irqsave(&iqp->lock, flags);
		list_del(&sm->entry);
		kmad_ib_wr_put_locked(iqp, w);
		spin_unlock_irqrestore(&iqp->lock, flags);
		atomic_dec(&iqp->ibmad_sends);
		goto err_free_msg;
	}
	/* ib_mad has its copy: kmad's buffer is not read again. */
	kmad_ib_sw_complete(w, KMAD_WC_SUCCESS);
	return 0;

err_free_msg:
	ib_free_send_mad(sm->msg);
err_destroy_ah:
	rdma_destroy_ah(sm->ah, 0);
err_free_sm:
	kfree(sm);
	return ret;
}

/**
 * kmad_ib_smi_post_send() - post_send of the SMI QP: through ib_mad's QP0.
 * @iqp: the QP.
 * @wr: the send (kmad set &kmad_hw_send.from_qp1: its address handle is
 *	in ib_mad's PD).
 *
 * Any context but hard interrupt, interrupts possibly off.
 * Return: 0; -EINVAL for a directed-route SMP (not carried, see the top of
 * this file) or a bad send; -ENOMEM, -ENOBUFS, or ib_mad's error.
 */
int kmad_ib_smi_post_send(struct kmad_ib_qp *iqp,
			  const struct kmad_hw_send *wr)
{
	struct ib_mad_agent *agent = smi_port(iqp)->qp0_agent;
	const struct kmad_mad_hdr *hdr = wr->mad;
	__be64 tid;

	if (!agent || wr->len != sizeof(struct ib_mad))
		return -EINVAL;
	if (hdr->mgmt_class != KMAD_MGMT_CLASS_SUBN_LID_ROUTED) {
		pr_warn_ratelimited("%s port %u: SMP class %#04x refused: kmad_ib carries LID-routed SMPs only\n",
				    dev_name(&iqp->kdev->ibdev->dev),
				    iqp->port_num, hdr->mgmt_class);
		return -EINVAL;
	}
	if (wr->expects_resp)
		return smi_post_request(iqp, agent, wr);
	if (kmad_mad_is_response(hdr))
		return kmad_ib_post_via_mad(iqp, agent, wr, NULL);
	/* A request that waits for nothing still gets an answer (a Set's
	 * GetResp, a Trap's TrapRepress), which ib_mad routes by the upper
	 * half of its TID: with kmad's TID it could go to an ib_mad agent
	 * whose hi_tid that is, and match one of its requests, or one of
	 * our lingering copies.  With a TID of our QP0 agent's that no copy
	 * has, ib_mad finds nothing and drops it.
	 */
	tid = smi_new_tid(iqp, agent);
	return kmad_ib_post_via_mad(iqp, agent, wr, &tid);
}

/*
 * Drop a reference to a lingering copy; the last (after ib_mad's report)
 * frees it.  Process context (ib_mad's work, or the canceller).
 */
static void smp_put(struct kmad_ib_smp *sm)
{
	struct kmad_ib_qp *iqp = sm->iqp;

	if (!refcount_dec_and_test(&sm->refs))
		return;
	ib_free_send_mad(sm->msg);
	rdma_destroy_ah(sm->ah, 0);
	kfree(sm);
	/* Last: destroy_qp may free the QP once this reads zero. */
	if (atomic_dec_and_test(&iqp->ibmad_sends))
		wake_up_var(&iqp->ibmad_sends);
}

/**
 * kmad_ib_smi_cancel_lingering() - cancel every lingering request of the
 * SMI QP (destroy_qp, which then waits for ib_mad's reports).
 * @iqp: the QP, stopped.
 *
 * One copy at a time, each with a reference of ours and without Q:
 * ib_cancel_mad() walks the agent's lists with interrupts off, so a
 * walk of them all under Q would keep interrupts off for a time that
 * grows with the square of the copies lingering.  A canceled copy goes
 * to the tail, so the head is always the next one to cancel.  A copy
 * ib_mad reported meanwhile is kept until our put; ib_cancel_mad() does
 * not find it any more (-EINVAL, ignored).
 *
 * Context: process context.
 */
void kmad_ib_smi_cancel_lingering(struct kmad_ib_qp *iqp)
{
	struct kmad_ib_smp *sm;
	unsigned int n = 0;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&iqp->lock, flags);
		sm = list_first_entry_or_null(&iqp->lingering,
					      struct kmad_ib_smp, entry);
		if (!sm || sm->canceled) {
			spin_unlock_irqrestore(&iqp->lock, flags);
			break;
		}
		sm->canceled = true;
		list_move_tail(&sm->entry, &iqp->lingering);
		refcount_inc(&sm->refs);
		spin_unlock_irqrestore(&iqp->lock, flags);
		ib_cancel_mad(sm->msg);
		smp_put(sm);
		n++;
		cond_resched();
	}
	if (n)
		pr_info("%s port %u: canceled %u SMP requests lingering in ib_mad\n",
			dev_name(&iqp->kdev->ibdev->dev), iqp->port_num, n);
}

/**
 * kmad_ib_smi_linger_done() - ib_mad reports a lingering request done.
 * @send_wc: the copy and how it ended: success once its response came, a
 *	response timeout, a flush once canceled.
 *
 * Context: ib_mad's completion or timeout work, or
 * ib_unregister_mad_agent() (none left by then).
 */
void kmad_ib_smi_linger_done(struct ib_mad_send_wc *send_wc)
{
	struct kmad_ib_smp *sm = send_wc->send_buf->context[1];
	struct kmad_ib_qp *iqp = sm->iqp;
	unsigned long flags;

	pr_debug("%s port %u: SMP copy with TID %#llx (kmad's %#llx) done: %s\n",
		 dev_name(&iqp->kdev->ibdev->dev), iqp->port_num,
		 be64_to_cpu(((struct ib_mad_hdr *)sm->msg->mad)->tid), sm->tid,
		 ib_wc_status_msg(send_wc->status));
	spin_lock_irqsave(&iqp->lock, flags);
	list_del(&sm->entry);
	spin_unlock_irqrestore(&iqp->lock, flags);
	smp_put(sm);			/* ib_mad's report */
}

/**
 * kmad_ib_smi_recv_handler() - the QP0 agent's receive handler: a
 * response to one of our lingering requests.
 * @agent: the port's &kmad_ib_port.qp0_agent.
 * @send_buf: the lingering copy it answers (ib_mad passes only responses
 *	matched with a send of ours to an agent without methods).
 * @rwc: the response.
 *
 * Gives the response kmad's TID back and passes it to kmad's SMI QP.  The
 * copy is still outstanding (ib_mad reports it after this returns), so
 * the QP is alive.  Context: ib_mad's completion work.
 */
void kmad_ib_smi_recv_handler(struct ib_mad_agent *agent,
			      struct ib_mad_send_buf *send_buf,
			      struct ib_mad_recv_wc *rwc)
{
	struct ib_mad_hdr *hdr = &rwc->recv_buf.mad->mad_hdr;
	const struct ib_wc *iwc = rwc->wc;
	struct kmad_ib_smp *sm;
	struct kmad_ib_qp *iqp;
	struct kmad_wc wc = {};
	unsigned long flags;
	bool open, idle;
	int ret;

	if (!send_buf || send_buf->context[0])
		goto out;
	sm = send_buf->context[1];
	iqp = sm->iqp;
	hdr->tid = cpu_to_be64(sm->tid);
	spin_lock_irqsave(&iqp->lock, flags);
	open = iqp->state == KMAD_QPS_RTS;
	if (open)
		iqp->feeding++;
	spin_unlock_irqrestore(&iqp->lock, flags);
	if (!open)
		goto out;
	wc.src_qpn = iwc->src_qp;
	wc.slid = iwc->slid;
	wc.sl = iwc->sl;
	wc.pkey_index = iwc->pkey_index;
	wc.dlid_path_bits = iwc->dlid_path_bits;
	ret = kmad_device_bridge_recv_qp(iqp->kdev->dev, iqp->port_num,
					 KMAD_QPT_SMI, &wc, NULL,
					 rwc->recv_buf.mad, rwc->mad_len);
	if (ret)
		pr_debug_ratelimited("%s port %u: SMP response dropped: %d\n",
				     dev_name(&iqp->kdev->ibdev->dev),
				     iqp->port_num, ret);
	spin_lock_irqsave(&iqp->lock, flags);
	idle = !--iqp->feeding;
	spin_unlock_irqrestore(&iqp->lock, flags);
	if (idle)
		wake_up_var(&iqp->feeding);
out:
	ib_free_recv_mad(rwc);
}
