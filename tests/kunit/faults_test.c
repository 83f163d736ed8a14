// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_faults: every slab allocation a kmad call makes in its caller's
 * task fails in turn, and the call either fails cleanly or works.
 *
 * Each case sweeps n = 1, 2, ...: it sets current->fail_nth to n (the
 * n-th slab allocation of this task from then on fails, as
 * /proc/<pid>/fail-nth does for a user-space task), makes the call, and
 * stops at the first n the call did not reach.  What every run must
 * show:
 *   - a call that fails returns an error (-ENOMEM) and leaves nothing
 *     behind: no send on the wire, no callback, the registration free for
 *     the next run (kmemleak, after the suites, finds anything leaked);
 *   - a call that succeeds works: a posted send gets exactly one
 *     callback, a registered agent can send.
 *
 * Needs CONFIG_FAILSLAB and failslab told to fail sleeping allocations
 * too (ignore-gfp-wait N; tests/qemu/init.sh sets it): without them each
 * case is skipped.
 */

#include <linux/sched.h>
#include <linux/slab.h>

#include "kmad_test.h"

/* No call of kmad makes anywhere near this many allocations. */
#define FT_MAX_RUNS	2000
#define FT_TIMEOUT_MS	100
#define FT_RMPP_HDR	KMAD_SA_MAD_HDR_SIZE

#if IS_ENABLED(CONFIG_FAILSLAB)
/* From now on, the @n-th slab allocation of this task fails. */
static void ft_arm(unsigned int n)
{
	WRITE_ONCE(current->fail_nth, n);
}

/* Stop failing; true if the armed failure happened. */
static bool ft_disarm(void)
{
	unsigned int left = READ_ONCE(current->fail_nth);

	WRITE_ONCE(current->fail_nth, 0);
	return left == 0;
}
#else
static void ft_arm(unsigned int n)
{
}

static bool ft_disarm(void)
{
	return false;
}
#endif

/* Skip unless an allocation of this task can be made to fail. */
static bool ft_can_fail(struct kunit *test)
{
	bool failed;
	void *p;

	if (!IS_ENABLED(CONFIG_FAILSLAB)) {
		kunit_skip(test, "needs CONFIG_FAILSLAB");
		return false;
	}
	ft_arm(1);
	p = kmalloc(8, GFP_KERNEL);
	ft_disarm();
	failed = !p;
	kfree(p);
	if (!failed) {
		kunit_skip(test, "failslab ignores GFP_KERNEL (ignore-gfp-wait)");
		return false;
	}
	return true;
}

/*
 * The fixture of kmad_test.h, in step mode, on devices with address
 * handles (kmad's AH cache allocates on the send path), or (suite
 * kmad_faults_noah) without.
 */
static int ft_setup(struct kunit *test, enum kmad_sim_ah ah)
{
	struct kmad_sim_config cfg;

	kt_fix_config(&cfg, KMAD_SIM_STEP);
	cfg.ah = ah;
	return kt_fix_setup_cfg(test, &cfg);
}

/* The suite running: devices with address handles (kmad_faults) or not. */
static bool ft_with_ah;

static int ft_init(struct kunit *test)
{
	ft_with_ah = true;
	return ft_setup(test, KMAD_SIM_AH_AUTO);
}

static int ft_init_noah(struct kunit *test)
{
	ft_with_ah = false;
	return ft_setup(test, KMAD_SIM_AH_NONE);
}

/*
 * A sweep ended after run @n, which failed nothing: @n - 1 allocations
 * were failed in turn, at least @min (the fewest the call makes in the
 * caller's task: a sweep that found fewer would pass without having
 * failed what it is about, had an allocation moved to a work item).
 */
static void ft_swept(struct kunit *test, unsigned int n, unsigned int min)
{
	KUNIT_EXPECT_LT(test, n, FT_MAX_RUNS);
	KUNIT_EXPECT_GE_MSG(test, n - 1, min,
			    "fewer allocations failed than the call makes");
	kunit_info(test, "%u allocations failed in turn\n", n - 1);
}

static void ft_reset(struct kt_fix *f)
{
	spin_lock(&f->lock);
	f->n = 0;
	spin_unlock(&f->lock);
}

/*
 * Handler calls logged so far of @kind: send_handler calls for @buf, or
 * recv_handler calls for a MAD of TID @tid.
 */
static int ft_count(struct kt_fix *f, enum kt_kind kind,
		    struct kmad_send_buf *buf, u64 tid)
{
	int i, n = 0;

	spin_lock(&f->lock);
	for (i = 0; i < min(f->n, KT_MAX_EVENTS); i++)
		if (f->ev[i].kind == kind &&
		    (kind == KT_SEND ? f->ev[i].buf == buf : f->ev[i].tid == tid))
			n++;
	spin_unlock(&f->lock);
	return n;
}

static int ft_callbacks(struct kt_fix *f, struct kmad_send_buf *buf)
{
	return ft_count(f, KT_SEND, buf, 0);
}

static int ft_recvs(struct kt_fix *f, u64 tid)
{
	return ft_count(f, KT_RECV, NULL, tid);
}

/* Complete whatever device 0 has on (@qpn)'s send queue, as sent. */
static void ft_complete_all(struct kt_fix *f, u32 qpn)
{
	while (kmad_sim_pending_sends(f->fab, KT_DEV0, qpn)) {
		KUNIT_ASSERT_EQ(f->test,
				kmad_sim_complete_send(f->fab, KT_DEV0, qpn, 0,
						       KMAD_WC_SUCCESS, false),
				0);
		kmad_sim_fire_cq_event(f->fab, KT_DEV0, qpn, false);
		kt_settle(f);
	}
}

/*
 * Post @buf with the @n-th allocation failing.  Returns true if the
 * failure was injected.  Either the post failed, and nothing of @buf is
 * on the wire or ever called back, or it worked, and once its sends
 * complete and it is canceled exactly one callback comes.
 */
static bool ft_post_one(struct kt_fix *f, struct kmad_send_buf *buf,
			u32 qpn, unsigned int n)
{
	struct kunit *test = f->test;
	bool injected;
	int ret;

	ft_reset(f);
	ft_arm(n);
	ret = kmad_post_send(buf);
	injected = ft_disarm();
	kt_settle(f);
	if (ret) {
		KUNIT_EXPECT_TRUE_MSG(test, injected, "run %u: %d", n, ret);
		KUNIT_EXPECT_EQ_MSG(test, ret, -ENOMEM, "run %u", n);
		KUNIT_EXPECT_EQ_MSG(test,
				    kmad_sim_pending_sends(f->fab, KT_DEV0, qpn),
				    0U, "run %u", n);
		kmad_sim_advance_clock(f->fab, 10 * FT_TIMEOUT_MS);
		kt_settle(f);
		KUNIT_EXPECT_EQ_MSG(test, ft_callbacks(f, buf), 0, "run %u", n);
		return injected;
	}
	ft_complete_all(f, qpn);
	kmad_cancel_send(buf);
	kt_settle(f);
	kmad_sim_advance_clock(f->fab, 10 * FT_TIMEOUT_MS);
	kt_settle(f);
	ft_complete_all(f, qpn);
	KUNIT_EXPECT_EQ_MSG(test, ft_callbacks(f, buf), 1, "run %u", n);
	KUNIT_EXPECT_EQ_MSG(test, kt_events(f), 1, "run %u", n);
	if (kt_events(f) != 1)
		kt_dump(f);
	return injected;
}

/*
 * Sweep the post of sends from @make (a fresh one each run) until a post
 * makes no allocation the sweep has not failed yet.
 */
static void ft_sweep_post(struct kunit *test, u32 qpn,
			  struct kmad_send_buf *(*make)(struct kt_fix *f))
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf;
	unsigned int n;
	bool injected;

	if (!ft_can_fail(test))
		return;
	for (n = 1; n < FT_MAX_RUNS; n++) {
		buf = make(f);
		KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(buf));
		injected = ft_post_one(f, buf, qpn, n);
		kmad_free_send_buf(buf);
		if (!injected)
			break;
	}
	/* kmad's address handle cache entry is all a post allocates in the
	 * caller's task (the provider's handle comes from kmad's AH work);
	 * without handles, nothing.  (The sweep also counts kmemleak's own
	 * allocation for the entry, when kmemleak runs.)
	 */
	ft_swept(test, n, ft_with_ah ? 1 : 0);
	if (!ft_with_ah)
		KUNIT_EXPECT_EQ(test, n, 1U);
}

static struct kmad_send_buf *ft_get(struct kt_fix *f)
{
	return kt_request(f, f->agent, KMAD_METHOD_GET, 1, FT_TIMEOUT_MS, 1);
}

static struct kmad_send_buf *ft_send_only(struct kt_fix *f)
{
	return kt_request(f, f->agent, KMAD_METHOD_SET, 2, 0, 0);
}

/* A LID-routed request, and a send that expects no response. */
static void faults_post_request(struct kunit *test)
{
	ft_sweep_post(test, KT_QPN, ft_get);
}

static void faults_post_send_only(struct kunit *test)
{
	ft_sweep_post(test, KT_QPN, ft_send_only);
}

/* A request routed by GID (its source GID and address from the port). */
static struct kmad_send_buf *ft_get_by_gid(struct kt_fix *f)
{
	struct kmad_send_buf *buf = ft_get(f);

	buf->dest.grh_present = true;
	KUNIT_EXPECT_EQ(f->test, kmad_port_query_gid(f->port[KT_DEV1], 0,
						     &buf->dest.grh.dgid), 0);
	return buf;
}

static void faults_post_by_gid(struct kunit *test)
{
	ft_sweep_post(test, KT_QPN, ft_get_by_gid);
}

/* An RMPP request of three segments from an RMPP requester. */
static struct kmad_agent *ft_rmpp_agent;

static struct kmad_send_buf *ft_rmpp(struct kt_fix *f)
{
	struct kmad_dest dest = {
		.dlid = kmad_port_lid(f->port[KT_DEV1]),
		.remote_qpn = KT_QPN,
		.remote_qkey = KMAD_QP1_QKEY,
	};
	struct kmad_send_buf *buf;
	struct kmad_sa_mad *sa;

	buf = kmad_alloc_send_buf_rmpp(ft_rmpp_agent, &dest, FT_RMPP_HDR,
				       3 * (KMAD_MAD_SIZE - FT_RMPP_HDR),
				       GFP_KERNEL);
	if (IS_ERR(buf))
		return buf;
	sa = (struct kmad_sa_mad *)buf->mad;
	sa->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	sa->mad_hdr.mgmt_class = KT_CLASS;
	sa->mad_hdr.class_version = KT_VERSION;
	sa->mad_hdr.method = KMAD_METHOD_GET_MULTI;
	sa->mad_hdr.tid = cpu_to_be64(3);
	sa->rmpp_hdr.rmpp_rtime_flags = 5 << KMAD_RMPP_RTIME_SHIFT;
	buf->timeout_ms = FT_TIMEOUT_MS;
	return buf;
}

static void faults_post_rmpp(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_reg_req req = { .rmpp_version = KMAD_RMPP_VERSION };

	if (!ft_can_fail(test))
		return;
	ft_rmpp_agent = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI,
					    &req, kt_send_handler,
					    kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ft_rmpp_agent));
	ft_sweep_post(test, KT_QPN, ft_rmpp);
	kmad_unregister_agent(ft_rmpp_agent);
}

/* A LID-routed SMP Get on QP0, from a send-only SMI agent. */
static struct kmad_agent *ft_smi_agent;

static struct kmad_send_buf *ft_smp(struct kt_fix *f)
{
	struct kmad_dest dest = {
		.dlid = kmad_port_lid(f->port[KT_DEV1]),
	};
	struct kmad_send_buf *buf;

	buf = kmad_alloc_send_buf(ft_smi_agent, &dest, GFP_KERNEL);
	if (IS_ERR(buf))
		return buf;
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED;
	buf->mad->mad_hdr.class_version = 1;
	buf->mad->mad_hdr.method = KMAD_METHOD_GET;
	buf->mad->mad_hdr.tid = cpu_to_be64(4);
	buf->mad->mad_hdr.attr_id = cpu_to_be16(KMAD_SMP_ATTR_NODE_INFO);
	buf->timeout_ms = FT_TIMEOUT_MS;
	return buf;
}

static void faults_post_smp(struct kunit *test)
{
	struct kt_fix *f = test->priv;

	if (!ft_can_fail(test))
		return;
	ft_smi_agent = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_SMI,
					   NULL, kt_send_handler,
					   kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ft_smi_agent));
	ft_sweep_post(test, 0, ft_smp);
	kmad_unregister_agent(ft_smi_agent);
}

/*
 * kmad_alloc_send_buf() and kmad_alloc_send_buf_rmpp(): an error pointer
 * or a buffer, never NULL.
 */
static void faults_alloc_send_buf(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_reg_req req = { .rmpp_version = KMAD_RMPP_VERSION };
	struct kmad_send_buf *buf;
	unsigned int n;
	bool injected;

	if (!ft_can_fail(test))
		return;
	ft_rmpp_agent = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI,
					    &req, kt_send_handler,
					    kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ft_rmpp_agent));
	for (n = 1; n < FT_MAX_RUNS; n++) {
		ft_arm(n);
		buf = ft_rmpp(f);
		injected = ft_disarm();
		KUNIT_EXPECT_NOT_NULL(test, buf);
		if (IS_ERR_OR_NULL(buf))
			KUNIT_EXPECT_EQ(test, PTR_ERR(buf), -ENOMEM);
		else
			kmad_free_send_buf(buf);
		if (!injected)
			break;
	}
	ft_swept(test, n, 1);
	kmad_unregister_agent(ft_rmpp_agent);
}

/*
 * kmad_register_agent(): each run either fails with -ENOMEM, leaving the
 * class and methods free for the next run, or gives an agent whose
 * request gets its callback.
 */
static void ft_sweep_register(struct kunit *test, enum kmad_qp_type qpt,
			      const struct kmad_reg_req *req)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent *a;
	unsigned int n;
	bool injected;

	if (!ft_can_fail(test))
		return;
	for (n = 1; n < FT_MAX_RUNS; n++) {
		ft_arm(n);
		a = kmad_register_agent(f->port[KT_DEV0], qpt, req,
					kt_send_handler, kt_recv_handler, f);
		injected = ft_disarm();
		KUNIT_EXPECT_NOT_NULL(test, a);
		if (IS_ERR_OR_NULL(a)) {
			KUNIT_EXPECT_TRUE_MSG(test, injected, "run %u", n);
			KUNIT_EXPECT_EQ_MSG(test, PTR_ERR(a), -ENOMEM,
					    "run %u", n);
			continue;
		}
		if (qpt == KMAD_QPT_GSI) {
			struct kmad_send_buf *buf;

			buf = kt_request(f, a, KMAD_METHOD_GET, n,
					 FT_TIMEOUT_MS, 0);
			ft_post_one(f, buf, KT_QPN, FT_MAX_RUNS);
			kmad_free_send_buf(buf);
		}
		KUNIT_EXPECT_EQ(test, kmad_unregister_agent(a), 0);
		if (!injected)
			break;
	}
	ft_swept(test, n, 1);
}

/* A registration a sweep makes: its QP and request (NULL: send-only). */
struct ft_reg {
	const char *name;
	enum kmad_qp_type qpt;
	bool send_only;
	u8 mgmt_class;
	u8 class_version;
	u8 rmpp_version;
	u8 oui[3];
	u8 methods[2];
};

static const struct ft_reg ft_regs[] = {
	{ "send_only", KMAD_QPT_GSI, true },
	{ "class_rmpp", KMAD_QPT_GSI, false, KT_CLASS, KT_VERSION,
	  KMAD_RMPP_VERSION, {}, { KMAD_METHOD_GET, KMAD_METHOD_GET_TABLE } },
	{ "vendor_oui", KMAD_QPT_GSI, false,
	  KMAD_MGMT_CLASS_VENDOR_RANGE2_START, 1, 0, { 0x00, 0x14, 0x05 },
	  { KMAD_METHOD_GET } },
	{ "smi", KMAD_QPT_SMI, false, KMAD_MGMT_CLASS_SUBN_LID_ROUTED, 1, 0,
	  {}, { KMAD_METHOD_TRAP } },
};

static void ft_reg_desc(const struct ft_reg *r, char *desc)
{
	strscpy(desc, r->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ft_reg, ft_regs, ft_reg_desc);

static void faults_register(struct kunit *test)
{
	const struct ft_reg *r = test->param_value;
	struct kmad_reg_req req = {
		.mgmt_class = r->mgmt_class,
		.class_version = r->class_version,
		.rmpp_version = r->rmpp_version,
	};
	int i;

	memcpy(req.oui, r->oui, sizeof(req.oui));
	for (i = 0; i < ARRAY_SIZE(r->methods); i++)
		if (r->methods[i])
			__set_bit(r->methods[i], req.method_mask);
	ft_sweep_register(test, r->qpt, r->send_only ? NULL : &req);
}

/*
 * kmad_create_response() to a request device 1 sent: an error pointer,
 * or a response that posts and completes.
 */
static void faults_create_response(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *resp;
	struct kmad_agent *a;
	struct kmad_mad req;
	struct kmad_reg_req reg = {
		.mgmt_class = KT_CLASS,
		.class_version = KT_VERSION,
	};
	unsigned int n;
	bool injected;

	if (!ft_can_fail(test))
		return;
	__set_bit(KMAD_METHOD_GET, reg.method_mask);
	a = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, &reg,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	f->keep_recv = true;
	memset(&req, 0, sizeof(req));
	req.mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	req.mad_hdr.mgmt_class = KT_CLASS;
	req.mad_hdr.class_version = KT_VERSION;
	req.mad_hdr.method = KMAD_METHOD_GET;
	req.mad_hdr.tid = cpu_to_be64(5);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject(f->fab, KT_DEV0, KT_QPN, &req,
					      sizeof(req),
					      kmad_port_lid(f->port[KT_DEV1]),
					      KT_QPN), 0);
	kt_event(f, KT_DEV0);
	KUNIT_ASSERT_NOT_NULL(test, f->kept_recv);
	for (n = 1; n < FT_MAX_RUNS; n++) {
		ft_arm(n);
		resp = kmad_create_response(a, f->kept_recv, GFP_KERNEL);
		injected = ft_disarm();
		KUNIT_EXPECT_NOT_NULL(test, resp);
		if (IS_ERR_OR_NULL(resp)) {
			KUNIT_EXPECT_EQ(test, PTR_ERR(resp), -ENOMEM);
		} else {
			ft_post_one(f, resp, KT_QPN, FT_MAX_RUNS);
			kmad_free_send_buf(resp);
		}
		if (!injected)
			break;
	}
	ft_swept(test, n, 1);
	kmad_free_recv(f->kept_recv);
	f->kept_recv = NULL;
	kmad_unregister_agent(a);
}

/*
 * A one-segment RMPP message (First and Last) handed over by a provider's
 * bridge, which runs kmad's receive path in the caller's task, with each
 * allocation failing in turn, then once more as its sender would repeat
 * it after a lost ACK: delivered exactly once either way.  Before, when
 * the record of the finished transfer could not be allocated, the
 * message was delivered and ACKed all the same, and its repeat delivered
 * again (2 deliveries).
 */
static void faults_rmpp_single_segment(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_device *dev = kmad_sim_device(f->fab, KT_DEV0);
	struct kmad_wc bwc = {
		.src_qpn = KT_QPN,
		.slid = kmad_port_lid(f->port[KT_DEV1]),
	};
	struct kmad_reg_req req = {
		.mgmt_class = KT_CLASS,
		.class_version = KT_VERSION,
		.rmpp_version = KMAD_RMPP_VERSION,
	};
	struct kmad_rmpp_mad *m;
	struct kmad_agent *a;
	unsigned int n;
	bool injected;
	u64 tid;

	if (!ft_can_fail(test))
		return;
	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	__set_bit(KMAD_METHOD_SET, req.method_mask);
	a = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, &req,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	m->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	m->mad_hdr.mgmt_class = KT_CLASS;
	m->mad_hdr.class_version = KT_VERSION;
	m->mad_hdr.method = KMAD_METHOD_SET;
	m->rmpp_hdr.rmpp_version = KMAD_RMPP_VERSION;
	m->rmpp_hdr.rmpp_type = KMAD_RMPP_TYPE_DATA;
	m->rmpp_hdr.rmpp_rtime_flags = KMAD_RMPP_FLAG_ACTIVE |
				       KMAD_RMPP_FLAG_FIRST |
				       KMAD_RMPP_FLAG_LAST;
	m->rmpp_hdr.seg_num = cpu_to_be32(1);
	m->rmpp_hdr.paylen_newwin = cpu_to_be32(100);
	for (n = 1; n < FT_MAX_RUNS; n++) {
		tid = 0x900 + n;
		m->mad_hdr.tid = cpu_to_be64(tid);
		ft_reset(f);
		ft_arm(n);
		kmad_device_bridge_recv_qp(dev, 1, KMAD_QPT_GSI, &bwc, NULL, m,
					   KMAD_MAD_SIZE);
		injected = ft_disarm();
		kt_settle(f);
		KUNIT_EXPECT_EQ(test, kmad_device_bridge_recv_qp(dev, 1,
								 KMAD_QPT_GSI,
								 &bwc, NULL, m,
								 KMAD_MAD_SIZE),
				0);
		kt_wait_until(ft_recvs(f, tid) >= 1, KT_ASYNC_WAIT_MS);
		kt_settle(f);
		KUNIT_EXPECT_EQ_MSG(test, ft_recvs(f, tid), 1, "run %u", n);
		if (!injected)
			break;
	}
	ft_swept(test, n, 1);
	kmad_unregister_agent(a);
}

/* What faults_bridged_recv hands over. */
enum ft_bridged {
	FT_BRIDGED_REQUEST,	/* a Get for a registered agent */
	FT_BRIDGED_RESPONSE,	/* the response to an outstanding request */
	FT_BRIDGED_RMPP_FIRST,	/* the first of three RMPP segments */
	FT_BRIDGED_UNSUPPORTED,	/* a Get of a class nobody registered */
};

static const enum ft_bridged ft_bridged_kinds[] = {
	FT_BRIDGED_REQUEST, FT_BRIDGED_RESPONSE, FT_BRIDGED_RMPP_FIRST,
	FT_BRIDGED_UNSUPPORTED,
};

static void ft_bridged_desc(const enum ft_bridged *k, char *desc)
{
	static const char * const names[] = {
		"request", "response", "rmpp_first", "unsupported",
	};

	strscpy(desc, names[*k], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ft_bridged, ft_bridged_kinds, ft_bridged_desc);

/*
 * kmad's receive path with each allocation failing in turn: a provider's
 * bridge (kmad_device_bridge_recv_qp()) runs it in the caller's task.  A
 * hand-over either fails with -ENOMEM and nothing happens, or works:
 * a request is delivered once; a response ends its request with
 * KMAD_SEND_OK once (after a failed hand-over, the repeat does); an
 * RMPP first segment starts a transfer only with its buffer (every
 * transfer in progress holds one: rmpp_recv_buffers counts them); an
 * unsupported request is answered or dropped.  What is left behind,
 * kmemleak finds.
 */
static void faults_bridged_recv(struct kunit *test)
{
	const enum ft_bridged *kind = test->param_value;
	struct kt_fix *f = test->priv;
	struct kmad_port *port = f->port[KT_DEV0];
	struct kmad_device *dev = kmad_sim_device(f->fab, KT_DEV0);
	struct kmad_wc bwc = {
		.src_qpn = KT_QPN,
		.slid = kmad_port_lid(f->port[KT_DEV1]),
	};
	struct kmad_reg_req req = {
		.mgmt_class = KT_CLASS,
		.class_version = KT_VERSION,
	};
	struct kmad_send_buf *buf = NULL;
	struct kmad_rmpp_mad *m;
	struct kmad_agent *a;
	s64 buffers, dropped, dropped0;
	unsigned int n, pending, started = 0;
	bool injected;
	int ret;
	u64 tid;

	if (!ft_can_fail(test))
		return;
	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	__set_bit(KMAD_METHOD_GET, req.method_mask);
	__set_bit(KMAD_METHOD_SET, req.method_mask);
	if (*kind == FT_BRIDGED_RMPP_FIRST)
		req.rmpp_version = KMAD_RMPP_VERSION;
	a = kmad_register_agent(port, KMAD_QPT_GSI, &req, kt_send_handler,
				kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	buffers = atomic64_read(&port->stats[KMAD_PSTAT_RMPP_BUFFERS]);
	dropped0 = atomic64_read(&port->stats[KMAD_PSTAT_REQ_DROPPED]);
	for (n = 1; n < FT_MAX_RUNS; n++) {
		tid = 0xb00 + n;
		ft_reset(f);
		memset(m, 0, sizeof(*m));
		m->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
		m->mad_hdr.mgmt_class = KT_CLASS;
		m->mad_hdr.class_version = KT_VERSION;
		m->mad_hdr.method = KMAD_METHOD_GET;
		m->mad_hdr.tid = cpu_to_be64(tid);
		switch (*kind) {
		case FT_BRIDGED_REQUEST:
			break;
		case FT_BRIDGED_RESPONSE:
			buf = kt_request(f, f->agent, KMAD_METHOD_GET, tid,
					 KT_ASYNC_WAIT_MS, 0);
			kt_post(f, buf);
			kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
			memcpy(m, buf->mad, sizeof(*m));
			m->mad_hdr.method = KMAD_METHOD_GET_RESP;
			break;
		case FT_BRIDGED_RMPP_FIRST:
			m->mad_hdr.method = KMAD_METHOD_SET;
			m->rmpp_hdr.rmpp_version = KMAD_RMPP_VERSION;
			m->rmpp_hdr.rmpp_type = KMAD_RMPP_TYPE_DATA;
			m->rmpp_hdr.rmpp_rtime_flags = KMAD_RMPP_FLAG_ACTIVE |
						       KMAD_RMPP_FLAG_FIRST;
			m->rmpp_hdr.seg_num = cpu_to_be32(1);
			m->rmpp_hdr.paylen_newwin = cpu_to_be32(500);
			break;
		case FT_BRIDGED_UNSUPPORTED:
			m->mad_hdr.mgmt_class = KMAD_MGMT_CLASS_BM;
			m->mad_hdr.class_version = 1;
			break;
		}
		ft_arm(n);
		ret = kmad_device_bridge_recv_qp(dev, 1, KMAD_QPT_GSI, &bwc, NULL,
						 m, KMAD_MAD_SIZE);
		injected = ft_disarm();
		kt_settle(f);
		KUNIT_EXPECT_TRUE_MSG(test, !ret || ret == -ENOMEM, "run %u: %d",
				      n, ret);
		switch (*kind) {
		case FT_BRIDGED_REQUEST:
			if (!ret)
				kt_wait_until(ft_recvs(f, tid), KT_ASYNC_WAIT_MS);
			KUNIT_EXPECT_EQ_MSG(test, ft_recvs(f, tid), ret ? 0 : 1,
					    "run %u", n);
			break;
		case FT_BRIDGED_RESPONSE:
			/* The repeat of a hand-over that failed. */
			if (ret)
				ret = kmad_device_bridge_recv_qp(dev, 1,
								 KMAD_QPT_GSI,
								 &bwc, NULL, m,
								 KMAD_MAD_SIZE);
			KUNIT_EXPECT_EQ_MSG(test, ret, 0, "run %u", n);
			kt_wait_until(ft_callbacks(f, buf), KT_ASYNC_WAIT_MS);
			kt_settle(f);
			KUNIT_EXPECT_EQ_MSG(test, ft_callbacks(f, buf), 1,
					    "run %u", n);
			if (kt_events(f) == 1)
				KUNIT_EXPECT_EQ_MSG(test, f->ev[0].status,
						    KMAD_SEND_OK, "run %u", n);
			kmad_free_send_buf(buf);
			break;
		case FT_BRIDGED_RMPP_FIRST:
			started = atomic64_read(&port->stats[KMAD_PSTAT_RMPP_BUFFERS]) -
				  buffers;
			KUNIT_EXPECT_EQ_MSG(test,
					    kmad_agent_priv(a)->rmpp_recvs_active,
					    started, "run %u", n);
			break;
		case FT_BRIDGED_UNSUPPORTED:
			/* Refused: nothing happened.  Taken: kmad's answer is
			 * on the wire, or dropped (its buffer's allocation
			 * failed) and counted.
			 */
			pending = kmad_sim_pending_sends(f->fab, KT_DEV0,
							 KT_QPN);
			dropped = atomic64_read(&port->stats[KMAD_PSTAT_REQ_DROPPED]);
			KUNIT_EXPECT_EQ_MSG(test, pending + dropped - dropped0,
					    ret ? 0 : 1, "run %u", n);
			dropped0 = dropped;
			while (pending--)
				KUNIT_EXPECT_EQ(test,
						kmad_sim_complete_send(f->fab,
								       KT_DEV0,
								       KT_QPN, 0,
								       KMAD_WC_SUCCESS,
								       false),
						0);
			kt_event(f, KT_DEV0);
			break;
		}
		if (!injected)
			break;
	}
	ft_swept(test, n, 1);
	kmad_unregister_agent(a);
}

/*
 * kmad_unregister_agent() with sends waiting for their responses: it
 * may not fail, or lose a callback, for want of memory.
 */
static void faults_unregister(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf[2];
	struct kmad_agent *a;
	unsigned int n;
	bool injected;

	if (!ft_can_fail(test))
		return;
	for (n = 1; n < FT_MAX_RUNS; n++) {
		a = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, NULL,
					kt_send_handler, kt_recv_handler, f);
		KUNIT_ASSERT_FALSE(test, IS_ERR(a));
		ft_reset(f);
		buf[0] = kt_request(f, a, KMAD_METHOD_GET, 6, FT_TIMEOUT_MS, 0);
		buf[1] = kt_request(f, a, KMAD_METHOD_GET, 7, FT_TIMEOUT_MS, 0);
		kt_post(f, buf[0]);
		kt_post(f, buf[1]);
		/* Both waiting for their responses (step mode: a send still
		 * on the wire would hold the unregister until completed).
		 */
		ft_complete_all(f, KT_QPN);
		ft_arm(n);
		KUNIT_EXPECT_EQ(test, kmad_unregister_agent(a), 0);
		injected = ft_disarm();
		kt_settle(f);
		KUNIT_EXPECT_EQ_MSG(test, ft_callbacks(f, buf[0]), 1, "run %u", n);
		KUNIT_EXPECT_EQ_MSG(test, ft_callbacks(f, buf[1]), 1, "run %u", n);
		kmad_free_send_buf(buf[0]);
		kmad_free_send_buf(buf[1]);
		if (!injected)
			break;
	}
	ft_swept(test, n, 0);
}

/* A client that counts the ports of one fabric (names from @prefix). */
struct ft_client {
	struct kmad_client client;
	char prefix[KMAD_NAME_LEN];
	atomic_t added;
	atomic_t removed;
};

static int ft_client_add(struct kmad_client *client, struct kmad_port *port,
			 void **data)
{
	struct ft_client *c = container_of(client, struct ft_client, client);

	if (strncmp(kmad_port_dev_name(port), c->prefix, strlen(c->prefix)))
		return -ENODEV;
	atomic_inc(&c->added);
	return 0;
}

static void ft_client_remove(struct kmad_client *client,
			     struct kmad_port *port, void *data)
{
	struct ft_client *c = container_of(client, struct ft_client, client);

	atomic_inc(&c->removed);
}

static struct ft_client *ft_client(struct kunit *test, const char *prefix)
{
	struct ft_client *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->client.name = "kmad_faults";
	c->client.add = ft_client_add;
	c->client.remove = ft_client_remove;
	strscpy(c->prefix, prefix, sizeof(c->prefix));
	return c;
}

/*
 * kmad_register_client() with the fixture's two ports registered: -ENOMEM
 * with no callback at all, or 0 with an add for each port (and a remove
 * for each at unregister).  It failed before with 0 and one add: a
 * port's record was not allocated, and the client never heard of it.
 */
static void faults_register_client(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct ft_client *c;
	unsigned int n;
	bool injected;
	int ret;

	if (!ft_can_fail(test))
		return;
	c = ft_client(test, kmad_port_dev_name(f->port[KT_DEV0]));
	/* "<fabric>0" -> "<fabric>": both devices' ports. */
	c->prefix[strlen(c->prefix) - 1] = '\0';
	for (n = 1; n < FT_MAX_RUNS; n++) {
		atomic_set(&c->added, 0);
		atomic_set(&c->removed, 0);
		ft_arm(n);
		ret = kmad_register_client(&c->client);
		injected = ft_disarm();
		if (ret) {
			KUNIT_EXPECT_EQ_MSG(test, ret, -ENOMEM, "run %u", n);
			KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->added), 0,
					    "run %u", n);
			continue;
		}
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->added), 2,
				    "run %u", n);
		kmad_unregister_client(&c->client);
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->removed),
				    atomic_read(&c->added), "run %u", n);
		if (!injected)
			break;
	}
	ft_swept(test, n, 1);
}

/*
 * A whole fabric: kmad_sim_create() (its devices, kmad's ports, QPs,
 * receive rings and firmware agents) and kmad_sim_destroy().  A failed
 * create returns an error and leaves no device behind (the next run's
 * names would clash); a created one works.
 */
static void faults_sim_create(struct kunit *test)
{
	struct kmad_sim_config cfg = {
		.topology = KMAD_SIM_TOPO_PAIR,
		.mode = KMAD_SIM_STEP,
		.rq_depth = 4,
		.ah = KMAD_SIM_AH_AUTO,
	};
	char name[KMAD_NAME_LEN - 4], dev[KMAD_NAME_LEN];
	struct kmad_sim_fabric *fab;
	struct kmad_port *port;
	struct ft_client *c;
	unsigned int n;
	bool injected;

	if (!ft_can_fail(test))
		return;
	snprintf(name, sizeof(name), "%s%d_", KBUILD_MODNAME,
		 atomic_inc_return(&kt_fabric_seq));
	snprintf(dev, sizeof(dev), "%s0", name);
	cfg.name = name;
	c = ft_client(test, name);
	KUNIT_ASSERT_EQ(test, kmad_register_client(&c->client), 0);
	for (n = 1; n < FT_MAX_RUNS; n++) {
		atomic_set(&c->added, 0);
		atomic_set(&c->removed, 0);
		ft_arm(n);
		fab = kmad_sim_create(&cfg);
		injected = ft_disarm();
		KUNIT_EXPECT_NOT_NULL(test, fab);
		if (IS_ERR_OR_NULL(fab)) {
			KUNIT_EXPECT_EQ_MSG(test, PTR_ERR(fab), -ENOMEM,
					    "run %u", n);
			port = kmad_port_get(dev, 1);
			KUNIT_EXPECT_NULL_MSG(test, port, "run %u", n);
			kmad_port_put(port);
			/* A device that went back out tells its adds. */
			KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->removed),
					    atomic_read(&c->added), "run %u", n);
			continue;
		}
		port = kmad_port_get(dev, 1);
		KUNIT_EXPECT_NOT_NULL_MSG(test, port, "run %u", n);
		kmad_port_put(port);
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->added), 2,
				    "run %u", n);
		ft_arm(n);
		kmad_sim_destroy(fab);
		ft_disarm();
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->removed), 2,
				    "run %u", n);
		if (!injected)
			break;
	}
	kmad_unregister_client(&c->client);
	ft_swept(test, n, 10);
}

static struct kunit_case faults_cases[] = {
	KUNIT_CASE(faults_post_request),
	KUNIT_CASE(faults_post_send_only),
	KUNIT_CASE(faults_post_by_gid),
	KUNIT_CASE(faults_post_rmpp),
	KUNIT_CASE(faults_post_smp),
	KUNIT_CASE(faults_alloc_send_buf),
	KUNIT_CASE_PARAM(faults_register, ft_reg_gen_params),
	KUNIT_CASE(faults_create_response),
	KUNIT_CASE(faults_rmpp_single_segment),
	KUNIT_CASE_PARAM(faults_bridged_recv, ft_bridged_gen_params),
	KUNIT_CASE(faults_unregister),
	KUNIT_CASE(faults_register_client),
	KUNIT_CASE(faults_sim_create),
	{}
};

static struct kunit_suite faults_suite = {
	.name = "kmad_faults",
	.init = ft_init,
	.exit = kt_fix_exit,
	.test_cases = faults_cases,
};

/* The post sweeps again, on devices without address handles. */
static struct kunit_case faults_noah_cases[] = {
	KUNIT_CASE(faults_post_request),
	KUNIT_CASE(faults_post_by_gid),
	{}
};

static struct kunit_suite faults_noah_suite = {
	.name = "kmad_faults_noah",
	.init = ft_init_noah,
	.exit = kt_fix_exit,
	.test_cases = faults_noah_cases,
};

kunit_test_suites(&faults_suite, &faults_noah_suite);

MODULE_DESCRIPTION("KUnit tests for kmad under allocation failures");
MODULE_LICENSE("GPL");
