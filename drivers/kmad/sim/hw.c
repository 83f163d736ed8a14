// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sim: simulated QPs.  The QP provider operations (create, destroy,
 * modify, post), transmission of a QP's sends and reception of MADs into
 * its receive buffers; and the provider operation tables.  CQs, CQEs and
 * events are in cq.c.
 *
 * Locks: C (&sim_cq.lock of the QP's CQ), described in hw.h with every
 * field it guards; F, the fabric's leaf lock, is taken inside it to draw
 * faults and read the latency.
 *
 * A test can make modify_qp() to a given state fail
 * (kmad_sim_fail_modify_qp()): a failed call returns -EIO and leaves the
 * QP as it was.
 *
 * QP states.  RESET: posting a send or a receive fails with -EINVAL;
 * arriving MADs are dropped.  RTS: normal.  ERR: entered from any state
 * by modify_qp(), by kmad_sim_qp_error() or by a CQ overflow; every send
 * on the wire, then every posted receive, completes with
 * %KMAD_WC_FLUSH_ERR in post order, and a later post succeeds and
 * completes at once with %KMAD_WC_FLUSH_ERR.  Only RESET leaves ERR.
 * Moving to RESET forgets all outstanding work without CQEs and removes
 * the QP's CQEs still in the ring, as HCA drivers clean the CQ.
 *
 * Queue slots.  A send or receive slot stays busy from post until kmad
 * polls its CQE, as on an HCA; a post beyond sq_depth (rq_depth) fails
 * with -ENOMEM, which kmad never causes unless it miscounts.
 *
 * Transmission.  Async mode: a posted send is due latency_us (plus the
 * fault delay_us) later; &sim_qp.tx_work transmits the wire in order,
 * waiting for the head when it is not due.  Step mode: a send waits on the
 * wire until kmad_sim_complete_send().  To transmit: read the MAD from
 * kmad's buffer, draw faults, complete the send, then (no lock held)
 * route the copy.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "hw.h"

/**
 * enum sim_tx_step - what the transmit work did with the head of a wire.
 * @SIM_TX_IDLE: nothing to transmit now (empty, or the head is not due).
 * @SIM_TX_COMPLETED: completed a send; nothing to deliver.
 * @SIM_TX_ON_WIRE: completed a send whose MAD is to be routed.
 */
enum sim_tx_step {
	SIM_TX_IDLE,
	SIM_TX_COMPLETED,
	SIM_TX_ON_WIRE,
};

static void sim_wire_add(struct sim_qp *qp, struct sim_send *s)
{
	lockdep_assert_held(&qp->cq->lock);
	list_move_tail(&s->node, &qp->wire);
	qp->wire_len++;
	atomic_inc(&qp->sdev->fab->wire_sends);
}

static void sim_wire_remove(struct sim_qp *qp, struct sim_send *s)
{
	struct kmad_sim_fabric *fab = qp->sdev->fab;

	lockdep_assert_held(&qp->cq->lock);
	list_move(&s->node, &qp->free_sends);
	qp->wire_len--;
	if (s->ah) {
		kmad_sim_ah_put(s->ah);
		s->ah = NULL;
	}
	if (atomic_dec_and_test(&fab->wire_sends))
		wake_up_all(&fab->wire_idle);
}

/* Take send @s off the wire and complete it with @status. */
static void sim_send_done_locked(struct sim_qp *qp, struct sim_send *s,
				 enum kmad_wc_status status)
{
	struct kmad_wc wc = {
		.cqe = s->cqe,
		.status = status,
		.opcode = KMAD_WC_SEND,
	};

	sim_wire_remove(qp, s);
	kmad_sim_cq_add_locked(qp->cq, qp, &wc);
}

/* Take receive @r off the queue and complete it as @wc says. */
static void sim_recv_done_locked(struct sim_qp *qp, struct sim_recv *r,
				 struct kmad_wc *wc)
{
	lockdep_assert_held(&qp->cq->lock);
	wc->cqe = r->cqe;
	wc->opcode = KMAD_WC_RECV;
	list_move(&r->node, &qp->free_recvs);
	kmad_sim_cq_add_locked(qp->cq, qp, wc);
}

/**
 * kmad_sim_qp_error_locked() - move a QP to the error state, flushing
 * its sends, then its receives, in post order.
 * @qp: the QP.
 *
 * Does nothing to a QP already in error.  Does not tell kmad; the caller
 * does.
 *
 * Context: @qp's CQ lock held.
 */
void kmad_sim_qp_error_locked(struct sim_qp *qp)
{
	struct kmad_wc flush = { .status = KMAD_WC_FLUSH_ERR };
	struct sim_send *s;
	struct sim_recv *r;

	lockdep_assert_held(&qp->cq->lock);
	if (qp->state == KMAD_QPS_ERR)
		return;
	qp->state = KMAD_QPS_ERR;
	while (!list_empty(&qp->wire)) {
		s = list_first_entry(&qp->wire, struct sim_send, node);
		sim_port_count(qp->port, SIM_STAT_SEND_ERRORS);
		sim_send_done_locked(qp, s, KMAD_WC_FLUSH_ERR);
	}
	while (!list_empty(&qp->recvs)) {
		r = list_first_entry(&qp->recvs, struct sim_recv, node);
		sim_recv_done_locked(qp, r, &flush);
	}
}

/* Forget everything outstanding, without CQEs. */
static void sim_qp_reset_locked(struct sim_qp *qp)
{
	struct sim_send *s, *tmp;

	lockdep_assert_held(&qp->cq->lock);
	list_for_each_entry_safe(s, tmp, &qp->wire, node)
		sim_wire_remove(qp, s);
	list_splice_init(&qp->recvs, &qp->free_recvs);
	qp->sq_unpolled = 0;
	qp->rq_unpolled = 0;
	kmad_sim_cq_clean_locked(qp->cq, qp);
	qp->state = KMAD_QPS_RESET;
}

/**
 * kmad_sim_wire_nth() - the send at position @n of a QP's wire.
 * @qp: the QP.
 * @n: position, 0 for the oldest.
 *
 * Context: @qp's CQ lock held.
 * Return: the send, or NULL if the wire is shorter.
 */
struct sim_send *kmad_sim_wire_nth(struct sim_qp *qp, unsigned int n)
{
	struct sim_send *s;

	lockdep_assert_held(&qp->cq->lock);
	list_for_each_entry(s, &qp->wire, node) {
		if (n == 0)
			return s;
		n--;
	}
	return NULL;
}

/*
 * The GRH of send @s: its source GID from the port's table, the rest as
 * kmad gave it.  A DLID of 0 (always on Ethernet) routes by DGID: the
 * packet goes to the port that has it (by that port's LID in the fabric's
 * own plan), or nowhere.  False if the send cannot go: no GRH on an
 * Ethernet fabric, or no source GID at its index.
 */
static bool sim_packet_grh(struct sim_packet *pkt, struct sim_qp *qp,
			   const struct sim_send *s)
{
	struct kmad_sim_fabric *fab = qp->sdev->fab;
	const struct kmad_grh_attr *g = &s->attr.grh;
	struct sim_port *dst;
	unsigned long flags;
	int ret;

	pkt->grh = s->attr.grh_present;
	if (!pkt->grh)
		return !sim_eth(fab);
	spin_lock_irqsave(&fab->lock, flags);
	ret = kmad_sim_port_gid_locked(qp->port, g->sgid_index, &pkt->sgid);
	spin_unlock_irqrestore(&fab->lock, flags);
	if (ret)
		return false;
	pkt->dgid = g->dgid;
	pkt->flow_label = g->flow_label;
	pkt->tclass = g->traffic_class;
	pkt->hop_limit = g->hop_limit;
	if (s->dlid && !sim_eth(fab))
		return true;
	dst = kmad_sim_find_gid(fab, &g->dgid);
	pkt->dlid = dst ? kmad_sim_port_lid_of(dst) : 0;
	pkt->by_gid = true;
	return true;
}

/*
 * The LID a send leaves from: its port's, with the send's source path
 * bits within the port's LMC (kmad masks them to the LMC it knows, which
 * may be older); and the P_Key it carries: the port's entry at the send's
 * P_Key index (kmad checks the index against the table's length).
 */
static void sim_src_addr(struct sim_port *port, const struct sim_send *s,
			 struct sim_packet *pkt)
{
	struct kmad_sim_fabric *fab = port->node->fab;
	unsigned long flags;

	spin_lock_irqsave(&fab->lock, flags);
	pkt->slid = port->pi.lid |
		    (s->attr.src_path_bits & ((1U << port->pi.lmc) - 1));
	pkt->pkey = s->pkey_index < SIM_PKEYS ? port->pkeys[s->pkey_index] : 0;
	spin_unlock_irqrestore(&fab->lock, flags);
}

/* False if the send cannot go (sim_packet_grh()). */
static bool sim_packet_fill(struct sim_packet *pkt, struct sim_qp *qp,
			    const struct sim_send *s)
{
	memset(pkt, 0, offsetof(struct sim_packet, mad));
	pkt->len = s->len;
	sim_src_addr(qp->port, s, pkt);
	pkt->dlid = s->dlid;
	pkt->src_qpn = qp->qpn;
	pkt->dst_qpn = s->remote_qpn;
	pkt->qkey = s->remote_qkey;
	pkt->sl = s->sl & KMAD_MAX_SL;
	pkt->copies = 1;
	if (!sim_packet_grh(pkt, qp, s))
		return false;
	/* The DMA read of kmad's buffer. */
	memcpy(pkt->mad, s->mad, s->len);
	/*
	 * A directed-route SMP to the permissive LID leaves from it too, as
	 * HCAs send it (IBTA 14.2.2): it arrives with SLID 0xFFFF.  A
	 * LID-routed SMP to 0xFFFF keeps the port's LID, to which a
	 * neighbouring switch's answer is routed back.
	 */
	if (pkt->dlid == SIM_PERMISSIVE_LID && pkt->len >= KMAD_MAD_HDR_SIZE &&
	    ((struct kmad_mad_hdr *)pkt->mad)->mgmt_class ==
	    KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		pkt->slid = SIM_PERMISSIVE_LID;
	return true;
}

/**
 * kmad_sim_tx_locked() - transmit a send: take it off the wire, apply
 * fault injection, produce its CQE.
 * @qp: its QP.
 * @s: the send, on @qp's wire.
 * @status: %KMAD_WC_SUCCESS to transmit it, or the status to complete it
 *	with, transmitting nothing.
 * @deliver: with %KMAD_WC_SUCCESS: false loses the MAD on the wire (it
 *	counts as dropped_fault) and draws no faults.
 * @pkt: filled with the MAD to route when true is returned.
 *
 * The MAD is copied from kmad's buffer here, before the CQE that lets kmad
 * reuse the buffer.  The caller routes @pkt after dropping the lock.
 *
 * Context: @qp's CQ lock held.
 * Return: true if @pkt is to be routed.
 */
bool kmad_sim_tx_locked(struct sim_qp *qp, struct sim_send *s,
			enum kmad_wc_status status, bool deliver,
			struct sim_packet *pkt)
{
	struct sim_verdict v = {};
	bool on_wire = false;

	lockdep_assert_held(&qp->cq->lock);
	if (status == KMAD_WC_SUCCESS && deliver)
		kmad_sim_draw_faults(qp->sdev->fab, &v);
	if (v.send_err)
		status = KMAD_WC_LOC_ERR;
	if (status == KMAD_WC_SUCCESS && !sim_packet_fill(pkt, qp, s))
		status = KMAD_WC_LOC_ERR;

	if (status == KMAD_WC_SUCCESS) {
		sim_port_count(qp->port, SIM_STAT_SENT);
		on_wire = deliver && !v.drop;
		if (!on_wire)
			sim_port_count(qp->port, SIM_STAT_DROPPED_FAULT);
	} else {
		sim_port_count(qp->port, SIM_STAT_SEND_ERRORS);
	}
	if (on_wire && v.corrupt) {
		pkt->mad[v.corrupt_at] ^= 0xff;
		sim_port_count(qp->port, SIM_STAT_CORRUPTED);
	}
	if (on_wire && v.dup) {
		pkt->copies = 2;
		sim_port_count(qp->port, SIM_STAT_DUPLICATED);
	}
	sim_send_done_locked(qp, s, status);
	return on_wire;
}

/* The GRH of @pkt as verbs place it in front of a UD receive. */
static void sim_write_grh(void *buf, const struct sim_packet *pkt)
{
	struct kmad_wire_grh *g = buf;

	g->version_tclass_flow = cpu_to_be32(6U << 28 | (u32)pkt->tclass << 20 |
					     (pkt->flow_label & 0xfffff));
	g->paylen = cpu_to_be16(pkt->len);
	g->next_hdr = SIM_GRH_NEXT_HDR_IBA;
	g->hop_limit = pkt->hop_limit;
	g->sgid = pkt->sgid;
	g->dgid = pkt->dgid;
}

/**
 * kmad_sim_qp_receive() - a MAD reaches a QP: place it in the next posted
 * receive buffer and produce the receive CQE.
 * @qp: the destination QP.
 * @pkt: the MAD and its addressing.
 *
 * Counts delivered, dropped_no_recv or recv_errors on @qp's port.
 *
 * Context: any; takes @qp's CQ lock.
 * Return: what became of the MAD.
 */
enum sim_rx_result kmad_sim_qp_receive(struct sim_qp *qp,
				       const struct sim_packet *pkt)
{
	enum sim_rx_result res = SIM_RX_NO_RECV;
	struct kmad_wc wc = {};
	struct sim_recv *r = NULL;
	unsigned long flags;

	spin_lock_irqsave(&qp->cq->lock, flags);
	if (qp->state == KMAD_QPS_RTS)
		r = list_first_entry_or_null(&qp->recvs, struct sim_recv, node);
	if (r && (r->len < KMAD_GRH_BYTES ||
		  pkt->len > r->len - KMAD_GRH_BYTES)) {
		wc.status = KMAD_WC_LOC_ERR;
		res = SIM_RX_TOO_LONG;
	} else if (r) {
		if (pkt->grh) {
			sim_write_grh(r->buf, pkt);
			wc.wc_flags = KMAD_WC_GRH;
		}
		memcpy((u8 *)r->buf + KMAD_GRH_BYTES, pkt->mad, pkt->len);
		wc.status = KMAD_WC_SUCCESS;
		wc.byte_len = KMAD_GRH_BYTES + pkt->len;
		wc.src_qpn = pkt->src_qpn;
		/* RoCE has no LIDs. */
		wc.slid = sim_eth(qp->sdev->fab) ? 0 : pkt->slid;
		wc.dlid_path_bits = pkt->path_bits;
		wc.sl = pkt->sl;
		wc.pkey_index = pkt->pkey_index;
		res = SIM_RX_DELIVERED;
	}
	if (r)
		sim_recv_done_locked(qp, r, &wc);
	spin_unlock_irqrestore(&qp->cq->lock, flags);

	switch (res) {
	case SIM_RX_DELIVERED:
		sim_port_count(qp->port, SIM_STAT_DELIVERED);
		break;
	case SIM_RX_NO_RECV:
		sim_port_count(qp->port, SIM_STAT_DROPPED_NO_RECV);
		break;
	case SIM_RX_TOO_LONG:
		sim_port_count(qp->port, SIM_STAT_RECV_ERRORS);
		break;
	}
	return res;
}

/*
 * Async mode: transmit the head of @qp's wire if it is due.  If it is not,
 * rearm the transmit work for when it is.
 */
static enum sim_tx_step sim_qp_tx_head_locked(struct sim_qp *qp,
					      struct sim_packet *pkt)
{
	unsigned long now;
	struct sim_send *s;

	lockdep_assert_held(&qp->cq->lock);
	s = list_first_entry_or_null(&qp->wire, struct sim_send, node);
	if (!s)
		return SIM_TX_IDLE;
	now = jiffies;
	if (time_before(now, s->due)) {
		mod_delayed_work(qp->sdev->fab->wq, &qp->tx_work, s->due - now);
		return SIM_TX_IDLE;
	}
	if (kmad_sim_tx_locked(qp, s, KMAD_WC_SUCCESS, true, pkt))
		return SIM_TX_ON_WIRE;
	return SIM_TX_COMPLETED;
}

/* Async mode: transmit @qp's due sends, oldest first. */
static void sim_qp_tx_work(struct work_struct *work)
{
	struct sim_qp *qp = container_of(to_delayed_work(work), struct sim_qp,
					 tx_work);
	enum sim_tx_step step;
	struct sim_packet pkt;
	unsigned long flags;

	do {
		spin_lock_irqsave(&qp->cq->lock, flags);
		step = sim_qp_tx_head_locked(qp, &pkt);
		spin_unlock_irqrestore(&qp->cq->lock, flags);
		if (step == SIM_TX_ON_WIRE)
			kmad_sim_route(qp, &pkt);
		cond_resched();
	} while (step != SIM_TX_IDLE);
}

static void sim_qp_fatal_work(struct work_struct *work)
{
	struct sim_qp *qp = container_of(work, struct sim_qp, fatal_work);

	if (qp->kqp)	/* a raw QP (raw.c) has no kmad to tell */
		kmad_qp_event(qp->kqp, KMAD_QP_EVENT_FATAL);
}

/**
 * kmad_sim_qp_put() - drop a reference taken by kmad_sim_qp_get().
 * @qp: the QP.
 */
void kmad_sim_qp_put(struct sim_qp *qp)
{
	if (refcount_dec_and_test(&qp->users))
		complete(&qp->unused);
}

/**
 * kmad_sim_qp_alloc() - a QP on a port, published under its number.
 * @sdev: its device.
 * @port_num: its port.
 * @qpn: 0 or 1 for kmad's QPs, SIM_RAW_QPN for raw.c's.
 * @cq: the CQ its work requests complete on.
 * @sq_depth: send slots.
 * @rq_depth: receive slots.
 *
 * The QP starts in RESET, with no kmad QP (&sim_qp.kqp), which the
 * caller sets if it has one.
 *
 * Context: process context.
 * Return: the QP, or an ERR_PTR: -EINVAL, -ENOMEM, or -EBUSY if the port
 * has a QP with that number.
 */
struct sim_qp *kmad_sim_qp_alloc(struct sim_dev *sdev, u8 port_num, u32 qpn,
				 struct sim_cq *cq, unsigned int sq_depth,
				 unsigned int rq_depth)
{
	unsigned long flags;
	struct sim_qp *qp;
	unsigned int i;
	int ret;

	if ((qpn >= SIM_NUM_QPS && qpn != SIM_RAW_QPN) || !port_num ||
	    port_num > sdev->node->num_ports || !sq_depth || !rq_depth)
		return ERR_PTR(-EINVAL);
	qp = kzalloc(sizeof(*qp), GFP_KERNEL);
	if (!qp)
		return ERR_PTR(-ENOMEM);
	ret = -ENOMEM;
	qp->send_slots = kcalloc(sq_depth, sizeof(*qp->send_slots),
				 GFP_KERNEL);
	if (!qp->send_slots)
		goto err_free_qp;
	qp->recv_slots = kcalloc(rq_depth, sizeof(*qp->recv_slots),
				 GFP_KERNEL);
	if (!qp->recv_slots)
		goto err_free_send_slots;

	qp->cq = cq;
	qp->sdev = sdev;
	qp->port = &sdev->node->ports[port_num];
	qp->qpn = qpn;
	qp->sq_depth = sq_depth;
	qp->rq_depth = rq_depth;
	refcount_set(&qp->users, 1);
	init_completion(&qp->unused);
	qp->state = KMAD_QPS_RESET;
	INIT_LIST_HEAD(&qp->wire);
	INIT_LIST_HEAD(&qp->recvs);
	INIT_LIST_HEAD(&qp->free_sends);
	INIT_LIST_HEAD(&qp->free_recvs);
	for (i = 0; i < sq_depth; i++)
		list_add_tail(&qp->send_slots[i].node, &qp->free_sends);
	for (i = 0; i < rq_depth; i++)
		list_add_tail(&qp->recv_slots[i].node, &qp->free_recvs);
	INIT_DELAYED_WORK(&qp->tx_work, sim_qp_tx_work);
	INIT_WORK(&qp->fatal_work, sim_qp_fatal_work);

	spin_lock_irqsave(&cq->lock, flags);
	if (!cq->port)
		WRITE_ONCE(cq->port, qp->port);
	spin_unlock_irqrestore(&cq->lock, flags);
	ret = kmad_sim_publish_qp(qp);
	if (ret)
		goto err_free_recv_slots;
	return qp;

err_free_recv_slots:
	kfree(qp->recv_slots);
err_free_send_slots:
	kfree(qp->send_slots);
err_free_qp:
	kfree(qp);
	return ERR_PTR(ret);
}

static int sim_create_qp(struct kmad_qp *kqp, struct kmad_cq *kcq,
			 unsigned int sq_depth, unsigned int rq_depth)
{
	struct sim_dev *sdev = kmad_device_priv(kmad_qp_device(kqp));
	u8 port_num = kmad_qp_port_num(kqp);
	struct sim_qp *qp;

	if (kmad_qp_num(kqp) >= SIM_NUM_QPS)
		return -EINVAL;
	qp = kmad_sim_qp_alloc(sdev, port_num, kmad_qp_num(kqp),
			       kmad_cq_priv(kcq), sq_depth, rq_depth);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	qp->kqp = kqp;
	kmad_qp_set_priv(kqp, qp);
	if (sdev->fab->cfg.qp_created)
		sdev->fab->cfg.qp_created(sdev->fab, sdev->node->index,
					  KMAD_SIM_QP(port_num, qp->qpn),
					  sdev->fab->cfg.qp_created_arg);
	return 0;
}

/*
 * Two phases: unpublish and wait for the references other contexts took
 * (deliveries from the peer, control functions), then stop this QP's own
 * works, then forget its work requests and CQEs.  tx_work goes before
 * fatal_work because a transmission can queue the latter.
 */
/**
 * kmad_sim_qp_free() - destroy a QP from kmad_sim_qp_alloc().
 * @qp: the QP.
 *
 * Context: process context.
 */
void kmad_sim_qp_free(struct sim_qp *qp)
{
	unsigned long flags;

	kmad_sim_unpublish_qp(qp);
	kmad_sim_qp_put(qp);
	wait_for_completion(&qp->unused);
	cancel_delayed_work_sync(&qp->tx_work);
	cancel_work_sync(&qp->fatal_work);

	spin_lock_irqsave(&qp->cq->lock, flags);
	sim_qp_reset_locked(qp);
	spin_unlock_irqrestore(&qp->cq->lock, flags);

	kfree(qp->recv_slots);
	kfree(qp->send_slots);
	kfree(qp);
}

static void sim_destroy_qp(struct kmad_qp *kqp)
{
	struct sim_qp *qp = kmad_qp_priv(kqp);

	kmad_sim_qp_free(qp);
	kmad_qp_set_priv(kqp, NULL);
}

/**
 * kmad_sim_qp_modify() - move a QP to @state (&kmad_provider_ops.modify_qp).
 * @qp: the QP.
 * @state: RESET, RTS or ERR.
 *
 * Context: any.
 * Return: 0, -EINVAL for a move the QP cannot make, or -EIO if a test
 * made it fail (kmad_sim_fail_modify_qp()).
 */
int kmad_sim_qp_modify(struct sim_qp *qp, enum kmad_qp_state state)
{
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&qp->cq->lock, flags);
	if (state <= KMAD_QPS_ERR && qp->modify_fails[state]) {
		/* kmad_sim_fail_modify_qp(): refuse, change nothing. */
		qp->modify_fails[state]--;
		spin_unlock_irqrestore(&qp->cq->lock, flags);
		return -EIO;
	}
	switch (state) {
	case KMAD_QPS_RESET:
		sim_qp_reset_locked(qp);
		break;
	case KMAD_QPS_RTS:
		if (qp->state == KMAD_QPS_ERR)
			ret = -EINVAL;
		else
			qp->state = KMAD_QPS_RTS;
		break;
	case KMAD_QPS_ERR:
		kmad_sim_qp_error_locked(qp);
		break;
	default:
		ret = -EINVAL;
		break;
	}
	spin_unlock_irqrestore(&qp->cq->lock, flags);
	return ret;
}

static int sim_modify_qp(struct kmad_qp *kqp, enum kmad_qp_state state)
{
	return kmad_sim_qp_modify(kmad_qp_priv(kqp), state);
}

/**
 * kmad_sim_qp_post_send() - queue a send on a QP (&kmad_provider_ops.post_send).
 * @qp: the QP.
 * @wr: the send.
 *
 * Context: any but hard interrupt.
 * Return: 0, -EINVAL or -ENOMEM (see &kmad_provider_ops.post_send).
 */
int kmad_sim_qp_post_send(struct sim_qp *qp, const struct kmad_hw_send *wr)
{
	struct kmad_sim_fabric *fab = qp->sdev->fab;
	unsigned long flags, delay;
	struct sim_send *s;
	int ret = 0;

	if (!wr->mad || !wr->len || wr->len > KMAD_MAD_SIZE)
		return -EINVAL;

	spin_lock_irqsave(&qp->cq->lock, flags);
	s = list_first_entry_or_null(&qp->free_sends, struct sim_send, node);
	if (qp->state == KMAD_QPS_RESET) {
		ret = -EINVAL;
		goto out_unlock;
	}
	if (qp->post_send_fails) {	/* kmad_sim_fail_post_send() */
		qp->post_send_fails--;
		ret = -ENOMEM;
		goto out_unlock;
	}
	if (qp->sq_unpolled == qp->sq_depth || !s) {
		pr_err_ratelimited("%s: QP%u: send queue full (%u)\n",
				   qp->port->node->name, qp->qpn,
				   qp->sq_depth);
		ret = -ENOMEM;
		goto out_unlock;
	}
	qp->sq_unpolled++;
	sim_progress(fab);
	s->cqe = wr->cqe;
	s->mad = wr->mad;
	s->len = wr->len;
	s->dlid = wr->dlid;
	s->remote_qpn = wr->remote_qpn;
	s->remote_qkey = wr->remote_qkey;
	s->sl = wr->sl;
	s->pkey_index = wr->pkey_index;
	if (wr->ah_attr) {
		s->attr = *wr->ah_attr;
	} else {
		memset(&s->attr, 0, sizeof(s->attr));
		s->attr.dlid = wr->dlid;
		s->attr.sl = wr->sl;
	}
	s->ah = wr->ah;
	if (s->ah) {
		if (READ_ONCE(s->ah->dead))
			pr_err("%s: QP%u: post_send() with a destroyed address handle\n",
			       qp->port->node->name, qp->qpn);
		kref_get(&s->ah->ref);
	}
	sim_wire_add(qp, s);

	if (qp->state == KMAD_QPS_ERR) {
		sim_port_count(qp->port, SIM_STAT_SEND_ERRORS);
		sim_send_done_locked(qp, s, KMAD_WC_FLUSH_ERR);
	} else if (fab->cfg.mode == KMAD_SIM_ASYNC) {
		delay = kmad_sim_send_delay(fab);
		s->due = jiffies + delay;
		/* A new head: nothing is scheduled for it yet. */
		if (qp->wire_len == 1)
			mod_delayed_work(fab->wq, &qp->tx_work, delay);
	}
out_unlock:
	spin_unlock_irqrestore(&qp->cq->lock, flags);
	return ret;
}

/* &kmad_sim_config.bridge_add: the test's callback decides. */
int kmad_sim_bridge_add(struct kmad_device *kdev, u8 port_num,
			enum kmad_qp_type qpt, const struct kmad_reg_req *req)
{
	struct sim_dev *sdev = kmad_device_priv(kdev);
	const struct kmad_sim_config *cfg = &sdev->fab->cfg;

	return cfg->bridge_add(sdev->fab, sdev->node->index, port_num, qpt,
			       req, cfg->bridge_arg);
}

void kmad_sim_bridge_del(struct kmad_device *kdev, u8 port_num,
			 enum kmad_qp_type qpt, const struct kmad_reg_req *req)
{
}

static int sim_post_send(struct kmad_qp *kqp, const struct kmad_hw_send *wr)
{
	return kmad_sim_qp_post_send(kmad_qp_priv(kqp), wr);
}

/**
 * kmad_sim_qp_post_recv() - queue a receive buffer on a QP
 * (&kmad_provider_ops.post_recv).
 * @qp: the QP.
 * @wr: the buffer.
 *
 * Context: any but hard interrupt.
 * Return: 0, -EINVAL or -ENOMEM.
 */
int kmad_sim_qp_post_recv(struct sim_qp *qp, const struct kmad_hw_recv *wr)
{
	struct kmad_wc flush = { .status = KMAD_WC_FLUSH_ERR };
	struct sim_recv *r;
	unsigned long flags;
	int ret = 0;

	if (!wr->buf || !wr->len)
		return -EINVAL;

	spin_lock_irqsave(&qp->cq->lock, flags);
	r = list_first_entry_or_null(&qp->free_recvs, struct sim_recv, node);
	if (qp->state == KMAD_QPS_RESET) {
		ret = -EINVAL;
		goto out_unlock;
	}
	if (qp->post_recv_fails) {	/* kmad_sim_fail_post_recv() */
		qp->post_recv_fails--;
		ret = -ENOMEM;
		goto out_unlock;
	}
	if (qp->rq_unpolled == qp->rq_depth || !r) {
		pr_err_ratelimited("%s: QP%u: receive queue full (%u)\n",
				   qp->port->node->name, qp->qpn,
				   qp->rq_depth);
		ret = -ENOMEM;
		goto out_unlock;
	}
	qp->rq_unpolled++;
	sim_progress(qp->sdev->fab);
	r->cqe = wr->cqe;
	r->buf = wr->buf;
	r->len = wr->len;
	list_move_tail(&r->node, &qp->recvs);
	if (qp->state == KMAD_QPS_ERR)
		sim_recv_done_locked(qp, r, &flush);
out_unlock:
	spin_unlock_irqrestore(&qp->cq->lock, flags);
	return ret;
}

static int sim_post_recv(struct kmad_qp *kqp, const struct kmad_hw_recv *wr)
{
	return kmad_sim_qp_post_recv(kmad_qp_priv(kqp), wr);
}

static u64 sim_now(struct kmad_device *kdev)
{
	struct sim_dev *sdev = kmad_device_priv(kdev);

	return kmad_sim_clock(sdev->fab);
}

/* Async mode: kmad keeps time with jiffies and kernel timers. */
const struct kmad_provider_ops kmad_sim_async_ops = {
	.owner = THIS_MODULE,
	.create_cq = kmad_sim_create_cq,
	.destroy_cq = kmad_sim_destroy_cq,
	.create_qp = sim_create_qp,
	.destroy_qp = sim_destroy_qp,
	.modify_qp = sim_modify_qp,
	.post_send = sim_post_send,
	.post_recv = sim_post_recv,
	.poll_cq = kmad_sim_poll_cq,
	.req_notify_cq = kmad_sim_req_notify_cq,
	.query_gid = kmad_sim_query_gid,
	.query_pkey = kmad_sim_query_pkey,
	.query_smp = kmad_sim_query_smp,
	.modify_port_cap = kmad_sim_modify_port_cap,
};

/* Step mode: kmad's clock is the fabric's virtual one. */
const struct kmad_provider_ops kmad_sim_step_ops = {
	.owner = THIS_MODULE,
	.create_cq = kmad_sim_create_cq,
	.destroy_cq = kmad_sim_destroy_cq,
	.create_qp = sim_create_qp,
	.destroy_qp = sim_destroy_qp,
	.modify_qp = sim_modify_qp,
	.post_send = sim_post_send,
	.post_recv = sim_post_recv,
	.poll_cq = kmad_sim_poll_cq,
	.req_notify_cq = kmad_sim_req_notify_cq,
	.now = sim_now,
	.query_gid = kmad_sim_query_gid,
	.query_pkey = kmad_sim_query_pkey,
	.query_smp = kmad_sim_query_smp,
	.modify_port_cap = kmad_sim_modify_port_cap,
};
