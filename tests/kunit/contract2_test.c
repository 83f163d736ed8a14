// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_contract2: a second round of conformance cases written from the
 * public texts alone (<kmad/mad.h>, <kmad/provider.h>, <kmad/sim.h>,
 * Documentation/{send-lifecycle,rmpp,simulated-fabric,ulp-guide}.rst and
 * the seed threads), by a reviewer playing the author of tests kmad does
 * not see.  Where kmad_contract covered the single-MAD ULP contract, this
 * round covers RMPP as a ULP sees it (segments, PayloadLength, the
 * reassembled layout, ACK deadlines, cancel and unregister mid-transfer),
 * what a provider is promised, the simulated fabric's own controls, the
 * error codes of the calls and the agent counters.  Every case quotes the
 * sentence it checks.
 */

#include "kmad_test.h"

#define K2_VENDOR	0x30	/* vendor range 2: RMPP header and OUI */
#define K2_RTIME	0x0a	/* an RRespTime for segment 1 */
#define K2_RMPP_SEG	220	/* bytes after the RMPP header per segment */
#define K2_ATTR		KMAD_PMA_ATTR_PORT_COUNTERS
/* PerfMgt data: after the common header and 40 reserved bytes (16.1.1). */
#define K2_PMA_DATA	64

static const u8 k2_oui[KMAD_VENDOR_OUI_SIZE] = { 0x00, 0x14, 0x05 };

/*
 * What a case built beside the fixture (another fabric, a client): torn
 * down by k2_exit() whatever the case reached.
 */
static struct kmad_sim_fabric *k2_fab;
static struct kmad_port *k2_port;
static struct kmad_agent *k2_agent, *k2_agent2;
static struct kmad_client *k2_client;

static void k2_exit(struct kunit *test)
{
	struct kt_fix *f = test->priv;

	if (k2_client)
		kmad_unregister_client(k2_client);
	k2_client = NULL;
	/*
	 * Fabrics first, as kt_fix_exit() does: their removal flushes what a
	 * failed case left on the step-mode wire, so that unregistering the
	 * case's agents cannot wait for ever.
	 */
	if (!IS_ERR_OR_NULL(k2_fab))
		kmad_sim_destroy(k2_fab);
	k2_fab = NULL;
	if (f && !IS_ERR_OR_NULL(f->fab)) {
		kmad_sim_destroy(f->fab);
		f->fab = NULL;
	}
	if (!IS_ERR_OR_NULL(k2_agent))
		kmad_unregister_agent(k2_agent);
	k2_agent = NULL;
	if (!IS_ERR_OR_NULL(k2_agent2))
		kmad_unregister_agent(k2_agent2);
	k2_agent2 = NULL;
	kmad_port_put(k2_port);
	k2_port = NULL;
	kt_fix_exit(test);
}

/* Zeroed memory the test owns (large MADs and counters off the stack). */
static void *k2_zalloc(struct kunit *test, size_t size)
{
	void *p = kunit_kzalloc(test, size, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	return p;
}

/* The data byte @i of the messages of this suite. */
static u8 k2_byte(size_t i)
{
	return (u8)(i * 7 + 3 + (i >> 8));
}

/* A fabric name no other fabric has; @name holds KMAD_NAME_LEN - 4. */
static void k2_name(char *name)
{
	snprintf(name, KMAD_NAME_LEN - 4, "%s%d_", KBUILD_MODNAME,
		 atomic_inc_return(&kt_fabric_seq));
}

/*
 * An agent on QP1 of device @dev for @method of (@cls, @version), with
 * the OpenIB OUI in vendor range 2; @cls 0 is a send-only agent.
 */
static struct kmad_agent *k2_register(struct kt_fix *f, unsigned int dev,
				      u8 cls, u8 version, u8 method, u8 rmpp)
{
	struct kmad_reg_req req = {
		.mgmt_class = cls,
		.class_version = version,
		.rmpp_version = rmpp,
	};

	if (cls)
		__set_bit(method, req.method_mask);
	if (kmad_mgmt_class_is_vendor_range2(cls))
		memcpy(req.oui, k2_oui, sizeof(req.oui));
	return kmad_register_agent(f->port[dev], KMAD_QPT_GSI, &req,
				   kt_send_handler, kt_recv_handler, f);
}

/* QP1 of device @to, by LID. */
static struct kmad_dest k2_dest(struct kt_fix *f, unsigned int to)
{
	struct kmad_dest dest = {
		.dlid = kmad_port_lid(f->port[to]),
		.remote_qpn = KT_QPN,
		.remote_qkey = KMAD_QP1_QKEY,
	};

	return dest;
}

/* The common header (and a vendor MAD's OUI) of this suite's MADs. */
static void k2_hdr(struct kmad_mad *mad, u8 cls, u8 version, u8 method,
		   u64 tid)
{
	mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	mad->mad_hdr.mgmt_class = cls;
	mad->mad_hdr.class_version = version;
	mad->mad_hdr.method = method;
	mad->mad_hdr.tid = cpu_to_be64(tid);
	mad->mad_hdr.attr_id = cpu_to_be16(K2_ATTR);
	if (kmad_mgmt_class_is_vendor_range2(cls))
		memcpy(((struct kmad_vendor_mad *)mad)->oui, k2_oui,
		       sizeof(k2_oui));
}

/*
 * An RMPP buffer of @agent to device 1 with @data_len bytes of k2_byte(),
 * filled as rmpp.rst tells the ULP: segment 1's headers (RRespTime
 * included), and "data byte i is byte hdr_len + i % (256 - hdr_len) of
 * segment i / (256 - hdr_len) + 1".
 */
static struct kmad_send_buf *k2_rmpp_buf(struct kt_fix *f,
					 struct kmad_agent *agent, u8 cls,
					 u8 version, u8 method,
					 unsigned int hdr_len, size_t data_len,
					 u64 tid, unsigned int timeout_ms,
					 unsigned int retries)
{
	struct kmad_dest dest = k2_dest(f, KT_DEV1);
	unsigned int s = KMAD_MAD_SIZE - hdr_len;
	struct kmad_send_buf *buf;
	struct kmad_rmpp_mad *m;
	u8 *seg = NULL;
	size_t i;

	buf = kmad_alloc_send_buf_rmpp(agent, &dest, hdr_len, data_len,
				       GFP_KERNEL);
	KUNIT_ASSERT_FALSE(f->test, IS_ERR_OR_NULL(buf));
	k2_hdr(buf->mad, cls, version, method, tid);
	m = (struct kmad_rmpp_mad *)buf->mad;
	m->rmpp_hdr.rmpp_rtime_flags = K2_RTIME << KMAD_RMPP_RTIME_SHIFT;
	for (i = 0; i < data_len; i++) {
		if (i % s == 0) {
			seg = (u8 *)kmad_send_buf_seg(buf, i / s + 1);
			KUNIT_ASSERT_NOT_NULL(f->test, seg);
		}
		seg[hdr_len + i % s] = k2_byte(i);
	}
	buf->timeout_ms = timeout_ms;
	buf->retries = retries;
	return buf;
}

/* Copy send @n waiting on (@dev, QP1)'s wire. */
static void k2_peek(struct kt_fix *f, unsigned int dev, unsigned int n,
		    struct kmad_mad *mad)
{
	KUNIT_ASSERT_EQ(f->test, kmad_sim_peek_send(f->fab, dev, KT_QPN, n, mad,
						    sizeof(*mad)),
			(int)sizeof(*mad));
}

static unsigned int k2_pending(struct kt_fix *f, unsigned int dev)
{
	return kmad_sim_pending_sends(f->fab, dev, KT_QPN);
}

/*
 * Device 1, the receiver of @data (a DATA segment device 0 sent), sends
 * device 0 an RMPP @type packet about it, built as ib_mad's format_ack()
 * builds one: the DATA's header, Method with the RESP bit flipped.
 */
static void k2_ctl(struct kt_fix *f, const struct kmad_mad *data, u8 type,
		   u32 seg_num, u32 newwin, u8 status)
{
	struct kmad_rmpp_mad ctl;

	memcpy(&ctl, data, sizeof(ctl));
	ctl.mad_hdr.method ^= KMAD_METHOD_RESP;
	ctl.rmpp_hdr.rmpp_version = KMAD_RMPP_VERSION;
	ctl.rmpp_hdr.rmpp_type = type;
	ctl.rmpp_hdr.rmpp_rtime_flags = KMAD_RMPP_FLAG_ACTIVE;
	ctl.rmpp_hdr.rmpp_status = status;
	ctl.rmpp_hdr.seg_num = cpu_to_be32(seg_num);
	ctl.rmpp_hdr.paylen_newwin = cpu_to_be32(newwin);
	KUNIT_ASSERT_EQ(f->test,
			kmad_sim_inject(f->fab, KT_DEV0, KT_QPN, &ctl,
					sizeof(ctl),
					kmad_port_lid(f->port[KT_DEV1]),
					KT_QPN), 0);
	kt_event(f, KT_DEV0);
}

/* A DATA segment of an RMPP transfer, its data from k2_byte(@first). */
static void k2_data_seg(struct kmad_mad *mad, u8 cls, u8 version, u8 method,
			u64 tid, u32 seg_num, u8 flags, u32 paylen,
			size_t first)
{
	struct kmad_rmpp_mad *m = (struct kmad_rmpp_mad *)mad;
	unsigned int h = kmad_rmpp_hdr_len(cls), j;

	memset(mad, 0, sizeof(*mad));
	k2_hdr(mad, cls, version, method, tid);
	m->rmpp_hdr.rmpp_version = KMAD_RMPP_VERSION;
	m->rmpp_hdr.rmpp_type = KMAD_RMPP_TYPE_DATA;
	m->rmpp_hdr.rmpp_rtime_flags = KMAD_RMPP_FLAG_ACTIVE | flags;
	m->rmpp_hdr.seg_num = cpu_to_be32(seg_num);
	m->rmpp_hdr.paylen_newwin = cpu_to_be32(paylen);
	for (j = h; j < KMAD_MAD_SIZE; j++)
		((u8 *)mad)[j] = k2_byte(first + j - h);
}

/* Inject @mad into device @to's QP1 from the other device; settle. */
static void k2_inject(struct kt_fix *f, unsigned int to,
		      const struct kmad_mad *mad)
{
	unsigned int from = to == KT_DEV0 ? KT_DEV1 : KT_DEV0;

	KUNIT_ASSERT_EQ(f->test,
			kmad_sim_inject(f->fab, to, KT_QPN, mad, sizeof(*mad),
					kmad_port_lid(f->port[from]), KT_QPN),
			0);
	kt_event(f, to);
}

/*
 * Carry every send of both devices' QP1 to the other device until neither
 * has one left; copy the ones device 0 sent to @segs (at most @max) and
 * return how many it sent.
 */
static unsigned int k2_pump(struct kt_fix *f, struct kmad_mad *segs,
			    unsigned int max)
{
	unsigned int n = 0, round;
	bool moved = true;

	for (round = 0; round < 512 && moved; round++) {
		moved = false;
		if (k2_pending(f, KT_DEV0)) {
			if (n < max)
				k2_peek(f, KT_DEV0, 0, &segs[n]);
			n++;
			KUNIT_ASSERT_EQ(f->test,
					kmad_sim_complete_send(f->fab, KT_DEV0,
							       KT_QPN, 0,
							       KMAD_WC_SUCCESS,
							       true), 0);
			moved = true;
		}
		if (k2_pending(f, KT_DEV1)) {
			KUNIT_ASSERT_EQ(f->test,
					kmad_sim_complete_send(f->fab, KT_DEV1,
							       KT_QPN, 0,
							       KMAD_WC_SUCCESS,
							       true), 0);
			moved = true;
		}
		kmad_sim_fire_cq_event(f->fab, KT_DEV0, KT_QPN, false);
		kmad_sim_fire_cq_event(f->fab, KT_DEV1, KT_QPN, false);
		kt_settle(f);
	}
	return n;
}

/* How many send_handler calls the log holds for @buf, with @status. */
static int k2_sends_of(struct kt_fix *f, struct kmad_send_buf *buf,
		       enum kmad_send_status status)
{
	int i, n = 0;

	for (i = 0; i < min(kt_events(f), KT_MAX_EVENTS); i++)
		if (f->ev[i].kind == KT_SEND && f->ev[i].buf == buf &&
		    f->ev[i].status == status)
			n++;
	return n;
}

/* How many recv_handler calls the log holds. */
static int k2_recvs(struct kt_fix *f)
{
	int i, n = 0;

	for (i = 0; i < min(kt_events(f), KT_MAX_EVENTS); i++)
		if (f->ev[i].kind == KT_RECV)
			n++;
	return n;
}

/* ------------------------------------------------------------------ */
/* RMPP as the ULP sees it                                             */
/* ------------------------------------------------------------------ */

struct k2_segs_row {
	const char *name;
	unsigned int hdr_len;
	size_t data_len;
};

static const struct k2_segs_row k2_segs_rows[] = {
	{ "vendor-0", 40, 0 },
	{ "vendor-1", 40, 1 },
	{ "vendor-216", 40, 216 },
	{ "vendor-217", 40, 217 },
	{ "sa-200", 56, 200 },
	{ "sa-201", 56, 201 },
	{ "sa-1000", 56, 1000 },
	{ "dm-192", 64, 192 },
	{ "dm-193", 64, 193 },
	{ "dm-1921", 64, 1921 },
};

static void k2_segs_desc(const struct k2_segs_row *row, char *desc)
{
	strscpy(desc, row->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(k2_segs, k2_segs_rows, k2_segs_desc);

/*
 * rmpp.rst, API: "The buffer has max(1, DIV_ROUND_UP(data_len, 256 -
 * hdr_len)) segments"; "a send-only agent may give any of the three"
 * header lengths; "segment 1 (buf->mad, also kmad_send_buf_seg(buf,
 * 1))"; "kmad_send_buf_seg_count() of a single-MAD buffer is 1, and
 * segment 1 is its MAD".  Every segment is its own 256 bytes: writing
 * one's data area leaves the others alone.
 */
static void contract2_rmpp_segment_count(struct kunit *test)
{
	const struct k2_segs_row *row = test->param_value;
	struct kt_fix *f = test->priv;
	unsigned int s = KMAD_MAD_SIZE - row->hdr_len;
	unsigned int n = max_t(unsigned int, 1,
			       DIV_ROUND_UP(row->data_len, s));
	struct kmad_dest dest = k2_dest(f, KT_DEV1);
	struct kmad_send_buf *buf, *plain;
	struct kmad_agent *a;
	struct kmad_mad *seg, *prev = NULL;
	unsigned int k;

	a = k2_register(f, KT_DEV0, 0, 0, 0, KMAD_RMPP_VERSION);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	k2_agent = a;
	buf = kmad_alloc_send_buf_rmpp(a, &dest, row->hdr_len, row->data_len,
				       GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(buf));
	KUNIT_EXPECT_EQ(test, kmad_send_buf_seg_count(buf), n);
	KUNIT_EXPECT_PTR_EQ(test, kmad_send_buf_seg(buf, 1), buf->mad);
	for (k = 1; k <= n; k++) {
		seg = kmad_send_buf_seg(buf, k);
		KUNIT_ASSERT_NOT_NULL(test, seg);
		memset((u8 *)seg + row->hdr_len, k, s);
		if (prev)
			KUNIT_EXPECT_EQ(test,
					((u8 *)prev)[KMAD_MAD_SIZE - 1],
					(u8)(k - 1));
		prev = seg;
	}
	kmad_free_send_buf(buf);

	plain = kmad_alloc_send_buf(f->agent, &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(plain));
	KUNIT_EXPECT_EQ(test, kmad_send_buf_seg_count(plain), 1U);
	KUNIT_EXPECT_PTR_EQ(test, kmad_send_buf_seg(plain, 1), plain->mad);
	kmad_free_send_buf(plain);
}

struct k2_post_row {
	const char *name;
	bool class_agent;	/* a DevMgt agent, else a send-only one */
	unsigned int hdr_len;
	u8 mad_class;
	u8 mad_version;
	int alloc_ret;
	int post_ret;
};

static const struct k2_post_row k2_post_rows[] = {
	{ "send-only-vendor-40", false, 40, K2_VENDOR, 1, 0, 0 },
	{ "send-only-sa-56", false, 56, KMAD_MGMT_CLASS_SUBN_ADM, 2, 0, 0 },
	{ "send-only-dm-64", false, 64, KMAD_MGMT_CLASS_DEVICE_MGMT, 1, 0, 0 },
	{ "send-only-bis-64", false, 64, KMAD_MGMT_CLASS_BIS, 1, 0, 0 },
	{ "send-only-sa-40", false, 40, KMAD_MGMT_CLASS_SUBN_ADM, 2, 0,
	  -EINVAL },
	{ "send-only-vendor-56", false, 56, K2_VENDOR, 1, 0, -EINVAL },
	{ "send-only-dm-56", false, 56, KMAD_MGMT_CLASS_DEVICE_MGMT, 1, 0,
	  -EINVAL },
	{ "send-only-perf-64", false, 64, KMAD_MGMT_CLASS_PERF_MGMT, 1, 0,
	  -EINVAL },
	{ "send-only-cm-56", false, 56, KMAD_MGMT_CLASS_CM, 2, 0, -EINVAL },
	{ "send-only-hdr-48", false, 48, K2_VENDOR, 1, -EINVAL, 0 },
	{ "dm-agent-dm-64", true, 64, KMAD_MGMT_CLASS_DEVICE_MGMT, 1, 0, 0 },
	{ "dm-agent-sa-56", true, 56, KMAD_MGMT_CLASS_SUBN_ADM, 2, -EINVAL,
	  0 },
	{ "dm-agent-bis-64", true, 64, KMAD_MGMT_CLASS_BIS, 1, 0, -EINVAL },
};

static void k2_post_desc(const struct k2_post_row *row, char *desc)
{
	strscpy(desc, row->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(k2_post, k2_post_rows, k2_post_desc);

/*
 * rmpp.rst, API: "a send-only agent may give any of the three, and
 * kmad_post_send() then checks it against the class of the MAD";
 * "kmad_alloc_send_buf_rmpp() returns -EINVAL for ... a hdr_len that is
 * not its class's"; "kmad_post_send() returns -EINVAL for an RMPP buffer
 * whose MAD's class has no RMPP header, repeats another number of header
 * bytes than the buffer was allocated with, or is not the agent's class".
 * mad.h, kmad_post_send(): on an error "nothing is sent, no callback runs
 * and the MAD is left as it was".  The DevMgt agent's BIS row isolates
 * "not the agent's class" (both classes repeat 64 bytes).  A post that is taken is canceled on
 * the wire and ends CANCELED, once.
 */
static void contract2_rmpp_post_checks_class(struct kunit *test)
{
	const struct k2_post_row *row = test->param_value;
	struct kt_fix *f = test->priv;
	struct kmad_dest dest = k2_dest(f, KT_DEV1);
	struct kmad_send_buf *buf;
	struct kmad_agent *a;
	struct kmad_mad before;

	if (row->class_agent)
		a = k2_register(f, KT_DEV0, KMAD_MGMT_CLASS_DEVICE_MGMT, 1,
				KMAD_METHOD_SET, KMAD_RMPP_VERSION);
	else
		a = k2_register(f, KT_DEV0, 0, 0, 0, KMAD_RMPP_VERSION);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	k2_agent = a;
	buf = kmad_alloc_send_buf_rmpp(a, &dest, row->hdr_len, 300,
				       GFP_KERNEL);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(buf), row->alloc_ret);
	if (IS_ERR_OR_NULL(buf))
		return;
	k2_hdr(buf->mad, row->mad_class, row->mad_version, KMAD_METHOD_SET,
	       0x21);
	before = *buf->mad;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), row->post_ret);
	if (row->post_ret) {
		KUNIT_EXPECT_EQ(test, memcmp(buf->mad, &before, sizeof(before)),
				0);
		KUNIT_EXPECT_EQ(test, k2_pending(f, KT_DEV0), 0U);
		kt_settle(f);
		KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	} else {
		KUNIT_EXPECT_EQ(test, k2_pending(f, KT_DEV0), 1U);
		KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
		kt_expect_only_send(f, buf, KMAD_SEND_CANCELED);
	}
	kmad_free_send_buf(buf);
}

struct k2_rt_row {
	const char *name;
	u8 cls;
	u8 version;
	size_t data_len;
};

static const struct k2_rt_row k2_rt_rows[] = {
	{ "vendor-3-segments", K2_VENDOR, 1, 500 },
	{ "vendor-1-segment", K2_VENDOR, 1, 1 },
	{ "devmgt-3-segments", KMAD_MGMT_CLASS_DEVICE_MGMT, 1, 400 },
	{ "sa-5-segments-full", KMAD_MGMT_CLASS_SUBN_ADM, 2, 1000 },
};

static void k2_rt_desc(const struct k2_rt_row *row, char *desc)
{
	strscpy(desc, row->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(k2_rt, k2_rt_rows, k2_rt_desc);

/*
 * One RMPP Set from a send-only agent on device 0 to an RMPP agent of its
 * class on device 1, every packet carried across in turn.
 *
 * On the wire, rmpp.rst, "Segments and headers": "Every segment carries
 * RMPPVersion 1, RMPPType DATA, RMPPStatus 0, the Active flag, the ULP's
 * RRespTime, and its SegmentNumber (1 to N).  The first segment has the
 * First flag and PayloadLength of the whole message, the last has the
 * Last flag and PayloadLength of its own share, the others PayloadLength
 * 0 ... the whole message is N * 220 - pad, the last segment 220 - pad
 * ... A message of one segment has both flags and PayloadLength 220 -
 * pad"; and kmad "copies segment 1's first hdr_len bytes into every other
 * segment".  mad.h, @hi_tid: "the upper 32 bits kmad puts in the TID of
 * its requests".
 *
 * At the receiver, mad.h, &kmad_recv_wc.mad_len: "its first segment
 * whole, then the data of every later segment (each from
 * kmad_rmpp_hdr_len() of the class on), contiguous, ending where the
 * PayloadLength of the message ends"; for one segment "its @mad_len, too,
 * ends where its PayloadLength does".  Either way the ULP reads data byte
 * i at hdr_len + i and mad_len is hdr_len + data_len.
 *
 * mad.h: an RMPP send "is one send for these rules: one send_handler
 * call": the counters count it once (posted, completed), and the
 * receiver's once (unsolicited).
 */
static void contract2_rmpp_round_trip_layout(struct kunit *test)
{
	const struct k2_rt_row *row = test->param_value;
	struct kt_fix *f = test->priv;
	unsigned int h = kmad_rmpp_hdr_len(row->cls);
	unsigned int s = KMAD_MAD_SIZE - h;
	unsigned int n = max_t(unsigned int, 1, DIV_ROUND_UP(row->data_len, s));
	unsigned int pad = n * s - row->data_len;
	u32 whole = n * K2_RMPP_SEG - pad, last = K2_RMPP_SEG - pad;
	struct kmad_agent_stats st;
	struct kmad_send_buf *buf;
	struct kmad_agent *tx, *rx;
	struct kmad_recv_wc *wc;
	struct kmad_mad *segs;
	unsigned int sent, k, j, bad = 0;
	size_t i;

	tx = k2_register(f, KT_DEV0, 0, 0, 0, KMAD_RMPP_VERSION);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tx));
	k2_agent = tx;
	rx = k2_register(f, KT_DEV1, row->cls, row->version, KMAD_METHOD_SET,
			 KMAD_RMPP_VERSION);
	KUNIT_ASSERT_FALSE(test, IS_ERR(rx));
	k2_agent2 = rx;
	segs = kunit_kcalloc(test, n + 4, sizeof(*segs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, segs);
	buf = k2_rmpp_buf(f, tx, row->cls, row->version, KMAD_METHOD_SET, h,
			  row->data_len, 0x77, 0, 0);
	KUNIT_ASSERT_EQ(test, kmad_send_buf_seg_count(buf), n);
	f->keep_recv = true;
	kt_post(f, buf);
	sent = k2_pump(f, segs, n + 4);
	KUNIT_EXPECT_EQ(test, sent, n);

	KUNIT_EXPECT_EQ(test, kmad_mad_tid_hi(&segs[0].mad_hdr), tx->hi_tid);
	KUNIT_EXPECT_EQ(test, kmad_mad_tid_lo(&segs[0].mad_hdr), 0x77U);
	for (k = 1; k <= min(sent, n); k++) {
		const struct kmad_rmpp_mad *m = (void *)&segs[k - 1];
		const u8 *b = (const u8 *)&segs[k - 1];
		u8 flags = KMAD_RMPP_FLAG_ACTIVE |
			   (k == 1 ? KMAD_RMPP_FLAG_FIRST : 0) |
			   (k == n ? KMAD_RMPP_FLAG_LAST : 0);
		u32 paylen = k == 1 ? (n == 1 ? last : whole) :
			     k == n ? last : 0;

		KUNIT_EXPECT_EQ_MSG(test, m->rmpp_hdr.rmpp_version,
				    KMAD_RMPP_VERSION, "segment %u", k);
		KUNIT_EXPECT_EQ_MSG(test, m->rmpp_hdr.rmpp_type,
				    KMAD_RMPP_TYPE_DATA, "segment %u", k);
		KUNIT_EXPECT_EQ_MSG(test, m->rmpp_hdr.rmpp_status, 0,
				    "segment %u", k);
		KUNIT_EXPECT_EQ_MSG(test, kmad_rmpp_flags(&m->rmpp_hdr), flags,
				    "segment %u", k);
		KUNIT_EXPECT_EQ_MSG(test,
				    m->rmpp_hdr.rmpp_rtime_flags >>
				    KMAD_RMPP_RTIME_SHIFT, K2_RTIME,
				    "segment %u", k);
		KUNIT_EXPECT_EQ_MSG(test, be32_to_cpu(m->rmpp_hdr.seg_num), k,
				    "segment %u", k);
		KUNIT_EXPECT_EQ_MSG(test,
				    be32_to_cpu(m->rmpp_hdr.paylen_newwin),
				    paylen, "segment %u", k);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(b, &segs[0], KMAD_MAD_HDR_SIZE),
				    0, "segment %u common header", k);
		KUNIT_EXPECT_EQ_MSG(test,
				    memcmp(b + KMAD_RMPP_MAD_HDR_SIZE,
					   (u8 *)&segs[0] +
					   KMAD_RMPP_MAD_HDR_SIZE,
					   h - KMAD_RMPP_MAD_HDR_SIZE),
				    0, "segment %u class header", k);
		for (j = 0; j < s; j++) {
			i = (size_t)(k - 1) * s + j;
			if (i < row->data_len && b[h + j] != k2_byte(i))
				bad++;
		}
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0U, "data bytes wrong on the wire");

	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	KUNIT_EXPECT_EQ(test, k2_sends_of(f, buf, KMAD_SEND_OK), 1);
	KUNIT_EXPECT_EQ(test, k2_recvs(f), 1);
	wc = f->kept_recv;
	KUNIT_ASSERT_NOT_NULL(test, wc);
	f->kept_recv = NULL;
	KUNIT_EXPECT_EQ(test, wc->mad_len, (size_t)h + row->data_len);
	KUNIT_EXPECT_EQ(test,
			memcmp(wc->mad, &segs[0],
			       min_t(size_t, KMAD_MAD_SIZE, wc->mad_len)), 0);
	bad = 0;
	for (i = 0; i < row->data_len && h + i < wc->mad_len; i++)
		if (((const u8 *)wc->mad)[h + i] != k2_byte(i))
			bad++;
	KUNIT_EXPECT_EQ_MSG(test, bad, 0U, "reassembled data wrong");
	kmad_free_recv(wc);

	kmad_agent_get_stats(tx, &st);
	KUNIT_EXPECT_EQ(test, st.posted, 1ULL);
	KUNIT_EXPECT_EQ(test, st.completed, 1ULL);
	kmad_agent_get_stats(rx, &st);
	KUNIT_EXPECT_EQ(test, st.unsolicited, 1ULL);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(rx), 0);
	k2_agent2 = NULL;
	kmad_free_send_buf(buf);
}

/*
 * rmpp.rst, "What the ULP gets": "A one-segment transfer (First and Last
 * set) is handed on as it is, with mad_len = 36 + its PayloadLength (256
 * if that is above 220)", and the receiver table: "segment 1, First and
 * Last: hands it on whole; ACK 1, NewWindowLast 1", the ACK's "Method is
 * the DATA's with the RESP bit flipped".
 */
static void contract2_rmpp_recv_one_segment_length(struct kunit *test)
{
	static const u32 paylens[] = { 100, 220, 300 };
	struct kt_fix *f = test->priv;
	struct kmad_rmpp_mad ack;
	struct kmad_recv_wc *wc;
	struct kmad_agent *rx;
	struct kmad_mad mad;
	unsigned int i;

	rx = k2_register(f, KT_DEV1, K2_VENDOR, 1, KMAD_METHOD_SET,
			 KMAD_RMPP_VERSION);
	KUNIT_ASSERT_FALSE(test, IS_ERR(rx));
	k2_agent = rx;
	f->keep_recv = true;
	for (i = 0; i < ARRAY_SIZE(paylens); i++) {
		k2_data_seg(&mad, K2_VENDOR, 1, KMAD_METHOD_SET, 0x900 + i, 1,
			    KMAD_RMPP_FLAG_FIRST | KMAD_RMPP_FLAG_LAST,
			    paylens[i], 0);
		k2_inject(f, KT_DEV1, &mad);
		KUNIT_ASSERT_EQ(test, kt_events(f), (int)i + 1);
		kt_expect_recv(f, i, NULL, KMAD_METHOD_SET);
		wc = f->kept_recv;
		KUNIT_ASSERT_NOT_NULL(test, wc);
		f->kept_recv = NULL;
		KUNIT_EXPECT_EQ_MSG(test, wc->mad_len,
				    (size_t)min_t(u32, 36 + paylens[i],
						  KMAD_MAD_SIZE),
				    "PayloadLength %u", paylens[i]);
		KUNIT_EXPECT_EQ(test,
				memcmp(wc->mad, &mad,
				       min_t(size_t, wc->mad_len,
					     KMAD_MAD_SIZE)), 0);
		kmad_free_recv(wc);

		KUNIT_ASSERT_EQ(test, k2_pending(f, KT_DEV1), 1U);
		k2_peek(f, KT_DEV1, 0, (struct kmad_mad *)&ack);
		KUNIT_EXPECT_EQ(test, ack.mad_hdr.method,
				KMAD_METHOD_SET | KMAD_METHOD_RESP);
		KUNIT_EXPECT_EQ(test, be64_to_cpu(ack.mad_hdr.tid), 0x900ULL + i);
		KUNIT_EXPECT_EQ(test, ack.rmpp_hdr.rmpp_type, KMAD_RMPP_TYPE_ACK);
		KUNIT_EXPECT_EQ(test, be32_to_cpu(ack.rmpp_hdr.seg_num), 1U);
		KUNIT_EXPECT_EQ(test, be32_to_cpu(ack.rmpp_hdr.paylen_newwin),
				1U);
		kt_complete(f, KT_DEV1, KMAD_WC_SUCCESS, false);
	}
}

struct k2_wait_row {
	const char *name;
	unsigned int timeout_ms;
	unsigned int ack_wait_ms;
};

static const struct k2_wait_row k2_wait_rows[] = {
	{ "no-timeout-2s", 0, 2000 },
	{ "timeout-300", 300, 300 },
	{ "timeout-5000-capped", 5000, 2000 },
};

static void k2_wait_desc(const struct k2_wait_row *row, char *desc)
{
	strscpy(desc, row->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(k2_wait, k2_wait_rows, k2_wait_desc);

/*
 * rmpp.rst, "Timeouts and retries": "While waiting for an ACK the
 * deadline is timeout_ms, at most 2 s, and 2 s for a send without a
 * timeout ...  At the deadline one of the send's retries is used and kmad
 * resends from the segment after the last one acknowledged, with the same
 * TID; with none left the send ends with KMAD_SEND_RESP_TIMEOUT."  mad.h
 * counters: @retries "resends after a timeout", @timeouts "sends ended
 * with KMAD_SEND_RESP_TIMEOUT".
 */
static void contract2_rmpp_ack_wait_deadline(struct kunit *test)
{
	const struct k2_wait_row *row = test->param_value;
	struct kt_fix *f = test->priv;
	unsigned int w = row->ack_wait_ms;
	struct kmad_agent_stats st;
	struct kmad_send_buf *buf;
	struct kmad_mad first, again;
	struct kmad_agent *tx;

	tx = k2_register(f, KT_DEV0, 0, 0, 0, KMAD_RMPP_VERSION);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tx));
	k2_agent = tx;
	buf = k2_rmpp_buf(f, tx, K2_VENDOR, 1, KMAD_METHOD_SET, 40, 500, 0x55,
			  row->timeout_ms, 1);
	kt_post(f, buf);
	k2_peek(f, KT_DEV0, 0, &first);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_advance(f, w - 1);
	KUNIT_EXPECT_EQ(test, k2_pending(f, KT_DEV0), 0U);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kt_advance(f, 1);
	KUNIT_ASSERT_EQ(test, k2_pending(f, KT_DEV0), 1U);
	k2_peek(f, KT_DEV0, 0, &again);
	KUNIT_EXPECT_EQ(test, memcmp(&again, &first, sizeof(first)), 0);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_advance(f, w - 1);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, k2_pending(f, KT_DEV0), 0U);
	kt_advance(f, 1);
	kt_expect_only_send(f, buf, KMAD_SEND_RESP_TIMEOUT);
	KUNIT_EXPECT_EQ(test, k2_pending(f, KT_DEV0), 0U);
	kmad_agent_get_stats(tx, &st);
	KUNIT_EXPECT_EQ(test, st.posted, 1ULL);
	KUNIT_EXPECT_EQ(test, st.completed, 1ULL);
	KUNIT_EXPECT_EQ(test, st.retries, 1ULL);
	KUNIT_EXPECT_EQ(test, st.timeouts, 1ULL);
	kmad_free_send_buf(buf);
}

/*
 * rmpp.rst: "(A response with RMPP may be posted with a timeout_ms: it is
 * its ACK timeout, not a response wait.)"; "The final ACK ... completes
 * the transfer.  A send that expects no response ends KMAD_SEND_OK";
 * "The receiver's ACK for a response kmad sends (an SA GetTableResp,
 * 0x92) carries the request method (0x12), so it arrives through the
 * request dispatch".  wire.h, kmad_mad_is_response(): "a response keeps
 * its TID".  The ACK is kmad's, not the agent's (mad.h, @rmpp_version:
 * "the ACK, STOP and ABORT packets of its transfers are kmad's").
 */
static void contract2_rmpp_response_timeout_is_ack_timeout(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent_stats st;
	struct kmad_send_buf *buf;
	struct kmad_rmpp_mad seg;
	struct kmad_mad first;
	struct kmad_agent *a;

	a = k2_register(f, KT_DEV0, KMAD_MGMT_CLASS_SUBN_ADM, 2,
			KMAD_METHOD_GET_TABLE, KMAD_RMPP_VERSION);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	k2_agent = a;
	buf = k2_rmpp_buf(f, a, KMAD_MGMT_CLASS_SUBN_ADM, 2,
			  KMAD_METHOD_GET_TABLE_RESP, 56, 300,
			  0x0000000700000042ULL, 300, 1);
	KUNIT_ASSERT_EQ(test, kmad_send_buf_seg_count(buf), 2U);
	kt_post(f, buf);
	k2_peek(f, KT_DEV0, 0, &first);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(first.mad_hdr.tid),
			0x0000000700000042ULL);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_advance(f, 299);
	KUNIT_EXPECT_EQ(test, k2_pending(f, KT_DEV0), 0U);
	kt_advance(f, 1);
	KUNIT_ASSERT_EQ(test, k2_pending(f, KT_DEV0), 1U);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	k2_ctl(f, &first, KMAD_RMPP_TYPE_ACK, 1, 2, 0);
	KUNIT_ASSERT_EQ(test, k2_pending(f, KT_DEV0), 1U);
	k2_peek(f, KT_DEV0, 0, (struct kmad_mad *)&seg);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(seg.rmpp_hdr.seg_num), 2U);
	KUNIT_EXPECT_TRUE(test, kmad_rmpp_flags(&seg.rmpp_hdr) &
				KMAD_RMPP_FLAG_LAST);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(seg.mad_hdr.tid),
			0x0000000700000042ULL);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	k2_ctl(f, &first, KMAD_RMPP_TYPE_ACK, 2, 2, 0);
	kt_expect_only_send(f, buf, KMAD_SEND_OK);
	kmad_agent_get_stats(a, &st);
	KUNIT_EXPECT_EQ(test, st.retries, 1ULL);
	KUNIT_EXPECT_EQ(test, st.responses, 0ULL);
	KUNIT_EXPECT_EQ(test, st.unsolicited, 0ULL);
	kmad_free_send_buf(buf);
}

struct k2_cancel_row {
	const char *name;
	bool modify;
	unsigned int timeout_ms;
};

static const struct k2_cancel_row k2_cancel_rows[] = {
	{ "cancel-no-timeout", false, 0 },
	{ "cancel-timeout", false, 1000 },
	{ "modify-zero-timeout", true, 1000 },
};

static void k2_cancel_desc(const struct k2_cancel_row *row, char *desc)
{
	strscpy(desc, row->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(k2_cancel, k2_cancel_rows, k2_cancel_desc);

/*
 * rmpp.rst, "The end of a transfer": "kmad_cancel_send(),
 * kmad_modify_send(buf, 0) ... end a transfer as they end any send:
 * KMAD_SEND_CANCELED ..., at once if no segment is in the hardware ...
 * Nothing more is sent, and no later ACK or response matches the send."
 * Here it waits for an ACK, with or without a timeout (an RMPP send
 * holds its outcome reference "timeout or not", send-lifecycle.rst), and
 * ends with no clock moving; the ACK that comes later sends nothing; no
 * deadline fires later.  mad.h: modify(0) sets timeout_ms to 0; cancel
 * of a send whose callback ran is -EINVAL; @canceled counts it.
 */
static void contract2_rmpp_cancel_waiting_for_ack(struct kunit *test)
{
	const struct k2_cancel_row *row = test->param_value;
	struct kt_fix *f = test->priv;
	struct kmad_agent_stats st;
	struct kmad_send_buf *buf;
	struct kmad_agent *tx;
	struct kmad_mad first;

	tx = k2_register(f, KT_DEV0, 0, 0, 0, KMAD_RMPP_VERSION);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tx));
	k2_agent = tx;
	buf = k2_rmpp_buf(f, tx, K2_VENDOR, 1, KMAD_METHOD_SET, 40, 500, 0x66,
			  row->timeout_ms, 3);
	kt_post(f, buf);
	k2_peek(f, KT_DEV0, 0, &first);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, k2_pending(f, KT_DEV0), 0U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 0);
	if (row->modify) {
		KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 0), 0);
		KUNIT_EXPECT_EQ(test, buf->timeout_ms, 0U);
	} else {
		KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	}
	kt_settle(f);
	kt_expect_only_send(f, buf, KMAD_SEND_CANCELED);
	k2_ctl(f, &first, KMAD_RMPP_TYPE_ACK, 1, 3, 0);
	KUNIT_EXPECT_EQ(test, k2_pending(f, KT_DEV0), 0U);
	kt_advance(f, 5000);
	KUNIT_EXPECT_EQ(test, k2_pending(f, KT_DEV0), 0U);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), -EINVAL);
	kmad_agent_get_stats(tx, &st);
	KUNIT_EXPECT_EQ(test, st.canceled, 1ULL);
	KUNIT_EXPECT_EQ(test, st.completed, 1ULL);
	KUNIT_EXPECT_EQ(test, st.timeouts, 0ULL);
	kmad_free_send_buf(buf);
}

/* kmad_unregister_agent() in a thread. */
struct k2_unreg {
	struct kmad_agent *agent;
	int ret;
	struct completion done;
};

static int k2_unreg_fn(void *arg)
{
	struct k2_unreg *u = arg;

	u->ret = kmad_unregister_agent(u->agent);
	complete(&u->done);
	return 0;
}

/* A single-MAD vendor Get of @agent to device 1. */
static struct kmad_send_buf *k2_vendor_get(struct kt_fix *f,
					   struct kmad_agent *agent, u64 tid,
					   unsigned int timeout_ms)
{
	struct kmad_dest dest = k2_dest(f, KT_DEV1);
	struct kmad_send_buf *buf;

	buf = kmad_alloc_send_buf(agent, &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(f->test, IS_ERR_OR_NULL(buf));
	k2_hdr(buf->mad, K2_VENDOR, 1, KMAD_METHOD_GET, tid);
	buf->timeout_ms = timeout_ms;
	return buf;
}

/*
 * mad.h: "kmad_unregister_agent() cancels everything outstanding, waits
 * for it, and every send posted before it returned ... gets its callback;
 * after it returns no handler runs"; "send_handler runs exactly once per
 * successfully posted send, and never before the hardware has completed
 * the send"; KMAD_SEND_FLUSHED "its agent unregistered".  rmpp.rst:
 * unregister ends a transfer "at once if no segment is in the hardware,
 * else at that segment's send completion.  Nothing more is sent";
 * send-lifecycle.rst: the flushed callbacks come "in posting order among
 * sends that are not RMPP sends ...; an RMPP send waiting for an ACK
 * comes behind every waiting send".  One RMPP agent with everything at
 * once: a plain request waiting for its response (C), an RMPP send
 * waiting for an ACK (A), an RMPP send and a plain one on the wire (B,
 * D), and a transfer it is receiving.
 */
static void contract2_rmpp_unregister_mid_transfer(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *a, *b, *c, *d;
	struct kmad_mad seg, first_a;
	struct task_struct *t;
	struct kmad_agent *r;
	struct k2_unreg *u;
	int i;

	r = k2_register(f, KT_DEV0, K2_VENDOR, 1, KMAD_METHOD_SET,
			KMAD_RMPP_VERSION);
	KUNIT_ASSERT_FALSE(test, IS_ERR(r));
	k2_agent = r;
	c = k2_vendor_get(f, r, 0x31, 10000);
	kt_post(f, c);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	a = k2_rmpp_buf(f, r, K2_VENDOR, 1, KMAD_METHOD_SET, 40, 500, 0x32, 0,
			0);
	kt_post(f, a);
	k2_peek(f, KT_DEV0, 0, &first_a);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	b = k2_rmpp_buf(f, r, K2_VENDOR, 1, KMAD_METHOD_SET, 40, 500, 0x33, 0,
			0);
	kt_post(f, b);
	d = k2_vendor_get(f, r, 0x34, 10000);
	kt_post(f, d);
	/* A 3-segment Set (PayloadLength 600 + 4 * 3) arriving for r. */
	k2_data_seg(&seg, K2_VENDOR, 1, KMAD_METHOD_SET, 0x0000000900000001ULL,
		    1, KMAD_RMPP_FLAG_FIRST, 612, 0);
	k2_inject(f, KT_DEV0, &seg);
	KUNIT_ASSERT_EQ(test, k2_pending(f, KT_DEV0), 3U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 0);

	u = kzalloc(sizeof(*u), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, u);
	u->agent = r;
	init_completion(&u->done);
	t = kthread_run(k2_unreg_fn, u, "k2_unreg");
	if (IS_ERR(t)) {
		kfree(u);
		KUNIT_FAIL(test, "no thread");
		return;
	}
	k2_agent = NULL;	/* the thread's now, whatever happens */
	KUNIT_EXPECT_TRUE(test, kt_wait_until(kt_events(f) >= 2,
					      KT_ASYNC_WAIT_MS));
	msleep(20);
	KUNIT_EXPECT_FALSE_MSG(test, completion_done(&u->done),
			       "unregister returned with sends on the wire");
	KUNIT_EXPECT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 0, c, KMAD_SEND_FLUSHED);
	kt_expect_send(f, 1, a, KMAD_SEND_FLUSHED);

	while (k2_pending(f, KT_DEV0))
		KUNIT_ASSERT_EQ(test,
				kmad_sim_complete_send(f->fab, KT_DEV0, KT_QPN,
						       0, KMAD_WC_SUCCESS,
						       false), 0);
	kt_event(f, KT_DEV0);
	if (!wait_for_completion_timeout(&u->done,
					 msecs_to_jiffies(KT_ASYNC_WAIT_MS))) {
		/* Leave the thread what it uses (kt_remove_wait()). */
		KUNIT_FAIL(test, "unregister did not return");
		f->fab = NULL;
		f->agent = NULL;
		return;
	}
	KUNIT_EXPECT_EQ(test, u->ret, 0);
	kfree(u);

	KUNIT_EXPECT_EQ(test, kt_events(f), 4);
	KUNIT_EXPECT_EQ(test, k2_sends_of(f, a, KMAD_SEND_FLUSHED), 1);
	KUNIT_EXPECT_EQ(test, k2_sends_of(f, b, KMAD_SEND_FLUSHED), 1);
	KUNIT_EXPECT_EQ(test, k2_sends_of(f, c, KMAD_SEND_FLUSHED), 1);
	KUNIT_EXPECT_EQ(test, k2_sends_of(f, d, KMAD_SEND_FLUSHED), 1);
	KUNIT_EXPECT_EQ(test, k2_recvs(f), 0);

	/* The rest of the incoming transfer, and an ACK for a. */
	for (i = 2; i <= 3; i++) {
		k2_data_seg(&seg, K2_VENDOR, 1, KMAD_METHOD_SET,
			    0x0000000900000001ULL, i,
			    i == 3 ? KMAD_RMPP_FLAG_LAST : 0,
			    i == 3 ? 612 - 2 * K2_RMPP_SEG : 0,
			    (i - 1) * (KMAD_MAD_SIZE - 40));
		k2_inject(f, KT_DEV0, &seg);
	}
	k2_ctl(f, &first_a, KMAD_RMPP_TYPE_ACK, 1, 3, 0);
	KUNIT_EXPECT_EQ(test, kt_events(f), 4);
	KUNIT_EXPECT_EQ(test, k2_pending(f, KT_DEV0), 0U);
	kmad_free_send_buf(a);
	kmad_free_send_buf(b);
	kmad_free_send_buf(c);
	kmad_free_send_buf(d);
}

/* ------------------------------------------------------------------ */
/* What a provider is promised                                         */
/* ------------------------------------------------------------------ */

/*
 * provider.h: "The MAD buffer of a posted send stays valid, and
 * unchanged, until kmad has polled that send's completion: the provider
 * may read it at any time up to generating the CQE"; rmpp.rst: "An ACK
 * that arrives before the send completion of the segment it acknowledges
 * is taken at once; what it allows goes out from that send completion",
 * "Segments are written only while the QP does not hold the send".
 * simulated-fabric.rst: kmad_sim_complete_send() "reads the MAD from
 * kmad's buffer at that moment (as DMA would)".  Also for a plain request
 * whose response comes before its send completion.
 */
static void contract2_provider_buffer_unchanged_while_held(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_mad *m = k2_zalloc(test, 3 * sizeof(*m));
	struct kmad_mad *before = &m[0], *after = &m[1];
	struct kmad_rmpp_mad *seg = (struct kmad_rmpp_mad *)&m[2];
	struct kmad_send_buf *buf, *req;
	struct kmad_agent *tx;

	tx = k2_register(f, KT_DEV0, 0, 0, 0, KMAD_RMPP_VERSION);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tx));
	k2_agent = tx;
	buf = k2_rmpp_buf(f, tx, K2_VENDOR, 1, KMAD_METHOD_SET, 40, 500, 0x44,
			  0, 0);
	kt_post(f, buf);
	k2_peek(f, KT_DEV0, 0, before);
	k2_ctl(f, before, KMAD_RMPP_TYPE_ACK, 1, 3, 0);
	KUNIT_ASSERT_EQ(test, k2_pending(f, KT_DEV0), 1U);
	k2_peek(f, KT_DEV0, 0, after);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(after, before, sizeof(*before)), 0,
			    "segment 1 changed under the provider");
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, k2_pending(f, KT_DEV0), 1U);
	k2_peek(f, KT_DEV0, 0, (struct kmad_mad *)seg);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(seg->rmpp_hdr.seg_num), 2U);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, k2_pending(f, KT_DEV0), 1U);
	k2_peek(f, KT_DEV0, 0, (struct kmad_mad *)seg);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(seg->rmpp_hdr.seg_num), 3U);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	k2_ctl(f, before, KMAD_RMPP_TYPE_ACK, 3, 3, 0);
	kt_expect_only_send(f, buf, KMAD_SEND_OK);

	req = kt_request(f, f->agent, KMAD_METHOD_GET, 5, 1000, 0);
	kt_post(f, req);
	k2_peek(f, KT_DEV0, 0, before);
	kt_respond(f, req, 0);
	kt_event(f, KT_DEV0);
	k2_peek(f, KT_DEV0, 0, after);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(after, before, sizeof(*before)), 0,
			    "request changed under the provider");
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 3);
	kt_expect_recv(f, 1, req, KMAD_METHOD_GET_RESP);
	kt_expect_send(f, 2, req, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
	kmad_free_send_buf(req);
}

/*
 * provider.h, @now: "A provider with a virtual clock (the simulated
 * fabric's step mode) implements it ... With it, send and RMPP deadlines
 * pass only at kmad_device_clock_changed()"; simulated-fabric.rst: "kmad
 * arms no timers for send deadlines".  Real time passing well beyond a
 * 1 ms response deadline and a 1 ms ACK deadline ends neither; one
 * virtual millisecond ends both.
 */
static void contract2_provider_virtual_clock_only(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *req, *rbuf;
	struct kmad_agent *tx;

	tx = k2_register(f, KT_DEV0, 0, 0, 0, KMAD_RMPP_VERSION);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tx));
	k2_agent = tx;
	req = kt_request(f, f->agent, KMAD_METHOD_GET, 1, 1, 0);
	kt_post(f, req);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	rbuf = k2_rmpp_buf(f, tx, K2_VENDOR, 1, KMAD_METHOD_SET, 40, 500,
			   0x45, 1, 0);
	kt_post(f, rbuf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	msleep(50);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, kt_state(req, NULL), KMAD_SS_WAIT_RESP);
	KUNIT_EXPECT_EQ(test, k2_pending(f, KT_DEV0), 0U);
	kt_advance(f, 1);
	KUNIT_EXPECT_EQ(test, kt_events(f), 2);
	KUNIT_EXPECT_EQ(test, k2_sends_of(f, req, KMAD_SEND_RESP_TIMEOUT), 1);
	KUNIT_EXPECT_EQ(test, k2_sends_of(f, rbuf, KMAD_SEND_RESP_TIMEOUT), 1);
	kmad_free_send_buf(req);
	kmad_free_send_buf(rbuf);
}

/*
 * provider.h, @query_pkey: "Optional: without it a port's table is the
 * default P_Key 0xffff alone"; @pkey_tbl_len: "A send's P_Key index must
 * be below it"; mad.h, @pkey_index: "kmad_post_send() refuses an index
 * past its end"; @query_gid: "Optional: without it a port has no GIDs";
 * ulp-guide.rst: kmad_post_send() refuses (-EINVAL) "an sgid_index that
 * is not an entry of the port's GID table".  On a fabric of
 * &kmad_sim_config.minimal_ops, which sim.h says offers "no query_gid,
 * query_pkey, query_smp or modify_port_cap"; mad.h: kmad_port_query_smp()
 * returns "-EOPNOTSUPP if the provider cannot".
 */
static void contract2_provider_minimal_tables(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_sim_config cfg;
	char name[KMAD_NAME_LEN - 4], dev[KMAD_NAME_LEN];
	struct kmad_dest dest = {
		.remote_qpn = KT_QPN,
		.remote_qkey = KMAD_QP1_QKEY,
	};
	struct kmad_send_buf *buf;
	union kmad_gid gid = {};
	struct kmad_mad smp;
	u16 pkey = 0;

	kt_fix_config(&cfg, KMAD_SIM_STEP);
	cfg.minimal_ops = true;
	k2_name(name);
	cfg.name = name;
	k2_fab = kmad_sim_create(&cfg);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(k2_fab));
	snprintf(dev, sizeof(dev), "%s0", name);
	k2_port = kmad_port_get(dev, 1);
	KUNIT_ASSERT_NOT_NULL(test, k2_port);

	KUNIT_EXPECT_EQ(test, kmad_port_query_pkey(k2_port, 0, &pkey), 0);
	KUNIT_EXPECT_EQ(test, pkey, 0xffff);
	KUNIT_EXPECT_LT(test, kmad_port_query_pkey(k2_port, 1, &pkey), 0);
	KUNIT_EXPECT_LT(test, kmad_port_query_gid(k2_port, 0, &gid), 0);
	/* A local SubnGet of NodeInfo. */
	kt_mad(&smp, KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE,
	       KMAD_SMP_CLASS_VERSION, KMAD_METHOD_GET);
	smp.mad_hdr.attr_id = cpu_to_be16(KMAD_SMP_ATTR_NODE_INFO);
	KUNIT_EXPECT_EQ(test,
			kmad_port_query_smp(k2_port, (struct kmad_smp *)&smp),
			-EOPNOTSUPP);

	k2_agent = kmad_register_agent(k2_port, KMAD_QPT_GSI, NULL,
				       kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(k2_agent));
	dest.dlid = kmad_sim_port_lid(k2_fab, 1, 1);
	buf = kmad_alloc_send_buf(k2_agent, &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(buf));
	k2_hdr(buf->mad, KT_CLASS, KT_VERSION, KMAD_METHOD_SET, 0x46);
	buf->dest.pkey_index = 1;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	buf->dest.pkey_index = 0;
	buf->dest.grh_present = true;
	buf->dest.grh.sgid_index = 0;
	buf->dest.grh.dgid = gid;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(k2_fab, 0, KT_QPN), 0U);
	buf->dest.grh_present = false;
	KUNIT_ASSERT_EQ(test, kmad_post_send(buf), 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_complete_send(k2_fab, 0, KT_QPN, 0,
						     KMAD_WC_SUCCESS, false), 0);
	kmad_sim_fire_cq_event(k2_fab, 0, KT_QPN, false);
	kmad_sim_settle(k2_fab);
	kt_expect_only_send(f, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/*
 * provider.h: "A port whose LID, LMC or SM LID changes ... is reported
 * with kmad_device_port_changed() ...; a changed GID or P_Key table too";
 * @query_pkey: "-EINVAL past its end"; simulated-fabric.rst: "The P_Key
 * table (64 entries) is the port's P_KeyTable", "a P_KeyTable or GUIDInfo
 * Set of an HCA port, is reported to kmad with kmad_device_port_changed()".
 * A SubnSet(P_KeyTable) from device 0's SM agent to device 1's SMA shows
 * in kmad_port_query_pkey() of device 1 once the answer is back.
 */
static void contract2_provider_pkey_set_seen_by_query(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_dest dest = {
		.dlid = kmad_port_lid(f->port[KT_DEV1]),
	};
	struct kmad_send_buf *buf;
	struct kmad_agent *sm;
	struct kmad_smp *smp;
	u16 pkey = 0;

	KUNIT_ASSERT_EQ(test, kmad_port_query_pkey(f->port[KT_DEV1], 1, &pkey),
			0);
	KUNIT_ASSERT_NE(test, pkey, 0x8123);
	KUNIT_EXPECT_EQ(test, kmad_port_query_pkey(f->port[KT_DEV1], 63,
						   &pkey), 0);
	KUNIT_EXPECT_EQ(test, kmad_port_query_pkey(f->port[KT_DEV1], 64,
						   &pkey), -EINVAL);

	sm = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_SMI, NULL,
				 kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(sm));
	k2_agent = sm;
	buf = kmad_alloc_send_buf(sm, &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(buf));
	kt_mad(buf->mad, KMAD_MGMT_CLASS_SUBN_LID_ROUTED,
	       KMAD_SMP_CLASS_VERSION, KMAD_METHOD_SET);
	smp = (struct kmad_smp *)buf->mad;
	smp->tid = cpu_to_be64(0x47);
	smp->attr_id = cpu_to_be16(KMAD_SMP_ATTR_PKEY_TABLE);
	((__be16 *)smp->data)[0] = cpu_to_be16(0xffff);
	((__be16 *)smp->data)[1] = cpu_to_be16(0x8123);
	buf->timeout_ms = 1000;
	kt_post(f, buf);
	KUNIT_ASSERT_EQ(test, kmad_sim_complete_send(f->fab, KT_DEV0, 0, 0,
						     KMAD_WC_SUCCESS, true), 0);
	kmad_sim_fire_cq_event(f->fab, KT_DEV0, 0, false);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_recv(f, 0, buf, KMAD_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, f->ev[0].mad_status, 0);
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
	KUNIT_EXPECT_EQ(test, kmad_port_query_pkey(f->port[KT_DEV1], 1, &pkey),
			0);
	KUNIT_EXPECT_EQ(test, pkey, 0x8123);
	KUNIT_EXPECT_EQ(test, kmad_port_query_pkey(f->port[KT_DEV1], 0, &pkey),
			0);
	KUNIT_EXPECT_EQ(test, pkey, 0xffff);
	kmad_free_send_buf(buf);
}

/* What contract2_client_hot_plug's client saw of its own fabric. */
struct k2_cl_rec {
	int added;
	int removed;
};

static char k2_cl_prefix[KMAD_NAME_LEN];
static struct k2_cl_rec k2_cl_rec[4];
static atomic_t k2_cl_adds, k2_cl_removes, k2_cl_bad;

/* 2 * device + port - 1 for a port of the case's fabric, else -1. */
static int k2_cl_index(struct kmad_port *port)
{
	const char *name = kmad_port_dev_name(port);
	size_t len = strlen(k2_cl_prefix);
	u8 num = kmad_port_num(port);

	if (!name || !len || strncmp(name, k2_cl_prefix, len) ||
	    (name[len] != '0' && name[len] != '1') || name[len + 1] ||
	    num < 1 || num > 2)
		return -1;
	return (name[len] - '0') * 2 + num - 1;
}

static int k2_cl_add(struct kmad_client *client, struct kmad_port *port,
		     void **data)
{
	int i = k2_cl_index(port);

	*data = NULL;
	if (i < 0)
		return 0;
	k2_cl_rec[i].added++;
	*data = &k2_cl_rec[i];
	atomic_inc(&k2_cl_adds);
	return 0;
}

static void k2_cl_remove(struct kmad_client *client, struct kmad_port *port,
			 void *data)
{
	int i = k2_cl_index(port);

	if (i < 0)
		return;
	k2_cl_rec[i].removed++;
	if (data != &k2_cl_rec[i])
		atomic_inc(&k2_cl_bad);
	atomic_inc(&k2_cl_removes);
}

static void k2_cl_changed(struct kmad_client *client, struct kmad_port *port,
			  void *data)
{
	int i = k2_cl_index(port);

	if (i >= 0 && (!k2_cl_rec[i].added || k2_cl_rec[i].removed))
		atomic_inc(&k2_cl_bad);
}

static struct kmad_client k2_cl = {
	.name = "kmad_contract2",
	.add = k2_cl_add,
	.remove = k2_cl_remove,
	.port_changed = k2_cl_changed,
};

/*
 * mad.h, struct kmad_client: @add "called for every port, present or
 * later added", "*@data is passed back to @remove"; @remove "called when
 * a port goes away or the client unregisters"; @port_changed "never
 * before @add or after @remove for the port".  A client sees a fabric of
 * two 2-port HCAs registered after it: four adds; removing one HCA
 * removes its two ports; unregistering the client removes the other two;
 * destroying the fabric afterwards calls nothing.
 */
static void contract2_client_hot_plug(struct kunit *test)
{
	struct kmad_sim_config cfg;
	char name[KMAD_NAME_LEN - 4];
	int i;

	memset(k2_cl_rec, 0, sizeof(k2_cl_rec));
	atomic_set(&k2_cl_adds, 0);
	atomic_set(&k2_cl_removes, 0);
	atomic_set(&k2_cl_bad, 0);
	k2_name(name);
	strscpy(k2_cl_prefix, name, sizeof(k2_cl_prefix));
	KUNIT_ASSERT_EQ(test, kmad_register_client(&k2_cl), 0);
	k2_client = &k2_cl;

	kt_fix_config(&cfg, KMAD_SIM_STEP);
	cfg.hca_ports = 2;
	cfg.name = name;
	k2_fab = kmad_sim_create(&cfg);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(k2_fab));
	KUNIT_EXPECT_TRUE(test, kt_wait_until(atomic_read(&k2_cl_adds) >= 4,
					      KT_ASYNC_WAIT_MS));
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ_MSG(test, k2_cl_rec[i].added, 1, "port %d", i);
		KUNIT_EXPECT_EQ_MSG(test, k2_cl_rec[i].removed, 0, "port %d", i);
	}

	kmad_sim_remove_device(k2_fab, 0);
	KUNIT_EXPECT_TRUE(test, kt_wait_until(atomic_read(&k2_cl_removes) >= 2,
					      KT_ASYNC_WAIT_MS));
	KUNIT_EXPECT_EQ(test, k2_cl_rec[0].removed, 1);
	KUNIT_EXPECT_EQ(test, k2_cl_rec[1].removed, 1);
	KUNIT_EXPECT_EQ(test, k2_cl_rec[2].removed, 0);
	KUNIT_EXPECT_EQ(test, k2_cl_rec[3].removed, 0);

	kmad_unregister_client(&k2_cl);
	k2_client = NULL;
	KUNIT_EXPECT_TRUE(test, kt_wait_until(atomic_read(&k2_cl_removes) >= 4,
					      KT_ASYNC_WAIT_MS));
	kmad_sim_destroy(k2_fab);
	k2_fab = NULL;
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ_MSG(test, k2_cl_rec[i].added, 1, "port %d", i);
		KUNIT_EXPECT_EQ_MSG(test, k2_cl_rec[i].removed, 1, "port %d", i);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&k2_cl_adds), 4);
	KUNIT_EXPECT_EQ(test, atomic_read(&k2_cl_removes), 4);
	KUNIT_EXPECT_EQ(test, atomic_read(&k2_cl_bad), 0);
}

/*
 * mad.h, struct kmad_recv_wc: @grh_present "it carried a GRH", @grh "that
 * GRH" (sgid, dgid, flow_label, traffic_class, hop_limit), @slid,
 * @src_qpn; provider.h: "the provider writes the GRH there when the
 * packet had one (and sets KMAD_WC_GRH)".  ulp-guide.rst:
 * kmad_create_response() addresses the response "by GID if the request
 * came with a GRH, from the port's GID it was sent to", and refuses
 * (-EADDRNOTAVAIL) "a GRH request whose destination GID is none of the
 * port's".
 */
static void contract2_recv_wc_grh_fields(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_sim_rx rx = {
		.slid = kmad_port_lid(f->port[KT_DEV0]),
		.src_qpn = 0x55,
		.grh_present = true,
		.flow_label = 0xabcde,
		.traffic_class = 0x5a,
		.hop_limit = 9,
	};
	struct kmad_send_buf *resp;
	struct kmad_recv_wc *wc, fake;
	struct kmad_agent *a;
	struct kmad_mad mad;

	KUNIT_ASSERT_EQ(test, kmad_sim_port_gid(f->fab, KT_DEV0, 1, 0, &rx.sgid),
			0);
	KUNIT_ASSERT_EQ(test, kmad_sim_port_gid(f->fab, KT_DEV1, 1, 0, &rx.dgid),
			0);
	a = k2_register(f, KT_DEV1, KT_CLASS, KT_VERSION, KMAD_METHOD_GET, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	k2_agent = a;
	f->keep_recv = true;
	kt_mad(&mad, KT_CLASS, KT_VERSION, KMAD_METHOD_GET);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject_rx(f->fab, KT_DEV1, KT_QPN, &mad,
						 sizeof(mad), &rx), 0);
	kt_event(f, KT_DEV1);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	wc = f->kept_recv;
	KUNIT_ASSERT_NOT_NULL(test, wc);
	f->kept_recv = NULL;
	KUNIT_EXPECT_TRUE(test, wc->grh_present);
	KUNIT_EXPECT_EQ(test, memcmp(&wc->grh.sgid, &rx.sgid, sizeof(rx.sgid)),
			0);
	KUNIT_EXPECT_EQ(test, memcmp(&wc->grh.dgid, &rx.dgid, sizeof(rx.dgid)),
			0);
	KUNIT_EXPECT_EQ(test, wc->grh.flow_label, 0xabcdeU);
	KUNIT_EXPECT_EQ(test, wc->grh.traffic_class, 0x5a);
	KUNIT_EXPECT_EQ(test, wc->grh.hop_limit, 9);
	KUNIT_EXPECT_EQ(test, wc->slid, rx.slid);
	KUNIT_EXPECT_EQ(test, wc->src_qpn, 0x55U);
	resp = kmad_create_response(a, wc, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(resp));
	KUNIT_EXPECT_TRUE(test, resp->dest.grh_present);
	KUNIT_EXPECT_EQ(test, memcmp(&resp->dest.grh.dgid, &rx.sgid,
				     sizeof(rx.sgid)), 0);
	KUNIT_EXPECT_EQ(test, resp->dest.grh.sgid_index, 0);
	kmad_free_send_buf(resp);

	fake = *wc;
	fake.grh.dgid.global.interface_id = cpu_to_be64(0x0badc0ffee000001ULL);
	KUNIT_EXPECT_EQ(test,
			PTR_ERR_OR_ZERO(kmad_create_response(a, &fake,
							     GFP_KERNEL)),
			-EADDRNOTAVAIL);
	kmad_free_recv(wc);
}

/* ------------------------------------------------------------------ */
/* The simulated fabric's controls                                     */
/* ------------------------------------------------------------------ */

enum k2_fault {
	K2_DROP,
	K2_DUP,
	K2_SEND_ERR,
};

struct k2_fault_row {
	const char *name;
	enum k2_fault fault;
};

static const struct k2_fault_row k2_fault_rows[] = {
	{ "drop", K2_DROP },
	{ "dup", K2_DUP },
	{ "send-err", K2_SEND_ERR },
};

static void k2_fault_desc(const struct k2_fault_row *row, char *desc)
{
	strscpy(desc, row->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(k2_fault, k2_fault_rows, k2_fault_desc);

/*
 * sim.h, struct kmad_sim_faults: @drop_pct "the MAD is lost on the wire
 * (the send still completes)", @dup_pct "the MAD is delivered twice",
 * @send_err_pct "the send completes with KMAD_WC_LOC_ERR, nothing sent";
 * simulated-fabric.rst: each copy of a duplicate "makes the whole trip
 * and is answered if it is a request for firmware", "Firmware answers are
 * not subject to fault injection".  struct kmad_sim_stats: a lost MAD
 * counts @dropped_fault on its sender, @fw_answered counts at the
 * answering port, @delivered at the receiving one.  What the ULP sees:
 * RESP_TIMEOUT, one response (the second unmatched), LOCAL_ERROR.  A PMA
 * Get, which device 1's firmware answers.
 */
static void contract2_sim_faults(struct kunit *test)
{
	const struct k2_fault_row *row = test->param_value;
	struct kt_fix *f = test->priv;
	struct kmad_sim_faults faults = {};
	struct kmad_sim_stats *st = k2_zalloc(test, 4 * sizeof(*st));
	struct kmad_sim_stats *a0 = &st[0], *a1 = &st[1];
	struct kmad_sim_stats *b0 = &st[2], *b1 = &st[3];
	struct kmad_dest dest = k2_dest(f, KT_DEV1);
	struct kmad_send_buf *buf;
	s64 unmatched;

	buf = kmad_alloc_send_buf(f->agent, &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(buf));
	k2_hdr(buf->mad, KMAD_MGMT_CLASS_PERF_MGMT, KMAD_PMA_CLASS_VERSION,
	       KMAD_METHOD_GET, 0x48);
	((u8 *)buf->mad)[K2_PMA_DATA + 1] = 1;	/* PortCounters.PortSelect */
	buf->timeout_ms = 100;
	switch (row->fault) {
	case K2_DROP:
		faults.drop_pct = 100;
		break;
	case K2_DUP:
		faults.dup_pct = 100;
		break;
	case K2_SEND_ERR:
		faults.send_err_pct = 100;
		break;
	}
	unmatched = kt_pstat(f, KT_DEV0, KMAD_PSTAT_RESP_UNMATCHED);
	kmad_sim_get_stats(f->fab, KT_DEV0, a0);
	kmad_sim_get_stats(f->fab, KT_DEV1, a1);
	KUNIT_ASSERT_EQ(test, kmad_sim_set_faults(f->fab, &faults), 0);
	kt_post(f, buf);
	if (k2_pending(f, KT_DEV0))
		KUNIT_EXPECT_EQ(test,
				kmad_sim_complete_send(f->fab, KT_DEV0, KT_QPN,
						       0, KMAD_WC_SUCCESS,
						       true), 0);
	kt_event(f, KT_DEV0);
	memset(&faults, 0, sizeof(faults));
	KUNIT_EXPECT_EQ(test, kmad_sim_set_faults(f->fab, &faults), 0);
	kmad_sim_get_stats(f->fab, KT_DEV0, b0);
	kmad_sim_get_stats(f->fab, KT_DEV1, b1);

	switch (row->fault) {
	case K2_DROP:
		KUNIT_EXPECT_EQ(test, b0->dropped_fault - a0->dropped_fault, 1ULL);
		KUNIT_EXPECT_EQ(test, b1->fw_answered - a1->fw_answered, 0ULL);
		KUNIT_EXPECT_EQ(test, b0->delivered - a0->delivered, 0ULL);
		KUNIT_EXPECT_EQ(test, kt_events(f), 0);
		kt_advance(f, 100);
		kt_expect_only_send(f, buf, KMAD_SEND_RESP_TIMEOUT);
		break;
	case K2_DUP:
		KUNIT_EXPECT_EQ(test, (b0->duplicated - a0->duplicated) +
				      (b1->duplicated - a1->duplicated), 1ULL);
		KUNIT_EXPECT_EQ(test, b1->fw_answered - a1->fw_answered, 2ULL);
		KUNIT_EXPECT_EQ(test, b0->delivered - a0->delivered, 2ULL);
		kt_expect_answered(f, buf);
		KUNIT_EXPECT_EQ(test,
				kt_pstat(f, KT_DEV0, KMAD_PSTAT_RESP_UNMATCHED),
				unmatched + 1);
		break;
	case K2_SEND_ERR:
		KUNIT_EXPECT_EQ(test, b0->send_errors - a0->send_errors, 1ULL);
		KUNIT_EXPECT_EQ(test, b0->sent - a0->sent, 0ULL);
		KUNIT_EXPECT_EQ(test, b1->fw_answered - a1->fw_answered, 0ULL);
		KUNIT_EXPECT_EQ(test, b0->delivered - a0->delivered, 0ULL);
		kt_expect_only_send(f, buf, KMAD_SEND_LOCAL_ERROR);
		break;
	}
	kt_advance(f, 1000);
	KUNIT_EXPECT_EQ(test, kt_events(f), row->fault == K2_DUP ? 2 : 1);
	kmad_free_send_buf(buf);
}

static void k2_hook(void *arg)
{
}

/*
 * sim.h, conventions of the control functions: "a device that was
 * removed ... gives -ENODEV; the call then changes nothing.  Functions
 * that return a count return 0 then, those that fill a structure of
 * counters fill it with zeros"; simulated-fabric.rst: after
 * kmad_sim_remove_device() "MADs to it are dropped as dropped_no_route at
 * their sender", and the rest of the fabric keeps running.
 */
static void contract2_sim_removed_device(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_sim_stats *sst = k2_zalloc(test, 4 * sizeof(*sst));
	struct kmad_sim_stats *st = &sst[0], *s0a = &sst[1], *s0b = &sst[2];
	struct kmad_sim_stats *st1 = &sst[3];
	struct kmad_mad *mad = k2_zalloc(test, sizeof(*mad));
	struct kmad_send_buf *buf;
	union kmad_gid gid, gid1;
	u64 *p;
	unsigned int i;

	kt_mad(mad, KT_CLASS, KT_VERSION, KMAD_METHOD_GET);
	KUNIT_ASSERT_EQ(test, kmad_sim_port_gid(f->fab, KT_DEV1, 1, 0, &gid1),
			0);
	kmad_sim_remove_device(f->fab, KT_DEV1);

	KUNIT_EXPECT_EQ(test, kmad_sim_set_notify(f->fab, KT_DEV1, KT_QPN,
						  KMAD_SIM_NOTIFY_MISSED),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, kmad_sim_fire_cq_event(f->fab, KT_DEV1, KT_QPN,
						     true), -ENODEV);
	KUNIT_EXPECT_EQ(test, kmad_sim_inject(f->fab, KT_DEV1, KT_QPN, mad,
					      sizeof(*mad), 1, 1), -ENODEV);
	KUNIT_EXPECT_EQ(test, kmad_sim_complete_send(f->fab, KT_DEV1, KT_QPN,
						     0, KMAD_WC_SUCCESS, true),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, kmad_sim_peek_send(f->fab, KT_DEV1, KT_QPN, 0,
						 mad, sizeof(*mad)), -ENODEV);
	KUNIT_EXPECT_EQ(test, kmad_sim_set_arm_hook(f->fab, KT_DEV1, KT_QPN,
						    k2_hook, NULL), -ENODEV);
	KUNIT_EXPECT_EQ(test, kmad_sim_qp_error(f->fab, KT_DEV1, KT_QPN),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, kmad_sim_fail_post_recv(f->fab, KT_DEV1, KT_QPN,
						      1), -ENODEV);
	KUNIT_EXPECT_EQ(test, kmad_sim_port_gid(f->fab, KT_DEV1, 1, 0, &gid),
			0);
	KUNIT_EXPECT_EQ(test, memcmp(&gid, &gid1, sizeof(gid)), 0);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV1, KT_QPN),
			0U);
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(f->fab, KT_DEV1, KT_QPN), 0U);
	KUNIT_EXPECT_FALSE(test, kmad_sim_event_pending(f->fab, KT_DEV1,
							KT_QPN));
	kmad_sim_get_stats(f->fab, KT_DEV1, st);

	/* Device 0 goes on; what it sends to the removed one is no-route. */
	kmad_sim_get_stats(f->fab, KT_DEV0, s0a);
	buf = kt_request(f, f->agent, KMAD_METHOD_SET, 0x49, 0, 0);
	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, true);
	kt_expect_only_send(f, buf, KMAD_SEND_OK);
	kmad_sim_get_stats(f->fab, KT_DEV0, s0b);
	KUNIT_EXPECT_EQ(test, s0b->dropped_no_route - s0a->dropped_no_route,
			1ULL);
	/* The removed device's counters did not move: nothing reached it. */
	kmad_sim_get_stats(f->fab, KT_DEV1, st1);
	for (p = (u64 *)st, i = 0; i < sizeof(*st) / sizeof(u64); i++)
		KUNIT_EXPECT_EQ_MSG(test, ((u64 *)st1)[i], p[i], "counter %u",
				    i);
	kmad_free_send_buf(buf);
}

/* ------------------------------------------------------------------ */
/* Error codes and counters                                            */
/* ------------------------------------------------------------------ */

/*
 * mad.h, kmad_post_send(): "-ESHUTDOWN if the agent is unregistering or
 * its port going away", and then "nothing is sent, no callback runs and
 * the MAD is left as it was", for a single MAD and an RMPP buffer alike;
 * ulp-guide.rst, kmad_port_qp_num(): "-ENODEV once the port is going
 * away"; mad.h, kmad_cancel_send(): "-EINVAL if it is not posted".
 */
static void contract2_errno_port_gone(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf, *rbuf;
	struct kmad_mad before, rbefore;
	struct kmad_agent *tx;
	u32 qpn = 0;

	KUNIT_ASSERT_EQ(test, kmad_port_qp_num(f->port[KT_DEV0], KMAD_QPT_GSI,
					       &qpn), 0);
	tx = k2_register(f, KT_DEV0, 0, 0, 0, KMAD_RMPP_VERSION);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tx));
	k2_agent = tx;
	buf = kt_request(f, f->agent, KMAD_METHOD_GET, 0x4a, 100, 0);
	rbuf = k2_rmpp_buf(f, tx, K2_VENDOR, 1, KMAD_METHOD_SET, 40, 500, 0x4b,
			   0, 0);
	before = *buf->mad;
	rbefore = *rbuf->mad;
	kmad_sim_remove_device(f->fab, KT_DEV0);

	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, memcmp(buf->mad, &before, sizeof(before)), 0);
	KUNIT_EXPECT_EQ(test, kmad_post_send(rbuf), -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, memcmp(rbuf->mad, &rbefore, sizeof(rbefore)), 0);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_port_qp_num(f->port[KT_DEV0], KMAD_QPT_GSI,
					       &qpn), -ENODEV);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(tx), 0);
	k2_agent = NULL;
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kmad_free_send_buf(buf);
	kmad_free_send_buf(rbuf);
}

/*
 * mad.h, struct kmad_agent_stats, "an agent's counters since it
 * registered": @posted "sends posted", @completed "send_handler calls",
 * @responses "responses matched to the agent's requests", @unsolicited
 * "unsolicited MADs given to its recv_handler", @timeouts, @retries
 * "resends after a timeout", @canceled, @flushed ("its port went away").
 * One agent does one of each; a late duplicate response is unmatched and
 * counts nowhere.
 */
static void contract2_stats_every_counter(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *ok, *to, *cx, *fl;
	struct kmad_agent_stats st;
	struct kmad_agent *a;
	struct kmad_mad mad;
	int i;

	a = k2_register(f, KT_DEV0, KT_CLASS, KT_VERSION, KMAD_METHOD_SET, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	k2_agent = a;

	ok = kt_request(f, a, KMAD_METHOD_GET, 1, 100, 0);
	kt_post(f, ok);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_respond(f, ok, 0);
	kt_event(f, KT_DEV0);
	kt_expect_answered(f, ok);
	kt_respond(f, ok, 0);
	kt_event(f, KT_DEV0);

	to = kt_request(f, a, KMAD_METHOD_GET, 2, 100, 2);
	kt_post(f, to);
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, k2_pending(f, KT_DEV0), 1U);
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
		kt_advance(f, 100);
	}
	KUNIT_ASSERT_EQ(test, kt_events(f), 3);
	kt_expect_send(f, 2, to, KMAD_SEND_RESP_TIMEOUT);

	cx = kt_request(f, a, KMAD_METHOD_GET, 3, 0, 0);
	kt_post(f, cx);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(cx), 0);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 4);
	kt_expect_send(f, 3, cx, KMAD_SEND_CANCELED);

	kt_mad(&mad, KT_CLASS, KT_VERSION, KMAD_METHOD_SET);
	k2_inject(f, KT_DEV0, &mad);
	KUNIT_ASSERT_EQ(test, kt_events(f), 5);
	kt_expect_recv(f, 4, NULL, KMAD_METHOD_SET);

	fl = kt_request(f, a, KMAD_METHOD_GET, 4, 10000, 0);
	kt_post(f, fl);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kmad_sim_remove_device(f->fab, KT_DEV0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 6);
	kt_expect_send(f, 5, fl, KMAD_SEND_FLUSHED);

	kmad_agent_get_stats(a, &st);
	KUNIT_EXPECT_EQ(test, st.posted, 4ULL);
	KUNIT_EXPECT_EQ(test, st.completed, 4ULL);
	KUNIT_EXPECT_EQ(test, st.responses, 1ULL);
	KUNIT_EXPECT_EQ(test, st.unsolicited, 1ULL);
	KUNIT_EXPECT_EQ(test, st.timeouts, 1ULL);
	KUNIT_EXPECT_EQ(test, st.retries, 2ULL);
	KUNIT_EXPECT_EQ(test, st.canceled, 1ULL);
	KUNIT_EXPECT_EQ(test, st.flushed, 1ULL);
	kmad_free_send_buf(ok);
	kmad_free_send_buf(to);
	kmad_free_send_buf(cx);
	kmad_free_send_buf(fl);
}

static struct kunit_case contract2_cases[] = {
	KUNIT_CASE_PARAM(contract2_rmpp_segment_count, k2_segs_gen_params),
	KUNIT_CASE_PARAM(contract2_rmpp_post_checks_class, k2_post_gen_params),
	KUNIT_CASE_PARAM(contract2_rmpp_round_trip_layout, k2_rt_gen_params),
	KUNIT_CASE(contract2_rmpp_recv_one_segment_length),
	KUNIT_CASE_PARAM(contract2_rmpp_ack_wait_deadline, k2_wait_gen_params),
	KUNIT_CASE(contract2_rmpp_response_timeout_is_ack_timeout),
	KUNIT_CASE_PARAM(contract2_rmpp_cancel_waiting_for_ack,
			 k2_cancel_gen_params),
	KUNIT_CASE(contract2_rmpp_unregister_mid_transfer),
	KUNIT_CASE(contract2_provider_buffer_unchanged_while_held),
	KUNIT_CASE(contract2_provider_virtual_clock_only),
	KUNIT_CASE(contract2_provider_minimal_tables),
	KUNIT_CASE(contract2_provider_pkey_set_seen_by_query),
	KUNIT_CASE(contract2_client_hot_plug),
	KUNIT_CASE(contract2_recv_wc_grh_fields),
	KUNIT_CASE_PARAM(contract2_sim_faults, k2_fault_gen_params),
	KUNIT_CASE(contract2_sim_removed_device),
	KUNIT_CASE(contract2_errno_port_gone),
	KUNIT_CASE(contract2_stats_every_counter),
	{}
};

static struct kunit_suite contract2_suite = {
	.name = "kmad_contract2",
	.init = kt_fix_init,
	.exit = k2_exit,
	.test_cases = contract2_cases,
};

kunit_test_suites(&contract2_suite);

MODULE_DESCRIPTION("KUnit tests for kmad's contracts, second round");
MODULE_LICENSE("GPL");
