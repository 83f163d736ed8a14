// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_rmpp_recv: the receiving side of RMPP (IBTA 13.6).
 *
 * Step mode: the test plays the sending peer (device 1).  It injects DATA
 * segments into device 0, where an agent registered with an RMPP version
 * reassembles them, and takes kmad's ACK, STOP and ABORT packets off
 * device 0's wire to compare them with what IBTA (and ib_mad) would send.
 * The messages the agent gets are compared byte for byte with the layout
 * &kmad_recv_wc.mad_len documents, built here from the segments.
 */

#include <linux/fs.h>
#include <linux/vmalloc.h>

#include "kmad_test.h"

#define RT_CLASS	KT_CLASS		/* SA: 56 bytes of header */
#define RT_HDR		KMAD_SA_MAD_HDR_SIZE
#define RT_SEG_PAY	KMAD_RMPP_DATA_SIZE	/* 220 */
#define RT_METHOD	KMAD_METHOD_GET_MULTI	/* ACKed with GetMultiResp */
#define RT_TID		0x0000000900000077ULL
/* Seven segments, the last one carrying 120 bytes of RMPP payload. */
#define RT_SEGS		7
#define RT_PAYLEN	(RT_SEGS * RT_SEG_PAY - 100)
/* 256 + 5 * 200 + (36 + 120 - 56): the first segment whole, then data. */
#define RT_MAD_LEN	1356
/* The receive window: an eighth of the receive queue (KT_RQ_DEPTH 32). */
#define RT_WIN		4
/* kmad's defaults: module parameters rmpp_max_recvs and rmpp_max_bytes. */
#define RT_MAX_RECVS	16
#define RT_MAX_BYTES	(2U << 20)
#define RT_IDLE_MS	40000
#define RT_LINGER_MS	10000
#define RT_MAX_DONE	64
#define RT_MAX_KEPT	4

struct rt {
	struct kt_fix *f;
	struct kmad_agent *agent;	/* the receiver, on device 0 */
	spinlock_t lock;		/* guards everything below */
	int recvs;
	int sends;
	struct kmad_recv_wc *wc[RT_MAX_KEPT];
	struct kmad_send_buf *req[RT_MAX_KEPT];
	enum kmad_send_status status[RT_MAX_KEPT];
};

static void rt_send_handler(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct rt *rt = agent->context;

	spin_lock(&rt->lock);
	if (rt->sends < RT_MAX_KEPT)
		rt->status[rt->sends] = wc->status;
	rt->sends++;
	spin_unlock(&rt->lock);
}

/* Keeps the first RT_MAX_KEPT messages for the test to look at. */
static void rt_recv_handler(struct kmad_agent *agent,
			    struct kmad_send_buf *request,
			    struct kmad_recv_wc *wc)
{
	struct rt *rt = agent->context;

	spin_lock(&rt->lock);
	if (rt->recvs < RT_MAX_KEPT) {
		rt->wc[rt->recvs] = wc;
		rt->req[rt->recvs] = request;
		wc = NULL;
	}
	rt->recvs++;
	spin_unlock(&rt->lock);
	kmad_free_recv(wc);
}

/* The kmad_test.h fixture, with the receiver's state riding on it:
 * test->priv is the &struct rt, whose @f is the fixture.
 */
static int rt_setup_rq(struct kunit *test, enum kmad_sim_mode mode,
		       u32 rq_depth)
{
	struct kmad_sim_config cfg;
	struct rt *rt;
	int ret;

	rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);
	if (!rt)
		return -ENOMEM;
	spin_lock_init(&rt->lock);
	test->priv = NULL;
	kt_fix_config(&cfg, mode);
	cfg.rq_depth = rq_depth;
	ret = kt_fix_setup_cfg(test, &cfg);
	if (ret)
		return ret;
	rt->f = test->priv;
	test->priv = rt;
	return 0;
}

static int rt_setup(struct kunit *test, enum kmad_sim_mode mode)
{
	return rt_setup_rq(test, mode, KT_RQ_DEPTH);
}

static int rt_init(struct kunit *test)
{
	return rt_setup(test, KMAD_SIM_STEP);
}

static struct rt *rt_of(struct kunit *test)
{
	return test->priv;
}

static void rt_exit(struct kunit *test)
{
	struct rt *rt = test->priv;
	struct kt_fix *f;
	int i;

	if (!rt)
		return;
	f = rt->f;
	/* The port first, as kt_fix_exit() does: it flushes the wire. */
	if (!IS_ERR_OR_NULL(f->fab))
		kmad_sim_destroy(f->fab);
	f->fab = NULL;
	if (rt->agent)
		kmad_unregister_agent(rt->agent);
	for (i = 0; i < min(rt->recvs, RT_MAX_KEPT); i++)
		kmad_free_recv(rt->wc[i]);
	test->priv = f;
	kt_fix_exit(test);
}

/* Register the receiver: for GetMulti requests, or send-only. */
static struct kmad_agent *rt_register(struct rt *rt, bool send_only)
{
	struct kmad_reg_req req = { .rmpp_version = KMAD_RMPP_VERSION };
	struct kmad_agent *a;

	if (!send_only) {
		req.mgmt_class = RT_CLASS;
		req.class_version = KT_VERSION;
		__set_bit(RT_METHOD, req.method_mask);
	}
	a = kmad_register_agent(rt->f->port[KT_DEV0], KMAD_QPT_GSI, &req,
				rt_send_handler, rt_recv_handler, rt);
	KUNIT_ASSERT_FALSE(rt->f->test, IS_ERR(a));
	rt->agent = a;
	return a;
}

/* Byte @i of segment @seg: distinct in every segment and offset. */
static u8 rt_byte(u32 seg, unsigned int i)
{
	return (u8)(seg * 31 + i * 7 + 1);
}

/* Segment @seg of @nsegs of a transfer of @paylen bytes of payload. */
static void rt_seg(struct kmad_mad *mad, u8 method, u64 tid, u32 seg,
		   u32 nsegs, u32 paylen)
{
	struct kmad_rmpp_mad *m = (struct kmad_rmpp_mad *)mad;
	u8 flags = KMAD_RMPP_FLAG_ACTIVE;
	u8 *b = (u8 *)mad;
	unsigned int i;

	memset(mad, 0, sizeof(*mad));
	for (i = KMAD_RMPP_MAD_HDR_SIZE; i < KMAD_MAD_SIZE; i++)
		b[i] = rt_byte(seg, i);
	mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	mad->mad_hdr.mgmt_class = RT_CLASS;
	mad->mad_hdr.class_version = KT_VERSION;
	mad->mad_hdr.method = method;
	mad->mad_hdr.tid = cpu_to_be64(tid);
	mad->mad_hdr.attr_id = cpu_to_be16(KMAD_SA_ATTR_PATH_REC);
	if (seg == 1)
		flags |= KMAD_RMPP_FLAG_FIRST;
	if (seg == nsegs)
		flags |= KMAD_RMPP_FLAG_LAST;
	m->rmpp_hdr.rmpp_version = KMAD_RMPP_VERSION;
	m->rmpp_hdr.rmpp_type = KMAD_RMPP_TYPE_DATA;
	m->rmpp_hdr.rmpp_rtime_flags =
		KMAD_RMPP_NO_RESPTIME << KMAD_RMPP_RTIME_SHIFT | flags;
	m->rmpp_hdr.seg_num = cpu_to_be32(seg);
	if (seg == 1)
		m->rmpp_hdr.paylen_newwin = cpu_to_be32(paylen);
	else if (seg == nsegs)
		m->rmpp_hdr.paylen_newwin =
			cpu_to_be32(paylen - (nsegs - 1) * RT_SEG_PAY);
}

/* Inject @mad into device 0 as device 1's QP @src_qpn sent it; settle. */
static void rt_inject_from(struct rt *rt, const struct kmad_mad *mad,
			   u32 src_qpn)
{
	struct kt_fix *f = rt->f;

	KUNIT_ASSERT_EQ(f->test,
			kmad_sim_inject(f->fab, KT_DEV0, KT_QPN, mad,
					sizeof(*mad),
					kmad_port_lid(f->port[KT_DEV1]),
					src_qpn), 0);
	kt_event(f, KT_DEV0);
}

static void rt_inject(struct rt *rt, const struct kmad_mad *mad)
{
	rt_inject_from(rt, mad, KT_QPN);
}

/* Inject segment @seg of the usual transfer (RT_SEGS, RT_PAYLEN). */
static void rt_send_seg(struct rt *rt, u8 method, u64 tid, u32 seg)
{
	struct kmad_mad mad;

	rt_seg(&mad, method, tid, seg, RT_SEGS, RT_PAYLEN);
	rt_inject(rt, &mad);
}

/* Take the oldest packet device 0 sent off its wire. */
static void rt_take(struct rt *rt, struct kmad_rmpp_mad *m)
{
	struct kt_fix *f = rt->f;

	KUNIT_ASSERT_GE(f->test, kmad_sim_pending_sends(f->fab, KT_DEV0,
							KT_QPN), 1U);
	KUNIT_ASSERT_EQ(f->test, kmad_sim_peek_send(f->fab, KT_DEV0, KT_QPN, 0,
						    m, sizeof(*m)),
			(int)sizeof(*m));
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
}

/* Expect device 0's next packet to be this ACK, STOP or ABORT. */
static void rt_expect_ctl(struct rt *rt, u8 method, u64 tid, u8 type,
			  u8 status, u32 seg, u32 newwin)
{
	struct kunit *test = rt->f->test;
	struct kmad_rmpp_mad m;

	rt_take(rt, &m);
	KUNIT_EXPECT_EQ(test, m.mad_hdr.mgmt_class, RT_CLASS);
	KUNIT_EXPECT_EQ(test, m.mad_hdr.method, method);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(m.mad_hdr.tid), tid);
	KUNIT_EXPECT_EQ(test, m.rmpp_hdr.rmpp_version, KMAD_RMPP_VERSION);
	KUNIT_EXPECT_EQ(test, m.rmpp_hdr.rmpp_type, type);
	KUNIT_EXPECT_EQ(test, kmad_rmpp_flags(&m.rmpp_hdr),
			KMAD_RMPP_FLAG_ACTIVE);
	KUNIT_EXPECT_EQ(test, m.rmpp_hdr.rmpp_status, status);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(m.rmpp_hdr.seg_num), seg);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(m.rmpp_hdr.paylen_newwin), newwin);
}

static void rt_expect_ack(struct rt *rt, u8 method, u64 tid, u32 seg,
			  u32 newwin)
{
	rt_expect_ctl(rt, method, tid, KMAD_RMPP_TYPE_ACK,
		      KMAD_RMPP_STATUS_SUCCESS, seg, newwin);
}

/* Expect device 0 to have sent nothing more. */
static void rt_expect_quiet(struct rt *rt)
{
	KUNIT_EXPECT_EQ(rt->f->test,
			kmad_sim_pending_sends(rt->f->fab, KT_DEV0, KT_QPN),
			0U);
}

static s64 rt_pstat(struct rt *rt, enum kmad_port_stat s)
{
	return atomic64_read(&rt->f->port[KT_DEV0]->stats[s]);
}

static int rt_recvs(struct rt *rt)
{
	int n;

	spin_lock(&rt->lock);
	n = rt->recvs;
	spin_unlock(&rt->lock);
	return n;
}

/*
 * Expect message @i to be the transfer of @nsegs segments and @paylen
 * bytes the test sent: its first segment whole, then bytes RT_HDR on of
 * every later one, the last cut where the payload ends.
 */
static void rt_expect_msg(struct rt *rt, int i, u8 method, u64 tid,
			  u32 nsegs, u32 paylen)
{
	struct kunit *test = rt->f->test;
	const struct kmad_recv_wc *wc;
	struct kmad_mad seg;
	const u8 *got;
	size_t off, n;
	u32 k;

	KUNIT_ASSERT_GT(test, rt_recvs(rt), i);
	wc = rt->wc[i];
	got = (const u8 *)wc->mad;
	rt_seg(&seg, method, tid, 1, nsegs, paylen);
	KUNIT_EXPECT_EQ(test, memcmp(got, &seg, KMAD_MAD_SIZE), 0);
	off = KMAD_MAD_SIZE;
	for (k = 2; k <= nsegs; k++) {
		rt_seg(&seg, method, tid, k, nsegs, paylen);
		n = k < nsegs ? KMAD_MAD_SIZE - RT_HDR :
		    KMAD_RMPP_MAD_HDR_SIZE +
		    (paylen - (nsegs - 1) * RT_SEG_PAY) - RT_HDR;
		KUNIT_ASSERT_LE(test, off + n, wc->mad_len);
		KUNIT_EXPECT_EQ(test,
				memcmp(got + off, (u8 *)&seg + RT_HDR, n), 0);
		off += n;
	}
	KUNIT_EXPECT_EQ(test, wc->mad_len, off);
}

/* The window the tests expect is the one the fixture's queue makes. */
static void rt_check_window(struct rt *rt)
{
	KUNIT_ASSERT_EQ(rt->f->test,
			rt->f->port[KT_DEV0]->qpi[KMAD_QPT_GSI].rq_depth,
			(unsigned int)KT_RQ_DEPTH);
}

/* Registration takes RMPP version 1 for an RMPP class and send-only
 * agents, and refuses other versions and classes without the header.
 */
static void rmpp_recv_registration(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	struct kmad_reg_req req = {
		.mgmt_class = KMAD_MGMT_CLASS_PERF_MGMT,
		.class_version = 1,
		.rmpp_version = KMAD_RMPP_VERSION,
	};
	struct kmad_agent *a;

	__set_bit(KMAD_METHOD_GET, req.method_mask);
	a = kmad_register_agent(rt->f->port[KT_DEV0], KMAD_QPT_GSI, &req,
				rt_send_handler, rt_recv_handler, rt);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(a), -EINVAL);
	req.mgmt_class = RT_CLASS;
	req.class_version = KT_VERSION;
	req.rmpp_version = 2;
	a = kmad_register_agent(rt->f->port[KT_DEV0], KMAD_QPT_GSI, &req,
				rt_send_handler, rt_recv_handler, rt);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(a), -EINVAL);
	rt_register(rt, true);
	KUNIT_EXPECT_EQ(test, kmad_agent_priv(rt->agent)->reg.rmpp_version,
			KMAD_RMPP_VERSION);
}

/*
 * A one-segment transfer: handed on as it is, ACKed 1/1, its length the
 * RMPP header's end plus its PayloadLength (ib_mad's get_mad_len()).
 */
static void rmpp_recv_single_segment(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	struct kmad_mad mad;

	rt_register(rt, false);
	rt_seg(&mad, RT_METHOD, RT_TID, 1, 1, 100);
	rt_inject(rt, &mad);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 1);
	rt_expect_quiet(rt);
	KUNIT_ASSERT_EQ(test, rt_recvs(rt), 1);
	KUNIT_EXPECT_PTR_EQ(test, rt->req[0], NULL);
	KUNIT_EXPECT_EQ(test, rt->wc[0]->mad_len,
			(size_t)(KMAD_RMPP_MAD_HDR_SIZE + 100));
	KUNIT_EXPECT_EQ(test, memcmp(rt->wc[0]->mad, &mad, sizeof(mad)), 0);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_REASSEMBLED), 1);
}

/*
 * Seven segments in order, an unsolicited request: ACK 1 opening the
 * window to 1 + 4, nothing for 2-4, ACK 5 opening it to 9, nothing for
 * 6, ACK 7 for the last; one message, byte for byte.
 */
static void rmpp_recv_in_order(struct kunit *test)
{
	static const u32 ack_after[RT_SEGS + 1][2] = {
		[1] = { 1, 1 + RT_WIN },
		[5] = { 5, 1 + 2 * RT_WIN },
		[7] = { 7, 1 + 2 * RT_WIN },
	};
	struct rt *rt = rt_of(test);
	u32 seg;

	rt_check_window(rt);
	rt_register(rt, false);
	for (seg = 1; seg <= RT_SEGS; seg++) {
		KUNIT_EXPECT_EQ(test, rt_recvs(rt), 0);
		rt_send_seg(rt, RT_METHOD, RT_TID, seg);
		if (ack_after[seg][0])
			rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID,
				      ack_after[seg][0], ack_after[seg][1]);
		rt_expect_quiet(rt);
	}
	KUNIT_ASSERT_EQ(test, rt_recvs(rt), 1);
	KUNIT_EXPECT_PTR_EQ(test, rt->req[0], NULL);
	KUNIT_EXPECT_EQ(test, rt->wc[0]->mad_len, (size_t)RT_MAD_LEN);
	rt_expect_msg(rt, 0, RT_METHOD, RT_TID, RT_SEGS, RT_PAYLEN);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_REASSEMBLED), 1);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_ACKS), 3);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_REQ_DISPATCHED), 1);
}

/* A segment already had is ACKed again with the last one had; so is any
 * segment of a finished transfer (its final ACK may have been lost).
 */
static void rmpp_recv_duplicate_reacked(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	u32 seg;

	rt_register(rt, false);
	rt_send_seg(rt, RT_METHOD, RT_TID, 1);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 5);
	rt_send_seg(rt, RT_METHOD, RT_TID, 2);
	rt_expect_quiet(rt);
	rt_send_seg(rt, RT_METHOD, RT_TID, 2);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 2, 5);
	rt_send_seg(rt, RT_METHOD, RT_TID, 1);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 2, 5);
	for (seg = 3; seg <= RT_SEGS; seg++)
		rt_send_seg(rt, RT_METHOD, RT_TID, seg);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 5, 9);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 7, 9);
	/* The last window again: ACKed, not delivered again. */
	rt_send_seg(rt, RT_METHOD, RT_TID, 6);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 7, 9);
	rt_expect_quiet(rt);
	KUNIT_ASSERT_EQ(test, rt_recvs(rt), 1);
	rt_expect_msg(rt, 0, RT_METHOD, RT_TID, RT_SEGS, RT_PAYLEN);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_DUPLICATES), 3);
	/*
	 * The duplicate first segment allocated no message buffer of its
	 * own: only the transfer's one was.
	 */
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_BUFFERS), 1);
}

/*
 * A finished transfer lingers 10 s: the same transfer sent again is ACKed
 * and not delivered again (as ib_mad); after 10 s it is a new transfer.
 */
static void rmpp_recv_done_lingers(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	struct kmad_mad mad;

	rt_register(rt, false);
	rt_seg(&mad, RT_METHOD, RT_TID, 1, 1, 100);
	rt_inject(rt, &mad);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 1);
	kmad_sim_advance_clock(rt->f->fab, RT_LINGER_MS - 1000);
	kt_settle(rt->f);
	rt_inject(rt, &mad);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 1);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 1);
	kmad_sim_advance_clock(rt->f->fab, 1000);
	kt_settle(rt->f);
	KUNIT_EXPECT_TRUE(test,
			  list_empty(&kmad_agent_priv(rt->agent)->rmpp_recvs));
	rt_inject(rt, &mad);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 1);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 2);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_DUPLICATES), 1);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_TIMEOUTS), 0);
}

/*
 * One-segment messages, each with its own TID, linger done 64 at most:
 * the 65th forgets the first, which is then taken again as new, while the
 * last is still known and dropped as a duplicate.  (Every one lingered its
 * 10 s: a list, walked at every DATA packet, as long as the sender's rate
 * made it.)
 */
static void rmpp_recv_done_capped(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	struct kmad_agent_priv *agent;
	struct list_head *pos;
	struct kmad_mad mad;
	unsigned int i, n = 0;

	rt_register(rt, false);
	agent = kmad_agent_priv(rt->agent);
	for (i = 0; i <= RT_MAX_DONE; i++) {
		rt_seg(&mad, RT_METHOD, RT_TID + i, 1, 1, 100);
		rt_inject(rt, &mad);
		rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID + i, 1,
			      1);
	}
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), RT_MAX_DONE + 1);
	spin_lock_irq(&agent->lock);
	list_for_each(pos, &agent->rmpp_recvs)
		n++;
	spin_unlock_irq(&agent->lock);
	KUNIT_EXPECT_EQ(test, n, RT_MAX_DONE);

	rt_seg(&mad, RT_METHOD, RT_TID + RT_MAX_DONE, 1, 1, 100);
	rt_inject(rt, &mad);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID + RT_MAX_DONE,
		      1, 1);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_DUPLICATES), 1);
	rt_seg(&mad, RT_METHOD, RT_TID, 1, 1, 100);
	rt_inject(rt, &mad);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 1);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), RT_MAX_DONE + 2);
	rt_expect_quiet(rt);
}

/*
 * The bound forgets the transfer that finished first, not the one that
 * started first: a seven-segment transfer started before 64 one-segment
 * messages and finished after them is still known, and its repeated last
 * segment ACKed again.  (It stayed where it started on the list and was
 * the next forgotten: the repeated segment went unanswered.)
 */
static void rmpp_recv_done_capped_finish_order(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	const u64 long_tid = RT_TID + 1000;
	struct kmad_mad mad;
	unsigned int i;
	u32 seg;

	rt_register(rt, false);
	rt_send_seg(rt, RT_METHOD, long_tid, 1);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, long_tid, 1, 5);
	for (i = 0; i < RT_MAX_DONE; i++) {
		rt_seg(&mad, RT_METHOD, RT_TID + i, 1, 1, 100);
		rt_inject(rt, &mad);
		rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID + i, 1,
			      1);
	}
	for (seg = 2; seg <= RT_SEGS; seg++)
		rt_send_seg(rt, RT_METHOD, long_tid, seg);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, long_tid, 5, 9);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, long_tid, 7, 9);
	rt_seg(&mad, RT_METHOD, RT_TID + RT_MAX_DONE, 1, 1, 100);
	rt_inject(rt, &mad);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID + RT_MAX_DONE,
		      1, 1);

	rt_send_seg(rt, RT_METHOD, long_tid, RT_SEGS);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, long_tid, 7, 9);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), RT_MAX_DONE + 2);
}

/* A segment past the next expected is dropped and the last good ACKed;
 * the transfer goes on from there.
 */
static void rmpp_recv_out_of_order(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	u32 seg;

	rt_register(rt, false);
	rt_send_seg(rt, RT_METHOD, RT_TID, 1);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 5);
	rt_send_seg(rt, RT_METHOD, RT_TID, 3);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 5);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_OUT_OF_ORDER), 1);
	for (seg = 2; seg <= RT_SEGS; seg++)
		rt_send_seg(rt, RT_METHOD, RT_TID, seg);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 5, 9);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 7, 9);
	rt_expect_quiet(rt);
	KUNIT_ASSERT_EQ(test, rt_recvs(rt), 1);
	rt_expect_msg(rt, 0, RT_METHOD, RT_TID, RT_SEGS, RT_PAYLEN);
}

/* A STOP or an ABORT from the sender ends the transfer: later segments
 * are dropped unanswered, nothing is delivered.
 */
static void rmpp_recv_sender_ends(struct kunit *test)
{
	static const u8 types[] = { KMAD_RMPP_TYPE_STOP, KMAD_RMPP_TYPE_ABORT };
	struct rt *rt = rt_of(test);
	struct kmad_rmpp_mad end;
	u32 seg;
	int i;

	rt_register(rt, false);
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		rt_send_seg(rt, RT_METHOD, RT_TID + i, 1);
		rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID + i,
			      1, 5);
		rt_send_seg(rt, RT_METHOD, RT_TID + i, 2);
		rt_seg((struct kmad_mad *)&end, RT_METHOD, RT_TID + i, 3,
		       RT_SEGS, RT_PAYLEN);
		end.rmpp_hdr.rmpp_type = types[i];
		end.rmpp_hdr.rmpp_status = types[i] == KMAD_RMPP_TYPE_STOP ?
					   KMAD_RMPP_STATUS_RESX :
					   KMAD_RMPP_STATUS_UNSPEC;
		end.rmpp_hdr.seg_num = 0;
		end.rmpp_hdr.paylen_newwin = 0;
		rt_inject(rt, (struct kmad_mad *)&end);
		KUNIT_EXPECT_EQ(test,
				rt_pstat(rt, KMAD_PSTAT_RMPP_REMOTE_ENDED),
				i + 1);
		for (seg = 3; seg <= RT_SEGS; seg++)
			rt_send_seg(rt, RT_METHOD, RT_TID + i, seg);
		rt_expect_quiet(rt);
	}
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 0);
	KUNIT_EXPECT_EQ(test, kmad_agent_priv(rt->agent)->rmpp_recvs_active,
			0U);
}

/*
 * A STOP and an ABORT of RMPPVersion 2 about no transfer, sent or
 * received: the STOP is refused with ABORT (UNV), as ib_mad's nack_recv()
 * does; the ABORT is dropped and counted (rmpp_recv_dropped), never
 * answered: IBTA answers no ABORT, and two ends must not bounce ABORTs.
 */
static void rmpp_recv_abort_bad_version_dropped(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	struct kmad_rmpp_mad m;
	s64 dropped, aborts;

	rt_register(rt, false);
	dropped = rt_pstat(rt, KMAD_PSTAT_RMPP_DROPPED);
	aborts = rt_pstat(rt, KMAD_PSTAT_RMPP_ABORTS);
	rt_seg((struct kmad_mad *)&m, RT_METHOD, RT_TID, 1, RT_SEGS, RT_PAYLEN);
	m.rmpp_hdr.rmpp_version = 2;
	m.rmpp_hdr.rmpp_type = KMAD_RMPP_TYPE_STOP;
	m.rmpp_hdr.rmpp_status = KMAD_RMPP_STATUS_RESX;
	m.rmpp_hdr.rmpp_rtime_flags = KMAD_RMPP_FLAG_ACTIVE;
	m.rmpp_hdr.seg_num = 0;
	m.rmpp_hdr.paylen_newwin = 0;
	rt_inject(rt, (struct kmad_mad *)&m);
	rt_expect_ctl(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID,
		      KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_UNV, 0, 0);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_ABORTS), aborts + 1);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_DROPPED), dropped);

	m.rmpp_hdr.rmpp_type = KMAD_RMPP_TYPE_ABORT;
	m.rmpp_hdr.rmpp_status = KMAD_RMPP_STATUS_UNSPEC;
	rt_inject(rt, (struct kmad_mad *)&m);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_ABORTS), aborts + 1);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_DROPPED),
			dropped + 1);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 0);
	KUNIT_EXPECT_TRUE(test,
			  list_empty(&kmad_agent_priv(rt->agent)->rmpp_recvs));
}

/* One bad packet and what kmad answers it with. */
struct rt_bad_row {
	const char *name;
	u8 version;
	u8 type;
	u8 status;
	u8 flags;	/* RMPPFlags besides Active */
	u32 seg;
	u32 paylen;
	u8 ans_type;
	u8 ans_status;
};

#define RT_F	KMAD_RMPP_FLAG_FIRST
#define RT_L	KMAD_RMPP_FLAG_LAST

static const struct rt_bad_row rt_bad_rows[] = {
	{ "version_2", 2, KMAD_RMPP_TYPE_DATA, 0, RT_F | RT_L, 1, 100,
	  KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_UNV },
	{ "type_5", 1, 5, 0, RT_F, 1, RT_PAYLEN,
	  KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_BADT },
	{ "type_5_version_0", 0, 5, 0, RT_F, 1, RT_PAYLEN,
	  KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_UNV },
	{ "first_not_last_one_segment", 1, KMAD_RMPP_TYPE_DATA, 0, RT_F, 1,
	  RT_SEG_PAY, KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_BAD_LEN },
	{ "last_segment_too_short", 1, KMAD_RMPP_TYPE_DATA, 0, RT_F, 1,
	  RT_SEG_PAY + 10, KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_BAD_LEN },
	{ "seg_1_not_first", 1, KMAD_RMPP_TYPE_DATA, 0, 0, 1, RT_PAYLEN,
	  KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_BAD_SEG },
	{ "first_seg_2", 1, KMAD_RMPP_TYPE_DATA, 0, RT_F, 2, RT_PAYLEN,
	  KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_BAD_SEG },
	{ "data_status", 1, KMAD_RMPP_TYPE_DATA, 3, RT_F, 1, RT_PAYLEN,
	  KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_BAD_STATUS },
	{ "too_big", 1, KMAD_RMPP_TYPE_DATA, 0, RT_F, 1, RT_MAX_BYTES + 1,
	  KMAD_RMPP_TYPE_STOP, KMAD_RMPP_STATUS_RESX },
};

static void rt_bad_desc(const struct rt_bad_row *row, char *desc)
{
	strscpy(desc, row->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rt_bad, rt_bad_rows, rt_bad_desc);

/* Each bad first packet is refused with its status, nothing delivered,
 * no transfer kept.
 */
static void rmpp_recv_refused(struct kunit *test)
{
	const struct rt_bad_row *row = test->param_value;
	struct rt *rt = rt_of(test);
	struct kmad_rmpp_mad m;

	rt_register(rt, false);
	rt_seg((struct kmad_mad *)&m, RT_METHOD, RT_TID, 1, 2, row->paylen);
	m.rmpp_hdr.rmpp_version = row->version;
	m.rmpp_hdr.rmpp_type = row->type;
	m.rmpp_hdr.rmpp_status = row->status;
	m.rmpp_hdr.rmpp_rtime_flags = KMAD_RMPP_FLAG_ACTIVE | row->flags;
	m.rmpp_hdr.seg_num = cpu_to_be32(row->seg);
	rt_inject(rt, (struct kmad_mad *)&m);
	rt_expect_ctl(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, row->ans_type,
		      row->ans_status, 0, 0);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 0);
	KUNIT_EXPECT_TRUE(test,
			  list_empty(&kmad_agent_priv(rt->agent)->rmpp_recvs));
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, row->ans_type ==
					   KMAD_RMPP_TYPE_STOP ?
					   KMAD_PSTAT_RMPP_RESX :
					   KMAD_PSTAT_RMPP_ABORTS), 1);
}

/* Write @val to kmad's module parameter @name, as an admin would. */
static int rt_set_param(const char *name, unsigned int val)
{
	char path[64], text[16];
	struct file *filp;
	loff_t pos = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/module/kmad/parameters/%s", name);
	snprintf(text, sizeof(text), "%u\n", val);
	filp = filp_open(path, O_WRONLY, 0);
	if (IS_ERR(filp))
		return PTR_ERR(filp);
	n = kernel_write(filp, text, strlen(text), &pos);
	filp_close(filp, NULL);
	return n < 0 ? n : 0;
}

/*
 * The module parameters refuse what would refuse every multi-segment
 * message (no transfer at once, a PayloadLength limit under 1 KiB) or let
 * a peer have kmad reassemble more than an agent's queue of unread MADs
 * holds (KMAD_AGENT_RECV_BYTES_MAX), and take their ends.  Every write is
 * an EXPECT, so that the defaults are written back whatever happened.
 */
static void rmpp_recv_param_ranges(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rt_set_param("rmpp_max_recvs", 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, rt_set_param("rmpp_max_recvs", 1025), -EINVAL);
	KUNIT_EXPECT_EQ(test, rt_set_param("rmpp_max_recvs", 1024), 0);
	KUNIT_EXPECT_EQ(test, rt_set_param("rmpp_max_recvs", 1), 0);
	KUNIT_EXPECT_EQ(test, rt_set_param("rmpp_max_recvs", RT_MAX_RECVS), 0);
	KUNIT_EXPECT_EQ(test, rt_set_param("rmpp_max_bytes", 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, rt_set_param("rmpp_max_bytes", 1023), -EINVAL);
	KUNIT_EXPECT_EQ(test,
			rt_set_param("rmpp_max_bytes",
				     KMAD_AGENT_RECV_BYTES_MAX + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, rt_set_param("rmpp_max_bytes",
					   KMAD_AGENT_RECV_BYTES_MAX), 0);
	KUNIT_EXPECT_EQ(test, rt_set_param("rmpp_max_bytes", 1024), 0);
	KUNIT_EXPECT_EQ(test, rt_set_param("rmpp_max_bytes", RT_MAX_BYTES), 0);
}

/*
 * rmpp_max_bytes raised to 8 MiB takes a 6 MiB transfer: its first
 * segment is ACKed.  The reassembly buffer, allocated in the CQ drain,
 * comes from vmalloc beyond kmalloc's 4 MiB; before, an atomic
 * allocation there could never exceed 4 MiB and the transfer was refused
 * with STOP RESX whatever the limit said.
 */
static void rmpp_recv_above_kmalloc_max(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	struct kmad_mad m;

	rt_register(rt, false);
	KUNIT_ASSERT_EQ(test, rt_set_param("rmpp_max_bytes", 8U << 20), 0);
	rt_seg(&m, RT_METHOD, RT_TID, 1, RT_SEGS, 6U << 20);
	rt_inject(rt, &m);
	KUNIT_EXPECT_EQ(test, rt_set_param("rmpp_max_bytes", RT_MAX_BYTES), 0);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 5);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_RESX), 0);
	KUNIT_EXPECT_EQ(test, kmad_agent_priv(rt->agent)->rmpp_recvs_active,
			1U);
}

/*
 * kmad_free_recv() of a reassembled message whose buffer came from
 * vmalloc (above 4 MiB, or when kmalloc() fails on a fragmented host),
 * with interrupts off, as <kmad/mad.h> allows.  Built by hand: a real
 * transfer above 4 MiB is 20000 segments.  Before, the buffer went to
 * vfree() at once: "BUG: sleeping function called from invalid context"
 * (the debug kernel's might_sleep() in vfree()).
 */
/* A ULP's own lock, taken with interrupts off around kmad_free_recv(). */
static DEFINE_SPINLOCK(rt_ulp_lock);

static void rmpp_recv_free_vmalloc_irqs_off(struct kunit *test)
{
	struct kmad_recv_priv *recv;
	struct kmad_mad *mad;
	unsigned long flags;

	mad = vzalloc(4 * PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, mad);
	recv = kzalloc(sizeof(*recv), GFP_KERNEL);
	if (!recv)
		vfree(mad);
	KUNIT_ASSERT_NOT_NULL(test, recv);
	recv->wc.mad = mad;
	recv->wc.mad_len = 4 * PAGE_SIZE;
	spin_lock_irqsave(&rt_ulp_lock, flags);
	kmad_free_recv(&recv->wc);
	spin_unlock_irqrestore(&rt_ulp_lock, flags);
}

/* Transfer RT_TID's segments but the last, with the two ACKs they get. */
static void rt_send_all_but_last(struct rt *rt)
{
	u32 seg;

	rt_send_seg(rt, RT_METHOD, RT_TID, 1);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 5);
	for (seg = 2; seg < RT_SEGS; seg++)
		rt_send_seg(rt, RT_METHOD, RT_TID, seg);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 5, 9);
}

/* A last segment whose PayloadLength disagrees with the first's, or a
 * segment past the last: ABORT BAD_LEN / S2B, and the transfer is gone.
 */
static void rmpp_recv_bad_last_segment(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	struct kmad_rmpp_mad m;

	rt_register(rt, false);
	rt_send_all_but_last(rt);
	rt_seg((struct kmad_mad *)&m, RT_METHOD, RT_TID, RT_SEGS, RT_SEGS,
	       RT_PAYLEN);
	m.rmpp_hdr.paylen_newwin = cpu_to_be32(50);
	rt_inject(rt, (struct kmad_mad *)&m);
	rt_expect_ctl(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID,
		      KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_BAD_LEN, 0, 0);
	/* Gone: the right last segment is dropped unanswered. */
	rt_send_seg(rt, RT_METHOD, RT_TID, RT_SEGS);
	rt_expect_quiet(rt);

	/* Segment 3 of a transfer of 2. */
	rt_seg((struct kmad_mad *)&m, RT_METHOD, RT_TID + 1, 1, 2, 300);
	rt_inject(rt, (struct kmad_mad *)&m);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID + 1, 1, 5);
	rt_seg((struct kmad_mad *)&m, RT_METHOD, RT_TID + 1, 3, 4, 300);
	rt_inject(rt, (struct kmad_mad *)&m);
	rt_expect_ctl(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID + 1,
		      KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_S2B, 0, 0);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 0);
	KUNIT_EXPECT_TRUE(test,
			  list_empty(&kmad_agent_priv(rt->agent)->rmpp_recvs));
}

/*
 * The Last flag must be on the segment PayloadLength makes the last, and
 * only there: segment 7 of 7 without it, or segment 3 of 7 with it (and
 * the last segment's PayloadLength), is ABORT BAD_LEN and ends the
 * transfer, nothing copied.  Taken, the first would copy a whole segment
 * past the end of the reassembly buffer, the second the rest of the
 * message out of one 256-byte MAD (KASAN watches both).
 */
static void rmpp_recv_last_flag_mismatch(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	s64 aborts = rt_pstat(rt, KMAD_PSTAT_RMPP_ABORTS);
	struct kmad_rmpp_mad m;

	rt_register(rt, false);
	rt_send_all_but_last(rt);
	rt_seg((struct kmad_mad *)&m, RT_METHOD, RT_TID, RT_SEGS, RT_SEGS,
	       RT_PAYLEN);
	m.rmpp_hdr.rmpp_rtime_flags &= ~KMAD_RMPP_FLAG_LAST;
	rt_inject(rt, (struct kmad_mad *)&m);
	rt_expect_ctl(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID,
		      KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_BAD_LEN, 0, 0);
	rt_send_seg(rt, RT_METHOD, RT_TID, RT_SEGS);
	rt_expect_quiet(rt);

	rt_send_seg(rt, RT_METHOD, RT_TID + 1, 1);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID + 1, 1, 5);
	rt_send_seg(rt, RT_METHOD, RT_TID + 1, 2);
	rt_seg((struct kmad_mad *)&m, RT_METHOD, RT_TID + 1, 3, RT_SEGS,
	       RT_PAYLEN);
	m.rmpp_hdr.rmpp_rtime_flags |= KMAD_RMPP_FLAG_LAST;
	m.rmpp_hdr.paylen_newwin =
		cpu_to_be32(RT_PAYLEN - (RT_SEGS - 1) * RT_SEG_PAY);
	rt_inject(rt, (struct kmad_mad *)&m);
	rt_expect_ctl(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID + 1,
		      KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_BAD_LEN, 0, 0);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 0);
	KUNIT_EXPECT_TRUE(test,
			  list_empty(&kmad_agent_priv(rt->agent)->rmpp_recvs));
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_ABORTS), aborts + 2);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_REASSEMBLED), 0);
}

/* rmpp_max_recvs transfers at once; the next is refused with STOP RESX
 * and counted; once one finishes, a new one is taken.
 */
static void rmpp_recv_limit(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	struct kmad_mad mad;
	u32 i, seg;

	rt_register(rt, false);
	for (i = 0; i < RT_MAX_RECVS; i++) {
		rt_send_seg(rt, RT_METHOD, RT_TID + i, 1);
		rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID + i,
			      1, 5);
	}
	rt_send_seg(rt, RT_METHOD, RT_TID + i, 1);
	rt_expect_ctl(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID + i,
		      KMAD_RMPP_TYPE_STOP, KMAD_RMPP_STATUS_RESX, 0, 0);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_RESX), 1);
	/* The refused one had no buffer allocated for it. */
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_BUFFERS),
			RT_MAX_RECVS);
	/* A one-segment transfer needs no reassembly: still taken. */
	rt_seg(&mad, RT_METHOD, RT_TID + 100, 1, 1, 50);
	rt_inject(rt, &mad);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID + 100, 1, 1);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 1);

	for (seg = 2; seg <= RT_SEGS; seg++)
		rt_send_seg(rt, RT_METHOD, RT_TID, seg);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 5, 9);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 7, 9);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 2);
	rt_send_seg(rt, RT_METHOD, RT_TID + i, 1);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID + i, 1, 5);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_BUFFERS),
			RT_MAX_RECVS + 1);
}

/*
 * The receiver's allocations in the CQ drain, each failed once
 * (kmad_priv.h, enum kmad_alloc_site), on a first segment that its sender
 * then repeats (as it does when no ACK comes):
 *   - the packet's record: dropped unanswered, counted; the repeat starts
 *     the transfer;
 *   - the transfer's record or its buffer: refused with STOP (ResX),
 *     counted; the repeat starts it;
 *   - the ACK: not sent, counted; the transfer started, so the repeat is
 *     a duplicate, ACKed again.
 */
static void rmpp_recv_alloc_fails(struct kunit *test)
{
	static const enum kmad_alloc_site sites[] = {
		KMAD_ALLOC_RMPP_OUT, KMAD_ALLOC_RMPP_XFER, KMAD_ALLOC_RMPP_BUF,
		KMAD_ALLOC_RMPP_CTL,
	};
	struct rt *rt = rt_of(test);
	s64 dropped, resx, dups, buffers;
	int i;

	rt_register(rt, false);
	for (i = 0; i < ARRAY_SIZE(sites); i++) {
		dropped = rt_pstat(rt, KMAD_PSTAT_RMPP_DROPPED);
		resx = rt_pstat(rt, KMAD_PSTAT_RMPP_RESX);
		dups = rt_pstat(rt, KMAD_PSTAT_RMPP_DUPLICATES);
		buffers = rt_pstat(rt, KMAD_PSTAT_RMPP_BUFFERS);
		kt_fail_allocs(sites[i], 1);
		rt_send_seg(rt, RT_METHOD, RT_TID + i, 1);
		KUNIT_EXPECT_EQ_MSG(test, kt_allocs_failed(sites[i]), 1,
				    "site %d", sites[i]);
		switch (sites[i]) {
		case KMAD_ALLOC_RMPP_XFER:
		case KMAD_ALLOC_RMPP_BUF:
			rt_expect_ctl(rt, RT_METHOD | KMAD_METHOD_RESP,
				      RT_TID + i, KMAD_RMPP_TYPE_STOP,
				      KMAD_RMPP_STATUS_RESX, 0, 0);
			KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_RESX),
					resx + 1);
			KUNIT_EXPECT_EQ(test,
					rt_pstat(rt, KMAD_PSTAT_RMPP_BUFFERS),
					buffers);
			break;
		default:
			KUNIT_EXPECT_EQ(test,
					rt_pstat(rt, KMAD_PSTAT_RMPP_DROPPED),
					dropped + 1);
			break;
		}
		rt_expect_quiet(rt);

		rt_send_seg(rt, RT_METHOD, RT_TID + i, 1);
		rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID + i,
			      1, 5);
		rt_expect_quiet(rt);
		KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_DUPLICATES),
				dups + (sites[i] == KMAD_ALLOC_RMPP_CTL));
	}
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_BUFFERS),
			ARRAY_SIZE(sites));
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 0);
}

/*
 * A one-segment message whose record cannot be allocated is dropped
 * unanswered (without the record a repeat would be delivered twice); its
 * repeat is taken: ACKed and delivered once.  When the ABORT (T2L) of an
 * idle transfer cannot be allocated, the transfer still ends, counted.
 */
static void rmpp_recv_alloc_fails_single_and_abort(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	s64 dropped = rt_pstat(rt, KMAD_PSTAT_RMPP_DROPPED);
	struct kmad_mad mad;

	rt_register(rt, false);
	rt_seg(&mad, RT_METHOD, RT_TID, 1, 1, 100);
	kt_fail_allocs(KMAD_ALLOC_RMPP_XFER, 1);
	rt_inject(rt, &mad);
	KUNIT_EXPECT_EQ(test, kt_allocs_failed(KMAD_ALLOC_RMPP_XFER), 1);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 0);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_DROPPED),
			dropped + 1);
	rt_inject(rt, &mad);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 1);
	rt_expect_quiet(rt);
	KUNIT_ASSERT_EQ(test, rt_recvs(rt), 1);

	rt_send_seg(rt, RT_METHOD, RT_TID + 1, 1);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID + 1, 1, 5);
	kt_fail_allocs(KMAD_ALLOC_RMPP_CTL, 1);
	kt_advance(rt->f, RT_IDLE_MS);
	KUNIT_EXPECT_EQ(test, kt_allocs_failed(KMAD_ALLOC_RMPP_CTL), 1);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_TIMEOUTS), 1);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_DROPPED),
			dropped + 2);
	KUNIT_EXPECT_TRUE(test,
			  list_empty(&kmad_agent_priv(rt->agent)->rmpp_recvs));
}

/*
 * An ABORT that could not be posted counts as dropped, not as sent: a
 * segment 1 without the First flag is answered ABORT BadSeg, counted in
 * rmpp_recv_aborts_sent once on the wire.  Before, an ABORT whose
 * allocation failed counted in both.
 */
static void rmpp_recv_abort_counted_when_sent(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	s64 aborts = rt_pstat(rt, KMAD_PSTAT_RMPP_ABORTS);
	s64 dropped = rt_pstat(rt, KMAD_PSTAT_RMPP_DROPPED);
	struct kmad_rmpp_mad *m;
	struct kmad_mad mad;

	rt_register(rt, false);
	rt_seg(&mad, RT_METHOD, RT_TID, 1, RT_SEGS, RT_PAYLEN);
	m = (struct kmad_rmpp_mad *)&mad;
	m->rmpp_hdr.rmpp_rtime_flags &= ~KMAD_RMPP_FLAG_FIRST;
	kt_fail_allocs(KMAD_ALLOC_RMPP_CTL, 1);
	rt_inject(rt, &mad);
	KUNIT_EXPECT_EQ(test, kt_allocs_failed(KMAD_ALLOC_RMPP_CTL), 1);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_ABORTS), aborts);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_DROPPED),
			dropped + 1);
	rt_inject(rt, &mad);
	rt_expect_ctl(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID,
		      KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_BAD_SEG, 0, 0);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_ABORTS), aborts + 1);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_DROPPED),
			dropped + 1);
}

/*
 * A transfer that receives nothing for 40 s is dropped and its sender
 * sent ABORT T2L; one second earlier nothing happens.  A later segment is
 * dropped unanswered.
 */
static void rmpp_recv_idle_timeout(struct kunit *test)
{
	struct rt *rt = rt_of(test);

	rt_register(rt, false);
	rt_send_seg(rt, RT_METHOD, RT_TID, 1);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 5);
	kmad_sim_advance_clock(rt->f->fab, RT_IDLE_MS - 1000);
	kt_settle(rt->f);
	rt_send_seg(rt, RT_METHOD, RT_TID, 2);	/* refreshes it */
	kmad_sim_advance_clock(rt->f->fab, RT_IDLE_MS - 1000);
	kt_settle(rt->f);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_TIMEOUTS), 0);
	kmad_sim_advance_clock(rt->f->fab, 2000);
	kt_settle(rt->f);
	rt_expect_ctl(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID,
		      KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_T2L, 0, 0);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_TIMEOUTS), 1);
	KUNIT_EXPECT_TRUE(test,
			  list_empty(&kmad_agent_priv(rt->agent)->rmpp_recvs));
	rt_send_seg(rt, RT_METHOD, RT_TID, 3);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 0);
}

/*
 * Segments in order every 39 s keep a transfer from going idle, but not
 * alive for good: 120 s after its first segment it is dropped and its
 * sender sent ABORT T2L.  (It used to last as long as its segments came.)
 */
static void rmpp_recv_total_time(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	u32 seg;

	rt_register(rt, false);
	rt_send_seg(rt, RT_METHOD, RT_TID, 1);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 5);
	for (seg = 2; seg <= 4; seg++) {		/* at 39, 78, 117 s */
		kmad_sim_advance_clock(rt->f->fab, RT_IDLE_MS - 1000);
		kt_settle(rt->f);
		rt_send_seg(rt, RT_METHOD, RT_TID, seg);
	}
	kmad_sim_advance_clock(rt->f->fab, 2000);	/* 119 s */
	kt_settle(rt->f);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_TIMEOUTS), 0);
	kmad_sim_advance_clock(rt->f->fab, 2000);	/* 121 s */
	kt_settle(rt->f);
	rt_expect_ctl(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID,
		      KMAD_RMPP_TYPE_ABORT, KMAD_RMPP_STATUS_T2L, 0, 0);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_TIMEOUTS), 1);
	KUNIT_EXPECT_TRUE(test,
			  list_empty(&kmad_agent_priv(rt->agent)->rmpp_recvs));
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 0);
}

/* Post a GetTable request of the receiver to device 1 and put it on the
 * wire (not delivered: the test answers for device 1).
 */
static struct kmad_send_buf *rt_request(struct rt *rt,
					unsigned int timeout_ms, u64 *tid)
{
	struct kmad_send_buf *buf;

	buf = kt_request(rt->f, rt->agent, KMAD_METHOD_GET_TABLE, 0x55,
			 timeout_ms, 0);
	buf->mad->mad_hdr.attr_id = cpu_to_be16(KMAD_SA_ATTR_PATH_REC);
	kt_post(rt->f, buf);
	*tid = be64_to_cpu(buf->mad->mad_hdr.tid);
	kt_complete(rt->f, KT_DEV0, KMAD_WC_SUCCESS, false);
	return buf;
}

/*
 * The address of a MAD from device 1 that comes with a GRH (device 1's
 * GID to device 0's): for a response to a request sent without one.
 */
static void rt_rx_grh(struct rt *rt, struct kmad_sim_rx *rx)
{
	struct kunit *test = rt->f->test;

	rx->slid = kmad_port_lid(rt->f->port[KT_DEV1]);
	rx->src_qpn = KT_QPN;
	rx->grh_present = true;
	KUNIT_ASSERT_EQ(test, kmad_sim_port_gid(rt->f->fab, KT_DEV1, 1, 0,
						&rx->sgid), 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_port_gid(rt->f->fab, KT_DEV0, 1, 0,
						&rx->dgid), 0);
}

static int rt_sends(struct rt *rt)
{
	int n;

	spin_lock(&rt->lock);
	n = rt->sends;
	spin_unlock(&rt->lock);
	return n;
}

/*
 * The usual GetTableResp transfer to request @req (TID @tid), from
 * segment @from on (the ones before it sent already), ACKed in its
 * windows, matched whole to the request, which ends OK.
 */
static void rt_expect_response_matched(struct rt *rt,
				       struct kmad_send_buf *req, u64 tid,
				       u32 from)
{
	struct kunit *test = rt->f->test;
	u32 seg;

	for (seg = from; seg <= RT_SEGS; seg++)
		rt_send_seg(rt, KMAD_METHOD_GET_TABLE_RESP, tid, seg);
	rt_expect_ack(rt, KMAD_METHOD_GET_TABLE, tid, 1, 5);
	rt_expect_ack(rt, KMAD_METHOD_GET_TABLE, tid, 5, 9);
	rt_expect_ack(rt, KMAD_METHOD_GET_TABLE, tid, 7, 9);
	rt_expect_quiet(rt);
	KUNIT_ASSERT_EQ(test, rt_recvs(rt), 1);
	KUNIT_EXPECT_PTR_EQ(test, rt->req[0], req);
	rt_expect_msg(rt, 0, KMAD_METHOD_GET_TABLE_RESP, tid, RT_SEGS,
		      RT_PAYLEN);
	KUNIT_ASSERT_EQ(test, rt_sends(rt), 1);
	KUNIT_EXPECT_EQ(test, rt->status[0], KMAD_SEND_OK);
}

/*
 * A multi-segment GetTableResp is matched, whole, to the request: the
 * handler gets it with the request, then the send ends OK.  The ACKs
 * carry GetTable and the request's TID, hi_tid included.
 */
static void rmpp_recv_response_matched(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	struct kmad_send_buf *req;
	u64 tid;

	rt_register(rt, true);
	req = rt_request(rt, 5000, &tid);
	KUNIT_EXPECT_EQ(test, (u32)(tid >> 32), rt->agent->hi_tid);
	rt_expect_response_matched(rt, req, tid, 1);
	kmad_free_send_buf(req);
}

/*
 * An agent that serves GetMulti requests and sends its own GetTable: a
 * one-segment GetMulti request from device 1 under the very TID of the
 * agent's GetTable request (device 1's TIDs happen to match), then the
 * GetTableResp under that TID.  The response is a transfer of its own,
 * ACKed in its windows and matched to the request: the key includes the
 * method, as ib_mad's find_rmpp_recv().  Before, every segment of the
 * response was taken for a repeat of the finished request (ACK 1, 1
 * with GetMultiResp, counted a duplicate), nothing was delivered and
 * the request timed out.
 */
static void rmpp_recv_same_tid_other_method(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	s64 dups = rt_pstat(rt, KMAD_PSTAT_RMPP_DUPLICATES);
	struct kmad_send_buf *req;
	struct kmad_mad mad;
	u32 seg;
	u64 tid;

	rt_register(rt, false);
	req = rt_request(rt, 5000, &tid);
	rt_seg(&mad, RT_METHOD, tid, 1, 1, 100);
	rt_inject(rt, &mad);
	rt_expect_ack(rt, RT_METHOD ^ KMAD_METHOD_RESP, tid, 1, 1);
	KUNIT_ASSERT_EQ(test, rt_recvs(rt), 1);

	for (seg = 1; seg <= RT_SEGS; seg++)
		rt_send_seg(rt, KMAD_METHOD_GET_TABLE_RESP, tid, seg);
	rt_expect_ack(rt, KMAD_METHOD_GET_TABLE, tid, 1, 5);
	rt_expect_ack(rt, KMAD_METHOD_GET_TABLE, tid, 5, 9);
	rt_expect_ack(rt, KMAD_METHOD_GET_TABLE, tid, 7, 9);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_DUPLICATES), dups);
	KUNIT_ASSERT_EQ(test, rt_recvs(rt), 2);
	KUNIT_EXPECT_PTR_EQ(test, rt->req[1], req);
	rt_expect_msg(rt, 1, KMAD_METHOD_GET_TABLE_RESP, tid, RT_SEGS,
		      RT_PAYLEN);
	KUNIT_ASSERT_EQ(test, rt_sends(rt), 1);
	KUNIT_EXPECT_EQ(test, rt->status[0], KMAD_SEND_OK);
	kmad_free_send_buf(req);
}

/*
 * A response that comes back to another address than its request left
 * from is misaddressed, and its segments are dropped one by one, as
 * ib_mad drops them (is_kernel_rmpp_data_response() asks
 * ib_find_send_mad(), which checks the address): a first segment with a
 * GRH (the request had none) starts no transfer and is not answered; a
 * segment 2 that came to path bits 1 (LMC 1, the request left from path
 * bits 0) is dropped alone, as is a repeat of segment 1 there (not
 * ACKed), and the transfer from the right address goes on, matched.
 * Before, kmad ACKed the whole misaddressed transfer (its sender's send
 * ended OK) and dropped the message once reassembled.
 */
static void rmpp_recv_response_misaddressed(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	struct kmad_port *port = rt->f->port[KT_DEV0];
	s64 misaddr = rt_pstat(rt, KMAD_PSTAT_RESP_MISADDRESSED);
	struct kmad_port_attr attr = {
		.lid = kmad_port_lid(port),
		.lmc = 1,
		.sm_lid = kmad_port_sm_lid(port),
	};
	struct kmad_sim_rx rx = {};
	struct kmad_send_buf *req;
	struct kmad_mad mad;
	u64 tid;

	rt_register(rt, true);
	req = rt_request(rt, 5000, &tid);
	rt_rx_grh(rt, &rx);
	rt_seg(&mad, KMAD_METHOD_GET_TABLE_RESP, tid, 1, RT_SEGS, RT_PAYLEN);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject_rx(rt->f->fab, KT_DEV0, KT_QPN,
						 &mad, sizeof(mad), &rx), 0);
	kt_event(rt->f, KT_DEV0);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RESP_MISADDRESSED),
			misaddr + 1);
	KUNIT_EXPECT_TRUE(test,
			  list_empty(&kmad_agent_priv(rt->agent)->rmpp_recvs));
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 0);
	KUNIT_EXPECT_EQ(test, rt_sends(rt), 0);

	KUNIT_ASSERT_EQ(test,
			kmad_device_port_changed(kmad_sim_device(rt->f->fab,
								 KT_DEV0),
						 1, &attr), 0);
	rt_send_seg(rt, KMAD_METHOD_GET_TABLE_RESP, tid, 1);
	memset(&rx, 0, sizeof(rx));
	rx.slid = kmad_port_lid(rt->f->port[KT_DEV1]);
	rx.src_qpn = KT_QPN;
	rx.dlid_path_bits = 1;
	rt_seg(&mad, KMAD_METHOD_GET_TABLE_RESP, tid, 2, RT_SEGS, RT_PAYLEN);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject_rx(rt->f->fab, KT_DEV0, KT_QPN,
						 &mad, sizeof(mad), &rx), 0);
	kt_event(rt->f, KT_DEV0);
	/* A repeat of segment 1 there: dropped too, not ACKed. */
	rt_seg(&mad, KMAD_METHOD_GET_TABLE_RESP, tid, 1, RT_SEGS, RT_PAYLEN);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject_rx(rt->f->fab, KT_DEV0, KT_QPN,
						 &mad, sizeof(mad), &rx), 0);
	kt_event(rt->f, KT_DEV0);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RESP_MISADDRESSED),
			misaddr + 3);
	rt_expect_response_matched(rt, req, tid, 2);
	kmad_free_send_buf(req);
}

/*
 * User-level RMPP (mad.h, @rmpp_version 0; ib_mad's ib_mad_complete_recv()):
 * an agent that does not do RMPP gets a three-segment GetTableResp as
 * three MADs.  The first segment completes its request (OK, handed to
 * recv_handler with the request); segments 2 and 3 match no request and
 * come unsolicited (request NULL), byte for byte, 256 bytes each.  kmad
 * ACKs none of them: the agent does RMPP itself.  Before them, a segment
 * with the request's TID that came back with a GRH (the request had none)
 * is misaddressed: it matches nothing, so it too comes unsolicited, and
 * the request goes on waiting.  A response that is not RMPP-active, or
 * of a class without the RMPP header, is still dropped when it matches
 * nothing.
 */
static void rmpp_recv_user_rmpp_segments(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	s64 matched = rt_pstat(rt, KMAD_PSTAT_RESP_MATCHED);
	s64 unmatched = rt_pstat(rt, KMAD_PSTAT_RESP_UNMATCHED);
	s64 unsol = rt_pstat(rt, KMAD_PSTAT_RESP_UNSOLICITED);
	s64 misaddr = rt_pstat(rt, KMAD_PSTAT_RESP_MISADDRESSED);
	struct kmad_sim_rx rx = {};
	struct kmad_agent_stats st;
	struct kmad_send_buf *req;
	struct kmad_mad *mad, *plain;
	struct kmad_agent *a;
	u32 seg;
	u64 tid;

	/* Three segments and two more MADs: too big for the stack. */
	mad = kunit_kcalloc(test, 5, sizeof(*mad), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mad);
	plain = &mad[3];
	a = kmad_register_agent(rt->f->port[KT_DEV0], KMAD_QPT_GSI, NULL,
				rt_send_handler, rt_recv_handler, rt);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	rt->agent = a;
	req = rt_request(rt, 5000, &tid);
	rt_rx_grh(rt, &rx);
	rt_seg(&mad[4], KMAD_METHOD_GET_TABLE_RESP, tid, 1, 3,
	       3 * RT_SEG_PAY - 10);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject_rx(rt->f->fab, KT_DEV0, KT_QPN,
						 &mad[4], sizeof(*mad), &rx),
			0);
	kt_event(rt->f, KT_DEV0);
	rt_expect_quiet(rt);
	KUNIT_ASSERT_EQ(test, rt_recvs(rt), 1);
	KUNIT_EXPECT_PTR_EQ(test, rt->req[0], NULL);
	KUNIT_EXPECT_EQ(test, memcmp(rt->wc[0]->mad, &mad[4], sizeof(*mad)),
			0);
	KUNIT_EXPECT_EQ(test, rt_sends(rt), 0);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RESP_MISADDRESSED),
			misaddr + 1);
	for (seg = 1; seg <= 3; seg++) {
		rt_seg(&mad[seg - 1], KMAD_METHOD_GET_TABLE_RESP, tid, seg, 3,
		       3 * RT_SEG_PAY - 10);
		rt_inject(rt, &mad[seg - 1]);
		rt_expect_quiet(rt);
	}
	KUNIT_ASSERT_EQ(test, rt_sends(rt), 1);
	KUNIT_EXPECT_EQ(test, rt->status[0], KMAD_SEND_OK);
	KUNIT_ASSERT_EQ(test, rt_recvs(rt), 4);
	KUNIT_EXPECT_PTR_EQ(test, rt->req[1], req);
	KUNIT_EXPECT_PTR_EQ(test, rt->req[2], NULL);
	KUNIT_EXPECT_PTR_EQ(test, rt->req[3], NULL);
	for (seg = 0; seg < 3; seg++) {
		KUNIT_EXPECT_EQ(test, rt->wc[seg + 1]->mad_len,
				(size_t)KMAD_MAD_SIZE);
		KUNIT_EXPECT_EQ(test, memcmp(rt->wc[seg + 1]->mad, &mad[seg],
					     sizeof(*mad)), 0);
	}
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RESP_MATCHED),
			matched + 1);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RESP_UNSOLICITED),
			unsol + 3);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RESP_UNMATCHED),
			unmatched);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_ACKS), 0);
	kmad_agent_get_stats(a, &st);
	KUNIT_EXPECT_EQ(test, st.responses, 1ULL);
	KUNIT_EXPECT_EQ(test, st.unsolicited, 3ULL);

	/* Not RMPP-active: an unmatched response, dropped. */
	rt_seg(plain, KMAD_METHOD_GET_TABLE_RESP, tid + 1, 2, 3,
	       3 * RT_SEG_PAY - 10);
	((struct kmad_rmpp_mad *)plain)->rmpp_hdr.rmpp_rtime_flags &=
		~KMAD_RMPP_FLAG_ACTIVE;
	rt_inject(rt, plain);
	/* RMPP-active bits in a class without the RMPP header: the same. */
	rt_seg(plain, KMAD_METHOD_GET_RESP, tid + 2, 2, 3,
	       3 * RT_SEG_PAY - 10);
	plain->mad_hdr.mgmt_class = KMAD_MGMT_CLASS_VENDOR_RANGE1_START;
	rt_inject(rt, plain);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 4);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RESP_UNMATCHED),
			unmatched + 2);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RESP_UNSOLICITED),
			unsol + 3);
	kmad_free_send_buf(req);
}

/*
 * The request's deadline is not moved by the segments of its response
 * (as in ib_mad): if it passes mid-transfer the request times out, and
 * the next segment ends the transfer, as one unmatched response, with
 * ABORT T2L to its sender; the segments after it belong to no transfer
 * and are dropped.  (The transfer used to go on, ACKed, to a message
 * dropped whole; then it ended unanswered, and the sender went on waiting
 * for ACKs and resending until its retries ran out.)
 */
static void rmpp_recv_response_after_timeout(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	s64 unmatched = rt_pstat(rt, KMAD_PSTAT_RESP_UNMATCHED);
	s64 dropped = rt_pstat(rt, KMAD_PSTAT_RMPP_DROPPED);
	s64 aborts = rt_pstat(rt, KMAD_PSTAT_RMPP_ABORTS);
	struct kmad_send_buf *req;
	u32 seg;
	u64 tid;

	rt_register(rt, true);
	req = rt_request(rt, 1000, &tid);
	rt_send_seg(rt, KMAD_METHOD_GET_TABLE_RESP, tid, 1);
	rt_expect_ack(rt, KMAD_METHOD_GET_TABLE, tid, 1, 5);
	kmad_sim_advance_clock(rt->f->fab, 600);
	kt_settle(rt->f);
	rt_send_seg(rt, KMAD_METHOD_GET_TABLE_RESP, tid, 2);
	kmad_sim_advance_clock(rt->f->fab, 600);
	kt_settle(rt->f);
	KUNIT_ASSERT_EQ(test, rt_sends(rt), 1);
	KUNIT_EXPECT_EQ(test, rt->status[0], KMAD_SEND_RESP_TIMEOUT);
	rt_send_seg(rt, KMAD_METHOD_GET_TABLE_RESP, tid, 3);
	rt_expect_ctl(rt, KMAD_METHOD_GET_TABLE, tid, KMAD_RMPP_TYPE_ABORT,
		      KMAD_RMPP_STATUS_T2L, 0, 0);
	for (seg = 4; seg <= RT_SEGS; seg++)
		rt_send_seg(rt, KMAD_METHOD_GET_TABLE_RESP, tid, seg);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 0);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RESP_UNMATCHED),
			unmatched + 1);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_DROPPED),
			dropped + RT_SEGS - 3);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_ABORTS), aborts + 1);
	KUNIT_EXPECT_TRUE(test,
			  list_empty(&kmad_agent_priv(rt->agent)->rmpp_recvs));
	kmad_free_send_buf(req);
}

/*
 * The first segment of a response (@nsegs segments, @paylen bytes) whose
 * TID, with the agent's hi_tid and @low below it, names no outstanding
 * request: unmatched, no transfer started, no buffer, nothing delivered,
 * and its sender told ABORT T2L.
 */
static void rt_expect_unsolicited_response_aborted(struct kunit *test,
						   u32 low, u32 nsegs,
						   u32 paylen)
{
	struct rt *rt = rt_of(test);
	s64 unmatched = rt_pstat(rt, KMAD_PSTAT_RESP_UNMATCHED);
	s64 aborts = rt_pstat(rt, KMAD_PSTAT_RMPP_ABORTS);
	struct kmad_mad mad;
	u64 tid;

	rt_register(rt, true);
	tid = (u64)rt->agent->hi_tid << 32 | low;
	rt_seg(&mad, KMAD_METHOD_GET_TABLE_RESP, tid, 1, nsegs, paylen);
	rt_inject(rt, &mad);
	rt_expect_ctl(rt, KMAD_METHOD_GET_TABLE, tid, KMAD_RMPP_TYPE_ABORT,
		      KMAD_RMPP_STATUS_T2L, 0, 0);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 0);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RESP_UNMATCHED),
			unmatched + 1);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_ABORTS), aborts + 1);
	KUNIT_EXPECT_TRUE(test,
			  list_empty(&kmad_agent_priv(rt->agent)->rmpp_recvs));
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_BUFFERS), 0);
}

/* The first segment of a response to no outstanding request starts no
 * transfer and is not ACKed: it is an unmatched response, and its sender
 * gets ABORT T2L (before, nothing: it waited for an ACK and resent).
 */
static void rmpp_recv_response_unsolicited(struct kunit *test)
{
	rt_expect_unsolicited_response_aborted(test, 0x99, RT_SEGS,
					       RT_PAYLEN);
}

/* A response of one segment (First and Last) to no outstanding request:
 * the same as the first segment of a longer one, unmatched and its sender
 * told ABORT T2L; not ACKed as the last segment of a transfer would be.
 */
static void rmpp_recv_single_response_unsolicited(struct kunit *test)
{
	rt_expect_unsolicited_response_aborted(test, 0x9a, 1, 100);
}

/* Unregistering with transfers in progress frees them (kmemleak and
 * KASAN watch); nothing is delivered.
 */
static void rmpp_recv_unregister_in_progress(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	u32 i;

	rt_register(rt, false);
	for (i = 0; i < 3; i++) {
		rt_send_seg(rt, RT_METHOD, RT_TID + i, 1);
		rt_send_seg(rt, RT_METHOD, RT_TID + i, 2);
	}
	KUNIT_EXPECT_EQ(test, kmad_agent_priv(rt->agent)->rmpp_recvs_active,
			3U);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(rt->agent), 0);
	rt->agent = NULL;
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 0);
}

/* The port going away with a transfer in progress flushes it too. */
static void rmpp_recv_port_removal(struct kunit *test)
{
	struct rt *rt = rt_of(test);

	rt_register(rt, false);
	rt_send_seg(rt, RT_METHOD, RT_TID, 1);
	rt_send_seg(rt, RT_METHOD, RT_TID, 2);
	kmad_sim_destroy(rt->f->fab);
	rt->f->fab = NULL;
	KUNIT_EXPECT_TRUE(test,
			  list_empty(&kmad_agent_priv(rt->agent)->rmpp_recvs));
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 0);
}

/*
 * Two senders (device 1's QP1 and QP 7) send the same TID at once,
 * interleaved: two transfers, each ACKed to its sender, each message
 * whole and its own.
 */
static void rmpp_recv_two_senders_same_tid(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	struct kmad_mad a, b;
	u32 seg;

	rt_register(rt, false);
	for (seg = 1; seg <= 3; seg++) {
		rt_seg(&a, RT_METHOD, RT_TID, seg, 3, 600);
		rt_inject_from(rt, &a, KT_QPN);
		rt_seg(&b, RT_METHOD, RT_TID, seg, 2, 300);
		/* Different bytes from the other sender. */
		b.data[40] ^= 0xff;
		if (seg <= 2)
			rt_inject_from(rt, &b, 7);
	}
	/* A: ACK 1, ACK 3 (last); B: ACK 1, ACK 2 (last). */
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 5);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 5);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 2, 5);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 3, 5);
	rt_expect_quiet(rt);
	KUNIT_ASSERT_EQ(test, rt_recvs(rt), 2);
	/* B finished first. */
	KUNIT_EXPECT_EQ(test, rt->wc[0]->src_qpn, 7U);
	KUNIT_EXPECT_EQ(test, rt->wc[1]->src_qpn, (u32)KT_QPN);
	KUNIT_EXPECT_EQ(test, rt->wc[0]->mad_len,
			(size_t)(256 + 36 + 80 - RT_HDR));
	rt_expect_msg(rt, 1, RT_METHOD, RT_TID, 3, 600);
	KUNIT_EXPECT_EQ(test, rt->wc[0]->mad->data[40],
			(u8)(rt_byte(1, KMAD_MAD_HDR_SIZE + 40) ^ 0xff));
	KUNIT_EXPECT_EQ(test,
			((const u8 *)rt->wc[0]->mad)[KMAD_MAD_SIZE +
						      KMAD_MAD_HDR_SIZE + 40 -
						      RT_HDR],
			(u8)(rt_byte(2, KMAD_MAD_HDR_SIZE + 40) ^ 0xff));
}

/* The destination of the oldest ACK/STOP/ABORT device 0's responder has
 * on the wire (white box: its send, still SENDING).
 */
static void rt_responder_dest(struct rt *rt, struct kmad_dest *dest)
{
	struct kmad_agent_priv *resp =
		rt->f->port[KT_DEV0]->responder[KMAD_QPT_GSI];
	struct kmad_send_wr *wr;
	unsigned long flags;

	spin_lock_irqsave(&resp->lock, flags);
	wr = list_first_entry_or_null(&resp->sends, struct kmad_send_wr,
				      agent_entry);
	if (wr)
		*dest = wr->buf.dest;
	spin_unlock_irqrestore(&resp->lock, flags);
	KUNIT_ASSERT_NOT_NULL(rt->f->test, wr);
}

/*
 * Segments that came with a GRH are ACKed by GID, to their source GID from
 * the GID they were sent to; a sender with another source GID (same LID
 * and QP) is another transfer.
 */
static void rmpp_recv_grh(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	struct kmad_sim_rx rx = {
		.slid = kmad_port_lid(rt->f->port[KT_DEV1]),
		.src_qpn = KT_QPN,
		.grh_present = true,
		.flow_label = 0x4321,
		.traffic_class = 0x10,
		.hop_limit = 3,
	};
	struct kmad_dest dest;
	struct kmad_mad mad;
	int i;

	rt_register(rt, false);
	KUNIT_ASSERT_EQ(test, kmad_port_query_gid(rt->f->port[KT_DEV0], 0,
						  &rx.dgid), 0);
	for (i = 0; i < 2; i++) {
		rx.sgid.global.subnet_prefix = cpu_to_be64(0xfe80ULL << 48);
		rx.sgid.global.interface_id = cpu_to_be64(0x1234 + i);
		rt_seg(&mad, RT_METHOD, RT_TID, 1, RT_SEGS, RT_PAYLEN);
		KUNIT_ASSERT_EQ(test,
				kmad_sim_inject_rx(rt->f->fab, KT_DEV0, KT_QPN,
						   &mad, sizeof(mad), &rx), 0);
		kt_event(rt->f, KT_DEV0);
		rt_responder_dest(rt, &dest);
		KUNIT_EXPECT_TRUE(test, dest.grh_present);
		KUNIT_EXPECT_EQ(test, memcmp(&dest.grh.dgid, &rx.sgid,
					     sizeof(rx.sgid)), 0);
		KUNIT_EXPECT_EQ(test, dest.grh.flow_label, 0x4321U);
		KUNIT_EXPECT_EQ(test, dest.remote_qpn, (u32)KT_QPN);
		/* A first segment of a new transfer, not a duplicate. */
		rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 5);
	}
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, kmad_agent_priv(rt->agent)->rmpp_recvs_active,
			2U);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_DUPLICATES), 0);
}

/* Make @rt's agent's backlog look full (@full) or as it was. */
static void rt_backlog_full(struct rt *rt, bool full)
{
	struct kmad_agent_priv *priv = kmad_agent_priv(rt->agent);
	unsigned long flags;

	spin_lock_irqsave(&priv->lock, flags);
	if (full)
		priv->recvs_queued += KMAD_AGENT_RECVS_MAX;
	else
		priv->recvs_queued -= KMAD_AGENT_RECVS_MAX;
	spin_unlock_irqrestore(&priv->lock, flags);
}

/*
 * With the agent's backlog full, the last segment of an RMPP request is
 * dropped before its ACK (counted as requests_dropped_backlog), not ACKed
 * and then dropped: its sender, told nothing, sends it again, and once
 * the backlog has room the message is ACKed and delivered.  The same for
 * a one-segment message.  (Before, both were ACKed, then dropped, and the
 * repeat was taken for a duplicate of a finished transfer: lost.)
 */
static void rmpp_recv_backlog_full_not_acked(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	struct kmad_mad one;
	u32 seg;

	rt_register(rt, false);
	rt_seg(&one, RT_METHOD, RT_TID + 1, 1, 1, 100);
	rt_backlog_full(rt, true);
	rt_inject(rt, &one);
	rt_expect_quiet(rt);
	for (seg = 1; seg <= RT_SEGS; seg++)
		rt_send_seg(rt, RT_METHOD, RT_TID, seg);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 5);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 5, 9);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 0);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_REQ_BACKLOG_DROPPED), 2);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_REASSEMBLED), 0);

	rt_backlog_full(rt, false);
	rt_send_seg(rt, RT_METHOD, RT_TID, RT_SEGS);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 7, 9);
	rt_inject(rt, &one);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID + 1, 1, 1);
	rt_expect_quiet(rt);
	KUNIT_ASSERT_EQ(test, rt_recvs(rt), 2);
	rt_expect_msg(rt, 0, RT_METHOD, RT_TID, RT_SEGS, RT_PAYLEN);
	KUNIT_EXPECT_EQ(test, memcmp(rt->wc[1]->mad, &one, sizeof(one)), 0);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_REQ_BACKLOG_DROPPED), 2);
	KUNIT_EXPECT_EQ(test, rt_pstat(rt, KMAD_PSTAT_RMPP_REASSEMBLED), 2);
}

static struct kunit_case rmpp_recv_cases[] = {
	KUNIT_CASE(rmpp_recv_registration),
	KUNIT_CASE(rmpp_recv_single_segment),
	KUNIT_CASE(rmpp_recv_in_order),
	KUNIT_CASE(rmpp_recv_duplicate_reacked),
	KUNIT_CASE(rmpp_recv_done_lingers),
	KUNIT_CASE(rmpp_recv_done_capped),
	KUNIT_CASE(rmpp_recv_done_capped_finish_order),
	KUNIT_CASE(rmpp_recv_out_of_order),
	KUNIT_CASE(rmpp_recv_sender_ends),
	KUNIT_CASE(rmpp_recv_abort_bad_version_dropped),
	KUNIT_CASE_PARAM(rmpp_recv_refused, rt_bad_gen_params),
	KUNIT_CASE(rmpp_recv_above_kmalloc_max),
	KUNIT_CASE(rmpp_recv_param_ranges),
	KUNIT_CASE(rmpp_recv_free_vmalloc_irqs_off),
	KUNIT_CASE(rmpp_recv_bad_last_segment),
	KUNIT_CASE(rmpp_recv_last_flag_mismatch),
	KUNIT_CASE(rmpp_recv_limit),
	KUNIT_CASE(rmpp_recv_idle_timeout),
	KUNIT_CASE(rmpp_recv_alloc_fails),
	KUNIT_CASE(rmpp_recv_alloc_fails_single_and_abort),
	KUNIT_CASE(rmpp_recv_abort_counted_when_sent),
	KUNIT_CASE(rmpp_recv_total_time),
	KUNIT_CASE(rmpp_recv_response_matched),
	KUNIT_CASE(rmpp_recv_response_misaddressed),
	KUNIT_CASE(rmpp_recv_same_tid_other_method),
	KUNIT_CASE(rmpp_recv_response_after_timeout),
	KUNIT_CASE(rmpp_recv_user_rmpp_segments),
	KUNIT_CASE(rmpp_recv_response_unsolicited),
	KUNIT_CASE(rmpp_recv_single_response_unsolicited),
	KUNIT_CASE(rmpp_recv_unregister_in_progress),
	KUNIT_CASE(rmpp_recv_port_removal),
	KUNIT_CASE(rmpp_recv_two_senders_same_tid),
	KUNIT_CASE(rmpp_recv_grh),
	KUNIT_CASE(rmpp_recv_backlog_full_not_acked),
	{}
};

static struct kunit_suite rmpp_recv_suite = {
	.name = "kmad_rmpp_recv",
	.init = rt_init,
	.exit = rt_exit,
	.test_cases = rmpp_recv_cases,
};

/* The same receiver on the real clock (async fabric). */
static int rt_async_init(struct kunit *test)
{
	return rt_setup(test, KMAD_SIM_ASYNC);
}

/*
 * Real clock: a transfer in progress has the agent's work queued for its
 * idle timeout, 40 s on, holding a reference to the agent.  Unregister
 * makes that work run at once instead of waiting for it, so it returns
 * long before (it would have blocked until the timer).
 */
static void rmpp_recv_async_unregister_prompt(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	struct kt_fix *f = rt->f;
	struct kmad_mad mad;
	unsigned long t0;
	unsigned int took;

	rt_register(rt, false);
	rt_seg(&mad, RT_METHOD, RT_TID, 1, RT_SEGS, RT_PAYLEN);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject(f->fab, KT_DEV0, KT_QPN, &mad,
					      sizeof(mad),
					      kmad_port_lid(f->port[KT_DEV1]),
					      KT_QPN), 0);
	KUNIT_ASSERT_TRUE(test,
			  kt_wait_until(rt_pstat(rt, KMAD_PSTAT_RMPP_ACKS) == 1,
					KT_ASYNC_WAIT_MS));
	t0 = jiffies;
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(rt->agent), 0);
	rt->agent = NULL;
	took = jiffies_to_msecs(jiffies - t0);
	kunit_info(test, "unregister took %u ms\n", took);
	KUNIT_EXPECT_LT(test, took, (unsigned int)RT_IDLE_MS / 2);
}

static struct kunit_case rmpp_recv_async_cases[] = {
	KUNIT_CASE(rmpp_recv_async_unregister_prompt),
	{}
};

static struct kunit_suite rmpp_recv_async_suite = {
	.name = "kmad_rmpp_recv_async",
	.init = rt_async_init,
	.exit = rt_exit,
	.test_cases = rmpp_recv_async_cases,
};

/* A receive queue of 4: an eighth of it is 0, the window 1 segment. */
static int rt_small_init(struct kunit *test)
{
	return rt_setup_rq(test, KMAD_SIM_STEP, 4);
}

/*
 * The window is an eighth of the receive queue but at least one segment
 * (as ib_mad's window_size()): with a queue of 4 every segment but the
 * last is acknowledged with the next as the window's end.  A window of 0
 * would acknowledge only the first and the last, and the sender would
 * wait out a timeout for every segment between.
 */
static void rmpp_recv_small_queue_window(struct kunit *test)
{
	struct rt *rt = rt_of(test);
	struct kmad_mad mad;

	KUNIT_ASSERT_EQ(test, rt->f->port[KT_DEV0]->qpi[KMAD_QPT_GSI].rq_depth,
			4U);
	rt_register(rt, false);
	rt_seg(&mad, RT_METHOD, RT_TID, 1, 3, 500);
	rt_inject(rt, &mad);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 1, 2);
	rt_seg(&mad, RT_METHOD, RT_TID, 2, 3, 500);
	rt_inject(rt, &mad);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 2, 3);
	rt_seg(&mad, RT_METHOD, RT_TID, 3, 3, 500);
	rt_inject(rt, &mad);
	rt_expect_ack(rt, RT_METHOD | KMAD_METHOD_RESP, RT_TID, 3, 3);
	rt_expect_quiet(rt);
	KUNIT_EXPECT_EQ(test, rt_recvs(rt), 1);
}

static struct kunit_case rmpp_recv_small_cases[] = {
	KUNIT_CASE(rmpp_recv_small_queue_window),
	{}
};

static struct kunit_suite rmpp_recv_small_suite = {
	.name = "kmad_rmpp_recv_small",
	.init = rt_small_init,
	.exit = rt_exit,
	.test_cases = rmpp_recv_small_cases,
};

kunit_test_suites(&rmpp_recv_suite, &rmpp_recv_async_suite,
		  &rmpp_recv_small_suite);

MODULE_DESCRIPTION("KUnit tests for kmad's RMPP receiving side");
MODULE_LICENSE("GPL");
