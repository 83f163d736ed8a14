// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_rmpp: the sending side of RMPP, stepped one packet at a time.
 *
 * Device 0 sends; the test plays the receiving peer on device 1: it reads
 * each segment kmad puts on device 0's wire (kmad_sim_peek_send()),
 * completes it without delivering it, and injects the receiver's ACK,
 * STOP or ABORT into device 0 as device 1 would send it.
 */

#include <linux/completion.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/mm.h>

#include "kmad_test.h"
#include "rmpp.h"

/* A send-only RMPP agent (requests) and an SA agent (responses), dev 0. */
static struct kmad_agent *rt_req_agent;
static struct kmad_agent *rt_sa_agent;

#define RT_HDR		KMAD_SA_MAD_HDR_SIZE	/* 56 */
#define RT_SEG_DATA	(KMAD_MAD_SIZE - RT_HDR)	/* 200 */
#define RT_RTIME	5

static int rt_init(struct kunit *test)
{
	struct kmad_reg_req req = { .rmpp_version = KMAD_RMPP_VERSION };
	struct kt_fix *f;
	int ret;

	ret = kt_fix_init(test);
	if (ret)
		return ret;
	f = test->priv;
	rt_req_agent = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, &req,
					   kt_send_handler, kt_recv_handler, f);
	if (IS_ERR(rt_req_agent)) {
		ret = PTR_ERR(rt_req_agent);
		rt_req_agent = NULL;
		return ret;
	}
	req.mgmt_class = KT_CLASS;
	req.class_version = KT_VERSION;
	set_bit(KMAD_METHOD_GET_TABLE, req.method_mask);
	rt_sa_agent = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, &req,
					  kt_send_handler, kt_recv_handler, f);
	if (IS_ERR(rt_sa_agent)) {
		ret = PTR_ERR(rt_sa_agent);
		rt_sa_agent = NULL;
		return ret;
	}
	return 0;
}

static void rt_exit(struct kunit *test)
{
	struct kt_fix *f = test->priv;

	/* The fabric first: its removal flushes what is left on the wire. */
	if (f && !IS_ERR_OR_NULL(f->fab)) {
		kmad_sim_destroy(f->fab);
		f->fab = NULL;
	}
	if (rt_req_agent)
		kmad_unregister_agent(rt_req_agent);
	if (rt_sa_agent)
		kmad_unregister_agent(rt_sa_agent);
	rt_req_agent = NULL;
	rt_sa_agent = NULL;
	kt_fix_exit(test);
}

/* Data byte @i of a test message. */
static u8 rt_byte(size_t i)
{
	return (i * 7 + 3) & 0xff;
}

/*
 * An RMPP send of @data_len bytes with @method from @agent to device 1:
 * SA headers in segment 1 (RRespTime RT_RTIME, a ComponentMask to find
 * in every segment), the data pattern in every data area.
 */
static struct kmad_send_buf *rt_buf(struct kt_fix *f, struct kmad_agent *agent,
				    u8 method, u64 tid, size_t data_len,
				    unsigned int timeout_ms,
				    unsigned int retries)
{
	struct kmad_dest dest = {
		.dlid = kmad_port_lid(f->port[KT_DEV1]),
		.remote_qpn = KT_QPN,
		.remote_qkey = KMAD_QP1_QKEY,
	};
	struct kmad_send_buf *buf;
	struct kmad_sa_mad *sa;
	unsigned int n, count;
	size_t i;

	buf = kmad_alloc_send_buf_rmpp(agent, &dest, RT_HDR, data_len,
				       GFP_KERNEL);
	KUNIT_ASSERT_FALSE(f->test, IS_ERR(buf));
	sa = (struct kmad_sa_mad *)buf->mad;
	sa->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	sa->mad_hdr.mgmt_class = KT_CLASS;
	sa->mad_hdr.class_version = KT_VERSION;
	sa->mad_hdr.method = method;
	sa->mad_hdr.tid = cpu_to_be64(tid);
	sa->mad_hdr.attr_id = cpu_to_be16(0x0035);
	sa->rmpp_hdr.rmpp_rtime_flags = RT_RTIME << KMAD_RMPP_RTIME_SHIFT;
	sa->comp_mask = cpu_to_be64(0x1234abcdULL);
	count = kmad_send_buf_seg_count(buf);
	for (i = 0; i < data_len; i++) {
		n = i / RT_SEG_DATA + 1;
		KUNIT_ASSERT_LE(f->test, n, count);
		((u8 *)kmad_send_buf_seg(buf, n))[RT_HDR + i % RT_SEG_DATA] =
			rt_byte(i);
	}
	buf->timeout_ms = timeout_ms;
	buf->retries = retries;
	return buf;
}

static unsigned int rt_wire(struct kt_fix *f)
{
	return kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN);
}

static struct kmad_rmpp_mad *rt_peek(struct kt_fix *f, unsigned int n,
				     struct kmad_mad *mad)
{
	KUNIT_ASSERT_EQ(f->test, kmad_sim_peek_send(f->fab, KT_DEV0, KT_QPN, n,
						    mad, sizeof(*mad)),
			(int)sizeof(*mad));
	return (struct kmad_rmpp_mad *)mad;
}

/*
 * The oldest packet on device 0's wire must be DATA segment @seg of
 * @buf, with its header copied from segment 1 and its data: it is taken
 * off the wire (sent, not delivered) and returned in @mad.
 */
static void rt_tx(struct kt_fix *f, struct kmad_send_buf *buf, u32 seg,
		  struct kmad_mad *mad)
{
	struct kmad_rmpp_mad *r;
	struct kmad_sa_mad *sa;
	u32 count = kmad_send_buf_seg_count(buf);

	KUNIT_ASSERT_GE(f->test, rt_wire(f), 1U);
	r = rt_peek(f, 0, mad);
	sa = (struct kmad_sa_mad *)mad;
	KUNIT_EXPECT_EQ(f->test, r->rmpp_hdr.rmpp_type, KMAD_RMPP_TYPE_DATA);
	KUNIT_EXPECT_EQ(f->test, r->rmpp_hdr.rmpp_version, KMAD_RMPP_VERSION);
	KUNIT_ASSERT_EQ(f->test, be32_to_cpu(r->rmpp_hdr.seg_num), seg);
	KUNIT_EXPECT_EQ(f->test, r->rmpp_hdr.rmpp_rtime_flags,
			(u8)(RT_RTIME << KMAD_RMPP_RTIME_SHIFT |
			     KMAD_RMPP_FLAG_ACTIVE |
			     (seg == 1 ? KMAD_RMPP_FLAG_FIRST : 0) |
			     (seg == count ? KMAD_RMPP_FLAG_LAST : 0)));
	KUNIT_EXPECT_EQ(f->test, be64_to_cpu(r->mad_hdr.tid),
			be64_to_cpu(buf->mad->mad_hdr.tid));
	KUNIT_EXPECT_EQ(f->test, r->mad_hdr.method, buf->mad->mad_hdr.method);
	KUNIT_EXPECT_EQ(f->test, be64_to_cpu(sa->comp_mask), 0x1234abcdULL);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
}

/*
 * Inject the receiver's @type packet about the transfer @seg1 (a segment
 * of it as sent) into device 0, arriving as @rx says: the Method's
 * response bit flipped, as ib_mad does.
 */
static void rt_ctl_rx(struct kt_fix *f, const struct kmad_mad *seg1, u8 type,
		      u8 status, u32 seg, u32 newwin,
		      const struct kmad_sim_rx *rx)
{
	struct kmad_mad mad = *seg1;
	struct kmad_rmpp_mad *r = (struct kmad_rmpp_mad *)&mad;

	r->mad_hdr.method ^= KMAD_METHOD_RESP;
	r->rmpp_hdr.rmpp_type = type;
	r->rmpp_hdr.rmpp_rtime_flags = KMAD_RMPP_FLAG_ACTIVE;
	r->rmpp_hdr.rmpp_status = status;
	r->rmpp_hdr.seg_num = cpu_to_be32(seg);
	r->rmpp_hdr.paylen_newwin = cpu_to_be32(newwin);
	memset(r->data, 0, sizeof(r->data));
	KUNIT_ASSERT_EQ(f->test,
			kmad_sim_inject_rx(f->fab, KT_DEV0, KT_QPN, &mad,
					   sizeof(mad), rx), 0);
	kt_event(f, KT_DEV0);
}

/* rt_ctl_rx() from device 1's LID and QP1, without a GRH. */
static void rt_ctl(struct kt_fix *f, const struct kmad_mad *seg1, u8 type,
		   u8 status, u32 seg, u32 newwin)
{
	struct kmad_sim_rx rx = {
		.slid = kmad_port_lid(f->port[KT_DEV1]),
		.src_qpn = KT_QPN,
	};

	rt_ctl_rx(f, seg1, type, status, seg, newwin, &rx);
}

static void rt_ack(struct kt_fix *f, const struct kmad_mad *seg1, u32 seg,
		   u32 newwin)
{
	rt_ctl(f, seg1, KMAD_RMPP_TYPE_ACK, 0, seg, newwin);
}

/* @buf's two segments go out, each ACKed (window 2): the transfer done. */
static void rt_two_acked(struct kt_fix *f, struct kmad_send_buf *buf,
			 struct kmad_mad *seg1)
{
	struct kmad_mad mad;

	rt_tx(f, buf, 1, seg1);
	rt_ack(f, seg1, 1, 2);
	rt_tx(f, buf, 2, &mad);
	rt_ack(f, seg1, 2, 2);
}

/*
 * The packet on the wire is kmad's ABORT with @status about @seg1: its
 * SegmentNumber and NewWindowLast 0, as ib_mad's nack_recv() sends them
 * (reserved in an ABORT), whatever the packet it answers carried there.
 */
static void rt_expect_abort(struct kt_fix *f, const struct kmad_mad *seg1,
			    u8 status)
{
	struct kmad_mad mad;
	struct kmad_rmpp_mad *r;

	KUNIT_ASSERT_EQ(f->test, rt_wire(f), 1U);
	r = rt_peek(f, 0, &mad);
	KUNIT_EXPECT_EQ(f->test, r->rmpp_hdr.rmpp_type, KMAD_RMPP_TYPE_ABORT);
	KUNIT_EXPECT_EQ(f->test, r->rmpp_hdr.rmpp_status, status);
	KUNIT_EXPECT_EQ(f->test, be32_to_cpu(r->rmpp_hdr.seg_num), 0U);
	KUNIT_EXPECT_EQ(f->test, be32_to_cpu(r->rmpp_hdr.paylen_newwin), 0U);
	KUNIT_EXPECT_TRUE(f->test, r->rmpp_hdr.rmpp_rtime_flags &
			  KMAD_RMPP_FLAG_ACTIVE);
	KUNIT_EXPECT_EQ(f->test, be64_to_cpu(r->mad_hdr.tid),
			be64_to_cpu(seg1->mad_hdr.tid));
	KUNIT_EXPECT_EQ(f->test, r->mad_hdr.method, seg1->mad_hdr.method);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
}

/*
 * The send has a way out of the state it waits in (kmad_send_probe_stuck():
 * a send completion to come, or a deadline in the wheel): it cannot wait
 * forever.  The step-mode fabric completes nothing by itself, so no drain
 * is between the QP and the send here.
 */
static void rt_expect_live(struct kt_fix *f, struct kmad_send_buf *buf)
{
	struct kmad_send_wr *wr = kmad_send_wr(buf);
	struct kmad_send_probe p;
	unsigned long flags;

	spin_lock_irqsave(&kmad_send_agent(wr)->lock, flags);
	kmad_send_probe(wr, &p);
	spin_unlock_irqrestore(&kmad_send_agent(wr)->lock, flags);
	KUNIT_EXPECT_FALSE_MSG(f->test, kmad_send_probe_stuck(&p),
			       "state %s hw %u wheel %d seg %u/%u max %u ack %u win %u",
			       p.state_name, p.hw, p.in_wheel,
			       p.seg_sent, p.seg_count, p.seg_max, p.last_ack,
			       p.window);
}

/*
 * Inject the response (@method) to the request @seg1 is segment 1 of:
 * one MAD, RMPP inactive.
 */
static void rt_respond_with(struct kt_fix *f, const struct kmad_mad *seg1,
			    u8 method)
{
	struct kmad_mad mad = *seg1;

	mad.mad_hdr.method = method;
	memset(&((struct kmad_rmpp_mad *)&mad)->rmpp_hdr, 0,
	       sizeof(struct kmad_rmpp_hdr));
	KUNIT_ASSERT_EQ(f->test, kmad_sim_inject(f->fab, KT_DEV0, KT_QPN, &mad,
						 sizeof(mad),
						 kmad_port_lid(f->port[KT_DEV1]),
						 KT_QPN), 0);
	kt_event(f, KT_DEV0);
}

/* A GetMulti's response (rt_respond_with()). */
static void rt_respond(struct kt_fix *f, const struct kmad_mad *seg1)
{
	rt_respond_with(f, seg1, KMAD_METHOD_GET_MULTI_RESP);
}

/* One segment: FIRST and LAST, PayloadLength as ib_mad has it; the final
 * ACK ends a send that expects no response.
 */
static void rmpp_single_segment(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 1, 100, 0, 0);
	struct kmad_mad seg1;
	unsigned int refs;

	KUNIT_EXPECT_EQ(test, kmad_send_buf_seg_count(buf), 1U);
	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kt_state(buf, &refs), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, refs, 2U);
	rt_tx(f, buf, 1, &seg1);
	/* 220 - pad, pad = 200 - 100 */
	KUNIT_EXPECT_EQ(test, be32_to_cpu(((struct kmad_rmpp_mad *)&seg1)->
					  rmpp_hdr.paylen_newwin), 120U);
	KUNIT_EXPECT_EQ(test, ((u8 *)&seg1)[RT_HDR + 99], rt_byte(99));
	KUNIT_EXPECT_EQ(test, kt_state(buf, &refs), KMAD_SS_WAIT_RESP);
	KUNIT_EXPECT_EQ(test, refs, 1U);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);

	rt_ack(f, &seg1, 1, 1);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	kmad_free_send_buf(buf);
}

/* Windows grow with each ACK's NewWindowLast; one segment in the hardware
 * at a time, each copying segment 1's header; the first segment carries
 * the whole PayloadLength, the last its own share.
 */
static void rmpp_multi_window(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	/* 5 segments, 150 bytes in the last: pad 50 */
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 2, 950, 0, 0);
	struct kmad_mad seg1, mad;
	struct kmad_rmpp_mad *r = (struct kmad_rmpp_mad *)&mad;
	u32 n;

	KUNIT_ASSERT_EQ(test, kmad_send_buf_seg_count(buf), 5U);
	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(((struct kmad_rmpp_mad *)&seg1)->
					  rmpp_hdr.paylen_newwin),
			5U * 220 - 50);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);	/* window 1 */

	rt_ack(f, &seg1, 1, 3);
	for (n = 2; n <= 3; n++) {
		KUNIT_ASSERT_EQ(test, rt_wire(f), 1U);	/* one at a time */
		rt_tx(f, buf, n, &mad);
		KUNIT_EXPECT_EQ(test, be32_to_cpu(r->rmpp_hdr.paylen_newwin), 0U);
		KUNIT_EXPECT_EQ(test, ((u8 *)&mad)[RT_HDR],
				rt_byte((n - 1) * RT_SEG_DATA));
	}
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);

	rt_ack(f, &seg1, 3, 5);
	rt_tx(f, buf, 4, &mad);
	rt_tx(f, buf, 5, &mad);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(r->rmpp_hdr.paylen_newwin), 170U);
	KUNIT_EXPECT_EQ(test, ((u8 *)&mad)[RT_HDR + 149], rt_byte(949));
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);

	rt_ack(f, &seg1, 5, 5);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/* A lost ACK: the deadline resends from the segment after the last one
 * acknowledged, with the same TID; the transfer then completes.
 */
static void rmpp_lost_ack_retransmits(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 3, 600, 0, 2);
	struct kmad_mad seg1, mad;

	buf->timeout_ms = 0;	/* no response expected: 2 s ACK wait */
	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 3);
	rt_tx(f, buf, 2, &mad);
	rt_tx(f, buf, 3, &mad);
	/* The ACK of 2 and 3 is lost. */
	kmad_sim_advance_clock(f->fab, 1999);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	kmad_sim_advance_clock(f->fab, 1);
	kt_settle(f);
	rt_tx(f, buf, 2, &mad);
	rt_tx(f, buf, 3, &mad);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	rt_ack(f, &seg1, 3, 3);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/*
 * A receiver may close its window: an ACK whose NewWindowLast is its
 * SegmentNumber (IBTA 13.6: nothing past NewWindowLast may be sent).
 * When the wait for the next ACK expires, the resend stays inside the
 * window: the last segment acknowledged, for the receiver to ACK again
 * with its window, not the segment after it.  Before the fix, segment 2
 * went out with the window at 1 (rt_tx() found segment 2, not 1).
 */
static void rmpp_closed_window_resend_inside(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 44, 600, 0, 2);
	struct kmad_mad seg1, mad;

	buf->timeout_ms = 0;	/* no response expected: 2 s ACK wait */
	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 1);			/* the window closes */
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	kmad_sim_advance_clock(f->fab, 2000);
	kt_settle(f);
	rt_tx(f, buf, 1, &mad);			/* inside it */
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	kmad_sim_advance_clock(f->fab, 2000);
	kt_settle(f);
	rt_tx(f, buf, 1, &mad);			/* the second retry */
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	/* The receiver answers the duplicate: its window opens. */
	rt_ack(f, &seg1, 1, 3);
	rt_tx(f, buf, 2, &mad);
	rt_tx(f, buf, 3, &mad);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	rt_ack(f, &seg1, 3, 3);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/*
 * An ACK that moves the window on gives the retries back (as ib_mad
 * does): a transfer may lose up to retries ACKs per window, not in all.
 * Here one retry: the first segment's ACK is lost and it is sent again;
 * then the ACK of the last two is lost, and they are sent again too.
 */
static void rmpp_ack_progress_restores_retries(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 8, 600, 100, 1);
	struct kmad_mad seg1, mad;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	kt_advance(f, 100);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 3);
	rt_tx(f, buf, 2, &mad);
	rt_tx(f, buf, 3, &mad);
	kt_advance(f, 100);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	rt_tx(f, buf, 2, &mad);
	rt_tx(f, buf, 3, &mad);
	rt_ack(f, &seg1, 3, 3);
	/* All ACKed: it waits for the response. */
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	kt_settle(f);
	kt_expect_only_send(f, buf, KMAD_SEND_CANCELED);
	kmad_free_send_buf(buf);
}

/* No ACK at all: each deadline takes a retry and resends segment 1; when
 * none is left the send ends with RESP_TIMEOUT, once.
 */
static void rmpp_retries_exhausted(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 4, 300, 100, 1);
	struct kmad_mad mad;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &mad);
	kmad_sim_advance_clock(f->fab, 100);
	kt_settle(f);
	rt_tx(f, buf, 1, &mad);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kmad_sim_advance_clock(f->fab, 100);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_RESP_TIMEOUT);
	kmad_free_send_buf(buf);
}

/* An ACK older than the last one taken (lower segment, or a smaller
 * window) and a duplicate change nothing: no resend, no abort.
 */
static void rmpp_stale_ack_ignored(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 5, 800, 0, 0);
	struct kmad_mad seg1, mad;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 2);
	rt_tx(f, buf, 2, &mad);
	rt_ack(f, &seg1, 2, 4);
	rt_tx(f, buf, 3, &mad);
	rt_tx(f, buf, 4, &mad);

	rt_ack(f, &seg1, 1, 2);		/* older segment */
	rt_ack(f, &seg1, 2, 3);		/* smaller window */
	rt_ack(f, &seg1, 2, 4);		/* duplicate */
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);

	rt_ack(f, &seg1, 4, 4);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/*
 * A reordered ACK with the segment of the last one taken but a smaller
 * window is older, and not taken: the window stays 4, so the resend after
 * the lost ACK of segments 3 and 4 goes on from 3 to 4.  (Taken, it shrank
 * the window to 3, and the resend stopped at 3 to wait for an ACK.)
 */
static void rmpp_stale_window_kept_on_resend(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 42, 800, 0, 1);
	struct kmad_mad seg1, mad;

	KUNIT_ASSERT_EQ(test, kmad_send_buf_seg_count(buf), 4U);
	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 2);
	rt_tx(f, buf, 2, &mad);
	rt_ack(f, &seg1, 2, 4);
	rt_tx(f, buf, 3, &mad);
	rt_tx(f, buf, 4, &mad);
	rt_ack(f, &seg1, 2, 3);		/* sent before (2, 4), came after */
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	/* The ACK of 3 and 4 is lost: the 2 s ACK wait from 4's completion. */
	kt_advance(f, 1999);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	kt_advance(f, 1);
	rt_tx(f, buf, 3, &mad);
	rt_tx(f, buf, 4, &mad);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	rt_ack(f, &seg1, 4, 4);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/*
 * An ACK that acknowledges more without opening the window (all of it was
 * sent) starts the ACK wait again: the resend comes 2 s after that ACK,
 * not 2 s after the last segment's send completion.
 */
static void rmpp_ack_progress_restarts_wait(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 43, 1000, 0, 1);
	struct kmad_mad seg1, mad;
	u32 n;

	KUNIT_ASSERT_EQ(test, kmad_send_buf_seg_count(buf), 5U);
	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 5);
	for (n = 2; n <= 5; n++)
		rt_tx(f, buf, n, &mad);
	kt_advance(f, 1500);
	rt_ack(f, &seg1, 3, 5);		/* more acknowledged, same window */
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	kt_advance(f, 600);		/* past the first wait's end */
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	kt_advance(f, 1399);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kt_advance(f, 1);		/* 2 s after the second ACK */
	rt_tx(f, buf, 4, &mad);
	rt_tx(f, buf, 5, &mad);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	rt_ack(f, &seg1, 5, 5);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/* An ACK of a segment never sent: kmad sends ABORT (S2B) and the send
 * ends REMOTE_ABORT; later ACKs do not match it.
 */
static void rmpp_ack_beyond_sent_aborts(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 6, 600, 0, 0);
	struct kmad_mad seg1;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 2, 3);
	rt_expect_abort(f, &seg1, KMAD_RMPP_STATUS_S2B);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_REMOTE_ABORT);

	rt_ack(f, &seg1, 1, 3);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	kmad_free_send_buf(buf);
}

/*
 * The ABORT kmad would answer a bad ACK with cannot be allocated: the
 * send still ends REMOTE_ABORT, nothing goes on the wire, and the ABORT
 * not sent is counted (rmpp_recv_dropped), as the receiving side counts
 * an answer it could not send.
 */
static void rmpp_abort_alloc_fails_counted(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 44, 600, 0, 0);
	s64 dropped = kt_pstat(f, KT_DEV0, KMAD_PSTAT_RMPP_DROPPED);
	struct kmad_mad seg1;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	kt_fail_allocs(KMAD_ALLOC_RMPP_CTL, 1);
	rt_ack(f, &seg1, 2, 3);			/* S2B */
	KUNIT_EXPECT_EQ(test, kt_allocs_failed(KMAD_ALLOC_RMPP_CTL), 1);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_RMPP_DROPPED),
			dropped + 1);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_REMOTE_ABORT);
	kmad_free_send_buf(buf);
}

/*
 * An ACK, STOP or ABORT whose RMPPVersion is not 1 ends the transfer, as
 * ib_mad's abort_send() ends it: the send ends REMOTE_ABORT, and the
 * receiver is told with an ABORT (UNV), except in answer to an ABORT
 * (two ends could bounce ABORTs).  (An ACK of version 2 moved the window.)
 */
static void rmpp_ctl_bad_version_aborts(struct kunit *test)
{
	static const u8 types[] = { KMAD_RMPP_TYPE_ACK, KMAD_RMPP_TYPE_STOP,
				    KMAD_RMPP_TYPE_ABORT };
	static const u8 status[] = { 0, KMAD_RMPP_STATUS_RESX,
				     KMAD_RMPP_STATUS_BADT };
	struct kt_fix *f = test->priv;
	struct kmad_mad seg1, bad;
	struct kmad_send_buf *buf;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		buf = rt_buf(f, rt_req_agent, KMAD_METHOD_GET_MULTI, 20 + i,
			     800, 0, 0);
		kt_post(f, buf);
		rt_tx(f, buf, 1, &seg1);
		bad = seg1;
		((struct kmad_rmpp_mad *)&bad)->rmpp_hdr.rmpp_version = 2;
		rt_ctl(f, &bad, types[i], status[i], 1, 2);
		if (types[i] != KMAD_RMPP_TYPE_ABORT)
			rt_expect_abort(f, &seg1, KMAD_RMPP_STATUS_UNV);
		KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
		KUNIT_ASSERT_EQ(test, kt_events(f), (int)i + 1);
		kt_expect_send(f, i, buf, KMAD_SEND_REMOTE_ABORT);
		kmad_free_send_buf(buf);
	}
}

/*
 * A control packet of no RMPPType ends the send it is about as well, with
 * ABORT (BADT), as ib_mad's abort_send() does; and a broken packet about a
 * transfer that is over (every segment acknowledged, the request waiting
 * for its response) leaves the send alone but is still refused, ABORT
 * (UNV).  (The first went on to a response timeout; the second was
 * dropped unanswered.)
 */
static void rmpp_ctl_broken_type_and_done(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_mad seg1, bad;
	struct kmad_send_buf *buf;

	buf = rt_buf(f, rt_req_agent, KMAD_METHOD_GET_MULTI, 30, 800, 0, 0);
	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ctl(f, &seg1, 7, 0, 1, 2);
	rt_expect_abort(f, &seg1, KMAD_RMPP_STATUS_BADT);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_REMOTE_ABORT);
	kmad_free_send_buf(buf);

	buf = rt_buf(f, rt_req_agent, KMAD_METHOD_GET_MULTI, 31, 200, 1000, 0);
	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 1);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	bad = seg1;
	((struct kmad_rmpp_mad *)&bad)->rmpp_hdr.rmpp_version = 2;
	rt_ctl(f, &bad, KMAD_RMPP_TYPE_ACK, 0, 1, 1);
	rt_expect_abort(f, &seg1, KMAD_RMPP_STATUS_UNV);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 1, buf, KMAD_SEND_CANCELED);
	kmad_free_send_buf(buf);
}

/* NewWindowLast below the segment acknowledged: ABORT (W2S). */
static void rmpp_window_too_small_aborts(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 7, 600, 0, 0);
	struct kmad_mad seg1;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 0);
	rt_expect_abort(f, &seg1, KMAD_RMPP_STATUS_W2S);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_REMOTE_ABORT);
	kmad_free_send_buf(buf);
}

/*
 * kmad's ABORT keeps the class header of the packet it answers, as
 * ib_mad's nack_recv() copies its header length: for the SA the SM_Key
 * and ComponentMask (for a vendor class of range 2 the OUI, without which
 * the receiver finds no agent for the ABORT and keeps its transfer until
 * it idles out).  An ACK with NewWindowLast 0, its SA header kept: the
 * ABORT (W2S) carries its ComponentMask.  Before, it carried only the
 * first 36 bytes and zeros after.
 */
static void rmpp_abort_keeps_class_header(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 8, 600, 0, 0);
	struct kmad_sim_rx rx = {
		.slid = kmad_port_lid(f->port[KT_DEV1]),
		.src_qpn = KT_QPN,
	};
	struct kmad_mad seg1, *ack, *got;
	struct kmad_rmpp_mad *r;

	ack = kunit_kzalloc(test, 2 * sizeof(*ack), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ack);
	got = ack + 1;
	r = (struct kmad_rmpp_mad *)ack;
	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	*ack = seg1;
	r->mad_hdr.method ^= KMAD_METHOD_RESP;
	r->rmpp_hdr.rmpp_type = KMAD_RMPP_TYPE_ACK;
	r->rmpp_hdr.rmpp_rtime_flags = KMAD_RMPP_FLAG_ACTIVE;
	r->rmpp_hdr.seg_num = cpu_to_be32(1);
	r->rmpp_hdr.paylen_newwin = cpu_to_be32(0);
	memset((u8 *)ack + RT_HDR, 0, KMAD_MAD_SIZE - RT_HDR);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject_rx(f->fab, KT_DEV0, KT_QPN, ack,
						 sizeof(*ack), &rx), 0);
	kt_event(f, KT_DEV0);
	KUNIT_ASSERT_EQ(test, rt_wire(f), 1U);
	rt_peek(f, 0, got);
	KUNIT_EXPECT_EQ(test,
			be64_to_cpu(((struct kmad_sa_mad *)got)->comp_mask),
			0x1234abcdULL);
	rt_expect_abort(f, &seg1, KMAD_RMPP_STATUS_W2S);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_REMOTE_ABORT);
	kmad_free_send_buf(buf);
}

/* STOP (ResX) from the receiver ends the send REMOTE_ABORT, silently. */
static void rmpp_stop_from_receiver(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 8, 600, 0, 0);
	struct kmad_mad seg1;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ctl(f, &seg1, KMAD_RMPP_TYPE_STOP, KMAD_RMPP_STATUS_RESX, 0, 0);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_REMOTE_ABORT);
	kmad_free_send_buf(buf);
}

/* ABORT from the receiver while a segment is in the hardware: the send
 * ends REMOTE_ABORT at that segment's send completion, not before, and
 * nothing more is sent.
 */
static void rmpp_abort_from_receiver(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 9, 600, 0, 0);
	struct kmad_mad seg1;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 3);
	KUNIT_ASSERT_EQ(test, rt_wire(f), 1U);	/* segment 2 */
	rt_ctl(f, &seg1, KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_T2L, 0, 0);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_CANCELED);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_REMOTE_ABORT);
	kmad_free_send_buf(buf);
}

/* An ABORT whose status is not an abort status: the send ends, and kmad
 * answers with ABORT (BadStatus).
 */
static void rmpp_abort_bad_status_answered(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 10, 600, 0, 0);
	struct kmad_mad seg1;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ctl(f, &seg1, KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_RESX, 0, 0);
	rt_expect_abort(f, &seg1, KMAD_RMPP_STATUS_BAD_STATUS);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_REMOTE_ABORT);
	kmad_free_send_buf(buf);
}

/*
 * The statuses a STOP and an ABORT may carry: a STOP only ResX, an ABORT
 * 118 (T2L) to 127 (unspecified), both ends included.  Each ends the send
 * REMOTE_ABORT; one with a status its type does not have is answered with
 * ABORT (BadStatus), one with a valid status is not answered.
 */
static void rmpp_stop_abort_status_range(struct kunit *test)
{
	static const struct {
		u8 type, status, answer;
	} rows[] = {
		{ KMAD_RMPP_TYPE_STOP, KMAD_RMPP_STATUS_RESX, 0 },
		{ KMAD_RMPP_TYPE_STOP, KMAD_RMPP_STATUS_T2L,
		  KMAD_RMPP_STATUS_BAD_STATUS },
		{ KMAD_RMPP_TYPE_STOP, KMAD_RMPP_STATUS_SUCCESS,
		  KMAD_RMPP_STATUS_BAD_STATUS },
		{ KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_ABORT_MIN - 1,
		  KMAD_RMPP_STATUS_BAD_STATUS },
		{ KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_ABORT_MIN, 0 },
		{ KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_ABORT_MAX, 0 },
		{ KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_ABORT_MAX + 1,
		  KMAD_RMPP_STATUS_BAD_STATUS },
	};
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf;
	struct kmad_mad seg1;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		buf = rt_buf(f, rt_req_agent, KMAD_METHOD_GET_MULTI, 70 + i,
			     600, 0, 0);
		kt_post(f, buf);
		rt_tx(f, buf, 1, &seg1);
		rt_ctl(f, &seg1, rows[i].type, rows[i].status, 0, 0);
		KUNIT_EXPECT_EQ_MSG(test, rt_wire(f), rows[i].answer ? 1U : 0U,
				    "row %u: type %d status %d", i,
				    rows[i].type, rows[i].status);
		if (rows[i].answer)
			rt_expect_abort(f, &seg1, rows[i].answer);
		KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
		KUNIT_ASSERT_EQ(test, kt_events(f), (int)i + 1);
		kt_expect_send(f, i, buf, KMAD_SEND_REMOTE_ABORT);
		kmad_free_send_buf(buf);
	}
}

/* Cancel mid-window: CANCELED at the send completion of the segment in
 * the hardware, nothing more sent, a later ACK matches nothing.
 */
static void rmpp_cancel_mid_window(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 11, 800, 0, 0);
	struct kmad_mad seg1;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 4);
	KUNIT_ASSERT_EQ(test, rt_wire(f), 1U);	/* segment 2 */
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), -EALREADY);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_CANCELED);

	rt_ack(f, &seg1, 2, 4);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	kmad_free_send_buf(buf);
}

/* Unregistering mid-transfer flushes the send waiting for an ACK; the ACK
 * that comes after finds nothing.
 */
static void rmpp_unregister_mid_transfer(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 12, 800, 0, 0);
	struct kmad_mad seg1;

	f->free_on_send = true;
	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(rt_req_agent), 0);
	rt_req_agent = NULL;
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_FLUSHED);

	rt_ack(f, &seg1, 1, 4);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
}

/* Port removal mid-window: the segment in the hardware is flushed and
 * the send ends FLUSHED, once; nothing more is sent.
 */
static void rmpp_port_removal_mid_transfer(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 20, 600, 0, 0);
	struct kmad_mad seg1;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 3);
	KUNIT_ASSERT_EQ(test, rt_wire(f), 1U);	/* segment 2 */
	kmad_sim_remove_device(f->fab, KT_DEV0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_FLUSHED);
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -ESHUTDOWN);
	kmad_free_send_buf(buf);
}

/* A segment whose send completion fails ends the send LOCAL_ERROR. */
static void rmpp_segment_send_error(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 21, 600, 0, 0);
	struct kmad_mad seg1;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 3);
	kt_complete(f, KT_DEV0, KMAD_WC_LOC_ERR, false);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_LOCAL_ERROR);
	kmad_free_send_buf(buf);
}

/* ACKs that arrive before the send completion of the segment they
 * acknowledge: the next segment waits for that completion, and the final
 * ACK's callback too.
 */
static void rmpp_ack_before_send_completion(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 13, 400, 0, 0);
	struct kmad_mad seg1, mad;
	unsigned int refs;

	kt_post(f, buf);
	rt_peek(f, 0, &seg1);
	rt_ack(f, &seg1, 1, 2);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 1U);	/* still segment 1 */
	KUNIT_EXPECT_EQ(test, kt_state(buf, &refs), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, refs, 2U);
	rt_tx(f, buf, 1, &mad);
	KUNIT_ASSERT_EQ(test, rt_wire(f), 1U);
	rt_peek(f, 0, &mad);
	rt_ack(f, &seg1, 2, 2);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	rt_tx(f, buf, 2, &mad);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	kmad_free_send_buf(buf);
}

/* A request with a timeout: after the final ACK it waits for its response
 * by TID, like any request; the response ends it.
 */
static void rmpp_request_then_response(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 14, 300, 500, 1);
	struct kmad_mad seg1;
	unsigned int refs;

	kt_post(f, buf);
	rt_two_acked(f, buf, &seg1);
	KUNIT_EXPECT_EQ(test, kt_state(buf, &refs), KMAD_SS_WAIT_RESP);
	KUNIT_EXPECT_EQ(test, refs, 1U);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);

	/* The response: one MAD, RMPP inactive. */
	rt_respond(f, &seg1);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_recv(f, 0, buf, KMAD_METHOD_GET_MULTI_RESP);
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/*
 * An RMPP Set's ACKs carry Method 0x82, the DATA's with the response bit
 * flipped, as ib_mad's format_ack() (and kmad's receiver) send them: they
 * move the window on, and the GetResp ends the send.
 */
static void rmpp_set_acked(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent, KMAD_METHOD_SET,
					   40, 300, 500, 0);
	struct kmad_mad seg1, mad;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 2);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 1U);
	if (rt_wire(f) == 1) {
		rt_tx(f, buf, 2, &mad);
		rt_ack(f, &seg1, 2, 2);
	}
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);

	rt_respond_with(f, &seg1, KMAD_METHOD_GET_RESP);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_recv(f, 0, buf, KMAD_METHOD_GET_RESP);
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/*
 * Two RMPP requests of one agent with one TID and class to one peer could
 * not tell their ACKs apart (they are matched by TID, class and peer): a
 * second post is -EBUSY, with or without a timeout, and the MAD is left
 * as it was; once the first ended it is taken.  (Both posts succeeded
 * when neither had a timeout: the second's ACKs moved the first's
 * window.)  Responses are not refused so (kmad_rmpp_race answers every
 * copy of a request sent again).
 */
static void rmpp_same_tid_busy(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *a = rt_buf(f, rt_req_agent,
					 KMAD_METHOD_GET_MULTI, 50, 300, 0, 0);
	struct kmad_send_buf *b = rt_buf(f, rt_req_agent,
					 KMAD_METHOD_GET_MULTI, 50, 300, 0, 0);
	struct kmad_send_buf *c = rt_buf(f, rt_req_agent,
					 KMAD_METHOD_GET_MULTI, 50, 300, 500, 0);
	struct kmad_send_buf *bufs[] = { a, b };
	struct kmad_mad seg1, mad;
	unsigned int i;

	kt_post(f, a);
	KUNIT_EXPECT_EQ(test, kmad_post_send(b), -EBUSY);
	KUNIT_EXPECT_EQ(test, kmad_post_send(c), -EBUSY);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(b->mad->mad_hdr.tid), 50ULL);
	KUNIT_ASSERT_EQ(test, rt_wire(f), 1U);

	for (i = 0; i < ARRAY_SIZE(bufs); i++) {
		if (i)
			kt_post(f, bufs[i]);
		rt_tx(f, bufs[i], 1, &seg1);
		rt_ack(f, &seg1, 1, 2);
		rt_tx(f, bufs[i], 2, &mad);
		rt_ack(f, &seg1, 2, 2);
		KUNIT_ASSERT_EQ(test, kt_events(f), (int)i + 1);
		kt_expect_send(f, i, bufs[i], KMAD_SEND_OK);
	}
	kmad_free_send_buf(a);
	kmad_free_send_buf(b);
	kmad_free_send_buf(c);
}

/*
 * A canceled RMPP request whose segment the hardware still holds takes no
 * ACK any more: a new request with its TID is taken at once (it was
 * -EBUSY until the old segment's send completion).
 */
static void rmpp_same_tid_after_cancel(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *a = rt_buf(f, rt_req_agent,
					 KMAD_METHOD_GET_MULTI, 60, 300, 0, 0);
	struct kmad_send_buf *b = rt_buf(f, rt_req_agent,
					 KMAD_METHOD_GET_MULTI, 60, 300, 0, 0);
	struct kmad_mad seg1;

	kt_post(f, a);
	KUNIT_ASSERT_EQ(test, rt_wire(f), 1U);
	KUNIT_ASSERT_EQ(test, kmad_cancel_send(a), 0);
	KUNIT_EXPECT_EQ(test, kmad_post_send(b), 0);
	/* a's segment 1 completes: a ends; then b's transfer. */
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, a, KMAD_SEND_CANCELED);
	if (kt_state(b, NULL) != KMAD_SS_INIT) {
		rt_two_acked(f, b, &seg1);
		KUNIT_ASSERT_EQ(test, kt_events(f), 2);
		kt_expect_send(f, 1, b, KMAD_SEND_OK);
	}
	kmad_free_send_buf(a);
	kmad_free_send_buf(b);
}

/* After the final ACK the response wait is timeout_ms, once: no segment
 * is resent, retries or not.
 */
static void rmpp_request_response_timeout(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 15, 100, 500, 3);
	struct kmad_mad seg1;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 1);
	kt_expect_timeout_in(f, buf, 500);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	kmad_free_send_buf(buf);
}

/* A response sent with RMPP (GetTableResp) is ACKed with the request
 * method, which comes through the request dispatch; the final ACK ends it.
 * Its TID is the requester's, untouched.
 */
static void rmpp_response_send(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	const u64 tid = 0xfeed000000000042ULL;
	struct kmad_send_buf *buf = rt_buf(f, rt_sa_agent,
					   KMAD_METHOD_GET_TABLE_RESP, tid, 300,
					   0, 0);
	struct kmad_mad seg1;

	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(buf->mad->mad_hdr.tid), tid);
	rt_two_acked(f, buf, &seg1);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/* An ACK from another peer, with the transfer's TID and class, is not
 * about it.
 */
static void rmpp_ack_from_other_peer(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 16, 100, 0, 0);
	struct kmad_mad seg1, ack;
	struct kmad_rmpp_mad *r = (struct kmad_rmpp_mad *)&ack;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	ack = seg1;
	r->mad_hdr.method ^= KMAD_METHOD_RESP;
	r->rmpp_hdr.rmpp_type = KMAD_RMPP_TYPE_ACK;
	r->rmpp_hdr.seg_num = cpu_to_be32(1);
	r->rmpp_hdr.paylen_newwin = cpu_to_be32(1);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject(f->fab, KT_DEV0, KT_QPN, &ack,
					      sizeof(ack),
					      kmad_port_lid(f->port[KT_DEV1]) + 7,
					      KT_QPN), 0);
	kt_event(f, KT_DEV0);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_CANCELED);
	kmad_free_send_buf(buf);
}

/*
 * A send by GID takes the ACKs that come with a GRH from the GID it was
 * sent to: they move its window and end it.  An ACK with its TID and class
 * from another source GID (at the same LID and QP), or from its peer's LID
 * without a GRH, is no ACK of it: dropped, counted (rmpp_recv_dropped), the
 * window not moved.
 */
static void rmpp_grh_acks_by_sgid(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 45, 400, 0, 0);
	struct kmad_sim_rx rx = {
		.slid = kmad_port_lid(f->port[KT_DEV1]),
		.src_qpn = KT_QPN,
		.grh_present = true,
		.hop_limit = 1,
	};
	s64 dropped = kt_pstat(f, KT_DEV0, KMAD_PSTAT_RMPP_DROPPED);
	struct kmad_mad seg1, mad;

	KUNIT_ASSERT_EQ(test, kmad_port_query_gid(f->port[KT_DEV1], 0,
						  &buf->dest.grh.dgid), 0);
	KUNIT_ASSERT_EQ(test, kmad_port_query_gid(f->port[KT_DEV0], 0,
						  &rx.dgid), 0);
	buf->dest.grh_present = true;
	buf->dest.grh.sgid_index = 0;
	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);

	rx.sgid = buf->dest.grh.dgid;
	rx.sgid.global.interface_id ^= cpu_to_be64(1);
	rt_ctl_rx(f, &seg1, KMAD_RMPP_TYPE_ACK, 0, 1, 2, &rx);
	rt_ack(f, &seg1, 1, 2);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_RMPP_DROPPED),
			dropped + 2);

	rx.sgid = buf->dest.grh.dgid;
	rt_ctl_rx(f, &seg1, KMAD_RMPP_TYPE_ACK, 0, 1, 2, &rx);
	rt_tx(f, buf, 2, &mad);
	rt_ctl_rx(f, &seg1, KMAD_RMPP_TYPE_ACK, 0, 2, 2, &rx);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_RMPP_DROPPED),
			dropped + 2);
	kmad_free_send_buf(buf);
}

/* Two RMPP responses with one TID (two requesters may pick the same):
 * not in the TID table, so both post; each ACK ends the one to the peer
 * it came from.
 */
static void rmpp_same_tid_two_peers(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	const u64 tid = 0xbeef000000000007ULL;
	const u16 other = kmad_port_lid(f->port[KT_DEV1]) + 7;
	struct kmad_send_buf *a = rt_buf(f, rt_sa_agent,
					 KMAD_METHOD_GET_TABLE_RESP, tid, 100,
					 0, 0);
	struct kmad_send_buf *b = rt_buf(f, rt_sa_agent,
					 KMAD_METHOD_GET_TABLE_RESP, tid, 100,
					 0, 0);
	struct kmad_mad seg1, ack;
	struct kmad_rmpp_mad *r = (struct kmad_rmpp_mad *)&ack;

	b->dest.dlid = other;
	kt_post(f, a);
	kt_post(f, b);
	KUNIT_ASSERT_EQ(test, rt_wire(f), 2U);
	rt_tx(f, a, 1, &seg1);
	rt_tx(f, b, 1, &seg1);

	/* The ACK from the other requester ends b, not a. */
	ack = seg1;
	r->mad_hdr.method ^= KMAD_METHOD_RESP;
	r->rmpp_hdr.rmpp_type = KMAD_RMPP_TYPE_ACK;
	r->rmpp_hdr.rmpp_rtime_flags = KMAD_RMPP_FLAG_ACTIVE;
	r->rmpp_hdr.seg_num = cpu_to_be32(1);
	r->rmpp_hdr.paylen_newwin = cpu_to_be32(1);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject(f->fab, KT_DEV0, KT_QPN, &ack,
					      sizeof(ack), other, KT_QPN), 0);
	kt_event(f, KT_DEV0);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, b, KMAD_SEND_OK);
	KUNIT_EXPECT_EQ(test, kt_state(a, NULL), KMAD_SS_WAIT_RESP);

	rt_ack(f, &seg1, 1, 1);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 1, a, KMAD_SEND_OK);
	kmad_free_send_buf(a);
	kmad_free_send_buf(b);
}

/* 1 MiB: 5243 segments of 200 bytes in pages; the first 20 go out with
 * segment 1's header and their own data, across the page boundary.
 */
static void rmpp_one_mib(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	const size_t len = 1 << 20;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 17, len, 0, 0);
	struct kmad_mad seg1, mad;
	unsigned int count = kmad_send_buf_seg_count(buf), n;

	KUNIT_ASSERT_EQ(test, count, (unsigned int)DIV_ROUND_UP(len, 200));
	KUNIT_EXPECT_NULL(test, kmad_send_buf_seg(buf, 0));
	KUNIT_EXPECT_NULL(test, kmad_send_buf_seg(buf, count + 1));
	KUNIT_EXPECT_PTR_EQ(test, kmad_send_buf_seg(buf, 1), buf->mad);
	KUNIT_EXPECT_FALSE(test, is_vmalloc_addr(kmad_send_buf_seg(buf, count)));
	/* 1048576 = 5242 * 200 + 176: the last segment holds 176 bytes */
	KUNIT_EXPECT_EQ(test, ((u8 *)kmad_send_buf_seg(buf, count))[RT_HDR + 175],
			rt_byte(len - 1));

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(((struct kmad_rmpp_mad *)&seg1)->
					  rmpp_hdr.paylen_newwin),
			count * 220U - 24);
	rt_ack(f, &seg1, 1, 20);
	for (n = 2; n <= 20; n++) {
		rt_tx(f, buf, n, &mad);
		KUNIT_EXPECT_EQ(test, ((u8 *)&mad)[RT_HDR + 5],
				rt_byte((n - 1) * 200 + 5));
	}
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_CANCELED);
	kmad_free_send_buf(buf);
}

/*
 * Races checked (Documentation/rmpp.rst, "Races checked"): each case below
 * drives one order of events and expects one callback with its status, and
 * at every wait a way out (rt_expect_live()).
 */

/* The final ACK comes while a retry's segment is in the hardware: the
 * send ends OK at that segment's send completion; nothing more is sent.
 */
static void rmpp_final_ack_during_retry(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 30, 600, 0, 2);
	struct kmad_mad seg1, mad;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 3);
	rt_tx(f, buf, 2, &mad);
	rt_tx(f, buf, 3, &mad);
	rt_expect_live(f, buf);
	kmad_sim_advance_clock(f->fab, 2000);	/* the ACK of 3 is late */
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, rt_wire(f), 1U);	/* segment 2 again */
	rt_ack(f, &seg1, 3, 3);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	rt_expect_live(f, buf);
	rt_tx(f, buf, 2, &mad);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/* The same for a request: after the retried segment's send completion it
 * waits timeout_ms for its response, resends nothing, and times out once.
 */
static void rmpp_final_ack_during_retry_request(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 31, 400, 500, 2);
	struct kmad_mad seg1, mad;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 2);
	rt_tx(f, buf, 2, &mad);
	kmad_sim_advance_clock(f->fab, 500);	/* ACK wait: timeout_ms */
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, rt_wire(f), 1U);
	rt_ack(f, &seg1, 2, 2);
	rt_tx(f, buf, 2, &mad);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	rt_expect_live(f, buf);
	kt_expect_timeout_in(f, buf, 500);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	kmad_free_send_buf(buf);
}

/* An ACK that acknowledges the retried segment and the one after it,
 * while the retry is in the hardware: the send goes on after both, it
 * does not resend the acknowledged one.
 */
static void rmpp_ack_during_retry_moves_on(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 32, 800, 0, 2);
	struct kmad_mad seg1, mad;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 3);
	rt_tx(f, buf, 2, &mad);
	rt_tx(f, buf, 3, &mad);
	kmad_sim_advance_clock(f->fab, 2000);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, rt_wire(f), 1U);	/* segment 2 again */
	rt_ack(f, &seg1, 3, 4);
	rt_tx(f, buf, 2, &mad);
	rt_tx(f, buf, 4, &mad);
	rt_expect_live(f, buf);
	rt_ack(f, &seg1, 4, 4);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	kmad_free_send_buf(buf);
}

/* The response comes before the last ACK, while the request waits for an
 * ACK: it ends the send OK; the late final ACK matches nothing.
 */
static void rmpp_response_before_final_ack(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 33, 600, 500, 1);
	struct kmad_mad seg1, mad;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 2);
	rt_tx(f, buf, 2, &mad);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	rt_respond(f, &seg1);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_recv(f, 0, buf, KMAD_METHOD_GET_MULTI_RESP);
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
	rt_ack(f, &seg1, 3, 3);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_EXPECT_EQ(test, kt_events(f), 2);
	kmad_free_send_buf(buf);
}

/* The response comes while a segment is in the hardware: parked until
 * that send completion, then recv_handler and OK; an ACK meanwhile and
 * the window it opened send nothing more.
 */
static void rmpp_response_while_segment_in_hw(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 34, 600, 500, 1);
	struct kmad_mad seg1, mad;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 3);
	KUNIT_ASSERT_EQ(test, rt_wire(f), 1U);	/* segment 2 */
	rt_respond(f, &seg1);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_EARLY_RESP);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	rt_expect_live(f, buf);
	rt_ack(f, &seg1, 2, 3);
	rt_tx(f, buf, 2, &mad);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_recv(f, 0, buf, KMAD_METHOD_GET_MULTI_RESP);
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/* kmad_modify_send() of a request during its windows: in the hardware it
 * sets the timeout the ACK wait uses next; waiting for an ACK it moves the
 * deadline (as ib_modify_mad()); the response wait after the final ACK
 * uses the new timeout.  One callback: RESP_TIMEOUT.
 */
static void rmpp_modify_mid_window(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 35, 600, 500, 1);
	struct kmad_mad seg1, mad;

	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 300), 0);
	rt_tx(f, buf, 1, &seg1);
	kmad_sim_advance_clock(f->fab, 200);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 1000), 0);
	rt_expect_live(f, buf);
	kmad_sim_advance_clock(f->fab, 999);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	kmad_sim_advance_clock(f->fab, 1);
	kt_settle(f);
	rt_tx(f, buf, 1, &mad);			/* the retry */
	rt_ack(f, &seg1, 1, 3);
	rt_tx(f, buf, 2, &mad);
	rt_tx(f, buf, 3, &mad);
	rt_ack(f, &seg1, 3, 3);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	rt_expect_live(f, buf);
	kt_expect_timeout_in(f, buf, 1000);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	kmad_free_send_buf(buf);
}

/* kmad_modify_send() while segment 1 is in the hardware: the ACK wait
 * that follows uses the new timeout (300 ms, not the 500 it was posted
 * with): the retry goes at 300 ms.
 */
static void rmpp_modify_in_hardware(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 36, 600, 500, 1);
	struct kmad_mad seg1, mad;

	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 300), 0);
	rt_tx(f, buf, 1, &seg1);
	kmad_sim_advance_clock(f->fab, 299);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	kmad_sim_advance_clock(f->fab, 1);
	kt_settle(f);
	rt_tx(f, buf, 1, &mad);			/* the retry */
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_CANCELED);
	kmad_free_send_buf(buf);
}

/* An RMPP send posted without a timeout has none to modify: -EINVAL in
 * the hardware and waiting for an ACK, its 2 s ACK deadline kept; then
 * kmad_modify_send(buf, 0) cancels it at once, and a late ACK finds
 * nothing.
 */
static void rmpp_modify_without_timeout(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 36, 600, 0, 1);
	struct kmad_mad seg1;

	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 100), -EINVAL);
	rt_tx(f, buf, 1, &seg1);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 100), -EINVAL);
	kmad_sim_advance_clock(f->fab, 1999);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	rt_expect_live(f, buf);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 0), 0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_CANCELED);
	rt_ack(f, &seg1, 1, 3);
	kmad_sim_advance_clock(f->fab, 1);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	kmad_free_send_buf(buf);
}

/*
 * kmad_modify_send() while an RMPP request waits for an ACK: its ACK wait
 * is at most 2 s however long the new timeout (as the one it was posted
 * with: 5 s gave 2 s), so the wait ends 2 s after the call, not 10 s.
 */
static void rmpp_modify_ack_wait_capped(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 37, 600, 5000, 0);
	struct kmad_mad seg1;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	kmad_sim_advance_clock(f->fab, 1000);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 10000), 0);
	KUNIT_EXPECT_EQ(test, buf->timeout_ms, 10000U);
	kt_expect_timeout_in(f, buf, 2000);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	kmad_free_send_buf(buf);
}

/* After the final ACK, while the request waits for its response: a
 * repeated final ACK, a STOP and an ABORT change nothing (no ABORT sent,
 * the deadline kept); the response ends it OK.
 */
static void rmpp_late_ctl_after_final_ack(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 37, 400, 500, 1);
	struct kmad_mad seg1;

	kt_post(f, buf);
	rt_two_acked(f, buf, &seg1);
	rt_ack(f, &seg1, 2, 2);
	rt_ctl(f, &seg1, KMAD_RMPP_TYPE_STOP, KMAD_RMPP_STATUS_RESX, 0, 0);
	rt_ctl(f, &seg1, KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_T2L, 0, 0);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	rt_expect_live(f, buf);
	rt_respond(f, &seg1);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_recv(f, 0, buf, KMAD_METHOD_GET_MULTI_RESP);
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/* A STOP after an ACK that came before its segment's send completion and
 * opened the window: the send ends REMOTE_ABORT at that completion, and
 * the segments the window allowed are not sent.
 */
static void rmpp_stop_after_early_ack(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 38, 600, 0, 0);
	struct kmad_mad seg1, mad;

	kt_post(f, buf);
	rt_peek(f, 0, &seg1);
	rt_ack(f, &seg1, 1, 3);
	rt_ctl(f, &seg1, KMAD_RMPP_TYPE_STOP, KMAD_RMPP_STATUS_RESX, 0, 0);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_CANCELED);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	rt_expect_live(f, buf);
	rt_tx(f, buf, 1, &mad);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_REMOTE_ABORT);
	kmad_free_send_buf(buf);
}

/* Settle until @n packets wait on device 0's wire (QP recovery may run
 * from a delayed work); false after KT_ASYNC_WAIT_MS.
 */
static bool rt_wait_wire(struct kt_fix *f, unsigned int n)
{
	return kt_wait_until((kt_settle(f), rt_wire(f) == n),
			     KT_ASYNC_WAIT_MS);
}

/* A QP error flushes the segment in the hardware mid-window: recovery
 * sends the same segment again, the transfer goes on and ends OK, once.
 */
static void rmpp_qp_error_mid_window(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 39, 600, 0, 0);
	struct kmad_mad seg1, mad;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 3);
	KUNIT_ASSERT_EQ(test, rt_wire(f), 1U);	/* segment 2 */
	KUNIT_ASSERT_EQ(test, kmad_sim_qp_error(f->fab, KT_DEV0, KT_QPN), 0);
	KUNIT_ASSERT_TRUE(test, rt_wait_wire(f, 1));
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	rt_expect_live(f, buf);
	rt_tx(f, buf, 2, &mad);
	rt_tx(f, buf, 3, &mad);
	rt_ack(f, &seg1, 3, 3);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	kmad_free_send_buf(buf);
}

/* Static: the thread may outlive a case that failed an assertion. */
static struct rt_unreg {
	struct kmad_agent *agent;
	struct completion done;
} rt_unreg_ctx;

static int rt_unreg_fn(void *arg)
{
	struct rt_unreg *u = arg;

	kmad_unregister_agent(u->agent);
	complete(&u->done);
	return 0;
}

/* Unregister while a segment is in the QP and an ACK that came before
 * its send completion has opened the window: the flush makes the send
 * CANCELED, unregister waits for the segment's send completion, which
 * ends it FLUSHED, once; the window's next segment is never sent.
 */
static void rmpp_unregister_segment_in_hw(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = rt_buf(f, rt_req_agent,
					   KMAD_METHOD_GET_MULTI, 40, 600, 0, 0);
	struct rt_unreg *u = &rt_unreg_ctx;
	struct task_struct *t;
	struct kmad_mad seg1, mad;

	kt_post(f, buf);
	rt_tx(f, buf, 1, &seg1);
	rt_ack(f, &seg1, 1, 3);
	KUNIT_ASSERT_EQ(test, rt_wire(f), 1U);	/* segment 2 */
	rt_peek(f, 0, &mad);
	rt_ack(f, &seg1, 2, 3);			/* before its completion */
	u->agent = rt_req_agent;
	init_completion(&u->done);
	t = kthread_run(rt_unreg_fn, u, "rt_unreg");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	rt_req_agent = NULL;
	KUNIT_EXPECT_TRUE(test, kt_wait_until(kt_state(buf, NULL) ==
					      KMAD_SS_CANCELED,
					      KT_ASYNC_WAIT_MS));
	rt_expect_live(f, buf);
	KUNIT_EXPECT_FALSE(test, completion_done(&u->done));
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	rt_tx(f, buf, 2, &mad);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&u->done, 30 * HZ),
			0UL);
	KUNIT_EXPECT_EQ(test, rt_wire(f), 0U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_FLUSHED);
	kmad_free_send_buf(buf);
}

/* The verdict rt_expect_live() and kmad_rmpp_race rely on: a waiting
 * state without its way out is stuck, with it is not.
 */
static void rmpp_probe_verdict(struct kunit *test)
{
	static const struct {
		u8 state, hw;
		bool in_wheel, virtual_clock, work_busy, stuck;
	} rows[] = {
		{ KMAD_SS_SENDING, KMAD_HW_POSTED, false, false, false, false },
		{ KMAD_SS_SENDING, KMAD_HW_WAITING, false, false, false, false },
		{ KMAD_SS_SENDING, KMAD_HW_IDLE, false, false, true, true },
		{ KMAD_SS_CANCELED, KMAD_HW_CANCELED, false, false, false, false },
		{ KMAD_SS_CANCELED, KMAD_HW_IDLE, false, false, true, true },
		{ KMAD_SS_EARLY_RESP, KMAD_HW_IDLE, false, false, true, true },
		{ KMAD_SS_WAIT_RESP, KMAD_HW_IDLE, true, false, true, false },
		{ KMAD_SS_WAIT_RESP, KMAD_HW_IDLE, true, true, false, false },
		{ KMAD_SS_WAIT_RESP, KMAD_HW_IDLE, true, false, false, true },
		{ KMAD_SS_WAIT_RESP, KMAD_HW_IDLE, false, true, true, true },
		{ KMAD_SS_DONE, KMAD_HW_IDLE, false, false, true, false },
		{ KMAD_SS_DONE, KMAD_HW_IDLE, false, false, false, true },
		{ KMAD_SS_BACKLOG, KMAD_HW_IDLE, false, false, false, false },
	};
	struct kmad_send_probe p = {};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		p.state = rows[i].state;
		p.hw = rows[i].hw;
		p.in_wheel = rows[i].in_wheel;
		p.virtual_clock = rows[i].virtual_clock;
		p.work_busy = rows[i].work_busy;
		KUNIT_EXPECT_EQ_MSG(test, kmad_send_probe_stuck(&p),
				    rows[i].stuck, "row %u", i);
	}
}

/* What the API refuses with -EINVAL. */
static void rmpp_api_einval(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_reg_req req = { .rmpp_version = KMAD_RMPP_VERSION };
	struct kmad_dest dest = {
		.dlid = kmad_port_lid(f->port[KT_DEV1]),
		.remote_qpn = KT_QPN,
		.remote_qkey = KMAD_QP1_QKEY,
	};
	struct kmad_send_buf *buf;
	struct kmad_agent *a;

	/* An agent without an RMPP version; a header length of no class. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(kmad_alloc_send_buf_rmpp(f->agent, &dest,
							       RT_HDR, 10,
							       GFP_KERNEL)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kmad_alloc_send_buf_rmpp(rt_req_agent,
							       &dest, 24, 10,
							       GFP_KERNEL)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kmad_alloc_send_buf_rmpp(rt_sa_agent,
							       &dest, 64, 10,
							       GFP_KERNEL)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kmad_alloc_send_buf_rmpp(rt_req_agent,
							       &dest, RT_HDR,
							       KMAD_RMPP_MAX_DATA_LEN + 1,
							       GFP_KERNEL)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kmad_alloc_send_buf_rmpp(rt_req_agent,
							       NULL, RT_HDR, 10,
							       GFP_KERNEL)),
			-EINVAL);

	/* Registration: version 2; a class without the RMPP header; QP0. */
	req.rmpp_version = 2;
	a = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, &req,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_EXPECT_EQ(test, PTR_ERR(a), -EINVAL);
	req.rmpp_version = KMAD_RMPP_VERSION;
	req.mgmt_class = KMAD_MGMT_CLASS_PERF_MGMT;
	req.class_version = 1;
	set_bit(KMAD_METHOD_GET, req.method_mask);
	a = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, &req,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_EXPECT_EQ(test, PTR_ERR(a), -EINVAL);
	memset(&req, 0, sizeof(req));
	req.rmpp_version = KMAD_RMPP_VERSION;
	a = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_SMI, &req,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_EXPECT_EQ(test, PTR_ERR(a), -EINVAL);

	/* A post whose class does not repeat the header it was made for. */
	buf = rt_buf(f, rt_req_agent, KMAD_METHOD_GET_MULTI, 18, 10, 0, 0);
	buf->mad->mad_hdr.mgmt_class = KMAD_MGMT_CLASS_DEVICE_MGMT;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(buf->mad->mad_hdr.tid), 18ULL);
	kmad_free_send_buf(buf);

	/* A single-MAD buffer is one segment. */
	buf = kt_request(f, f->agent, KMAD_METHOD_GET, 19, 0, 0);
	KUNIT_EXPECT_EQ(test, kmad_send_buf_seg_count(buf), 1U);
	KUNIT_EXPECT_PTR_EQ(test, kmad_send_buf_seg(buf, 1), buf->mad);
	KUNIT_EXPECT_NULL(test, kmad_send_buf_seg(buf, 2));
	kmad_free_send_buf(buf);
	KUNIT_EXPECT_EQ(test, kmad_send_buf_seg_count(NULL), 0U);
}

static struct kunit_case rmpp_cases[] = {
	KUNIT_CASE(rmpp_single_segment),
	KUNIT_CASE(rmpp_multi_window),
	KUNIT_CASE(rmpp_lost_ack_retransmits),
	KUNIT_CASE(rmpp_closed_window_resend_inside),
	KUNIT_CASE(rmpp_retries_exhausted),
	KUNIT_CASE(rmpp_ack_progress_restores_retries),
	KUNIT_CASE(rmpp_stale_ack_ignored),
	KUNIT_CASE(rmpp_stale_window_kept_on_resend),
	KUNIT_CASE(rmpp_ack_progress_restarts_wait),
	KUNIT_CASE(rmpp_ack_beyond_sent_aborts),
	KUNIT_CASE(rmpp_abort_alloc_fails_counted),
	KUNIT_CASE(rmpp_ctl_bad_version_aborts),
	KUNIT_CASE(rmpp_ctl_broken_type_and_done),
	KUNIT_CASE(rmpp_window_too_small_aborts),
	KUNIT_CASE(rmpp_abort_keeps_class_header),
	KUNIT_CASE(rmpp_stop_from_receiver),
	KUNIT_CASE(rmpp_abort_from_receiver),
	KUNIT_CASE(rmpp_abort_bad_status_answered),
	KUNIT_CASE(rmpp_stop_abort_status_range),
	KUNIT_CASE(rmpp_cancel_mid_window),
	KUNIT_CASE(rmpp_unregister_mid_transfer),
	KUNIT_CASE(rmpp_port_removal_mid_transfer),
	KUNIT_CASE(rmpp_segment_send_error),
	KUNIT_CASE(rmpp_ack_before_send_completion),
	KUNIT_CASE(rmpp_request_then_response),
	KUNIT_CASE(rmpp_request_response_timeout),
	KUNIT_CASE(rmpp_set_acked),
	KUNIT_CASE(rmpp_same_tid_busy),
	KUNIT_CASE(rmpp_same_tid_after_cancel),
	KUNIT_CASE(rmpp_response_send),
	KUNIT_CASE(rmpp_ack_from_other_peer),
	KUNIT_CASE(rmpp_grh_acks_by_sgid),
	KUNIT_CASE(rmpp_same_tid_two_peers),
	KUNIT_CASE(rmpp_one_mib),
	KUNIT_CASE(rmpp_api_einval),
	KUNIT_CASE(rmpp_final_ack_during_retry),
	KUNIT_CASE(rmpp_final_ack_during_retry_request),
	KUNIT_CASE(rmpp_ack_during_retry_moves_on),
	KUNIT_CASE(rmpp_response_before_final_ack),
	KUNIT_CASE(rmpp_response_while_segment_in_hw),
	KUNIT_CASE(rmpp_modify_mid_window),
	KUNIT_CASE(rmpp_modify_in_hardware),
	KUNIT_CASE(rmpp_modify_without_timeout),
	KUNIT_CASE(rmpp_modify_ack_wait_capped),
	KUNIT_CASE(rmpp_late_ctl_after_final_ack),
	KUNIT_CASE(rmpp_stop_after_early_ack),
	KUNIT_CASE(rmpp_qp_error_mid_window),
	KUNIT_CASE(rmpp_unregister_segment_in_hw),
	KUNIT_CASE(rmpp_probe_verdict),
	{}
};

static struct kunit_suite rmpp_suite = {
	.name = "kmad_rmpp",
	.init = rt_init,
	.exit = rt_exit,
	.test_cases = rmpp_cases,
};

kunit_test_suites(&rmpp_suite);

MODULE_DESCRIPTION("KUnit tests for kmad's RMPP sender");
MODULE_LICENSE("GPL");
