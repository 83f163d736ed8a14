// SPDX-License-Identifier: GPL-2.0
/*
 * kmad RMPP, the receiving side (IBTA 13.6): reassembly and ACKs.
 *
 * recv.c hands every RMPP-active MAD of an agent registered with an RMPP
 * version to kmad_rmpp_recv().  DATA segments are reassembled here; a
 * STOP or ABORT about a transfer being reassembled here ends it; every
 * other ACK, STOP and ABORT goes to the sending side (kmad_rmpp_send_ctl()).
 *
 * A transfer is known by its TID, class, class version and method (the
 * DATA's) and its sender's address (the source GID if it came with a
 * GRH, else the source LID; and the source QP), as ib_mad's
 * find_rmpp_recv() knows it (which compares the source LID even then).
 * Its first segment (number 1, First flag) starts it and tells its size:
 * the PayloadLength of the first segment is the payload of the whole
 * transfer, 220 bytes (after the RMPP header) per segment but the last.
 * The message buffer is allocated then, at its final size, so a transfer
 * that cannot be taken is refused (STOP, RESX) before its sender sends
 * the rest of it, and every segment is copied into it as it arrives, in
 * order: no segment is kept.
 * What the ULP gets (&kmad_recv_wc.mad_len) is ib_umad's layout: the first
 * segment whole, then the bytes of each later segment from
 * kmad_rmpp_hdr_len() of the class on, the last one cut where the
 * message's payload ends.
 *
 * As the receiver, kmad answers as ib_mad does (mad_rmpp.c): an ACK carries
 * the last segment received in order and NewWindowLast; the window opens
 * by a receive queue's depth / 8 (at least 1) segments at the first
 * segment and each time the last segment of the window arrives, and the
 * last segment is acknowledged at once -- unless the message is a request
 * the agent's backlog has no room for (kmad_agent_recvs_full()): that
 * segment is dropped unanswered, so its sender repeats it.  A segment already had (a
 * duplicate, or any segment of a finished transfer) is acknowledged again
 * with the last one had, so a sender whose ACK was lost goes on.  One past
 * the next expected is dropped and the last good acknowledged (ib_mad
 * keeps such segments; kmad keeps nothing, and the sender retransmits from
 * the ACK).  The ACK, STOP and ABORT go back to the sender's address (by
 * GID if the segment came with a GRH, see kmad_recv_reply_dest()), with
 * the method of the DATA with the RESP bit flipped (ib_mad's format_ack()),
 * posted by the port's responder agent on the agent's QP, which keeps the
 * TID as it is.
 *
 * A finished transfer lingers for %KMAD_RMPP_RECV_LINGER_MS so that a
 * sender whose final ACK was lost, and which sends its last window again,
 * is acknowledged again rather than left to time out (ib_mad keeps its
 * finished transfers 10 s for the same reason).
 *
 * Timers (all on the port's clock, kmad_now()):
 *
 * - a transfer in progress that receives no segment in order for
 *   %KMAD_RMPP_RECV_IDLE_MS, or is still in progress
 *   %KMAD_RMPP_RECV_TOTAL_MS after its first segment, is dropped and its
 *   sender sent an ABORT with T2L (ib_mad allows 40 s for the whole
 *   transfer; the bound on the whole keeps a sender that trickles its
 *   segments in from holding a transfer and its buffer for good);
 * - a finished transfer is forgotten after %KMAD_RMPP_RECV_LINGER_MS, or
 *   earlier, the first finished first, when the agent has more than
 *   %KMAD_RMPP_RECV_MAX_DONE (rmpp_keep_done()).
 *
 * Both run from the agent's work (kmad_rmpp_recv_expire(), which the work
 * calls on every run) and at every DATA packet for the agent.  With the
 * kernel's clock the work is queued for the earliest of them
 * (rmpp_arm()); a provider with its own clock (&kmad_provider_ops.now)
 * runs every agent's work as its clock moves.
 *
 * Limits: at most kmad.rmpp_max_recvs transfers in progress per agent and
 * kmad.rmpp_max_bytes of PayloadLength per transfer (module parameters);
 * a transfer beyond them, or whose buffer cannot be allocated, is refused
 * with a STOP carrying RESX, and counted.
 *
 * A response is reassembled only if its TID belongs to one of the agent's
 * outstanding requests when its first segment arrives (else it goes on as
 * one MAD, to be counted unmatched, and its sender gets ABORT T2L); the
 * whole message is matched to the request afterwards, by
 * kmad_send_response(), as a single MAD is.  The
 * request's deadline is not moved by the segments (ib_mad does not move it
 * either): its timeout must cover the whole transfer.  If it expires
 * first, the request retries (its TID stays, and so does the transfer)
 * or ends as any other; then the transfer's next segment ends it, counted
 * as one unmatched response, with ABORT T2L to its sender
 * (rmpp_continue()).
 *
 * Locking and lifetimes: an agent's transfers are on its rmpp_recvs list,
 * under its lock (A).  Everything about a transfer is read and written
 * under A; a transfer taken off the list (finished, ended, expired,
 * flushed) is then owned by the one context that took it.  The packets
 * kmad sends in answer are built under A and posted after it is dropped:
 * posting takes the responder's lock, an A of another agent.  A transfer
 * holds no reference to its agent: it lives on the agent's list, and
 * agent_stop() (unregister, port removal) flushes the list after marking
 * the agent DYING under A, after which no transfer is added.
 *
 * Context of everything here: the CQ drain (or a provider's bridge,
 * kmad_device_bridge_recv(), perhaps in softirq), or the agent's work:
 * nothing sleeps under a lock; memory is allocated with GFP_ATOMIC, but
 * for a reassembly buffer in the drain (rmpp_prepare()), with GFP_KERNEL
 * outside every lock.
 */
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include "kmad_priv.h"
#include "rmpp.h"

/* A transfer that receives nothing for this long is dropped (T2L). */
#define KMAD_RMPP_RECV_IDLE_MS		40000
/* ... and one still in progress this long after its first segment. */
#define KMAD_RMPP_RECV_TOTAL_MS		120000
/* A finished transfer is acknowledged again for this long... */
#define KMAD_RMPP_RECV_LINGER_MS	10000
/* ... kept by at most this many per agent, the oldest forgotten first. */
#define KMAD_RMPP_RECV_MAX_DONE		64
/* Payload of a segment after the RMPP header, which PayloadLength counts. */
#define KMAD_RMPP_SEG_PAYLOAD		KMAD_RMPP_DATA_SIZE

/*
 * The module parameters' ranges: 0 transfers, or a PayloadLength below
 * two segments, would refuse every multi-segment message (an SA's
 * GetTable answers among them); more than the agent's queue of unread
 * MADs may hold (KMAD_AGENT_RECV_BYTES_MAX) would reassemble messages
 * only to drop them, and a peer could make kmad allocate that much per
 * transfer.
 */
#define KMAD_RMPP_MAX_RECVS_LIMIT	1024
#define KMAD_RMPP_MAX_BYTES_MIN		1024

static int rmpp_max_recvs_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, KMAD_RMPP_MAX_RECVS_LIMIT);
}

static const struct kernel_param_ops rmpp_max_recvs_ops = {
	.set = rmpp_max_recvs_set,
	.get = param_get_uint,
};

static int rmpp_max_bytes_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, KMAD_RMPP_MAX_BYTES_MIN,
				     KMAD_AGENT_RECV_BYTES_MAX);
}

static const struct kernel_param_ops rmpp_max_bytes_ops = {
	.set = rmpp_max_bytes_set,
	.get = param_get_uint,
};

static unsigned int rmpp_max_recvs = 16;
module_param_cb(rmpp_max_recvs, &rmpp_max_recvs_ops, &rmpp_max_recvs, 0644);
MODULE_PARM_DESC(rmpp_max_recvs,
		 "RMPP transfers an agent may have in reassembly at once, 1-1024; more are refused with STOP/RESX (default 16)");

static unsigned int rmpp_max_bytes = 2U << 20;
module_param_cb(rmpp_max_bytes, &rmpp_max_bytes_ops, &rmpp_max_bytes, 0644);
MODULE_PARM_DESC(rmpp_max_bytes,
		 "Largest RMPP PayloadLength kmad reassembles, 1 KiB-32 MiB; a larger transfer is refused with STOP/RESX (default 2 MiB)");

/**
 * enum rmpp_recv_state - a transfer's life.
 * @RMPP_RECV_ACTIVE: being reassembled.
 * @RMPP_RECV_DONE: handed on whole; lingers to acknowledge duplicates.
 */
enum rmpp_recv_state {
	RMPP_RECV_ACTIVE,
	RMPP_RECV_DONE,
};

/**
 * struct rmpp_recv - one transfer an agent receives.
 * @entry: on &kmad_agent_priv.rmpp_recvs (A).
 * @state: (A).
 * @tid: the key: TID (I),
 * @mgmt_class: class (I),
 * @class_version: class version (I),
 * @method: the DATA's method (I),
 * @grh: whether it came with a GRH (I),
 * @sgid: then its source GID (I),
 * @slid: else its source LID (I),
 * @src_qpn: and the sender's QP (I).
 * @dest: where kmad's ABORT goes when the transfer times out (I).
 * @total: segments in the transfer (I).
 * @last_paylen: PayloadLength its last segment must carry (I).
 * @last: the last segment received in order (A).
 * @newwin: NewWindowLast sent in the last ACK (A).
 * @expires: when it is dropped (ACTIVE) or forgotten (DONE), on the
 *	port's clock (A).
 * @ends_by: ACTIVE: the latest @expires may be (I).
 * @first: ACTIVE: its first segment, which becomes the message (A).
 * @buf: ACTIVE: the message buffer, @len bytes (A).
 * @len: the message's length, &kmad_recv_wc.mad_len (I).
 * @filled: bytes of @buf written so far (A).
 */
struct rmpp_recv {
	struct list_head entry;
	enum rmpp_recv_state state;
	__be64 tid;
	u8 mgmt_class;
	u8 class_version;
	u8 method;
	bool grh;
	union kmad_gid sgid;
	u16 slid;
	u32 src_qpn;
	struct kmad_dest dest;
	u32 total;
	u32 last_paylen;
	u32 last;
	u32 newwin;
	u64 expires;
	u64 ends_by;
	struct kmad_recv_priv *first;
	u8 *buf;
	size_t len;
	size_t filled;
};

/*
 * What processing one packet decided, done after the agent lock is
 * dropped: a packet to send back, the message to hand on, and what to
 * free.
 */
struct rmpp_out {
	bool send;			/* @ctl is to be posted to @dest */
	struct kmad_dest dest;
	struct kmad_mad ctl;
	struct kmad_recv_priv *done;	/* the message to dispatch */
	struct kmad_recv_priv *recv;	/* the packet, to free unless taken */
	struct rmpp_recv *fresh;	/* preallocated; freed unless used */
	struct list_head ended;		/* transfers ended: answered in @ctl */
	struct list_head expired;	/* transfers that idled: T2L each */
};

static const struct kmad_rmpp_hdr *rmpp_hdr(const struct kmad_recv_priv *recv)
{
	return &((const struct kmad_rmpp_mad *)&recv->mad)->rmpp_hdr;
}

/* The receive window: as ib_mad's window_size(), an eighth of the
 * receive queue, at least one segment.
 */
static u32 rmpp_window(const struct kmad_agent_priv *agent)
{
	return max(agent->qpi->rq_depth >> 3, 1U);
}

static void rmpp_free(struct rmpp_recv *rr)
{
	if (rr->first)
		kmad_recv_free(rr->first);
	kvfree(rr->buf);
	kfree(rr);
}

/*
 * Is @recv a packet of transfer @rr: the same TID, class, class version
 * and method (the DATA's, which the sender's STOP and ABORT carry too),
 * from the same sender?  The method tells a response from a request
 * under the same TID (an agent that serves requests and sends its own),
 * as in ib_mad's find_rmpp_recv().
 */
static bool rmpp_same(const struct rmpp_recv *rr,
		      const struct kmad_recv_priv *recv)
{
	const struct kmad_recv_wc *wc = &recv->wc;
	const struct kmad_mad_hdr *hdr = &recv->mad.mad_hdr;

	if (rr->tid != hdr->tid || rr->mgmt_class != hdr->mgmt_class ||
	    rr->class_version != hdr->class_version ||
	    rr->method != hdr->method ||
	    rr->src_qpn != wc->src_qpn || rr->grh != wc->grh_present)
		return false;
	if (rr->grh)
		return !memcmp(&rr->sgid, &wc->grh.sgid, sizeof(rr->sgid));
	return rr->slid == wc->slid;
}

static struct rmpp_recv *rmpp_find(struct kmad_agent_priv *agent,
				   const struct kmad_recv_priv *recv)
{
	struct rmpp_recv *rr;

	lockdep_assert_held(&agent->lock);
	list_for_each_entry(rr, &agent->rmpp_recvs, entry)
		if (rmpp_same(rr, recv))
			return rr;
	return NULL;
}

/* Take @rr off its agent's list, for @out's owner to free. */
static void rmpp_unlink(struct kmad_agent_priv *agent, struct rmpp_recv *rr,
			struct list_head *ended)
{
	lockdep_assert_held(&agent->lock);
	if (rr->state == RMPP_RECV_ACTIVE)
		agent->rmpp_recvs_active--;
	else
		agent->rmpp_recvs_done--;
	list_move_tail(&rr->entry, ended);
}

/*
 * @rr has just finished.  Finished transfers linger to answer a repeated
 * last window and to drop a repeated one-segment message, but a sender
 * may finish one per packet (one-segment messages, each with its own
 * TID): beyond %KMAD_RMPP_RECV_MAX_DONE the one that finished first is
 * forgotten now, so that neither the list nor its walk at every DATA
 * packet grows with the packet rate.  The caller has put @rr at the
 * list's tail, so the finished ones are in the order they finished.
 */
static void rmpp_keep_done(struct kmad_agent_priv *agent,
			   struct rmpp_recv *rr, struct list_head *ended)
{
	struct rmpp_recv *old;

	lockdep_assert_held(&agent->lock);
	if (++agent->rmpp_recvs_done <= KMAD_RMPP_RECV_MAX_DONE)
		return;
	list_for_each_entry(old, &agent->rmpp_recvs, entry) {
		if (old != rr && old->state == RMPP_RECV_DONE) {
			rmpp_unlink(agent, old, ended);
			return;
		}
	}
}

/*
 * Build in @out an ACK, STOP or ABORT answering the DATA whose header is
 * @hdr (the class's kmad_rmpp_hdr_len() bytes are repeated), as ib_mad's
 * format_ack() and nack_recv() do: the method with the RESP bit flipped.
 */
static void rmpp_ctl(struct rmpp_out *out, const struct kmad_mad *hdr,
		     u8 type, u8 status, u32 seg, u32 newwin)
{
	struct kmad_rmpp_mad *m = (struct kmad_rmpp_mad *)&out->ctl;
	struct kmad_rmpp_hdr *h = &m->rmpp_hdr;

	memset(m, 0, sizeof(*m));
	memcpy(m, hdr, kmad_rmpp_hdr_len(hdr->mad_hdr.mgmt_class));
	m->mad_hdr.method ^= KMAD_METHOD_RESP;
	m->mad_hdr.status = 0;
	h->rmpp_version = KMAD_RMPP_VERSION;
	h->rmpp_type = type;
	h->rmpp_rtime_flags = (h->rmpp_rtime_flags & ~KMAD_RMPP_FLAGS_MASK) |
			      KMAD_RMPP_FLAG_ACTIVE;
	h->rmpp_status = status;
	h->seg_num = cpu_to_be32(seg);
	h->paylen_newwin = cpu_to_be32(newwin);
	out->send = true;
}

static void rmpp_ack(struct rmpp_out *out, const struct rmpp_recv *rr)
{
	rmpp_ctl(out, &out->recv->mad, KMAD_RMPP_TYPE_ACK,
		 KMAD_RMPP_STATUS_SUCCESS, rr->last, rr->newwin);
}

/*
 * ABORT (or STOP, for RESX) the transfer @out->recv belongs to.  A RESX
 * refusal is counted here; an ABORT once sent (rmpp_post()).
 */
static void rmpp_refuse(struct kmad_port *port, struct rmpp_out *out,
			u8 status)
{
	bool stop = status == KMAD_RMPP_STATUS_RESX;

	rmpp_ctl(out, &out->recv->mad,
		 stop ? KMAD_RMPP_TYPE_STOP : KMAD_RMPP_TYPE_ABORT, status, 0, 0);
	if (stop)
		kmad_port_stat_inc(port, KMAD_PSTAT_RMPP_RESX);
}

/*
 * Post @mad to @dest from the port's responder on @agent's QP.  The
 * responder is read under RCU and held while posting: port removal
 * unregisters it, and may do so while an agent's work expires transfers.
 */
static void rmpp_post(struct kmad_agent_priv *agent,
		      const struct kmad_dest *dest, const struct kmad_mad *mad)
{
	struct kmad_port *port = agent->qpi->port;
	struct kmad_agent_priv *responder;
	struct kmad_send_buf *buf;
	int ret = -ESHUTDOWN;

	responder = kmad_port_responder_get(port, agent->qpi->qpt);
	if (!responder)
		goto dropped;
	buf = kmad_alloc_fails(KMAD_ALLOC_RMPP_CTL) ? ERR_PTR(-ENOMEM) :
	      kmad_alloc_send_buf(&responder->agent, dest, GFP_ATOMIC);
	if (!IS_ERR(buf)) {
		*buf->mad = *mad;
		ret = kmad_post_send(buf);
		if (ret)
			kmad_free_send_buf(buf);
	}
	kmad_agent_put(responder);
	if (ret)
		goto dropped;
	/* Counted once posted: a packet that was not, only as dropped. */
	switch (((const struct kmad_rmpp_mad *)mad)->rmpp_hdr.rmpp_type) {
	case KMAD_RMPP_TYPE_ACK:
		kmad_port_stat_inc(port, KMAD_PSTAT_RMPP_ACKS);
		break;
	case KMAD_RMPP_TYPE_ABORT:
		kmad_port_stat_inc(port, KMAD_PSTAT_RMPP_ABORTS);
		break;
	default:
		break;
	}
	return;
dropped:
	pr_debug_ratelimited("kmad: %s port %u: RMPP answer not sent\n",
			     port->dev->name, port->port_num);
	kmad_port_stat_inc(port, KMAD_PSTAT_RMPP_DROPPED);
}

/* Move every transfer of @agent that is due by @now to @ended. */
static void rmpp_expire_locked(struct kmad_agent_priv *agent, u64 now,
			       struct list_head *ended)
{
	struct rmpp_recv *rr, *tmp;

	lockdep_assert_held(&agent->lock);
	list_for_each_entry_safe(rr, tmp, &agent->rmpp_recvs, entry)
		if (rr->expires <= now)
			rmpp_unlink(agent, rr, ended);
}

/*
 * Free transfers taken off the list; those still in progress when they
 * expired get an ABORT with T2L.  Called without the agent lock.
 */
static void rmpp_end(struct kmad_agent_priv *agent, struct list_head *ended,
		     bool expired)
{
	struct kmad_port *port = agent->qpi->port;
	struct rmpp_recv *rr, *tmp;
	struct rmpp_out *out;

	list_for_each_entry_safe(rr, tmp, ended, entry) {
		list_del(&rr->entry);
		if (expired && rr->state == RMPP_RECV_ACTIVE) {
			kmad_port_stat_inc(port, KMAD_PSTAT_RMPP_TIMEOUTS);
			out = kmad_alloc_fails(KMAD_ALLOC_RMPP_CTL) ? NULL :
			      kmalloc(sizeof(*out), GFP_ATOMIC);
			if (out) {
				out->recv = rr->first;
				rmpp_ctl(out, &rr->first->mad,
					 KMAD_RMPP_TYPE_ABORT,
					 KMAD_RMPP_STATUS_T2L, 0, 0);
				rmpp_post(agent, &rr->dest, &out->ctl);
				kfree(out);
			} else {
				kmad_port_stat_inc(port,
						   KMAD_PSTAT_RMPP_DROPPED);
			}
		}
		rmpp_free(rr);
	}
}

/*
 * With the kernel's clock, queue the agent's work for the earliest
 * expiry of its transfers, unless it is queued for then or sooner (as
 * send.c's agent_arm_timer() does for deadlines, under the same
 * &kmad_agent_priv.timer_at).  A provider with its own clock runs the work
 * as its clock moves.
 */
static void rmpp_arm(struct kmad_agent_priv *agent)
{
	struct kmad_device *dev = agent->qpi->port->dev;
	struct rmpp_recv *rr;
	u64 when = U64_MAX, now;

	lockdep_assert_held(&agent->lock);
	if (dev->has_clock && !READ_ONCE(dev->gone))
		return;
	list_for_each_entry(rr, &agent->rmpp_recvs, entry)
		when = min(when, rr->expires);
	if (when == U64_MAX || when >= agent->timer_at)
		return;
	now = kmad_now(agent->qpi->port);
	agent->timer_at = when;
	kmad_agent_queue_work(agent,
			      when > now ? (unsigned long)(when - now) : 0);
}

/*
 * Check a DATA packet on its own: its RMPPVersion, RMPPStatus, and
 * SegmentNumber against the First flag (ib_mad's process_rmpp_data()).
 * Return: 0, or the status of the ABORT it gets.
 */
static u8 rmpp_data_check(const struct kmad_rmpp_hdr *h)
{
	bool first = kmad_rmpp_flags(h) & KMAD_RMPP_FLAG_FIRST;
	u8 broken = kmad_rmpp_hdr_broken(h);

	if (broken)
		return broken;
	if (h->rmpp_status)
		return KMAD_RMPP_STATUS_BAD_STATUS;
	if (first != (be32_to_cpu(h->seg_num) == 1))
		return KMAD_RMPP_STATUS_BAD_SEG;
	return 0;
}

/*
 * A response that matches none of the agent's outstanding requests (by
 * TID, class and the address it came back to, kmad_send_resp_match()):
 * -ENOENT, or -EXDEV if misaddressed; one MAD, which starts or continues
 * no transfer and is not ACKed.  0 for a request or a matching response.
 */
static int rmpp_unmatched_response(struct kmad_agent_priv *agent,
				   const struct kmad_recv_priv *recv)
{
	lockdep_assert_held(&agent->lock);
	if (!kmad_mad_is_response(&recv->mad.mad_hdr))
		return 0;
	return kmad_send_resp_match(agent, recv);
}

/*
 * The last segment of a request (@recv) whose message of @len bytes would
 * not fit the agent's backlog (kmad_agent_recvs_full()): it is dropped
 * unanswered, and counted, before its ACK tells the sender the message
 * arrived; the sender repeats it once its ACK wait ends, and the message
 * is taken when the backlog has room.  A response never waits there.
 */
static bool rmpp_backlog_full(struct kmad_agent_priv *agent,
			      const struct kmad_recv_priv *recv, size_t len)
{
	lockdep_assert_held(&agent->lock);
	if (kmad_mad_is_response(&recv->mad.mad_hdr) ||
	    !kmad_agent_recvs_full(agent, len))
		return false;
	kmad_port_stat_inc(agent->qpi->port, KMAD_PSTAT_REQ_BACKLOG_DROPPED);
	return true;
}

/* kmad.rmpp_max_recvs transfers in progress: no more is taken. */
static bool rmpp_recvs_full(const struct kmad_agent_priv *agent)
{
	lockdep_assert_held(&agent->lock);
	return agent->rmpp_recvs_active >= READ_ONCE(rmpp_max_recvs);
}

/*
 * May a first segment without the Last flag start a transfer, so that its
 * buffer is worth allocating?  Not if the agent is going away, if it is a
 * segment of a transfer known already (a duplicate: ACKed again), if it
 * is a response to no outstanding request, or if the agent has
 * kmad.rmpp_max_recvs transfers in progress: none of these allocates
 * (a sender repeating a first segment of PayloadLength rmpp_max_bytes
 * would otherwise have a high-order atomic allocation made and freed for
 * each).  Transfers idle past their time are ended first, with @now, as
 * the processing after it does.  rmpp_start() decides again under the
 * lock; the two can differ only if another context changed the agent's
 * transfers in between.
 */
static bool rmpp_may_start(struct kmad_agent_priv *agent,
			   struct rmpp_out *out, u64 now)
{
	unsigned long flags;
	bool may;

	spin_lock_irqsave(&agent->lock, flags);
	if (agent->state != KMAD_AGENT_ACTIVE) {
		/* Its transfers are agent_stop()'s to flush, not ours. */
		spin_unlock_irqrestore(&agent->lock, flags);
		return false;
	}
	rmpp_expire_locked(agent, now, &out->expired);
	may = !rmpp_find(agent, out->recv) &&
	      !rmpp_unmatched_response(agent, out->recv) &&
	      !rmpp_recvs_full(agent);
	spin_unlock_irqrestore(&agent->lock, flags);
	return may;
}

/*
 * A first segment without the Last flag: size the transfer from its
 * PayloadLength and, if it may start a transfer (rmpp_may_start()),
 * allocate it and its buffer, before taking the agent lock again.
 * Return: 0, with @out->fresh set, or left NULL if it may not start; or
 * the status to refuse the transfer with: BAD_LEN for a PayloadLength
 * that does not make two segments or more, whose last segment cannot
 * hold the class's header, RESX (STOP) for one above kmad.rmpp_max_bytes
 * or one whose memory cannot be had.
 */
static u8 rmpp_prepare(struct kmad_agent_priv *agent, struct rmpp_out *out,
		       u64 now)
{
	const struct kmad_recv_priv *recv = out->recv;
	u8 cls = recv->mad.mad_hdr.mgmt_class;
	unsigned int hdr_len = kmad_rmpp_hdr_len(cls);
	u32 paylen = be32_to_cpu(rmpp_hdr(recv)->paylen_newwin);
	u32 total, last;
	struct rmpp_recv *rr;

	total = DIV_ROUND_UP(paylen, KMAD_RMPP_SEG_PAYLOAD);
	if (total < 2)
		return KMAD_RMPP_STATUS_BAD_LEN;
	last = paylen - (total - 1) * KMAD_RMPP_SEG_PAYLOAD;
	if (KMAD_RMPP_MAD_HDR_SIZE + last < hdr_len)
		return KMAD_RMPP_STATUS_BAD_LEN;
	if (paylen > READ_ONCE(rmpp_max_bytes))
		return KMAD_RMPP_STATUS_RESX;
	if (!rmpp_may_start(agent, out, now))
		return 0;

	rr = kmad_alloc_fails(KMAD_ALLOC_RMPP_XFER) ? NULL :
	     kzalloc(sizeof(*rr), GFP_ATOMIC);
	if (!rr)
		return KMAD_RMPP_STATUS_RESX;
	rr->tid = recv->mad.mad_hdr.tid;
	rr->mgmt_class = cls;
	rr->class_version = recv->mad.mad_hdr.class_version;
	rr->method = recv->mad.mad_hdr.method;
	rr->grh = recv->wc.grh_present;
	rr->sgid = recv->wc.grh.sgid;
	rr->slid = recv->wc.slid;
	rr->src_qpn = recv->wc.src_qpn;
	rr->dest = out->dest;
	rr->total = total;
	rr->last_paylen = last;
	rr->len = KMAD_MAD_SIZE + (size_t)(total - 2) * (KMAD_MAD_SIZE - hdr_len) +
		  KMAD_RMPP_MAD_HDR_SIZE + last - hdr_len;
	/* The CQ drain may sleep: a buffer of more than kmalloc's largest
	 * (4 MiB) comes from vmalloc then.  A bridged MAD may come in
	 * softirq, where only one contiguous kmalloc is to be had.
	 */
	rr->buf = kmad_alloc_fails(KMAD_ALLOC_RMPP_BUF) ? NULL :
		  kvmalloc(rr->len, (recv->wc.bridged ? GFP_ATOMIC : GFP_KERNEL) |
			   __GFP_NOWARN);
	if (!rr->buf) {
		kfree(rr);
		return KMAD_RMPP_STATUS_RESX;
	}
	kmad_port_stat_inc(agent->qpi->port, KMAD_PSTAT_RMPP_BUFFERS);
	memcpy(rr->buf, &recv->mad, KMAD_MAD_SIZE);
	rr->filled = KMAD_MAD_SIZE;
	rr->last = 1;
	rr->newwin = 1 + rmpp_window(agent);
	rr->ends_by = now + msecs_to_jiffies(KMAD_RMPP_RECV_TOTAL_MS);
	rr->expires = now + msecs_to_jiffies(KMAD_RMPP_RECV_IDLE_MS);
	out->fresh = rr;
	return 0;
}

/* A first segment of no known transfer: start one. */
static void rmpp_start(struct kmad_agent_priv *agent, struct rmpp_out *out,
		       u8 prepared, u64 now)
{
	struct kmad_port *port = agent->qpi->port;
	const struct kmad_recv_priv *recv = out->recv;
	struct rmpp_recv *rr = out->fresh;
	int unmatched;
	u32 paylen;

	lockdep_assert_held(&agent->lock);
	/* A response to no outstanding request: one MAD, unmatched; its
	 * sender gets ABORT T2L rather than wait for an ACK that never comes
	 * (see rmpp_continue()).  A misaddressed one: one MAD, counted so,
	 * unanswered, as ib_mad leaves it (the request may still get its
	 * answer where it was asked).
	 */
	unmatched = rmpp_unmatched_response(agent, recv);
	if (unmatched) {
		if (unmatched != -EXDEV)
			rmpp_refuse(port, out, KMAD_RMPP_STATUS_T2L);
		out->done = out->recv;
		out->recv = NULL;
		return;
	}
	/* Only the message: the first segment is also the last. */
	if (kmad_rmpp_flags(rmpp_hdr(recv)) & KMAD_RMPP_FLAG_LAST) {
		if (rmpp_backlog_full(agent, recv, KMAD_MAD_SIZE))
			return;
		/*
		 * Without its record a repeat of it (its sender missed the
		 * ACK) would be delivered again: dropped unanswered instead,
		 * as ib_mad's start_rmpp() does, and the repeat is taken.
		 */
		rr = kmad_alloc_fails(KMAD_ALLOC_RMPP_XFER) ? NULL :
		     kzalloc(sizeof(*rr), GFP_ATOMIC);
		if (!rr) {
			kmad_port_stat_inc(port, KMAD_PSTAT_RMPP_DROPPED);
			return;
		}
		rr->tid = recv->mad.mad_hdr.tid;
		rr->mgmt_class = recv->mad.mad_hdr.mgmt_class;
		rr->class_version = recv->mad.mad_hdr.class_version;
		rr->method = recv->mad.mad_hdr.method;
		rr->grh = recv->wc.grh_present;
		rr->sgid = recv->wc.grh.sgid;
		rr->slid = recv->wc.slid;
		rr->src_qpn = recv->wc.src_qpn;
		rr->state = RMPP_RECV_DONE;
		rr->total = 1;
		rr->last = 1;
		rr->newwin = 1;
		rr->expires = now + msecs_to_jiffies(KMAD_RMPP_RECV_LINGER_MS);
		list_add_tail(&rr->entry, &agent->rmpp_recvs);
		rmpp_keep_done(agent, rr, &out->ended);
		rmpp_ctl(out, &recv->mad, KMAD_RMPP_TYPE_ACK,
			 KMAD_RMPP_STATUS_SUCCESS, 1, 1);
		kmad_port_stat_inc(port, KMAD_PSTAT_RMPP_REASSEMBLED);
		/*
		 * Its length is what its PayloadLength says, as ib_mad's
		 * get_mad_len() has it (a PathRecord GetTableResp of one
		 * record is 120 bytes, not 256: saquery counts the records
		 * by it); a PayloadLength above one segment's is read as a
		 * full segment.
		 */
		paylen = be32_to_cpu(rmpp_hdr(recv)->paylen_newwin);
		out->recv->wc.mad_len = paylen <= KMAD_RMPP_SEG_PAYLOAD ?
					KMAD_RMPP_MAD_HDR_SIZE + paylen :
					KMAD_MAD_SIZE;
		out->recv->acked = true;
		out->done = out->recv;
		out->recv = NULL;
		return;
	}
	if (!prepared && rmpp_recvs_full(agent))
		prepared = KMAD_RMPP_STATUS_RESX;
	if (prepared) {
		rmpp_refuse(port, out, prepared);
		return;
	}
	if (!rr) {
		/*
		 * rmpp_may_start() saw the transfer still known (or the
		 * request not yet there) and allocated nothing; another
		 * context changed that since.  Dropped unanswered: the
		 * sender sends its first segment again.
		 */
		kmad_port_stat_inc(port, KMAD_PSTAT_RMPP_DROPPED);
		return;
	}
	rmpp_ack(out, rr);
	out->fresh = NULL;
	rr->first = out->recv;
	out->recv = NULL;
	list_add_tail(&rr->entry, &agent->rmpp_recvs);
	agent->rmpp_recvs_active++;
}

/* A DATA segment of transfer @rr. */
static void rmpp_continue(struct kmad_agent_priv *agent,
			  struct rmpp_recv *rr, struct rmpp_out *out, u64 now)
{
	struct kmad_port *port = agent->qpi->port;
	const struct kmad_rmpp_hdr *h = rmpp_hdr(out->recv);
	u32 seg = be32_to_cpu(h->seg_num);
	bool last = kmad_rmpp_flags(h) & KMAD_RMPP_FLAG_LAST;
	bool seg_is_total = seg == rr->total;
	unsigned int hdr_len;
	int unmatched;
	size_t n;

	lockdep_assert_held(&agent->lock);
	/* A segment that came to another address than the request left
	 * from (another DGID or path bits): dropped alone, unanswered, as
	 * ib_mad drops it; the transfer goes on.
	 */
	unmatched = rmpp_unmatched_response(agent, out->recv);
	if (unmatched == -EXDEV) {
		kmad_port_stat_inc(port, KMAD_PSTAT_RESP_MISADDRESSED);
		return;
	}
	if (rr->state == RMPP_RECV_DONE || seg <= rr->last) {
		kmad_port_stat_inc(port, KMAD_PSTAT_RMPP_DUPLICATES);
		rmpp_ack(out, rr);
		return;
	}
	/*
	 * A response whose request ended meanwhile (timed out, canceled):
	 * the rest of it would match nothing, so the transfer ends here and
	 * counts as one unmatched response.  Its sender gets ABORT T2L (its
	 * answer came too late), which ends its send at once; unanswered, as
	 * Linux 6.1's ib_mad leaves it, it would wait for ACKs and resend
	 * until its retries ran out (Documentation/rmpp.rst).
	 */
	if (unmatched) {
		kmad_port_stat_inc(port, KMAD_PSTAT_RESP_UNMATCHED);
		rmpp_refuse(port, out, KMAD_RMPP_STATUS_T2L);
		rmpp_unlink(agent, rr, &out->ended);
		return;
	}
	if (seg > rr->total) {
		rmpp_refuse(port, out, KMAD_RMPP_STATUS_S2B);
		rmpp_unlink(agent, rr, &out->ended);
		return;
	}
	if (seg != rr->last + 1) {
		kmad_port_stat_inc(port, KMAD_PSTAT_RMPP_OUT_OF_ORDER);
		rmpp_ack(out, rr);
		return;
	}
	if (last != seg_is_total ||
	    (last && be32_to_cpu(h->paylen_newwin) != rr->last_paylen)) {
		rmpp_refuse(port, out, KMAD_RMPP_STATUS_BAD_LEN);
		rmpp_unlink(agent, rr, &out->ended);
		return;
	}

	if (last && rmpp_backlog_full(agent, out->recv, rr->len))
		return;
	hdr_len = kmad_rmpp_hdr_len(rr->mgmt_class);
	n = last ? rr->len - rr->filled : KMAD_MAD_SIZE - hdr_len;
	memcpy(rr->buf + rr->filled, (const u8 *)&out->recv->mad + hdr_len, n);
	rr->filled += n;
	rr->last = seg;
	rr->expires = min(now + msecs_to_jiffies(KMAD_RMPP_RECV_IDLE_MS),
			  rr->ends_by);
	if (last) {
		/* Whole: the first segment's receive carries the message. */
		rr->first->wc.mad = (const struct kmad_mad *)rr->buf;
		rr->first->wc.mad_len = rr->len;
		rr->first->acked = true;
		out->done = rr->first;
		rr->first = NULL;
		rr->buf = NULL;
		rr->state = RMPP_RECV_DONE;
		agent->rmpp_recvs_active--;
		rr->expires = now + msecs_to_jiffies(KMAD_RMPP_RECV_LINGER_MS);
		kmad_port_stat_inc(port, KMAD_PSTAT_RMPP_REASSEMBLED);
		rmpp_ack(out, rr);
		list_move_tail(&rr->entry, &agent->rmpp_recvs);
		rmpp_keep_done(agent, rr, &out->ended);
	} else if (seg == rr->newwin) {
		rr->newwin += rmpp_window(agent);
		rmpp_ack(out, rr);
	}
}

/* A DATA packet: start, continue or refuse a transfer. */
static struct kmad_recv_priv *rmpp_data(struct kmad_agent_priv *agent,
					struct kmad_recv_priv *recv)
{
	struct kmad_port *port = agent->qpi->port;
	const struct kmad_rmpp_hdr *h = rmpp_hdr(recv);
	struct rmpp_out *out;
	struct rmpp_recv *rr;
	struct kmad_recv_priv *done;
	unsigned long flags;
	u8 status, prepared = 0;
	u64 now;

	out = kmad_alloc_fails(KMAD_ALLOC_RMPP_OUT) ? NULL :
	      kzalloc(sizeof(*out), GFP_ATOMIC);
	if (!out)
		goto dropped;
	INIT_LIST_HEAD(&out->ended);
	INIT_LIST_HEAD(&out->expired);
	out->recv = recv;
	/* Nothing kmad cannot answer is taken. */
	if (kmad_recv_reply_dest(port, &out->dest, &recv->wc)) {
		kfree(out);
		goto dropped;
	}
	now = kmad_now(port);
	status = rmpp_data_check(h);
	if (!status && be32_to_cpu(h->seg_num) == 1 &&
	    !(kmad_rmpp_flags(h) & KMAD_RMPP_FLAG_LAST))
		prepared = rmpp_prepare(agent, out, now);

	spin_lock_irqsave(&agent->lock, flags);
	if (agent->state != KMAD_AGENT_ACTIVE) {
		spin_unlock_irqrestore(&agent->lock, flags);
		/* Transfers rmpp_may_start() ended before the agent went. */
		rmpp_end(agent, &out->expired, true);
		if (out->fresh)
			rmpp_free(out->fresh);
		kfree(out);
		goto dropped;
	}
	rmpp_expire_locked(agent, now, &out->expired);
	rr = rmpp_find(agent, recv);
	if (status) {
		/* The sender broke the protocol: its transfer ends here. */
		if (rr && rr->state == RMPP_RECV_ACTIVE)
			rmpp_unlink(agent, rr, &out->ended);
		rmpp_refuse(port, out, status);
	} else if (rr) {
		rmpp_continue(agent, rr, out, now);
	} else if (be32_to_cpu(h->seg_num) == 1) {
		rmpp_start(agent, out, prepared, now);
	} else {
		/* No transfer (ended, expired or never started): as ib_mad,
		 * dropped without an answer.
		 */
		kmad_port_stat_inc(port, KMAD_PSTAT_RMPP_DROPPED);
	}
	rmpp_arm(agent);
	spin_unlock_irqrestore(&agent->lock, flags);

	if (out->send)
		rmpp_post(agent, &out->dest, &out->ctl);
	rmpp_end(agent, &out->ended, false);
	rmpp_end(agent, &out->expired, true);
	if (out->fresh)
		rmpp_free(out->fresh);
	if (out->recv)
		kmad_recv_free(out->recv);
	done = out->done;
	kfree(out);
	return done;

dropped:
	kmad_port_stat_inc(port, KMAD_PSTAT_RMPP_DROPPED);
	kmad_recv_free(recv);
	return NULL;
}

/*
 * A STOP or ABORT: if it is about a transfer being reassembled here, from
 * its sender, the transfer ends.  Return: true if it was (@recv freed).
 */
static bool rmpp_remote_end(struct kmad_agent_priv *agent,
			    struct kmad_recv_priv *recv)
{
	struct rmpp_recv *rr;
	unsigned long flags;
	LIST_HEAD(ended);

	spin_lock_irqsave(&agent->lock, flags);
	rr = rmpp_find(agent, recv);
	if (rr && rr->state == RMPP_RECV_ACTIVE)
		rmpp_unlink(agent, rr, &ended);
	else
		rr = NULL;
	spin_unlock_irqrestore(&agent->lock, flags);
	if (!rr)
		return false;
	kmad_port_stat_inc(agent->qpi->port, KMAD_PSTAT_RMPP_REMOTE_ENDED);
	rmpp_end(agent, &ended, false);
	kmad_recv_free(recv);
	return true;
}

/*
 * An RMPPType that does not exist, or an ACK or STOP of another
 * RMPPVersion: ABORT with BADT (UNV if the RMPPVersion is not 1), ending
 * a transfer it is about.
 */
static void rmpp_bad_type(struct kmad_agent_priv *agent,
			  struct kmad_recv_priv *recv)
{
	struct kmad_port *port = agent->qpi->port;
	struct rmpp_out *out;
	struct rmpp_recv *rr;
	unsigned long flags;

	out = kmad_alloc_fails(KMAD_ALLOC_RMPP_OUT) ? NULL :
	      kzalloc(sizeof(*out), GFP_ATOMIC);
	if (!out || kmad_recv_reply_dest(port, &out->dest, &recv->wc)) {
		kfree(out);
		kmad_port_stat_inc(port, KMAD_PSTAT_RMPP_DROPPED);
		kmad_recv_free(recv);
		return;
	}
	INIT_LIST_HEAD(&out->ended);
	out->recv = recv;
	spin_lock_irqsave(&agent->lock, flags);
	rr = rmpp_find(agent, recv);
	if (rr && rr->state == RMPP_RECV_ACTIVE)
		rmpp_unlink(agent, rr, &out->ended);
	spin_unlock_irqrestore(&agent->lock, flags);
	rmpp_refuse(port, out, kmad_rmpp_hdr_broken(rmpp_hdr(recv)));
	rmpp_post(agent, &out->dest, &out->ctl);
	rmpp_end(agent, &out->ended, false);
	kmad_recv_free(recv);
	kfree(out);
}

/* See rmpp.h. */
struct kmad_recv_priv *kmad_rmpp_recv(struct kmad_agent_priv *agent,
				      struct kmad_recv_priv *recv)
{
	u8 type = rmpp_hdr(recv)->rmpp_type;
	u8 broken = kmad_rmpp_hdr_broken(rmpp_hdr(recv));

	/* A packet of an RMPPVersion kmad does not speak, or of no RMPPType,
	 * ends the live send it is about (kmad_rmpp_send_ctl()), as ib_mad's
	 * abort_send() does.  Else it is refused (ABORT with UNV or BADT:
	 * ib_mad's nack_recv()), a DATA by rmpp_data(), except an ABORT,
	 * dropped, never answered, so that two ends cannot bounce ABORTs.
	 */
	if (broken && kmad_rmpp_send_ctl(agent, recv))
		return NULL;
	if (broken == KMAD_RMPP_STATUS_UNV && type != KMAD_RMPP_TYPE_DATA) {
		if (type == KMAD_RMPP_TYPE_ABORT) {
			kmad_port_stat_inc(agent->qpi->port,
					   KMAD_PSTAT_RMPP_DROPPED);
			kmad_recv_free(recv);
		} else {
			rmpp_bad_type(agent, recv);
		}
		return NULL;
	}
	switch (type) {
	case KMAD_RMPP_TYPE_DATA:
		return rmpp_data(agent, recv);
	case KMAD_RMPP_TYPE_STOP:
	case KMAD_RMPP_TYPE_ABORT:
		if (rmpp_remote_end(agent, recv))
			return NULL;
		fallthrough;
	case KMAD_RMPP_TYPE_ACK:
		if (kmad_rmpp_send_ctl(agent, recv))
			return NULL;
		kmad_port_stat_inc(agent->qpi->port, KMAD_PSTAT_RMPP_DROPPED);
		kmad_recv_free(recv);
		return NULL;
	default:
		rmpp_bad_type(agent, recv);
		return NULL;
	}
}

/**
 * kmad_rmpp_recv_expire() - drop the agent's transfers that idled too
 * long, forget finished ones that lingered long enough.
 * @agent: the agent; its work holds a reference.
 *
 * Context: the agent's work, every run.
 */
void kmad_rmpp_recv_expire(struct kmad_agent_priv *agent)
{
	unsigned long flags;
	LIST_HEAD(ended);
	u64 now;

	/* Nothing to do, nothing to read the clock for (a removed
	 * device's provider must not be called).
	 */
	spin_lock_irqsave(&agent->lock, flags);
	if (list_empty(&agent->rmpp_recvs)) {
		spin_unlock_irqrestore(&agent->lock, flags);
		return;
	}
	spin_unlock_irqrestore(&agent->lock, flags);
	now = kmad_now(agent->qpi->port);
	spin_lock_irqsave(&agent->lock, flags);
	rmpp_expire_locked(agent, now, &ended);
	rmpp_arm(agent);
	spin_unlock_irqrestore(&agent->lock, flags);
	rmpp_end(agent, &ended, true);
}

/**
 * kmad_rmpp_recv_flush() - free every transfer of an agent that stops.
 * @agent: the agent, DYING: no transfer is added any more.
 *
 * Their senders are not told: the agent is gone, as ib_mad's
 * ib_cancel_rmpp_recvs() does it.
 *
 * Context: process context (agent_stop()).
 */
void kmad_rmpp_recv_flush(struct kmad_agent_priv *agent)
{
	unsigned long flags;
	LIST_HEAD(ended);

	spin_lock_irqsave(&agent->lock, flags);
	WARN_ON_ONCE(agent->state != KMAD_AGENT_DYING);
	list_splice_init(&agent->rmpp_recvs, &ended);
	agent->rmpp_recvs_active = 0;
	agent->rmpp_recvs_done = 0;
	spin_unlock_irqrestore(&agent->lock, flags);
	rmpp_end(agent, &ended, false);
}
