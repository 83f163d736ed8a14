// SPDX-License-Identifier: GPL-2.0
/*
 * kmad RMPP, the sending side (IBTA 13.6): segmentation, windows, ACKs,
 * retransmission, STOP and ABORT.  See Documentation/rmpp.rst.
 *
 * An RMPP send is a &struct kmad_rmpp_send: a send (&struct kmad_send_wr,
 * flagged &kmad_send_wr.rmpp) whose MAD is segment 1, and segments 2..N in
 * pages.  send.c runs its life as it runs any send's (states, references,
 * deadlines, cancel, flush, callbacks; send_set_state() makes every
 * change); this file decides what the transfer does at each event:
 *
 *   event            called from                  what may follow
 *   post             kmad_rmpp_send_start()       segment 1
 *   send completion  kmad_rmpp_send_hw_done()     next segment; wait for an
 *                                                 ACK; the end, or the wait
 *                                                 for the response
 *   ACK              kmad_rmpp_send_ctl()         the window moves: as above
 *   STOP, ABORT      kmad_rmpp_send_ctl()         the end: REMOTE_ABORT
 *   deadline         kmad_rmpp_send_rewind()      resend from last ACK + 1
 *                                                 (the last ACKed one if
 *                                                 the window is closed)
 *
 * One segment of a send is in the hardware at a time (as in ib_mad): the
 * next goes on the send completion of the one before, while the window
 * (NewWindowLast of the last ACK, 1 to start with) allows.
 *
 * Timers: a send has one deadline, in send.c's wheel, while WAIT_RESP:
 *   - waiting for an ACK: rmpp_ack_timeout_ms() from the send completion of
 *     the last segment of the window (or from the ACK that moved it without
 *     opening it).  An expiry takes one of &kmad_send_buf.retries and
 *     resends from the segment after the last one acknowledged (inside a
 *     closed window: that one again); none left:
 *     %KMAD_SEND_RESP_TIMEOUT.  An ACK that acknowledges more gives the
 *     retries back (as ib_mad).
 *   - waiting for the response, once the final ACK came (a request with a
 *     timeout): &kmad_send_buf.timeout_ms, once, without resends.
 *
 * Locking: the transfer's state is the agent's (A), like the rest of the
 * send.  @cur is written under A while the QP does not hold the send, and
 * read by the QP under Q while it does (kmad_rmpp_send_wire_mad()): the
 * A -> Q order of kmad_qp_send() orders the two.  The segments are written
 * under A only while the QP does not hold the send.
 */
#include <kunit/visibility.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include "kmad_priv.h"
#include "rmpp.h"

/* Segments a page holds. */
#define RMPP_SEGS_PER_PAGE	(PAGE_SIZE / KMAD_MAD_SIZE)
/*
 * The longest wait for an ACK, and the wait of a send without a timeout
 * (a response): ib_mad's 2 s "until we can find the packet lifetime".
 */
#define KMAD_RMPP_ACK_TIMEOUT_MS	2000
/* What PayloadLength counts per segment: all after the RMPP header. */
#define RMPP_SEG_PAYLOAD	(KMAD_MAD_SIZE - KMAD_RMPP_MAD_HDR_SIZE)

/**
 * struct kmad_rmpp_send - an RMPP send and its transfer.
 * @wr: the send; its MAD is segment 1.
 * @entry: on &kmad_agent_priv.rmpp_sends while the send is posted and not
 *	DONE (send_set_state() says when, kmad_rmpp_send_listed()).
 * @pages: segments 2..@seg_count, RMPP_SEGS_PER_PAGE a page, in order.
 * @npages: entries of @pages.
 * @seg_count: segments.
 * @hdr_len: header bytes each segment repeats (kmad_rmpp_hdr_len()).
 * @pad: bytes of the last segment's data area past the data.
 * @seg_sent: the segment last transmitted (rewound on a resend).
 * @seg_max: the highest segment transmitted: an ACK beyond it is an error.
 * @last_ack: the highest segment acknowledged; @seg_count: all.
 * @window: NewWindowLast of the last ACK taken, 1 to start with.
 * @cur: the segment the QP sends.
 * @free_work: frees a send whose @pages kvcalloc() took from vmalloc()
 *	(rmpp_free()).
 */
struct kmad_rmpp_send {
	struct kmad_send_wr wr;
	struct list_head entry;		/* A */
	struct page **pages;		/* I */
	unsigned int npages;		/* I */
	u32 seg_count;			/* I */
	u16 hdr_len;			/* I */
	u16 pad;			/* I */
	u32 seg_sent;			/* A */
	u32 seg_max;			/* A */
	u32 last_ack;			/* A */
	u32 window;			/* A */
	struct kmad_mad *cur;		/* A, QP idle; Q reads: see above */
	struct work_struct free_work;
};

static struct kmad_rmpp_send *rmpp_send(struct kmad_send_wr *wr)
{
	return container_of(wr, struct kmad_rmpp_send, wr);
}

static struct kmad_mad *rmpp_seg(struct kmad_rmpp_send *rs, u32 n)
{
	u32 i;

	if (n == 1)
		return &rs->wr.mad;
	i = n - 2;
	return (struct kmad_mad *)page_address(rs->pages[i / RMPP_SEGS_PER_PAGE]) +
	       i % RMPP_SEGS_PER_PAGE;
}

/* Is @hdr_len the per-segment header of an RMPP class @agent may send? */
static bool rmpp_hdr_len_ok(const struct kmad_agent_priv *agent,
			    unsigned int hdr_len)
{
	if (agent->reg.mgmt_class)
		return hdr_len == kmad_rmpp_hdr_len(agent->reg.mgmt_class);
	/* Send-only: any RMPP class's; kmad_rmpp_send_check() matches it
	 * with the class of the MAD when it is posted.
	 */
	return hdr_len == kmad_rmpp_hdr_len(KMAD_MGMT_CLASS_SUBN_ADM) ||
	       hdr_len == kmad_rmpp_hdr_len(KMAD_MGMT_CLASS_DEVICE_MGMT) ||
	       hdr_len == kmad_rmpp_hdr_len(KMAD_MGMT_CLASS_VENDOR_RANGE2_START);
}

static void rmpp_free_now(struct kmad_rmpp_send *rs)
{
	unsigned int i;

	if (rs->pages) {
		for (i = 0; i < rs->npages; i++)
			if (rs->pages[i])
				__free_page(rs->pages[i]);
		kvfree(rs->pages);
	}
	kfree(rs);
}

static void rmpp_free_work(struct work_struct *work)
{
	rmpp_free_now(container_of(work, struct kmad_rmpp_send, free_work));
}

/*
 * kmad_free_send_buf() may be called with interrupts off (<kmad/mad.h>),
 * where vfree() may sleep: a page array that kvcalloc() took from
 * vmalloc() (a large buffer, when the kmalloc() it tries first failed)
 * is freed from kmad_wq, with the send.
 */
static void rmpp_free(struct kmad_rmpp_send *rs)
{
	if (is_vmalloc_addr(rs->pages)) {
		INIT_WORK(&rs->free_work, rmpp_free_work);
		queue_work(kmad_wq, &rs->free_work);
		return;
	}
	rmpp_free_now(rs);
}

/**
 * kmad_alloc_send_buf_rmpp() - allocate a multi-segment RMPP send buffer.
 * @agent: an agent registered with &kmad_reg_req.rmpp_version.
 * @dest: where it goes.
 * @hdr_len: the header every segment repeats: kmad_rmpp_hdr_len() of the
 *	agent's class (of the class it will send, for a send-only agent).
 * @data_len: bytes of data after the headers, 0 to %KMAD_RMPP_MAX_DATA_LEN.
 * @gfp: allocation flags.
 *
 * The buffer has max(1, DIV_ROUND_UP(@data_len, 256 - @hdr_len)) zeroed
 * segments (kmad_send_buf_seg_count()); &kmad_send_buf.mad is segment 1.
 * The ULP fills segment 1's headers (the common header, RRespTime in the
 * RMPP header, the class header) and every segment's data area, from
 * @hdr_len on: data byte i is in segment i / (256 - @hdr_len) + 1.  kmad
 * writes the rest of the RMPP header, and copies segment 1's @hdr_len
 * bytes of header into every other segment, as it transmits them.  Segments
 * 2 on are in pages, not vmalloc()ed: the provider maps them for DMA.
 *
 * Context: as kmad_alloc_send_buf().
 * Return: the buffer, or an ERR_PTR: -EINVAL for an agent without an RMPP
 * version, a @hdr_len that is not that of its class (for a send-only
 * agent: not 40, 56 or 64, an RMPP class's), a @data_len above
 * %KMAD_RMPP_MAX_DATA_LEN; -ENOMEM.
 */
struct kmad_send_buf *kmad_alloc_send_buf_rmpp(struct kmad_agent *agent,
					       const struct kmad_dest *dest,
					       unsigned int hdr_len,
					       size_t data_len, gfp_t gfp)
{
	struct kmad_agent_priv *priv;
	struct kmad_rmpp_send *rs;
	unsigned int seg_size, i;
	u32 count;

	if (IS_ERR_OR_NULL(agent) || !dest)
		return ERR_PTR(-EINVAL);
	priv = kmad_agent_priv(agent);
	if (!priv->reg.rmpp_version || !rmpp_hdr_len_ok(priv, hdr_len) ||
	    data_len > KMAD_RMPP_MAX_DATA_LEN)
		return ERR_PTR(-EINVAL);
	seg_size = KMAD_MAD_SIZE - hdr_len;
	count = max_t(u32, 1, DIV_ROUND_UP(data_len, seg_size));

	rs = kzalloc(sizeof(*rs), gfp);
	if (!rs)
		return ERR_PTR(-ENOMEM);
	rs->seg_count = count;
	rs->hdr_len = hdr_len;
	rs->pad = count * seg_size - data_len;
	rs->npages = DIV_ROUND_UP(count - 1, RMPP_SEGS_PER_PAGE);
	if (rs->npages) {
		/* The page array is kmad's alone; only the pages are DMA. */
		rs->pages = kvcalloc(rs->npages, sizeof(*rs->pages), gfp);
		if (!rs->pages)
			goto err_free;
		for (i = 0; i < rs->npages; i++) {
			rs->pages[i] = alloc_page(gfp | __GFP_ZERO);
			if (!rs->pages[i])
				goto err_free;
		}
	}
	INIT_LIST_HEAD(&rs->entry);
	rs->wr.rmpp = 1;
	kmad_send_wr_init(&rs->wr, agent, dest);
	return &rs->wr.buf;

err_free:
	rmpp_free(rs);
	return ERR_PTR(-ENOMEM);
}
EXPORT_SYMBOL_GPL(kmad_alloc_send_buf_rmpp);

/**
 * kmad_send_buf_seg_count() - how many segments a send buffer has.
 * @buf: a send buffer.
 *
 * Return: the segments of a buffer from kmad_alloc_send_buf_rmpp(), 1 for
 * one from kmad_alloc_send_buf(), 0 for NULL or a buffer kmad did not
 * allocate.
 */
unsigned int kmad_send_buf_seg_count(const struct kmad_send_buf *buf)
{
	const struct kmad_send_wr *wr;

	if (IS_ERR_OR_NULL(buf) || !kmad_send_buf_ours(buf))
		return 0;
	wr = container_of(buf, const struct kmad_send_wr, buf);
	return wr->rmpp ?
	       container_of(wr, const struct kmad_rmpp_send, wr)->seg_count : 1;
}
EXPORT_SYMBOL_GPL(kmad_send_buf_seg_count);

/**
 * kmad_send_buf_seg() - a segment of a send buffer, to fill.
 * @buf: a send buffer.
 * @seg_num: 1 to kmad_send_buf_seg_count().
 *
 * The ULP writes a segment only while the buffer is not posted.
 *
 * Return: the segment's 256-byte MAD (segment 1 is &kmad_send_buf.mad), or
 * NULL for a @seg_num out of range (a buffer kmad did not allocate has no
 * segment).
 */
struct kmad_mad *kmad_send_buf_seg(struct kmad_send_buf *buf,
				   unsigned int seg_num)
{
	struct kmad_send_wr *wr;

	if (IS_ERR_OR_NULL(buf) || !seg_num ||
	    seg_num > kmad_send_buf_seg_count(buf))
		return NULL;
	wr = kmad_send_wr(buf);
	return wr->rmpp ? rmpp_seg(rmpp_send(wr), seg_num) : buf->mad;
}
EXPORT_SYMBOL_GPL(kmad_send_buf_seg);

/* kmad_free_send_buf() of an RMPP send. */
void kmad_rmpp_send_free(struct kmad_send_wr *wr)
{
	rmpp_free(rmpp_send(wr));
}

/*
 * Segment @n as it goes out: the headers of segment 1 (but for its
 * RRespTime, those the ULP wrote), then the RMPP header's other fields as
 * IBTA 13.6.2 and ib_mad have them: PayloadLength is the whole message's
 * in the first segment, the last segment's share in the last, 0 between;
 * both count all bytes after the RMPP header.  It is the one the QP sends.
 */
static void rmpp_prepare(struct kmad_rmpp_send *rs, u32 n)
{
	struct kmad_mad *seg = rmpp_seg(rs, n);
	struct kmad_rmpp_hdr *h = &((struct kmad_rmpp_mad *)seg)->rmpp_hdr;
	u8 rtime = ((struct kmad_rmpp_mad *)&rs->wr.mad)->rmpp_hdr.rmpp_rtime_flags &
		   ~KMAD_RMPP_FLAGS_MASK;
	u8 flags = KMAD_RMPP_FLAG_ACTIVE;
	u32 paylen = 0;

	lockdep_assert_held(&kmad_send_agent(&rs->wr)->lock);
	if (n > 1)
		memcpy(seg, &rs->wr.mad, rs->hdr_len);
	if (n == 1) {
		flags |= KMAD_RMPP_FLAG_FIRST;
		paylen = rs->seg_count * RMPP_SEG_PAYLOAD - rs->pad;
	}
	if (n == rs->seg_count) {
		flags |= KMAD_RMPP_FLAG_LAST;
		paylen = RMPP_SEG_PAYLOAD - rs->pad;
	}
	h->rmpp_version = KMAD_RMPP_VERSION;
	h->rmpp_type = KMAD_RMPP_TYPE_DATA;
	h->rmpp_rtime_flags = rtime | flags;
	h->rmpp_status = KMAD_RMPP_STATUS_SUCCESS;
	h->seg_num = cpu_to_be32(n);
	h->paylen_newwin = cpu_to_be32(paylen);
	rs->seg_sent = n;
	rs->seg_max = max(rs->seg_max, n);
	WRITE_ONCE(rs->cur, seg);
}

/**
 * kmad_rmpp_send_wire_mad() - the segment the QP is to send.
 * @wr: an RMPP send the QP holds.
 *
 * Context: Q held (qp.c).
 * Return: the segment's MAD.
 */
struct kmad_mad *kmad_rmpp_send_wire_mad(struct kmad_send_wr *wr)
{
	lockdep_assert_held(&kmad_send_agent(wr)->qpi->lock);
	return READ_ONCE(rmpp_send(wr)->cur);
}

/**
 * kmad_rmpp_send_check() - can this RMPP send be posted?
 * @wr: an RMPP send being posted.
 *
 * Its class must carry the RMPP header, repeat as many header bytes as
 * the buffer was allocated with, and be its agent's (if it has one).
 *
 * Context: A held (kmad_post_send(), before anything is written).
 * Return: 0 or -EINVAL.
 */
int kmad_rmpp_send_check(struct kmad_send_wr *wr)
{
	struct kmad_agent_priv *agent = kmad_send_agent(wr);
	u8 cls = wr->mad.mad_hdr.mgmt_class;

	lockdep_assert_held(&agent->lock);
	if (!kmad_mgmt_class_has_rmpp(cls) ||
	    kmad_rmpp_hdr_len(cls) != rmpp_send(wr)->hdr_len ||
	    (agent->reg.mgmt_class && agent->reg.mgmt_class != cls))
		return -EINVAL;
	return 0;
}

/**
 * kmad_rmpp_send_start() - a new transfer: nothing acknowledged, a window
 * of 1, segment 1 ready for the QP.
 * @wr: an RMPP send being posted, its checks passed and TID set.
 *
 * Context: A held.
 */
void kmad_rmpp_send_start(struct kmad_send_wr *wr)
{
	struct kmad_rmpp_send *rs = rmpp_send(wr);

	rs->last_ack = 0;
	rs->window = 1;
	rs->seg_max = 0;
	rmpp_prepare(rs, 1);
}

/*
 * How long to wait for an ACK: the send's timeout, but at most
 * KMAD_RMPP_ACK_TIMEOUT_MS, which is also the wait of a send without one.
 */
static unsigned int rmpp_ack_timeout_ms(const struct kmad_rmpp_send *rs)
{
	unsigned int t = rs->wr.buf.timeout_ms;

	return !t || t > KMAD_RMPP_ACK_TIMEOUT_MS ? KMAD_RMPP_ACK_TIMEOUT_MS : t;
}

/*
 * The QP does not hold the send (its send completion just came, or it is
 * WAIT_RESP): go on.  All acknowledged: the end (no response expected),
 * or the wait for the response.  Else the next segment in the window, if
 * there is one; else wait for an ACK (from a send completion) or keep
 * waiting, with a new deadline if @progress (an ACK that acknowledged
 * more).
 */
static void rmpp_advance(struct kmad_rmpp_send *rs, bool progress)
{
	struct kmad_send_wr *wr = &rs->wr;
	u32 last;

	lockdep_assert_held(&kmad_send_agent(wr)->lock);
	if (rs->last_ack == rs->seg_count) {
		if (wr->expects_resp)
			kmad_send_wait(wr, wr->buf.timeout_ms);
		else
			kmad_send_finish(wr, KMAD_SEND_OK);
		return;
	}
	last = min(rs->window, rs->seg_count);
	if (rs->seg_sent < last) {
		rmpp_prepare(rs, rs->seg_sent + 1);
		kmad_send_transmit(wr);
	} else if (wr->state == KMAD_SS_SENDING || progress) {
		kmad_send_wait(wr, rmpp_ack_timeout_ms(rs));
	}
}

/**
 * kmad_rmpp_send_hw_done() - a segment's send completed successfully.
 * @wr: an RMPP send, SENDING, the send completion's reference dropped.
 *
 * Context: A held (kmad_send_hw_done()).
 */
void kmad_rmpp_send_hw_done(struct kmad_send_wr *wr)
{
	rmpp_advance(rmpp_send(wr), false);
}

/**
 * kmad_rmpp_send_rewind() - the wait for an ACK expired, and a retry is
 * left: resend from the segment after the last one acknowledged, or that
 * one in a closed window.
 * @wr: an RMPP send, WAIT_RESP, its deadline passed.
 *
 * If the receiver closed its window (its last ACK's NewWindowLast was
 * its SegmentNumber), nothing past NewWindowLast may go (IBTA 13.6): the
 * last segment acknowledged is sent again instead, inside the window, so
 * that the receiver ACKs it again with its window (a lost ACK that opened
 * it is then made good).
 *
 * Context: A held (agent_expire(), which then transmits the segment).
 * Return: true if a segment is ready to resend; false if the send waits
 * for its response, which is not resent: it times out.
 */
bool kmad_rmpp_send_rewind(struct kmad_send_wr *wr)
{
	struct kmad_rmpp_send *rs = rmpp_send(wr);
	u32 seg = rs->last_ack + 1;

	lockdep_assert_held(&kmad_send_agent(wr)->lock);
	if (rs->last_ack == rs->seg_count)
		return false;
	/* rs->window >= 1 and rs->last_ack <= rs->window: seg >= 1. */
	if (seg > rs->window)
		seg = rs->window;
	rmpp_prepare(rs, seg);
	return true;
}

/**
 * kmad_rmpp_send_wait_ms() - how long a WAIT_RESP RMPP send waits from now
 * with a timeout of @timeout_ms (kmad_modify_send()).
 * @wr: an RMPP send, WAIT_RESP.
 * @timeout_ms: its new timeout, not 0.
 *
 * Context: A held.
 * Return: @timeout_ms once every segment is acknowledged (the wait for
 * the response); while it waits for an ACK, at most
 * %KMAD_RMPP_ACK_TIMEOUT_MS, as every ACK wait.
 */
unsigned int kmad_rmpp_send_wait_ms(struct kmad_send_wr *wr,
				    unsigned int timeout_ms)
{
	struct kmad_rmpp_send *rs = rmpp_send(wr);

	lockdep_assert_held(&kmad_send_agent(wr)->lock);
	if (rs->last_ack == rs->seg_count)
		return timeout_ms;
	return min(timeout_ms, KMAD_RMPP_ACK_TIMEOUT_MS);
}

/**
 * kmad_rmpp_send_listed() - the send enters (@on) or leaves the agent's
 * posted sends: it is matched to ACKs while there.
 * @wr: an RMPP send.
 * @on: entering.
 *
 * Context: A held (send_set_state()).
 */
void kmad_rmpp_send_listed(struct kmad_send_wr *wr, bool on)
{
	struct kmad_agent_priv *agent = kmad_send_agent(wr);
	struct kmad_rmpp_send *rs = rmpp_send(wr);

	lockdep_assert_held(&agent->lock);
	if (on)
		list_add_tail(&rs->entry, &agent->rmpp_sends);
	else
		list_del_init(&rs->entry);
}

/*
 * Does @rs take ACKs, STOPs and ABORTs of TID @tid and class @cls: is its
 * transfer live (SENDING or WAIT_RESP: not canceled, aborted or answered;
 * an RMPP send is never solicited, so never BACKLOG) with that TID and
 * class?  The peer is the caller's to compare.
 */
static bool rmpp_takes_ctl(const struct kmad_rmpp_send *rs, u64 tid, u8 cls)
{
	return (rs->wr.state == KMAD_SS_SENDING ||
		rs->wr.state == KMAD_SS_WAIT_RESP) &&
	       rs->wr.tid.tid == tid && rs->wr.mad.mad_hdr.mgmt_class == cls;
}

/**
 * kmad_rmpp_send_busy() - would another posted RMPP send of the agent take
 * the ACKs, STOPs and ABORTs of @wr?
 * @wr: an RMPP request about to be posted.
 * @tid: the TID it will carry.
 *
 * They are matched by TID, class and peer (rmpp_find()): two transfers
 * alike in all three could not be told apart, whether they wait for a
 * response or not.  A send canceled (whose segment is still in the
 * hardware) or answered early takes no ACK any more.
 *
 * Context: A held.
 * Return: true if one is posted already.
 */
bool kmad_rmpp_send_busy(const struct kmad_send_wr *wr, u64 tid)
{
	struct kmad_agent_priv *agent = kmad_send_agent(wr);
	const struct kmad_dest *d = &wr->buf.dest;
	const struct kmad_dest *o;
	struct kmad_rmpp_send *rs;

	lockdep_assert_held(&agent->lock);
	list_for_each_entry(rs, &agent->rmpp_sends, entry) {
		o = &rs->wr.buf.dest;
		if (!rmpp_takes_ctl(rs, tid, wr->mad.mad_hdr.mgmt_class) ||
		    o->grh_present != d->grh_present)
			continue;
		if (d->grh_present ?
		    !memcmp(&o->grh.dgid, &d->grh.dgid, sizeof(d->grh.dgid)) :
		    o->dlid == d->dlid)
			return true;
	}
	return false;
}

/* Did @wc come from the peer @dest sends to: its GID, or its LID? */
static bool rmpp_from_peer(const struct kmad_dest *dest,
			   const struct kmad_recv_wc *wc)
{
	if (dest->grh_present != wc->grh_present)
		return false;
	if (wc->grh_present)
		return !memcmp(&wc->grh.sgid, &dest->grh.dgid,
			       sizeof(dest->grh.dgid));
	return wc->slid == dest->dlid;
}

/*
 * The transfer @recv is about: an RMPP send of @agent that takes its
 * TID and class (rmpp_takes_ctl()), to the peer @recv came from.
 */
static struct kmad_rmpp_send *rmpp_find(struct kmad_agent_priv *agent,
					const struct kmad_recv_priv *recv)
{
	const struct kmad_mad_hdr *hdr = &recv->mad.mad_hdr;
	struct kmad_rmpp_send *rs;

	lockdep_assert_held(&agent->lock);
	list_for_each_entry(rs, &agent->rmpp_sends, entry) {
		if (rmpp_takes_ctl(rs, be64_to_cpu(hdr->tid),
				   hdr->mgmt_class) &&
		    rmpp_from_peer(&rs->wr.buf.dest, &recv->wc))
			return rs;
	}
	return NULL;
}

/* What kmad_rmpp_send_ctl() sends back once it dropped the agent lock. */
struct rmpp_reply {
	u8 abort_status;	/* 0: nothing; else an ABORT with it */
	struct kmad_dest dest;
};

/* End the transfer as aborted; with @status, tell the receiver so. */
static void rmpp_abort(struct kmad_rmpp_send *rs, struct rmpp_reply *reply,
		       u8 status)
{
	kmad_send_abort(&rs->wr, KMAD_SEND_REMOTE_ABORT);
	if (status) {
		reply->abort_status = status;
		reply->dest = rs->wr.buf.dest;
	}
}

/*
 * An ACK (IBTA 13.6.3.3, ib_mad's process_rmpp_ack()): checked, then
 * taken if it is not older than the last one taken.
 */
static void rmpp_ack(struct kmad_rmpp_send *rs, const struct kmad_rmpp_hdr *h,
		     struct rmpp_reply *reply)
{
	u32 seg = be32_to_cpu(h->seg_num);
	u32 newwin = be32_to_cpu(h->paylen_newwin);
	bool progress = false;

	if (h->rmpp_status != KMAD_RMPP_STATUS_SUCCESS)
		return rmpp_abort(rs, reply, KMAD_RMPP_STATUS_BAD_STATUS);
	if (newwin < seg)
		return rmpp_abort(rs, reply, KMAD_RMPP_STATUS_W2S);
	if (seg > rs->seg_max)
		return rmpp_abort(rs, reply, KMAD_RMPP_STATUS_S2B);
	if (seg < rs->last_ack || newwin < rs->window)
		return;		/* older than the one taken, or a duplicate */
	if (seg > rs->last_ack) {
		rs->last_ack = seg;
		rs->seg_sent = max(rs->seg_sent, seg);
		rs->wr.retries_left = rs->wr.buf.retries;
		progress = true;
	}
	rs->window = newwin;
	/* While SENDING, the send completion goes on from the new window. */
	if (rs->wr.state == KMAD_SS_WAIT_RESP)
		rmpp_advance(rs, progress);
}

/*
 * A STOP or an ABORT from the receiver ends the transfer.  One with a
 * status its type does not have is answered with an ABORT (BadStatus), as
 * ib_mad answers it.
 */
static void rmpp_stopped(struct kmad_rmpp_send *rs,
			 const struct kmad_rmpp_hdr *h,
			 struct rmpp_reply *reply)
{
	u8 s = h->rmpp_status;
	bool ok;

	if (h->rmpp_type == KMAD_RMPP_TYPE_STOP)
		ok = s == KMAD_RMPP_STATUS_RESX;
	else
		ok = s >= KMAD_RMPP_STATUS_ABORT_MIN &&
		     s <= KMAD_RMPP_STATUS_ABORT_MAX;
	rmpp_abort(rs, reply, ok ? 0 : KMAD_RMPP_STATUS_BAD_STATUS);
}

/*
 * Send an ABORT with @status about the transfer @got (the ACK, STOP or
 * ABORT that broke it) to @dest, from the port's responder agent (its
 * callback frees it).  Its header is @got's with the Method's response
 * bit flipped, as ib_mad's nack_recv() makes it; its TID is kept
 * (kmad_post_send() keeps an RMPP ACK's, STOP's and ABORT's).  Best
 * effort: a failure leaves the receiver to time out, and is counted
 * (rmpp_recv_dropped).
 */
static void rmpp_send_abort_pkt(struct kmad_agent_priv *agent,
				const struct kmad_dest *dest,
				const struct kmad_mad *got, u8 status)
{
	struct kmad_agent_priv *responder;
	struct kmad_rmpp_mad *r;
	struct kmad_send_buf *buf;

	responder = kmad_port_responder_get(agent->qpi->port, agent->qpi->qpt);
	if (!responder)
		goto dropped;
	buf = kmad_alloc_fails(KMAD_ALLOC_RMPP_CTL) ? ERR_PTR(-ENOMEM) :
	      kmad_alloc_send_buf(&responder->agent, dest, GFP_ATOMIC);
	if (IS_ERR(buf))
		goto put;
	r = (struct kmad_rmpp_mad *)buf->mad;
	/* Its class header too (the SA's, a vendor class's OUI, which the
	 * receiver dispatches it by), as ib_mad's nack_recv() copies it.
	 */
	memcpy(r, got, kmad_rmpp_hdr_len(got->mad_hdr.mgmt_class));
	r->mad_hdr.method ^= KMAD_METHOD_RESP;
	r->mad_hdr.status = 0;
	r->rmpp_hdr.rmpp_version = KMAD_RMPP_VERSION;
	r->rmpp_hdr.rmpp_type = KMAD_RMPP_TYPE_ABORT;
	r->rmpp_hdr.rmpp_rtime_flags = (r->rmpp_hdr.rmpp_rtime_flags &
					~KMAD_RMPP_FLAGS_MASK) |
				       KMAD_RMPP_FLAG_ACTIVE;
	r->rmpp_hdr.rmpp_status = status;
	r->rmpp_hdr.seg_num = 0;
	r->rmpp_hdr.paylen_newwin = 0;
	if (!kmad_post_send(buf)) {
		kmad_agent_put(responder);
		return;
	}
	kmad_free_send_buf(buf);
put:
	kmad_agent_put(responder);
dropped:
	kmad_port_stat_inc(agent->qpi->port, KMAD_PSTAT_RMPP_DROPPED);
}

bool kmad_rmpp_send_ctl(struct kmad_agent_priv *agent,
			struct kmad_recv_priv *recv)
{
	const struct kmad_rmpp_hdr *h =
		&((const struct kmad_rmpp_mad *)&recv->mad)->rmpp_hdr;
	u8 broken = kmad_rmpp_hdr_broken(h);
	struct rmpp_reply reply = {};
	struct kmad_rmpp_send *rs;
	unsigned long flags;

	spin_lock_irqsave(&agent->lock, flags);
	rs = rmpp_find(agent, recv);
	/* A broken packet about a transfer that is over is not the sending
	 * side's: kmad_rmpp_recv() refuses it.
	 */
	if (!rs || (broken && rs->last_ack == rs->seg_count)) {
		spin_unlock_irqrestore(&agent->lock, flags);
		return false;
	}
	if (broken) {
		/* Of another RMPPVersion, or of no RMPPType: the transfer
		 * ends, as ib_mad's abort_send() ends it; the receiver is
		 * told with an ABORT (UNV, or BADT), but not in answer to an
		 * ABORT, so that two ends cannot bounce ABORTs.
		 */
		rmpp_abort(rs, &reply,
			   h->rmpp_type == KMAD_RMPP_TYPE_ABORT ? 0 : broken);
	} else if (rs->last_ack != rs->seg_count) {
		/* Once all is acknowledged the transfer is over: a repeated
		 * final ACK, or a late STOP or ABORT, changes nothing.
		 */
		switch (h->rmpp_type) {
		case KMAD_RMPP_TYPE_ACK:
			rmpp_ack(rs, h, &reply);
			break;
		case KMAD_RMPP_TYPE_STOP:
		case KMAD_RMPP_TYPE_ABORT:
			rmpp_stopped(rs, h, &reply);
			break;
		default:
			break;	/* DATA is the receiver's */
		}
	}
	spin_unlock_irqrestore(&agent->lock, flags);

	if (reply.abort_status)
		rmpp_send_abort_pkt(agent, &reply.dest, &recv->mad,
				    reply.abort_status);
	kmad_recv_free(recv);
	return true;
}

/* @t - @now in ms, signed; @t U64_MAX: S64_MAX. */
static s64 probe_ms(u64 t, u64 now)
{
	if (t == U64_MAX)
		return S64_MAX;
	if (t >= now)
		return jiffies_to_msecs(min_t(u64, t - now, MAX_JIFFY_OFFSET));
	return -(s64)jiffies_to_msecs(min_t(u64, now - t, MAX_JIFFY_OFFSET));
}

/**
 * kmad_send_probe() - where a posted send stands (&struct kmad_send_probe).
 * @wr: a send of an agent that is not freed.
 * @p: filled.
 *
 * Context: A held; takes Q (A -> Q) to read where the hardware stands.
 */
void kmad_send_probe(struct kmad_send_wr *wr, struct kmad_send_probe *p)
{
	struct kmad_agent_priv *agent = kmad_send_agent(wr);
	struct kmad_qp_info *qpi = agent->qpi;
	struct kmad_rmpp_send *rs;
	u64 now = 0;

	lockdep_assert_held(&agent->lock);
	memset(p, 0, sizeof(*p));
	p->state = wr->state;
	p->state_name = kmad_send_state_name(wr->state);
	spin_lock(&qpi->lock);
	p->hw = wr->hw;
	spin_unlock(&qpi->lock);
	p->refs = wr->refs;
	p->retries_left = wr->retries_left;
	p->flushed = agent->tables_emptied;
	p->in_wheel = wr->state == KMAD_SS_WAIT_RESP && !p->flushed;
	/* One read of the port's clock, as kmad_now() would make it. */
	if (kmad_port_clock(qpi->port, &now))
		p->virtual_clock = qpi->port->dev->has_clock;
	else
		now = get_jiffies_64();
	p->work_busy = work_busy(&agent->work.work);
	p->deadline_ms = p->in_wheel ?
			 probe_ms(wr->deadline_node.expires, now) : 0;
	p->timer_ms = probe_ms(agent->timer_at, now);
	p->rmpp = wr->rmpp;
	if (!wr->rmpp)
		return;
	rs = rmpp_send(wr);
	p->seg_count = rs->seg_count;
	p->seg_sent = rs->seg_sent;
	p->seg_max = rs->seg_max;
	p->last_ack = rs->last_ack;
	p->window = rs->window;
}
EXPORT_SYMBOL_IF_KUNIT(kmad_send_probe);

/**
 * kmad_send_probe_stuck() - is nothing set to move this send on?
 * @p: from kmad_send_probe().
 *
 * Every state a posted send waits in has a way out: SENDING, CANCELED and
 * EARLY_RESP a send completion (the QP holds the send: waiting for a slot,
 * or posted); WAIT_RESP a deadline in the wheel, and, on the real clock,
 * the agent's work queued (or running) to expire it, or, its agent
 * flushed, the work queued to end it (agent_take_done()); DONE its callback,
 * with the work queued.  BACKLOG waits for another send to end, which is
 * that send's way out.  A send with none is stuck: it would never get its
 * callback.
 *
 * The drain marks a completed send idle on its QP, then drops the QP lock
 * and reports the completion (kmad_send_hw_done()): in between a SENDING
 * send looks stuck for a moment.  A caller that finds one stuck probes it
 * again a little later before calling it so.
 *
 * Return: true if stuck.
 */
bool kmad_send_probe_stuck(const struct kmad_send_probe *p)
{
	switch (p->state) {
	case KMAD_SS_SENDING:
	case KMAD_SS_CANCELED:
	case KMAD_SS_EARLY_RESP:
		return p->hw == KMAD_HW_IDLE;
	case KMAD_SS_WAIT_RESP:
		if (p->flushed)
			return !p->work_busy;
		return !p->in_wheel || (!p->virtual_clock && !p->work_busy);
	case KMAD_SS_DONE:
		return !p->work_busy;
	default:
		return false;
	}
}
EXPORT_SYMBOL_IF_KUNIT(kmad_send_probe_stuck);
