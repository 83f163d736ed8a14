// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sim: controls addressed to one QP by (device index, qpn), in both
 * modes (notification mode, injection, QP errors, modify_qp failures) and
 * step mode only (the wire, CQ events, the arm hook, the virtual clock).
 *
 * Each control takes a reference on the QP (kmad_sim_qp_get()), works
 * under the QP's CQ lock (C, see hw.h), and calls kmad, if at all, after
 * dropping it but before dropping the reference, which keeps the QP and
 * its CQ alive.  None of them sleeps except kmad_sim_advance_clock(), so
 * the others may be called from an arm hook.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/string.h>

#include "fabric.h"
#include "hw.h"

/**
 * kmad_sim_set_notify() - set the notification behaviour of a QP's CQ.
 * @fab: the fabric.
 * @dev: device index.
 * @qpn: 0 or 1, or KMAD_SIM_QP(); the CQ is the one this QP completes
 *	on.
 * @notify: the behaviour; takes effect at the next CQE or arming.
 *
 * Context: any.
 * Return: 0; -EINVAL for a @notify that is not one of &enum
 * kmad_sim_notify, or -EINVAL or -ENODEV (see <kmad/sim.h>), which change
 * nothing.
 */
int kmad_sim_set_notify(struct kmad_sim_fabric *fab, unsigned int dev,
			u32 qpn, enum kmad_sim_notify notify)
{
	struct sim_qp *qp;
	unsigned long flags;

	if (notify != KMAD_SIM_NOTIFY_IBTA && notify != KMAD_SIM_NOTIFY_MISSED)
		return -EINVAL;
	qp = kmad_sim_qp_get(fab, dev, qpn);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	spin_lock_irqsave(&qp->cq->lock, flags);
	qp->cq->notify = notify;
	spin_unlock_irqrestore(&qp->cq->lock, flags);
	kmad_sim_qp_put(qp);
	return 0;
}
EXPORT_SYMBOL_GPL(kmad_sim_set_notify);

/**
 * kmad_sim_inject() - make a MAD arrive at a QP as if from the wire.
 * @fab: the fabric.
 * @dev: device index.
 * @qpn: 0 or 1, or KMAD_SIM_QP(port, 0 or 1).
 * @mad: the MAD: min(@len, %KMAD_MAD_SIZE) bytes are read from it.
 * @len: the packet's length, 1 to %KMAD_SIM_MAX_PACKET.  Above
 *	%KMAD_MAD_SIZE it is longer than any receive buffer kmad posts.
 * @slid: the source LID to report.
 * @src_qpn: the source QP to report.
 *
 * The MAD goes into the QP's next receive buffer with a receive CQE (SL 0,
 * P_Key index 0), which raises an event as the notification rules say.
 * No fault injection, no Q_Key check and no firmware apply: the MAD
 * reaches kmad even if it is a request the port's SMA or PMA would answer.
 * A packet longer than the buffer takes the buffer all the same and
 * completes it with %KMAD_WC_LOC_ERR (counted as recv_errors), as an HCA
 * reports a local length error.
 *
 * Context: any.
 * Return: 0; -ENOBUFS if no receive buffer is posted (or the QP is not in
 * RTS); -EMSGSIZE if @len exceeds the buffer (the receive then completes
 * with %KMAD_WC_LOC_ERR); -EINVAL or -ENODEV (see <kmad/sim.h>).
 */
int kmad_sim_inject(struct kmad_sim_fabric *fab, unsigned int dev, u32 qpn,
		    const void *mad, size_t len, u16 slid, u32 src_qpn)
{
	struct kmad_sim_rx rx = { .slid = slid, .src_qpn = src_qpn };

	return kmad_sim_inject_rx(fab, dev, qpn, mad, len, &rx);
}
EXPORT_SYMBOL_GPL(kmad_sim_inject);

/**
 * kmad_sim_inject_rx() - kmad_sim_inject() with the whole arrival: source,
 * destination path bits and, if @rx->grh_present, the GRH written in the
 * receive buffer's GRH area with %KMAD_WC_GRH.
 * @fab: the fabric.
 * @dev: device index.
 * @qpn: 0 or 1, or KMAD_SIM_QP(port, 0 or 1).
 * @mad: the MAD.
 * @len: the packet's length, as for kmad_sim_inject().
 * @rx: how it arrives.
 *
 * Context: any.
 * Return: as kmad_sim_inject().
 */
int kmad_sim_inject_rx(struct kmad_sim_fabric *fab, unsigned int dev,
		       u32 qpn, const void *mad, size_t len,
		       const struct kmad_sim_rx *rx)
{
	struct sim_packet pkt = {};
	enum sim_rx_result res;
	struct sim_qp *qp;

	if (!mad || !len || len > KMAD_SIM_MAX_PACKET || !rx)
		return -EINVAL;
	qp = kmad_sim_qp_get(fab, dev, qpn);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	pkt.len = len;
	pkt.slid = rx->slid;
	pkt.dlid = kmad_sim_port_lid_of(qp->port);
	pkt.src_qpn = rx->src_qpn;
	pkt.dst_qpn = qpn & 0xffff;
	pkt.copies = 1;
	pkt.path_bits = rx->dlid_path_bits;
	pkt.grh = rx->grh_present;
	pkt.sgid = rx->sgid;
	pkt.dgid = rx->dgid;
	pkt.flow_label = rx->flow_label;
	pkt.tclass = rx->traffic_class;
	pkt.hop_limit = rx->hop_limit;
	memcpy(pkt.mad, mad, min_t(size_t, len, KMAD_MAD_SIZE));
	res = kmad_sim_qp_receive(qp, &pkt);
	kmad_sim_qp_put(qp);

	switch (res) {
	case SIM_RX_DELIVERED:
		return 0;
	case SIM_RX_TOO_LONG:
		return -EMSGSIZE;
	case SIM_RX_NO_RECV:
		break;
	}
	return -ENOBUFS;
}
EXPORT_SYMBOL_GPL(kmad_sim_inject_rx);

/* kmad_sim_qp_error(), with or without the event. */
static int sim_qp_error(struct kmad_sim_fabric *fab, unsigned int dev,
			u32 qpn, bool event)
{
	struct sim_qp *qp;
	unsigned long flags;

	qp = kmad_sim_qp_get(fab, dev, qpn);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	spin_lock_irqsave(&qp->cq->lock, flags);
	kmad_sim_qp_error_locked(qp);
	spin_unlock_irqrestore(&qp->cq->lock, flags);
	if (event)
		kmad_qp_event(qp->kqp, KMAD_QP_EVENT_FATAL);
	kmad_sim_qp_put(qp);
	return 0;
}

/**
 * kmad_sim_qp_error() - make a QP fail on its own, as an HCA may.
 * @fab: the fabric.
 * @dev: device index.
 * @qpn: 0 or 1, or KMAD_SIM_QP(port, 0 or 1).
 *
 * The QP moves to the error state: every send on its wire, then every
 * posted receive, completes with %KMAD_WC_FLUSH_ERR; then kmad gets
 * %KMAD_QP_EVENT_FATAL (also if the QP already was in error).
 *
 * Context: any.
 * Return: 0, -EINVAL or -ENODEV.
 */
int kmad_sim_qp_error(struct kmad_sim_fabric *fab, unsigned int dev, u32 qpn)
{
	return sim_qp_error(fab, dev, qpn, true);
}
EXPORT_SYMBOL_GPL(kmad_sim_qp_error);

/**
 * kmad_sim_qp_error_no_event() - kmad_sim_qp_error() without the event.
 * @fab: the fabric.
 * @dev: device index.
 * @qpn: 0 or 1, or KMAD_SIM_QP(port, 0 or 1).
 *
 * The QP moves to the error state and everything outstanding completes
 * with %KMAD_WC_FLUSH_ERR, but kmad gets no event: an HCA reports an
 * error it reported in a completion through the completion only.  kmad
 * must see the QP's state from the flushes.
 *
 * Context: any.
 * Return: 0, -EINVAL or -ENODEV.
 */
int kmad_sim_qp_error_no_event(struct kmad_sim_fabric *fab, unsigned int dev,
			       u32 qpn)
{
	return sim_qp_error(fab, dev, qpn, false);
}
EXPORT_SYMBOL_GPL(kmad_sim_qp_error_no_event);

/* sim_qp_set_fails()'s @state for the post calls; else a QP state. */
#define SIM_FAIL_POST_RECV	(-1)
#define SIM_FAIL_POST_SEND	(-2)

/*
 * Set how many of a QP's next moves to @state (post_recv() or
 * post_send() calls, for SIM_FAIL_POST_RECV or _SEND) fail.
 */
static int sim_qp_set_fails(struct kmad_sim_fabric *fab, unsigned int dev,
			    u32 qpn, int state, unsigned int count)
{
	struct sim_qp *qp;
	unsigned long flags;

	qp = kmad_sim_qp_get(fab, dev, qpn);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	spin_lock_irqsave(&qp->cq->lock, flags);
	if (state == SIM_FAIL_POST_RECV)
		qp->post_recv_fails = count;
	else if (state == SIM_FAIL_POST_SEND)
		qp->post_send_fails = count;
	else
		qp->modify_fails[state] = count;
	spin_unlock_irqrestore(&qp->cq->lock, flags);
	kmad_sim_qp_put(qp);
	return 0;
}

/**
 * kmad_sim_fail_modify_qp() - make a QP's next moves to a state fail, as
 * an HCA's modify_qp may.
 * @fab: the fabric.
 * @dev: device index.
 * @qpn: 0 or 1, or KMAD_SIM_QP(port, 0 or 1).
 * @state: the target state whose moves fail.
 * @count: how many of kmad's next modify_qp() calls to @state on the QP
 *	fail (UINT_MAX: in effect all); 0 ends failures still to come.
 *	Replaces the count set before for @state.
 *
 * A failed call returns -EIO and changes nothing: a move to RESET forgets
 * nothing, a move to the error state flushes nothing.  The count still
 * applies while the device is removed, when this can no longer change it
 * (-ENODEV): kmad's teardown tries the move to the error state again for
 * as long as it fails, so a test must end failures it set (0) before it
 * removes the device, or removes it with the failures it means to see.
 *
 * Context: any.
 * Return: 0; -EINVAL (also for a bad @state) or -ENODEV.
 */
int kmad_sim_fail_modify_qp(struct kmad_sim_fabric *fab, unsigned int dev,
			    u32 qpn, enum kmad_qp_state state,
			    unsigned int count)
{
	if (state != KMAD_QPS_RESET && state != KMAD_QPS_RTS &&
	    state != KMAD_QPS_ERR)
		return -EINVAL;
	return sim_qp_set_fails(fab, dev, qpn, state, count);
}
EXPORT_SYMBOL_GPL(kmad_sim_fail_modify_qp);

/**
 * kmad_sim_fail_post_recv() - make the next @count post_recv() calls on a
 * QP fail with -ENOMEM, posting nothing (as a provider out of memory
 * would); 0 ends it.
 * @fab: the fabric.
 * @dev: device index.
 * @qpn: 0 or 1, or KMAD_SIM_QP(port, 0 or 1).
 * @count: how many.
 *
 * Context: any.
 * Return: 0; -EINVAL for a bad fabric, device index, port or QP number;
 * -ENODEV for a device absent or being removed.
 */
int kmad_sim_fail_post_recv(struct kmad_sim_fabric *fab, unsigned int dev,
			    u32 qpn, unsigned int count)
{
	return sim_qp_set_fails(fab, dev, qpn, SIM_FAIL_POST_RECV, count);
}
EXPORT_SYMBOL_GPL(kmad_sim_fail_post_recv);

/**
 * kmad_sim_fail_post_send() - make the next @count post_send() calls on a
 * QP fail with -ENOMEM, posting nothing (as a provider out of memory
 * would); 0 ends it.
 * @fab: the fabric.
 * @dev: device index.
 * @qpn: 0 or 1, or KMAD_SIM_QP(port, 0 or 1).
 * @count: how many.
 *
 * kmad ends a refused send with %KMAD_SEND_LOCAL_ERROR, retries or not
 * (provider.h, post_send).
 *
 * Context: any.
 * Return: 0; -EINVAL for a bad fabric, device index, port or QP number;
 * -ENODEV for a device absent or being removed.
 */
int kmad_sim_fail_post_send(struct kmad_sim_fabric *fab, unsigned int dev,
			    u32 qpn, unsigned int count)
{
	return sim_qp_set_fails(fab, dev, qpn, SIM_FAIL_POST_SEND, count);
}
EXPORT_SYMBOL_GPL(kmad_sim_fail_post_send);

/**
 * kmad_sim_hold_queries() - hold or release an HCA's query_gid() calls.
 * @fab: the fabric.
 * @dev: device index.
 * @hold: true: from now on each query_gid() kmad calls on the HCA waits,
 *	spinning, until released; false: release them.
 *
 * For tests of what may run while a provider op is in progress (the
 * device's removal, say).  The hold belongs to the node and stays across
 * the device's removal (an exception to the conventions of <kmad/sim.h>:
 * it is set on a removed device too): a removal waits for a held call,
 * so a test releases the hold itself.
 *
 * Context: any.
 * Return: query_gid() calls waiting now (before a release); -EINVAL for a
 * bad fabric or index.
 */
int kmad_sim_hold_queries(struct kmad_sim_fabric *fab, unsigned int dev,
			  bool hold)
{
	struct sim_node *node;

	if (IS_ERR_OR_NULL(fab) || dev >= fab->num_hcas)
		return -EINVAL;
	node = fab->nodes[dev];
	atomic_set(&node->hold_queries, hold);
	return atomic_read(&node->queries_waiting);
}
EXPORT_SYMBOL_GPL(kmad_sim_hold_queries);

/**
 * kmad_sim_pending_sends() - how many sends wait on a QP's wire.
 * @fab: the fabric.
 * @dev: device index.
 * @qpn: 0 or 1, or KMAD_SIM_QP(port, 0 or 1).
 *
 * In async mode these are the sends not yet transmitted.
 *
 * Context: any.
 * Return: the number, or 0 for a bad or absent QP.
 */
unsigned int kmad_sim_pending_sends(struct kmad_sim_fabric *fab,
				    unsigned int dev, u32 qpn)
{
	struct sim_qp *qp;
	unsigned long flags;
	unsigned int n;

	qp = kmad_sim_qp_get(fab, dev, qpn);
	if (IS_ERR(qp))
		return 0;
	spin_lock_irqsave(&qp->cq->lock, flags);
	n = qp->wire_len;
	spin_unlock_irqrestore(&qp->cq->lock, flags);
	kmad_sim_qp_put(qp);
	return n;
}
EXPORT_SYMBOL_GPL(kmad_sim_pending_sends);

/**
 * kmad_sim_peek_send() - copy the MAD of a send waiting on a QP's wire.
 * @fab: the fabric.
 * @dev: device index.
 * @qpn: 0 or 1, or KMAD_SIM_QP(port, 0 or 1).
 * @n: position on the wire, 0 for the oldest.
 * @mad: where to copy it.
 * @len: room at @mad; a longer MAD is truncated to @len bytes.
 *
 * The MAD is read from kmad's buffer now, as a transmission would.
 *
 * Context: any.
 * Return: the number of bytes copied, min(@len, the MAD's length): 256
 * for a whole kmad MAD; -EINVAL (also for @n past the end) or -ENODEV.
 */
int kmad_sim_peek_send(struct kmad_sim_fabric *fab, unsigned int dev,
		       u32 qpn, unsigned int n, void *mad, size_t len)
{
	struct sim_send *s;
	struct sim_qp *qp;
	unsigned long flags;
	int ret = -EINVAL;

	if (!mad)
		return -EINVAL;
	qp = kmad_sim_qp_get(fab, dev, qpn);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	spin_lock_irqsave(&qp->cq->lock, flags);
	s = kmad_sim_wire_nth(qp, n);
	if (s) {
		ret = min_t(size_t, len, s->len);
		memcpy(mad, s->mad, ret);
	}
	spin_unlock_irqrestore(&qp->cq->lock, flags);
	kmad_sim_qp_put(qp);
	return ret;
}
EXPORT_SYMBOL_GPL(kmad_sim_peek_send);

/**
 * kmad_sim_complete_send() - step mode: finish a send waiting on a QP's
 * wire.
 * @fab: the fabric.
 * @dev: device index.
 * @qpn: 0 or 1, or KMAD_SIM_QP(port, 0 or 1).
 * @n: position on the wire, 0 for the oldest; completing another one
 *	than the oldest breaks the post order an HCA keeps.
 * @status: %KMAD_WC_SUCCESS transmits it: its MAD is read, fault injection
 *	applies, the send completes and the MAD is routed.  Any other status
 *	completes the send with it and transmits nothing.
 * @deliver: with %KMAD_WC_SUCCESS, false loses the MAD on the wire after
 *	the send completed successfully (counted as dropped_fault; no fault
 *	is drawn).
 *
 * Events that the CQEs raise stay pending until kmad_sim_fire_cq_event().
 *
 * Context: any.
 * Return: 0; -EINVAL in async mode, for a bad status or @n past the end;
 * -ENODEV.
 */
int kmad_sim_complete_send(struct kmad_sim_fabric *fab, unsigned int dev,
			   u32 qpn, unsigned int n,
			   enum kmad_wc_status status, bool deliver)
{
	struct sim_packet pkt;
	struct sim_send *s;
	struct sim_qp *qp;
	unsigned long flags;
	bool on_wire = false;
	int ret = -EINVAL;

	if (IS_ERR_OR_NULL(fab) || fab->cfg.mode != KMAD_SIM_STEP)
		return -EINVAL;
	if (status != KMAD_WC_SUCCESS && status != KMAD_WC_FLUSH_ERR &&
	    status != KMAD_WC_LOC_ERR)
		return -EINVAL;
	qp = kmad_sim_qp_get(fab, dev, qpn);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	spin_lock_irqsave(&qp->cq->lock, flags);
	s = kmad_sim_wire_nth(qp, n);
	if (s) {
		on_wire = kmad_sim_tx_locked(qp, s, status, deliver, &pkt);
		ret = 0;
	}
	spin_unlock_irqrestore(&qp->cq->lock, flags);
	if (on_wire)
		kmad_sim_route(qp, &pkt);
	kmad_sim_qp_put(qp);
	return ret;
}
EXPORT_SYMBOL_GPL(kmad_sim_complete_send);

/**
 * kmad_sim_cqes() - how many CQEs kmad has not polled yet from a QP's CQ.
 * @fab: the fabric.
 * @dev: device index.
 * @qpn: 0 or 1, or KMAD_SIM_QP(port, 0 or 1).
 *
 * Context: any.
 * Return: the number, or 0 for a bad or absent QP.
 */
unsigned int kmad_sim_cqes(struct kmad_sim_fabric *fab, unsigned int dev,
			   u32 qpn)
{
	struct sim_qp *qp;
	unsigned long flags;
	unsigned int n;

	qp = kmad_sim_qp_get(fab, dev, qpn);
	if (IS_ERR(qp))
		return 0;
	spin_lock_irqsave(&qp->cq->lock, flags);
	n = qp->cq->count;
	spin_unlock_irqrestore(&qp->cq->lock, flags);
	kmad_sim_qp_put(qp);
	return n;
}
EXPORT_SYMBOL_GPL(kmad_sim_cqes);

/**
 * kmad_sim_event_pending() - step mode: whether a QP's CQ has raised an
 * event that kmad_sim_fire_cq_event() has not delivered yet.
 * @fab: the fabric.
 * @dev: device index.
 * @qpn: 0 or 1, or KMAD_SIM_QP(port, 0 or 1).
 *
 * Always false in async mode, where events are delivered as raised.
 *
 * Context: any.
 * Return: the answer; false for a bad or absent QP.
 */
bool kmad_sim_event_pending(struct kmad_sim_fabric *fab, unsigned int dev,
			    u32 qpn)
{
	struct sim_qp *qp;
	unsigned long flags;
	bool pending;

	qp = kmad_sim_qp_get(fab, dev, qpn);
	if (IS_ERR(qp))
		return false;
	spin_lock_irqsave(&qp->cq->lock, flags);
	pending = qp->cq->event_pending;
	spin_unlock_irqrestore(&qp->cq->lock, flags);
	kmad_sim_qp_put(qp);
	return pending;
}
EXPORT_SYMBOL_GPL(kmad_sim_event_pending);

/**
 * kmad_sim_fire_cq_event() - deliver a QP's CQ's pending event to kmad.
 * @fab: the fabric.
 * @dev: device index.
 * @qpn: 0 or 1, or KMAD_SIM_QP(port, 0 or 1).
 * @force: deliver one even if none is pending (a spurious event, which
 *	kmad must tolerate, e.g. on an empty CQ); works in async mode too.
 *
 * kmad_cq_event() is called from this context, with no sim lock held.
 *
 * Context: any.
 * Return: 0; -ENOENT if no event is pending and !@force; -EINVAL or
 * -ENODEV.
 */
int kmad_sim_fire_cq_event(struct kmad_sim_fabric *fab, unsigned int dev,
			   u32 qpn, bool force)
{
	struct sim_qp *qp;
	unsigned long flags;
	bool fire;

	qp = kmad_sim_qp_get(fab, dev, qpn);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	spin_lock_irqsave(&qp->cq->lock, flags);
	fire = qp->cq->event_pending || force;
	qp->cq->event_pending = false;
	spin_unlock_irqrestore(&qp->cq->lock, flags);
	if (fire)
		kmad_sim_cq_deliver_event(qp->cq);
	kmad_sim_qp_put(qp);
	return fire ? 0 : -ENOENT;
}
EXPORT_SYMBOL_GPL(kmad_sim_fire_cq_event);

/**
 * kmad_sim_set_arm_hook() - run a function at the start of the next
 * req_notify_cq() on a QP's CQ.
 * @fab: the fabric.
 * @dev: device index.
 * @qpn: 0 or 1, or KMAD_SIM_QP(port, 0 or 1).
 * @hook: called once, before arming takes effect, then forgotten; NULL
 *	removes a hook not yet called.
 * @arg: its argument.
 *
 * The hook runs in kmad's context with no sim lock held, so it may call
 * the other controls (kmad_sim_inject(), kmad_sim_complete_send(), ...)
 * to land a CQE between kmad's last poll and the arming.  It must not
 * sleep.  A hook not called by the time the device's removal starts is
 * forgotten, never called (kmad's teardown arms the CQ again, when @arg
 * may be gone).
 *
 * Context: any.
 * Return: 0 once the hook is set (or removed); -EINVAL or -ENODEV (see
 * <kmad/sim.h>), which set nothing, also -ENODEV once the device's
 * removal has started.
 */
int kmad_sim_set_arm_hook(struct kmad_sim_fabric *fab, unsigned int dev,
			  u32 qpn, void (*hook)(void *arg), void *arg)
{
	struct sim_qp *qp;
	unsigned long flags;
	int ret = -ENODEV;

	qp = kmad_sim_qp_get(fab, dev, qpn);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	spin_lock_irqsave(&qp->cq->lock, flags);
	/* kmad_sim_cq_teardown() forgets hooks; none may come after. */
	if (!READ_ONCE(qp->cq->sdev->teardown)) {
		qp->cq->arm_hook = hook;
		qp->cq->arm_hook_arg = hook ? arg : NULL;
		ret = 0;
	}
	spin_unlock_irqrestore(&qp->cq->lock, flags);
	kmad_sim_qp_put(qp);
	return ret;
}
EXPORT_SYMBOL_GPL(kmad_sim_set_arm_hook);

/**
 * kmad_sim_advance_clock() - step mode: move the virtual clock forward and
 * tell kmad on every live device.
 * @fab: the fabric.
 * @ms: milliseconds, converted with msecs_to_jiffies().
 *
 * Does nothing in async mode, where kmad uses jiffies.  kmad runs what
 * became due (kmad_device_clock_changed()) before this returns or from
 * its own workqueue, as kmad decides; kmad_sim_settle() waits for it.
 * It takes no mutex: kmad's handlers and the qp_created callback may
 * call it.  A device being registered is told too (its removal, or a
 * failed registration's way back, waits for that); one being removed
 * is not.
 *
 * Context: process context; may sleep.
 */
void kmad_sim_advance_clock(struct kmad_sim_fabric *fab, unsigned int ms)
{
	struct kmad_device *kdev;
	struct sim_node *node;
	unsigned long flags;
	unsigned int i;
	bool idle;

	if (IS_ERR_OR_NULL(fab) || fab->cfg.mode != KMAD_SIM_STEP)
		return;
	spin_lock_irqsave(&fab->lock, flags);
	fab->clock += msecs_to_jiffies(ms);
	spin_unlock_irqrestore(&fab->lock, flags);

	for (i = 0; i < fab->num_hcas; i++) {
		node = fab->nodes[i];
		spin_lock_irqsave(&fab->lock, flags);
		kdev = node->state == SIM_DEV_LIVE ? node->kdev : NULL;
		if (kdev)
			node->clock_users++;
		spin_unlock_irqrestore(&fab->lock, flags);
		if (!kdev)
			continue;
		/* Live until clock_users drops: the removal waits. */
		kmad_device_clock_changed(kdev);
		spin_lock_irqsave(&fab->lock, flags);
		idle = !--node->clock_users;
		spin_unlock_irqrestore(&fab->lock, flags);
		if (idle)
			wake_up_all(&fab->clock_idle);
	}
}
EXPORT_SYMBOL_GPL(kmad_sim_advance_clock);
