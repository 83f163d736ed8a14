// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_ib: CQs, QPs, posts and polls, mapped onto ib_core verbs.
 *
 * CQs.  kmad drains a CQ itself (poll, re-arm, poll again), so its CQ is
 * made with ib_create_cq() and a completion handler that only tells kmad
 * (kmad_cq_event()), not with ib_alloc_cq(), whose CQ polls by itself.
 *
 * QPs.  ib_core's MAD layer owns QP0 and QP1 of every port, so kmad's
 * "QP1" is a UD QP of its own with Q_Key %KMAD_QP1_QKEY; its number is
 * given to kmad with kmad_qp_set_hw_num().  kmad's SMI QP, on an
 * InfiniBand port, is a software QP whose sends go through ib_mad's QP0
 * (smi.c); its posts, modify and destroy go there.
 *
 * Work requests.  Each QP has one slot per send and receive kmad may
 * have posted (&struct kmad_ib_wr); a slot keeps kmad's completion
 * context and the buffer's DMA mapping from the post until the completion
 * is polled.  Buffers are mapped in post_send() and post_recv(), which may
 * run with interrupts off (dma_map_single() does not sleep), and unmapped
 * in poll_cq().
 *
 * Sends from the real QP1.  kmad's responses to requests that came through
 * the bridge (&kmad_hw_send.from_qp1) leave from the port's QP1, which
 * ib_mad owns: kmad_ib_post_via_mad() copies the MAD into an ib_mad send
 * buffer of the port's send-only agent (&kmad_ib_port.qp1_agent;
 * ib_create_send_mad() with GFP_ATOMIC) with the address handle kmad made
 * for it on ib_mad's protection domain (create_ah with
 * &kmad_ah_attr.from_qp1), and posts it with ib_post_send_mad(), no
 * timeout (the SMI QP's sends that expect no response go the same way,
 * on &kmad_ib_port.qp0_agent).  ib_mad calls kmad_ib_mad_send_handler()
 * once the hardware completed it (or failed it); that queues a software
 * completion on the QP's CQ (kmad_ib_sw_complete()) and calls
 * kmad_cq_event(), and poll_cq() returns software completions before the
 * hardware CQ's.  So every such send has exactly one completion, polled
 * like any CQE, never before ib_mad's: also when kmad moves the QP to the
 * error state (ib_mad's QP1 is not ours to flush: the send completes as
 * ib_mad reports it).  destroy_qp waits for ib_mad's handlers of the
 * QP's sends (kmad destroys a QP only once it has reaped all of them), and
 * the agent is unregistered only after the kmad device, when none is
 * left.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_vlan.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include <kmad/wire.h>

#include "kmad_ib.h"

static struct kmad_ib_cq *to_ib_cq(struct kmad_cq *kcq)
{
	return kmad_cq_priv(kcq);
}

static struct kmad_ib_qp *to_ib_qp(struct kmad_qp *kqp)
{
	return kmad_qp_priv(kqp);
}

/* ib_core's completion handler: any context, often a tasklet or IRQ. */
static void kmad_ib_cq_comp(struct ib_cq *cq, void *context)
{
	kmad_cq_event(context);
}

static void kmad_ib_cq_async(struct ib_event *event, void *context)
{
	pr_err_ratelimited("%s: CQ event: %s\n",
			   dev_name(&event->device->dev),
			   ib_event_msg(event->event));
}

int kmad_ib_create_cq(struct kmad_cq *kcq, unsigned int depth)
{
	struct kmad_ib_dev *kdev = kmad_ib_dev(kmad_cq_device(kcq));
	struct ib_cq_init_attr attr = { .cqe = depth };
	struct kmad_ib_cq *icq;

	icq = kzalloc(sizeof(*icq), GFP_KERNEL);
	if (!icq)
		return -ENOMEM;
	icq->kcq = kcq;
	spin_lock_init(&icq->sw_lock);
	INIT_LIST_HEAD(&icq->sw_done);
	icq->cq = ib_create_cq(kdev->ibdev, kmad_ib_cq_comp, kmad_ib_cq_async,
			       kcq, &attr);
	if (IS_ERR(icq->cq)) {
		int ret = PTR_ERR(icq->cq);

		kfree(icq);
		return ret;
	}
	kmad_cq_set_priv(kcq, icq);
	return 0;
}

void kmad_ib_destroy_cq(struct kmad_cq *kcq)
{
	struct kmad_ib_cq *icq = to_ib_cq(kcq);

	ib_destroy_cq(icq->cq);
	/*
	 * rxe (6.1) neither kills nor waits for a completion tasklet that
	 * passed its is_dying check before ib_destroy_cq(): such a tasklet
	 * may still call kmad_ib_cq_comp() -> kmad_cq_event() on a CQ kmad
	 * frees once this returns.  A tasklet is softirq, an RCU read side:
	 * wait for it.
	 */
	synchronize_rcu();
	kmad_cq_set_priv(kcq, NULL);
	kfree(icq);
}

static void kmad_ib_qp_async(struct ib_event *event, void *context)
{
	struct kmad_ib_qp *iqp = context;

	switch (event->event) {
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		pr_err_ratelimited("%s port %u: QP %u: %s\n",
				   dev_name(&event->device->dev),
				   iqp->port_num, iqp->qp->qp_num,
				   ib_event_msg(event->event));
		kmad_qp_event(iqp->kqp, KMAD_QP_EVENT_FATAL);
		break;
	default:
		break;
	}
}

int kmad_ib_create_qp(struct kmad_qp *kqp, struct kmad_cq *kcq,
		      unsigned int sq_depth, unsigned int rq_depth)
{
	struct kmad_ib_dev *kdev = kmad_ib_dev(kmad_qp_device(kqp));
	struct ib_qp_init_attr init = {};
	struct kmad_ib_qp *iqp;
	unsigned int i;
	int ret;

	/* QP0 only where ib_mad has an SMI agent of ours to send on. */
	if (kmad_qp_num(kqp) > 1)
		return -EOPNOTSUPP;
	iqp = kzalloc(sizeof(*iqp), GFP_KERNEL);
	if (!iqp)
		return -ENOMEM;
	iqp->kqp = kqp;
	iqp->kdev = kdev;
	iqp->icq = to_ib_cq(kcq);
	atomic_set(&iqp->ibmad_sends, 0);
	iqp->port_num = kmad_qp_port_num(kqp);
	iqp->state = KMAD_QPS_RESET;
	iqp->smi = kmad_qp_num(kqp) == 0;
	INIT_LIST_HEAD(&iqp->lingering);
	spin_lock_init(&iqp->lock);
	iqp->nr_wrs = sq_depth + rq_depth;
	iqp->wrs = kcalloc(iqp->nr_wrs, sizeof(*iqp->wrs), GFP_KERNEL);
	if (!iqp->wrs) {
		ret = -ENOMEM;
		goto err_free_qp;
	}
	for (i = 0; i < iqp->nr_wrs; i++) {
		iqp->wrs[i].qp = iqp;
		INIT_LIST_HEAD(&iqp->wrs[i].sw_entry);
		iqp->wrs[i].next = iqp->free;
		iqp->free = &iqp->wrs[i];
	}
	if (iqp->smi) {
		ret = kmad_ib_smi_qp_init(iqp);
		if (ret)
			goto err_free_wrs;
		kmad_qp_set_priv(kqp, iqp);
		return 0;
	}

	init.event_handler = kmad_ib_qp_async;
	init.qp_context = iqp;
	init.send_cq = to_ib_cq(kcq)->cq;
	init.recv_cq = to_ib_cq(kcq)->cq;
	init.cap.max_send_wr = sq_depth;
	init.cap.max_recv_wr = rq_depth;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	init.sq_sig_type = IB_SIGNAL_ALL_WR;
	init.qp_type = IB_QPT_UD;
	init.port_num = iqp->port_num;
	iqp->qp = ib_create_qp(kdev->pd, &init);
	if (IS_ERR(iqp->qp)) {
		ret = PTR_ERR(iqp->qp);
		goto err_free_wrs;
	}
	kmad_qp_set_priv(kqp, iqp);
	kmad_qp_set_hw_num(kqp, iqp->qp->qp_num);
	pr_info("%s port %u: kmad's QP1 is UD QP %u\n",
		dev_name(&kdev->ibdev->dev), iqp->port_num, iqp->qp->qp_num);
	return 0;

err_free_wrs:
	kfree(iqp->wrs);
err_free_qp:
	kfree(iqp);
	return ret;
}

/* Unmap a slot's buffer and give the slot back.  Context: Q held. */
void kmad_ib_wr_put_locked(struct kmad_ib_qp *iqp, struct kmad_ib_wr *w)
{
	lockdep_assert_held(&iqp->lock);
	if (w->dir != DMA_NONE)
		ib_dma_unmap_single(iqp->kdev->ibdev, w->dma, w->len, w->dir);
	w->dir = DMA_NONE;
	w->busy = false;
	w->sw = false;
	w->recv = false;
	w->held = false;
	w->msg = NULL;
	w->kcqe = NULL;
	w->next = iqp->free;
	iqp->free = w;
}

/*
 * Reclaim the slots of work requests ib_core will not complete any more
 * (after a reset or destroy; the receives the SMI QP holds).  kmad resets
 * and destroys only QPs whose work it has reaped, so this finds none
 * unless something went wrong.  Slots that complete through the software
 * list are not the QP's: ib_mad still completes its sends (destroy first
 * waits for that and drops their software completions).
 */
void kmad_ib_qp_reclaim(struct kmad_ib_qp *iqp)
{
	unsigned int i, lost = 0;
	unsigned long flags;

	spin_lock_irqsave(&iqp->lock, flags);
	for (i = 0; i < iqp->nr_wrs; i++) {
		if (iqp->wrs[i].busy && !iqp->wrs[i].sw) {
			kmad_ib_wr_put_locked(iqp, &iqp->wrs[i]);
			lost++;
		}
	}
	spin_unlock_irqrestore(&iqp->lock, flags);
	if (lost)
		pr_warn("%s port %u: QP %u: %u work requests had no completion\n",
			dev_name(&iqp->kdev->ibdev->dev), iqp->port_num,
			kmad_qp_hw_num(iqp->kqp), lost);
}

/*
 * Wait until ib_mad has reported every send of the QP through its QP0 or
 * QP1 and our handler is done with them, then drop the software
 * completions of the QP kmad has not polled (none, unless something went
 * wrong).
 */
static void ibmad_sends_drain(struct kmad_ib_qp *iqp)
{
	struct kmad_ib_cq *icq = iqp->icq;
	struct kmad_ib_wr *w, *tmp;
	unsigned int lost = 0;
	LIST_HEAD(mine);
	unsigned long flags;

	wait_var_event(&iqp->ibmad_sends, !atomic_read(&iqp->ibmad_sends));
	spin_lock_irqsave(&icq->sw_lock, flags);
	list_for_each_entry_safe(w, tmp, &icq->sw_done, sw_entry) {
		if (w->qp == iqp)
			list_move_tail(&w->sw_entry, &mine);
	}
	spin_unlock_irqrestore(&icq->sw_lock, flags);
	spin_lock_irqsave(&iqp->lock, flags);
	list_for_each_entry_safe(w, tmp, &mine, sw_entry) {
		list_del_init(&w->sw_entry);
		kmad_ib_wr_put_locked(iqp, w);
		lost++;
	}
	spin_unlock_irqrestore(&iqp->lock, flags);
	if (lost)
		pr_warn("%s port %u: QP %u: %u software completions not polled\n",
			dev_name(&iqp->kdev->ibdev->dev), iqp->port_num,
			kmad_qp_hw_num(iqp->kqp), lost);
}

void kmad_ib_destroy_qp(struct kmad_qp *kqp)
{
	struct kmad_ib_qp *iqp = to_ib_qp(kqp);

	if (iqp->smi)
		kmad_ib_smi_cancel_lingering(iqp);
	else
		ib_destroy_qp(iqp->qp);
	ibmad_sends_drain(iqp);
	kmad_ib_qp_reclaim(iqp);
	kmad_qp_set_priv(kqp, NULL);
	kfree(iqp->wrs);
	kfree(iqp);
}

/* RESET -> INIT -> RTR -> RTS, as ib_mad brings up its QP1. */
static int qp_to_rts(struct kmad_ib_qp *iqp)
{
	struct ib_qp_attr attr = {};
	int ret;

	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = iqp->port_num;
	attr.qkey = KMAD_QP1_QKEY;
	ret = ib_modify_qp(iqp->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_RTR;
	ret = ib_modify_qp(iqp->qp, &attr, IB_QP_STATE);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0;
	return ib_modify_qp(iqp->qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
}

int kmad_ib_modify_qp(struct kmad_qp *kqp, enum kmad_qp_state state)
{
	struct kmad_ib_qp *iqp = to_ib_qp(kqp);
	struct ib_qp_attr attr = {};
	int ret;

	if (iqp->smi)
		return kmad_ib_smi_modify_qp(iqp, state);
	switch (state) {
	case KMAD_QPS_RTS:
		ret = qp_to_rts(iqp);
		break;
	case KMAD_QPS_ERR:
		attr.qp_state = IB_QPS_ERR;
		ret = ib_modify_qp(iqp->qp, &attr, IB_QP_STATE);
		break;
	case KMAD_QPS_RESET:
		attr.qp_state = IB_QPS_RESET;
		ret = ib_modify_qp(iqp->qp, &attr, IB_QP_STATE);
		if (!ret)
			kmad_ib_qp_reclaim(iqp);
		break;
	default:
		return -EINVAL;
	}
	if (ret) {
		pr_err("%s port %u: QP %u: modify to state %d failed: %d\n",
		       dev_name(&iqp->kdev->ibdev->dev), iqp->port_num,
		       kmad_qp_hw_num(iqp->kqp), state, ret);
		return ret;
	}
	iqp->state = state;
	return 0;
}

/*
 * Take the first free slot for @kcqe, busy, or NULL if none is free.  A
 * slot comes back from kmad_ib_wr_put_locked() with its flags clear.
 * Context: Q held.
 */
static struct kmad_ib_wr *wr_take_locked(struct kmad_ib_qp *iqp,
					 struct kmad_cqe *kcqe)
{
	struct kmad_ib_wr *w = iqp->free;

	lockdep_assert_held(&iqp->lock);
	if (!w)
		return NULL;
	iqp->free = w->next;
	w->next = NULL;
	w->kcqe = kcqe;
	w->busy = true;
	return w;
}

/* Take a free slot and map @buf into it.  Context: Q held. */
static struct kmad_ib_wr *wr_get_locked(struct kmad_ib_qp *iqp,
					struct kmad_cqe *kcqe, void *buf,
					u32 len, enum dma_data_direction dir)
{
	struct ib_device *ibdev = iqp->kdev->ibdev;
	struct kmad_ib_wr *w;
	u64 dma;

	lockdep_assert_held(&iqp->lock);
	if (!iqp->free)
		return ERR_PTR(-ENOBUFS);
	dma = ib_dma_map_single(ibdev, buf, len, dir);
	if (ib_dma_mapping_error(ibdev, dma))
		return ERR_PTR(-ENOMEM);
	w = wr_take_locked(iqp, kcqe);
	w->buf = buf;
	w->dma = dma;
	w->len = len;
	w->dir = dir;
	return w;
}

/**
 * kmad_ib_post_via_mad() - post a send through one of ib_mad's QPs.
 * @iqp: kmad's QP it belongs to.
 * @agent: the port's ib_mad agent to send it on (&kmad_ib_port.qp1_agent
 *	or &kmad_ib_port.qp0_agent); NULL fails.
 * @wr: the send.
 * @tid: the TID the copy carries instead of the MAD's, or NULL to keep it.
 *
 * Takes a slot for the send, copies the MAD into an ib_mad send buffer and
 * posts it with no timeout.  The send completes when ib_mad reports it
 * (kmad_ib_mad_send_handler()).  Any context but hard interrupt,
 * interrupts possibly off: ib_create_send_mad() allocates atomically,
 * ib_post_send_mad() takes irq-safe locks only, as ib_cm calls it under
 * its own.
 *
 * Return: 0, or a negative errno if the send was not posted (no
 * completion comes for it then).
 */
int kmad_ib_post_via_mad(struct kmad_ib_qp *iqp, struct ib_mad_agent *agent,
			 const struct kmad_hw_send *wr, const __be64 *tid)
{
	struct ib_mad_send_buf *msg;
	struct kmad_ib_wr *w;
	unsigned long flags;
	int ret;

	if (!agent || !wr->ah || wr->len != sizeof(struct ib_mad))
		return -EINVAL;
	msg = ib_create_send_mad(agent, wr->remote_qpn, wr->pkey_index, 0,
				 IB_MGMT_MAD_HDR, wr->len - IB_MGMT_MAD_HDR,
				 GFP_ATOMIC, IB_MGMT_BASE_VERSION);
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	memcpy(msg->mad, wr->mad, wr->len);
	if (tid)
		((struct ib_mad_hdr *)msg->mad)->tid = *tid;
	msg->ah = wr->ah;
	msg->timeout_ms = 0;
	msg->retries = 0;

	spin_lock_irqsave(&iqp->lock, flags);
	w = kmad_ib_wr_get_sw_locked(iqp, wr->cqe);
	if (!w) {
		spin_unlock_irqrestore(&iqp->lock, flags);
		ib_free_send_mad(msg);
		return -ENOBUFS;
	}
	w->msg = msg;
	spin_unlock_irqrestore(&iqp->lock, flags);
	msg->context[0] = w;
	msg->context[1] = NULL;
	/* Counted before ib_mad can report it. */
	atomic_inc(&iqp->ibmad_sends);
	ret = ib_post_send_mad(msg, NULL);
	if (!ret)
		return 0;
	/* Not posted: ib_mad will not report it. */
	atomic_dec(&iqp->ibmad_sends);
	spin_lock_irqsave(&iqp->lock, flags);
	kmad_ib_wr_put_locked(iqp, w);
	spin_unlock_irqrestore(&iqp->lock, flags);
	ib_free_send_mad(msg);
	return ret;
}

/**
 * kmad_ib_wr_get_sw_locked() - take a free slot for a work request that
 * completes through the CQ's software list (kmad_ib_sw_complete()).
 * @iqp: the QP.
 * @kcqe: kmad's completion context of the work request.
 *
 * Context: Q held.
 * Return: the slot (no buffer, no DMA mapping), or NULL if none is free.
 */
struct kmad_ib_wr *kmad_ib_wr_get_sw_locked(struct kmad_ib_qp *iqp,
					    struct kmad_cqe *kcqe)
{
	struct kmad_ib_wr *w = wr_take_locked(iqp, kcqe);

	if (!w)
		return NULL;
	w->buf = NULL;
	w->dir = DMA_NONE;	/* a slot never used has 0, DMA_BIDIRECTIONAL */
	w->sw = true;
	return w;
}

/**
 * kmad_ib_sw_complete() - complete a slot through its CQ's software list.
 * @w: a busy slot taken with kmad_ib_wr_get_sw_locked(), on no list.
 * @status: how it ended.
 *
 * poll_cq() returns it before the hardware CQ's completions.  Context:
 * any but hard interrupt; Q and S not held.
 */
void kmad_ib_sw_complete(struct kmad_ib_wr *w, enum kmad_wc_status status)
{
	struct kmad_ib_cq *icq = w->qp->icq;
	unsigned long flags;

	w->sw_status = status;
	spin_lock_irqsave(&icq->sw_lock, flags);
	list_add_tail(&w->sw_entry, &icq->sw_done);
	spin_unlock_irqrestore(&icq->sw_lock, flags);
	kmad_cq_event(icq->kcq);
}

/**
 * kmad_ib_mad_send_handler() - ib_mad reports a send of ours.
 * @agent: the port's &kmad_ib_port.qp1_agent or &kmad_ib_port.qp0_agent.
 * @send_wc: the send and how it ended.
 *
 * A send kmad_ib_post_via_mad() posted (its slot in context[0]) completes
 * now on its QP's CQ; a request of the SMI QP that waited for a response
 * (no slot: kmad had its completion at the post) is done (smi.c).
 * Context: ib_mad's completion or timeout work, or
 * ib_unregister_mad_agent() (which finds none: the agents go after the
 * kmad device).
 */
void kmad_ib_mad_send_handler(struct ib_mad_agent *agent,
			      struct ib_mad_send_wc *send_wc)
{
	struct kmad_ib_wr *w = send_wc->send_buf->context[0];
	struct kmad_ib_qp *iqp;

	if (!w) {
		kmad_ib_smi_linger_done(send_wc);
		return;
	}
	iqp = w->qp;
	if (send_wc->status != IB_WC_SUCCESS &&
	    send_wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("%s port %u: send from QP%u: %s (vendor error 0x%x)\n",
				    dev_name(&iqp->kdev->ibdev->dev),
				    iqp->port_num, agent->qp->qp_num,
				    ib_wc_status_msg(send_wc->status),
				    send_wc->vendor_err);
	w->msg = NULL;
	ib_free_send_mad(send_wc->send_buf);
	/* ib_mad's flush is not our QP's: reported as a flush, kmad would
	 * take our QP for one in error, wait for it to empty and recover it
	 * (qp.c), and the SMI QP, which holds its receives until it is
	 * moved to ERR, would never empty.  The send ends with a local
	 * error instead, and the QP carries on.
	 */
	kmad_ib_sw_complete(w, send_wc->status == IB_WC_WR_FLUSH_ERR ?
			    KMAD_WC_LOC_ERR :
			    kmad_ib_wc_status(send_wc->status));
	/* Last: destroy_qp may free the QP once this reads zero. */
	if (atomic_dec_and_test(&iqp->ibmad_sends))
		wake_up_var(&iqp->ibmad_sends);
}

/*
 * Map @buf into a free slot of @iqp and post it as the one SGE of a work
 * request: the send @ud (its address filled in) or, with @ud NULL, a
 * receive.  The slot goes back if the post fails.  Any context,
 * interrupts possibly off.
 */
static int post_mapped(struct kmad_ib_qp *iqp, struct kmad_cqe *kcqe,
		       void *buf, u32 len, struct ib_ud_wr *ud)
{
	struct ib_recv_wr rwr = {};
	struct ib_send_wr *swr = ud ? &ud->wr : NULL;
	struct kmad_ib_wr *w;
	struct ib_sge sge;
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&iqp->lock, flags);
	w = wr_get_locked(iqp, kcqe, buf, len,
			  swr ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
	if (IS_ERR(w)) {
		spin_unlock_irqrestore(&iqp->lock, flags);
		return PTR_ERR(w);
	}
	sge.addr = w->dma;
	sge.length = w->len;
	sge.lkey = iqp->kdev->pd->local_dma_lkey;
	if (swr) {
		swr->wr_cqe = &w->cqe;
		swr->sg_list = &sge;
		swr->num_sge = 1;
		ret = ib_post_send(iqp->qp, swr, NULL);
	} else {
		rwr.wr_cqe = &w->cqe;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		ret = ib_post_recv(iqp->qp, &rwr, NULL);
	}
	if (ret)
		kmad_ib_wr_put_locked(iqp, w);
	spin_unlock_irqrestore(&iqp->lock, flags);
	return ret;
}

int kmad_ib_post_send(struct kmad_qp *kqp, const struct kmad_hw_send *wr)
{
	struct kmad_ib_qp *iqp = to_ib_qp(kqp);
	struct ib_ud_wr ud = {};

	if (iqp->smi)
		return kmad_ib_smi_post_send(iqp, wr);
	if (wr->from_qp1)
		return kmad_ib_post_via_mad(iqp, iqp->kdev->ports[iqp->port_num - 1].qp1_agent,
					    wr, NULL);
	if (!wr->ah)
		return -EINVAL;
	/*
	 * A UD QP sends with the P_Key its modify_qp() gave it (index 0):
	 * only a GSI QP (ib_mad's QP1) takes a P_Key index per work request.
	 * So a send with another index is refused, and ends with a local
	 * error (see Documentation/kmad_ib.rst, "P_Key indexes").
	 */
	if (wr->pkey_index) {
		pr_warn_ratelimited("%s port %u: P_Key index %u refused: kmad's UD QP sends with P_Key index 0 only\n",
				    dev_name(&iqp->kdev->ibdev->dev),
				    iqp->port_num, wr->pkey_index);
		return -EINVAL;
	}
	ud.wr.opcode = IB_WR_SEND;
	ud.wr.send_flags = IB_SEND_SIGNALED;
	ud.ah = wr->ah;
	ud.remote_qpn = wr->remote_qpn;
	ud.remote_qkey = wr->remote_qkey;
	/* The buffer is kmad's and not written by the HCA: mapping it
	 * drops the const.
	 */
	return post_mapped(iqp, wr->cqe, (void *)wr->mad, wr->len, &ud);
}

int kmad_ib_post_recv(struct kmad_qp *kqp, const struct kmad_hw_recv *wr)
{
	struct kmad_ib_qp *iqp = to_ib_qp(kqp);

	if (iqp->smi)
		return kmad_ib_smi_post_recv(iqp, wr);
	return post_mapped(iqp, wr->cqe, wr->buf, wr->len, NULL);
}

/*
 * RoCEv2 over IPv4: verbs leave the IPv4 header in the last 20 bytes of
 * the GRH area.  kmad reads a GRH there, so write one, with the IPv4
 * addresses as IPv4-mapped GIDs (as ib_get_gids_from_rdma_hdr() does).
 */
static void grh_from_ipv4(void *area)
{
	struct kmad_wire_grh *grh = area;
	struct iphdr ip;

	memcpy(&ip, (u8 *)area + KMAD_GRH_BYTES - sizeof(ip), sizeof(ip));
	memset(grh, 0, sizeof(*grh));
	grh->version_tclass_flow = cpu_to_be32(6U << 28 | (u32)ip.tos << 20);
	grh->paylen = cpu_to_be16(be16_to_cpu(ip.tot_len) - sizeof(ip));
	grh->next_hdr = ip.protocol;
	grh->hop_limit = ip.ttl;
	ipv6_addr_set_v4mapped(ip.saddr, (struct in6_addr *)grh->sgid.raw);
	ipv6_addr_set_v4mapped(ip.daddr, (struct in6_addr *)grh->dgid.raw);
}

static bool wc_is_ipv4(const struct ib_wc *iwc, const void *area)
{
	if (iwc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE)
		return iwc->network_hdr_type == RDMA_NETWORK_IPV4;
	return ib_get_rdma_header_version((const union rdma_network_hdr *)area)
	       == 4;
}

/* The RoCE type a packet came with; @grh rewritten already if IPv4. */
static enum ib_gid_type roce_gid_type(const struct ib_wc *iwc,
				      const struct kmad_wire_grh *grh)
{
	if (iwc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE)
		return ib_network_to_gid_type(iwc->network_hdr_type);
	/* As ib_core's ib_get_net_type_by_grh(): v2 is UDP. */
	return grh->next_hdr == IPPROTO_UDP ? IB_GID_TYPE_ROCE_UDP_ENCAP :
					      IB_GID_TYPE_ROCE;
}

/*
 * The entry of the port's GID table a RoCE packet arrived at: its DGID,
 * of the RoCE type it came with, on the network device of its VLAN (the
 * untagged one without a tag), as ib_init_ah_attr_from_wc() finds the
 * source of its answer (get_sgid_attr_from_eth()).  A link-local GID is
 * in one entry per device (a VLAN device shares its parent's MAC): the
 * lowest, which kmad would take, may be another VLAN's.  Any context but
 * hard interrupt.
 */
static int roce_dgid_index(struct ib_device *ibdev, u8 port_num,
			   const struct ib_wc *iwc,
			   const struct kmad_wire_grh *grh, u8 *index)
{
	u16 vlan = iwc->wc_flags & IB_WC_WITH_VLAN ? iwc->vlan_id : 0xffff;
	enum ib_gid_type type = roce_gid_type(iwc, grh);
	const struct ib_gid_attr *a, *b;
	const union ib_gid *dgid = (const union ib_gid *)grh->dgid.raw;
	struct net_device *ndev;
	u16 id = 0xffff;
	int ret = -ENOENT;

	a = rdma_find_gid_by_port(ibdev, dgid, type, port_num, NULL);
	if (IS_ERR(a))
		return PTR_ERR(a);
	if (!rdma_read_gid_l2_fields(a, &id, NULL) && id == vlan) {
		ret = a->index <= U8_MAX ? 0 : -ERANGE;	/* kmad's limit */
		*index = a->index;
		rdma_put_gid_attr(a);
		return ret;
	}
	/* The same GID on the device of the packet's VLAN. */
	rcu_read_lock();
	ndev = rcu_dereference(a->ndev);
	if (ndev && is_vlan_dev(ndev))
		ndev = vlan_dev_real_dev(ndev);
	if (ndev && vlan != 0xffff)
		ndev = __vlan_find_dev_deep_rcu(ndev, htons(ETH_P_8021Q),
						vlan & VLAN_VID_MASK);
	if (ndev) {
		b = rdma_find_gid_by_port(ibdev, dgid, type, port_num, ndev);
		if (!IS_ERR(b)) {
			*index = b->index;
			ret = b->index <= U8_MAX ? 0 : -ERANGE;
			rdma_put_gid_attr(b);
		}
	}
	rcu_read_unlock();
	rdma_put_gid_attr(a);
	return ret;
}

/**
 * kmad_ib_grh_fixup() - make the GRH area of a receive what kmad reads.
 * @kdev: the device.
 * @port_num: the port it arrived at.
 * @iwc: its completion, with %IB_WC_GRH set.
 * @grh: the %KMAD_GRH_BYTES GRH area, 4-byte aligned at least: the IPv4
 *	case stores 32-bit words into it.
 * @wc: kmad's completion: on a RoCE port, given the GID table entry the
 *	packet arrived at (%KMAD_WC_GID_INDEX) when one is found.
 *
 * Rewrites an IPv4 header left by RoCEv2 (see grh_from_ipv4()).
 */
void kmad_ib_grh_fixup(struct kmad_ib_dev *kdev, u8 port_num,
		       const struct ib_wc *iwc, void *grh, struct kmad_wc *wc)
{
	if (!rdma_protocol_roce(kdev->ibdev, port_num))
		return;
	if (wc_is_ipv4(iwc, grh))
		grh_from_ipv4(grh);
	if (!roce_dgid_index(kdev->ibdev, port_num, iwc, grh, &wc->gid_index))
		wc->wc_flags |= KMAD_WC_GID_INDEX;
}

/* An ib_core completion status as kmad's. */
enum kmad_wc_status kmad_ib_wc_status(enum ib_wc_status status)
{
	switch (status) {
	case IB_WC_SUCCESS:
		return KMAD_WC_SUCCESS;
	case IB_WC_WR_FLUSH_ERR:
		return KMAD_WC_FLUSH_ERR;
	default:
		return KMAD_WC_LOC_ERR;
	}
}

/* Convert one ib_core completion and free its slot. */
static void wc_convert(struct kmad_ib_dev *kdev, const struct ib_wc *iwc,
		       struct kmad_wc *wc)
{
	struct kmad_ib_wr *w = container_of(iwc->wr_cqe, struct kmad_ib_wr,
					    cqe);
	struct kmad_ib_qp *iqp = w->qp;
	bool recv = w->dir == DMA_FROM_DEVICE;
	unsigned long flags;

	memset(wc, 0, sizeof(*wc));
	wc->cqe = w->kcqe;
	wc->status = kmad_ib_wc_status(iwc->status);
	/* An error completion's opcode is undefined: the slot knows. */
	wc->opcode = recv ? KMAD_WC_RECV : KMAD_WC_SEND;
	if (iwc->status != IB_WC_SUCCESS && iwc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("%s port %u: %s completion: %s (vendor error 0x%x)\n",
				    dev_name(&kdev->ibdev->dev), iqp->port_num,
				    recv ? "receive" : "send",
				    ib_wc_status_msg(iwc->status),
				    iwc->vendor_err);
	spin_lock_irqsave(&iqp->lock, flags);
	/* Unmapped before the CPU reads (and may rewrite) the buffer. */
	ib_dma_unmap_single(kdev->ibdev, w->dma, w->len, w->dir);
	w->dir = DMA_NONE;
	if (recv && iwc->status == IB_WC_SUCCESS) {
		wc->byte_len = iwc->byte_len;
		wc->src_qpn = iwc->src_qp;
		wc->slid = iwc->slid;
		wc->sl = iwc->sl;
		wc->pkey_index = iwc->pkey_index;
		wc->dlid_path_bits = iwc->dlid_path_bits;
		if (iwc->wc_flags & IB_WC_GRH) {
			wc->wc_flags |= KMAD_WC_GRH;
			kmad_ib_grh_fixup(kdev, iqp->port_num, iwc, w->buf,
					  wc);
		}
	}
	kmad_ib_wr_put_locked(iqp, w);
	spin_unlock_irqrestore(&iqp->lock, flags);
}

#define KMAD_IB_POLL_BATCH 8

/* The oldest software completion of @icq into @wc; false if none. */
static bool sw_poll_one(struct kmad_ib_cq *icq, struct kmad_wc *wc)
{
	struct kmad_ib_wr *w;
	struct kmad_ib_qp *iqp;
	unsigned long flags;

	spin_lock_irqsave(&icq->sw_lock, flags);
	w = list_first_entry_or_null(&icq->sw_done, struct kmad_ib_wr,
				     sw_entry);
	if (w)
		list_del_init(&w->sw_entry);
	spin_unlock_irqrestore(&icq->sw_lock, flags);
	if (!w)
		return false;
	iqp = w->qp;
	memset(wc, 0, sizeof(*wc));
	wc->cqe = w->kcqe;
	wc->status = w->sw_status;
	wc->opcode = w->recv ? KMAD_WC_RECV : KMAD_WC_SEND;
	spin_lock_irqsave(&iqp->lock, flags);
	kmad_ib_wr_put_locked(iqp, w);
	spin_unlock_irqrestore(&iqp->lock, flags);
	return true;
}

int kmad_ib_poll_cq(struct kmad_cq *kcq, int nent, struct kmad_wc *wc)
{
	struct kmad_ib_dev *kdev = kmad_ib_dev(kmad_cq_device(kcq));
	struct kmad_ib_cq *icq = to_ib_cq(kcq);
	struct ib_wc iwc[KMAD_IB_POLL_BATCH];
	int done = 0, n, i;

	/*
	 * First the sends ib_mad reported (from the real QP1): they are few
	 * (one per send through it, at most the send queue's depth), while
	 * a flood of receives could keep the hardware CQ from ever coming
	 * up short, which is when they were taken before.
	 */
	while (done < nent && sw_poll_one(icq, &wc[done]))
		done++;
	while (done < nent) {
		n = ib_poll_cq(icq->cq, min(nent - done, KMAD_IB_POLL_BATCH),
			       iwc);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++)
			wc_convert(kdev, &iwc[i], &wc[done + i]);
		done += n;
	}
	return done;
}

int kmad_ib_req_notify_cq(struct kmad_cq *kcq, unsigned int flags)
{
	struct kmad_ib_cq *icq = to_ib_cq(kcq);
	enum ib_cq_notify_flags f = IB_CQ_NEXT_COMP;
	int ret;

	if (flags & KMAD_CQ_REPORT_MISSED_EVENTS)
		f |= IB_CQ_REPORT_MISSED_EVENTS;
	ret = ib_req_notify_cq(icq->cq, f);
	/* A software completion queued before the arming raised its own
	 * kmad_cq_event(); say so all the same, kmad polls again.
	 */
	if (!ret && (flags & KMAD_CQ_REPORT_MISSED_EVENTS) &&
	    !list_empty_careful(&icq->sw_done))
		ret = 1;
	return ret;
}
