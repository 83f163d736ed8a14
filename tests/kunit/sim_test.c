// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sim: the simulated fabric itself -- routing, Q_Key and permissive-LID
 * rules, both notification behaviours with the arm hook, QP errors, CQ
 * overflow, device removal and fault injection.  The MADs are SA class
 * (which no firmware answers), so they reach kmad on the peer.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kthread.h>

#include <kmad/mad.h>
#include <kmad/sim.h>
#include <kmad/wire.h>

#include "kmad_priv.h"

struct st {
	struct kunit *test;
	struct kmad_sim_fabric *fab;
	struct kmad_port *port[2];
	struct kmad_agent *agent;
	atomic_t sends;
	atomic_t status[KMAD_SEND_LOCAL_ERROR + 1];
	atomic_t recvs;
	char name[16];
};

static atomic_t st_seq = ATOMIC_INIT(0);

static void st_send_handler(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct st *s = agent->context;

	atomic_inc(&s->status[wc->status]);
	kmad_free_send_buf(wc->send_buf);
	atomic_inc(&s->sends);
}

static void st_recv_handler(struct kmad_agent *agent,
			    struct kmad_send_buf *request,
			    struct kmad_recv_wc *wc)
{
	struct st *s = agent->context;

	atomic_inc(&s->recvs);
	kmad_free_recv(wc);
}

static struct st *st_setup(struct kunit *test, enum kmad_sim_mode mode,
			   enum kmad_sim_notify notify, unsigned int cq_depth)
{
	struct kmad_sim_config cfg = {
		.topology = KMAD_SIM_TOPO_PAIR,
		.mode = mode,
		.notify = notify,
		.latency_us = 5,
		.cq_depth = cq_depth,
	};
	char dev[24];
	struct st *s;
	int i;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->test = test;
	snprintf(s->name, sizeof(s->name), "st%d_", atomic_inc_return(&st_seq));
	cfg.name = s->name;
	s->fab = kmad_sim_create(&cfg);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(s->fab));
	test->priv = s;
	for (i = 0; i < 2; i++) {
		snprintf(dev, sizeof(dev), "%s%d", s->name, i);
		s->port[i] = kmad_port_get(dev, 1);
		KUNIT_ASSERT_NOT_NULL(test, s->port[i]);
	}
	s->agent = kmad_register_agent(s->port[0], KMAD_QPT_GSI, NULL,
				       st_send_handler, st_recv_handler, s);
	KUNIT_ASSERT_FALSE(test, IS_ERR(s->agent));
	return s;
}

static void st_exit(struct kunit *test)
{
	struct st *s = test->priv;
	int i;

	if (!s)
		return;
	/* Destroy first: in step mode sends wait on the wire otherwise. */
	kmad_sim_destroy(s->fab);
	if (!IS_ERR_OR_NULL(s->agent))
		kmad_unregister_agent(s->agent);
	for (i = 0; i < 2; i++)
		if (s->port[i])
			kmad_port_put(s->port[i]);
}

static void st_mad(struct kmad_mad *mad, u8 method, u64 tid)
{
	memset(mad, 0, sizeof(*mad));
	mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	mad->mad_hdr.mgmt_class = KMAD_MGMT_CLASS_SUBN_ADM;
	mad->mad_hdr.class_version = 2;
	mad->mad_hdr.method = method;
	mad->mad_hdr.tid = cpu_to_be64(tid);
	mad->mad_hdr.attr_id = cpu_to_be16(KMAD_PMA_ATTR_PORT_COUNTERS);
}

/* An unmatched response: kmad drops it and sends nothing. */
static int st_inject(struct st *s, unsigned int dev, u64 tid)
{
	struct kmad_mad mad;

	st_mad(&mad, KMAD_METHOD_GET_RESP, tid);
	return kmad_sim_inject(s->fab, dev, 1, &mad, sizeof(mad), 1, 1);
}

static struct kmad_send_buf *st_post(struct st *s, u16 dlid, u32 qkey,
				     u8 method, u64 tid, unsigned int timeout)
{
	struct kmad_dest dest = {
		.dlid = dlid, .remote_qpn = 1, .remote_qkey = qkey,
	};
	struct kmad_send_buf *buf;

	buf = kmad_alloc_send_buf(s->agent, &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(s->test, IS_ERR_OR_NULL(buf));
	st_mad(buf->mad, method, tid);
	buf->timeout_ms = timeout;
	KUNIT_EXPECT_EQ(s->test, kmad_post_send(buf), 0);
	return buf;
}

static void sim_bad_args(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_STEP, KMAD_SIM_NOTIFY_IBTA, 0);
	struct kmad_mad mad;

	st_mad(&mad, KMAD_METHOD_GET_RESP, 1);
	KUNIT_EXPECT_EQ(test, kmad_sim_num_devices(s->fab), 2U);
	KUNIT_EXPECT_NULL(test, kmad_sim_device(s->fab, 2));
	KUNIT_EXPECT_EQ(test, kmad_sim_inject(s->fab, 2, 1, &mad, 256, 1, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_inject(s->fab, 0, 2, &mad, 256, 1, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_inject(NULL, 0, 1, &mad, 256, 1, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_inject(s->fab, 0, 1, &mad,
					      KMAD_SIM_MAX_PACKET + 1, 1, 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_peek_send(s->fab, 0, 1, 0, &mad, 256), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_complete_send(s->fab, 0, 1, 0,
						     KMAD_WC_SUCCESS, true),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_fire_cq_event(s->fab, 0, 1, false), -ENOENT);
	KUNIT_EXPECT_EQ(test, kmad_sim_fire_cq_event(s->fab, 0, 7, true), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_qp_error(s->fab, 3, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_fail_modify_qp(s->fab, 3, 0, KMAD_QPS_RESET, 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_fail_modify_qp(s->fab, 0, 2, KMAD_QPS_RESET, 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_fail_modify_qp(s->fab, 0, 1, 7, 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(s->fab, 9, 0), 0U);
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(s->fab, 0, 9), 0U);
	KUNIT_EXPECT_EQ(test, kmad_sim_set_notify(s->fab, 5, 0,
						  KMAD_SIM_NOTIFY_MISSED),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_set_notify(s->fab, 0, 1, 9), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_set_notify(NULL, 0, 1,
						  KMAD_SIM_NOTIFY_MISSED),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_set_arm_hook(s->fab, 0, 5, NULL, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_set_arm_hook(s->fab, 2, 1, NULL, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_set_faults(NULL, &(struct kmad_sim_faults){}),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_set_faults(s->fab, NULL), -EINVAL);
	/* The same calls with good arguments succeed. */
	KUNIT_EXPECT_EQ(test, kmad_sim_set_notify(s->fab, 0, 1,
						  KMAD_SIM_NOTIFY_IBTA), 0);
	KUNIT_EXPECT_EQ(test, kmad_sim_set_arm_hook(s->fab, 0, 1, NULL, NULL), 0);
	KUNIT_EXPECT_EQ(test, kmad_sim_set_faults(s->fab,
						  &(struct kmad_sim_faults){}), 0);
	kmad_sim_remove_device(s->fab, 1);
	KUNIT_EXPECT_EQ(test, kmad_sim_inject(s->fab, 1, 1, &mad, 256, 1, 1), -ENODEV);
	KUNIT_EXPECT_EQ(test, kmad_sim_fail_modify_qp(s->fab, 1, 1, KMAD_QPS_RESET, 1),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, kmad_sim_set_notify(s->fab, 1, 1,
						  KMAD_SIM_NOTIFY_MISSED),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, kmad_sim_set_arm_hook(s->fab, 1, 1, NULL, NULL),
			-ENODEV);
	KUNIT_EXPECT_NULL(test, kmad_sim_device(s->fab, 1));
	kmad_sim_remove_device(s->fab, 1);
}

static void sim_inject_event(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_STEP, KMAD_SIM_NOTIFY_IBTA, 0);
	struct kmad_sim_stats st;

	KUNIT_ASSERT_EQ(test, st_inject(s, 1, 5), 0);
	KUNIT_EXPECT_TRUE(test, kmad_sim_event_pending(s->fab, 1, 1));
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(s->fab, 1, 1), 1U);
	KUNIT_EXPECT_EQ(test, kmad_sim_fire_cq_event(s->fab, 1, 1, false), 0);
	kmad_sim_settle(s->fab);
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(s->fab, 1, 1), 0U);
	KUNIT_EXPECT_FALSE(test, kmad_sim_event_pending(s->fab, 1, 1));
	kmad_sim_get_stats(s->fab, 1, &st);
	KUNIT_EXPECT_EQ(test, st.delivered, 1ULL);
	KUNIT_EXPECT_EQ(test, st.cq_events, 1ULL);
	/* A spurious event on an empty CQ. */
	KUNIT_EXPECT_EQ(test, kmad_sim_fire_cq_event(s->fab, 1, 1, true), 0);
	kmad_sim_settle(s->fab);
	kmad_sim_get_stats(s->fab, 1, &st);
	KUNIT_EXPECT_EQ(test, st.cq_events, 2ULL);
}

/* A packet longer than the receive buffer takes it all the same and
 * completes it with a local error; nothing is delivered.
 */
static void sim_inject_oversized(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_STEP, KMAD_SIM_NOTIFY_IBTA, 0);
	u8 *pkt = kunit_kzalloc(test, KMAD_MAD_SIZE + 1, GFP_KERNEL);
	struct kmad_sim_stats st;

	KUNIT_ASSERT_NOT_NULL(test, pkt);
	st_mad((struct kmad_mad *)pkt, KMAD_METHOD_GET_RESP, 5);
	KUNIT_EXPECT_EQ(test, kmad_sim_inject(s->fab, 1, 1, pkt,
					      KMAD_MAD_SIZE + 1, 1, 1),
			-EMSGSIZE);
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(s->fab, 1, 1), 1U);
	KUNIT_EXPECT_TRUE(test, kmad_sim_event_pending(s->fab, 1, 1));
	kmad_sim_get_stats(s->fab, 1, &st);
	KUNIT_EXPECT_EQ(test, st.recv_errors, 1ULL);
	KUNIT_EXPECT_EQ(test, st.delivered, 0ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->recvs), 0);
}

struct st_created {
	int calls;
	int reachable;			/* calls that found their QP */
	u32 seen[2][4];			/* qpns by device, in call order */
};

static void st_qp_created(struct kmad_sim_fabric *fab, unsigned int dev,
			  u32 qpn, void *arg)
{
	struct st_created *c = arg;

	if (dev < 2 && c->calls < 8)
		c->seen[dev][c->calls % 4] = qpn;
	c->calls++;
	/* The QP is already published: the controls reach it. */
	if (!kmad_sim_fail_modify_qp(fab, dev, qpn, KMAD_QPS_RESET, 0))
		c->reachable++;
}

/* The qp_created callback runs once per QP kmad creates, with an address
 * the control functions take, while kmad_sim_create() builds the fabric.
 */
static void sim_qp_created_hook(struct kunit *test)
{
	struct st_created c = {};
	struct kmad_sim_config cfg = {
		.name = "stc_",
		.topology = KMAD_SIM_TOPO_PAIR,
		.hca_ports = 2,
		.mode = KMAD_SIM_STEP,
		.qp_created = st_qp_created,
		.qp_created_arg = &c,
	};
	struct kmad_sim_fabric *fab;

	fab = kmad_sim_create(&cfg);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(fab));
	kmad_sim_destroy(fab);
	KUNIT_EXPECT_EQ(test, c.calls, 8);
	KUNIT_EXPECT_EQ(test, c.reachable, 8);
	KUNIT_EXPECT_EQ(test, c.seen[0][0], KMAD_SIM_QP(1, 0));
	KUNIT_EXPECT_EQ(test, c.seen[0][1], KMAD_SIM_QP(1, 1));
	KUNIT_EXPECT_EQ(test, c.seen[0][2], KMAD_SIM_QP(2, 0));
	KUNIT_EXPECT_EQ(test, c.seen[0][3], KMAD_SIM_QP(2, 1));
	KUNIT_EXPECT_EQ(test, c.seen[1][3], KMAD_SIM_QP(2, 1));
}

static void st_hook_inject(void *arg)
{
	struct st *s = arg;

	KUNIT_EXPECT_EQ(s->test, st_inject(s, 1, 77), 0);
}

/* IBTA: a CQE landing before the re-arm raises nothing; kmad finds it. */
static void sim_ibta_hook(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_STEP, KMAD_SIM_NOTIFY_IBTA, 0);
	struct kmad_sim_stats st;

	KUNIT_ASSERT_EQ(test, st_inject(s, 1, 5), 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_set_arm_hook(s->fab, 1, 1, st_hook_inject,
						    s), 0);
	KUNIT_EXPECT_EQ(test, kmad_sim_fire_cq_event(s->fab, 1, 1, false), 0);
	kmad_sim_settle(s->fab);
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(s->fab, 1, 1), 0U);
	KUNIT_EXPECT_FALSE(test, kmad_sim_event_pending(s->fab, 1, 1));
	kmad_sim_get_stats(s->fab, 1, &st);
	KUNIT_EXPECT_EQ(test, st.delivered, 2ULL);
}

/* MISSED: the same CQE raises an event at the re-arm. */
static void sim_missed_hook(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_STEP, KMAD_SIM_NOTIFY_MISSED, 0);

	KUNIT_ASSERT_EQ(test, st_inject(s, 1, 5), 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_set_arm_hook(s->fab, 1, 1, st_hook_inject,
						    s), 0);
	KUNIT_EXPECT_EQ(test, kmad_sim_fire_cq_event(s->fab, 1, 1, false), 0);
	kmad_sim_settle(s->fab);
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(s->fab, 1, 1), 0U);
	KUNIT_EXPECT_TRUE(test, kmad_sim_event_pending(s->fab, 1, 1));
	KUNIT_EXPECT_EQ(test, kmad_sim_fire_cq_event(s->fab, 1, 1, false), 0);
	kmad_sim_settle(s->fab);
	KUNIT_EXPECT_FALSE(test, kmad_sim_event_pending(s->fab, 1, 1));
}

/* MISSED without a late CQE: kmad reaped everything, no event. */
static void sim_missed_plain(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_STEP, KMAD_SIM_NOTIFY_MISSED, 0);

	KUNIT_ASSERT_EQ(test, st_inject(s, 1, 5), 0);
	KUNIT_EXPECT_EQ(test, kmad_sim_fire_cq_event(s->fab, 1, 1, false), 0);
	kmad_sim_settle(s->fab);
	KUNIT_EXPECT_FALSE(test, kmad_sim_event_pending(s->fab, 1, 1));
}

/* How many receive buffers kmad holds posted on a port's QP1. */
static unsigned int st_rq_posted(struct kmad_port *port)
{
	struct kmad_qp_info *qpi = &port->qpi[KMAD_QPT_GSI];
	unsigned long flags;
	unsigned int n;

	spin_lock_irqsave(&qpi->lock, flags);
	n = qpi->rq_posted;
	spin_unlock_irqrestore(&qpi->lock, flags);
	return n;
}

static s64 st_pstat(struct kmad_port *port, enum kmad_port_stat stat)
{
	return atomic64_read(&port->stats[stat]);
}

/*
 * A QP error flushes every posted receive: kmad reaps each flush CQE,
 * recovers the QP once and posts its receives again, and the QP takes a
 * MAD again.  A QP held in error (its reset fails) takes none.
 *
 * kmad_sim_qp_error() tells kmad at once (a fatal event), and kmad's
 * drain and recovery run from kmad_wq beside the test, step mode or not:
 * what the CQ and the QP hold between the error and a settle depends on
 * how soon they run.  An earlier version expected CQEs still unpolled and
 * an injection refused there; a drain that ran first reaped the CQEs, a
 * recovery that ran first took the MAD.  The flushes are now counted
 * after the settle, and the refusal is asserted on a QP whose reset
 * fails, which stays in error however kmad's work runs.
 */
static void sim_qp_error_recovers(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_STEP, KMAD_SIM_NOTIFY_IBTA, 0);
	struct kmad_port *p = s->port[1];
	s64 flushed = st_pstat(p, KMAD_PSTAT_RECV_FLUSHED);
	s64 recoveries = st_pstat(p, KMAD_PSTAT_QP_RECOVERIES);
	unsigned int posted = st_rq_posted(p);

	KUNIT_ASSERT_GT(test, posted, 0U);
	KUNIT_ASSERT_EQ(test, kmad_sim_qp_error(s->fab, 1, 1), 0);
	kmad_sim_settle(s->fab);
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(s->fab, 1, 1), 0U);
	KUNIT_EXPECT_EQ(test, st_pstat(p, KMAD_PSTAT_RECV_FLUSHED) - flushed,
			(s64)posted);
	KUNIT_EXPECT_EQ(test, st_pstat(p, KMAD_PSTAT_QP_RECOVERIES),
			recoveries + 1);
	KUNIT_EXPECT_EQ(test, st_rq_posted(p), posted);
	KUNIT_EXPECT_EQ(test, st_inject(s, 1, 6), 0);

	/* Held in error: recovery's resets fail until it gives the QP up. */
	KUNIT_ASSERT_EQ(test, kmad_sim_fail_modify_qp(s->fab, 1, 1,
						      KMAD_QPS_RESET,
						      UINT_MAX), 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_qp_error(s->fab, 1, 1), 0);
	KUNIT_EXPECT_EQ(test, st_inject(s, 1, 5), -ENOBUFS);
	kmad_sim_settle(s->fab);
	KUNIT_EXPECT_EQ(test, st_inject(s, 1, 7), -ENOBUFS);
	KUNIT_EXPECT_EQ(test, st_pstat(p, KMAD_PSTAT_QP_RECOVERIES),
			recoveries + 1);
	KUNIT_EXPECT_EQ(test, kmad_sim_fail_modify_qp(s->fab, 1, 1,
						      KMAD_QPS_RESET, 0), 0);
}

static void sim_cq_overflow(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_STEP, KMAD_SIM_NOTIFY_IBTA, 2);
	struct kmad_sim_stats st;

	KUNIT_ASSERT_EQ(test, st_inject(s, 1, 1), 0);
	KUNIT_ASSERT_EQ(test, st_inject(s, 1, 2), 0);
	KUNIT_ASSERT_EQ(test, st_inject(s, 1, 3), 0);
	kmad_sim_get_stats(s->fab, 1, &st);
	KUNIT_EXPECT_GE(test, st.cq_overflows, 1ULL);
	KUNIT_EXPECT_EQ(test, st_inject(s, 1, 4), -ENOBUFS);
	kmad_sim_settle(s->fab);
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(s->fab, 1, 1), 0U);
	KUNIT_EXPECT_EQ(test, st_inject(s, 1, 5), 0);
}

static void sim_step_send(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_STEP, KMAD_SIM_NOTIFY_IBTA, 0);
	struct kmad_sim_stats s0, s1;
	struct kmad_mad seen;

	st_post(s, 2, KMAD_QP1_QKEY, KMAD_METHOD_GET_RESP, 1, 0);
	st_post(s, 2, 0x1234, KMAD_METHOD_GET_RESP, 2, 0);
	st_post(s, 9, KMAD_QP1_QKEY, KMAD_METHOD_GET_RESP, 3, 0);
	st_post(s, 2, KMAD_QP1_QKEY, KMAD_METHOD_GET_RESP, 4, 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_pending_sends(s->fab, 0, 1), 4U);
	KUNIT_ASSERT_EQ(test, kmad_sim_peek_send(s->fab, 0, 1, 3, &seen, sizeof(seen)), 256);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(seen.mad_hdr.tid) & 0xffffffff, 4ULL);
	KUNIT_EXPECT_EQ(test, kmad_sim_complete_send(s->fab, 0, 1, 4,
						     KMAD_WC_SUCCESS, true),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_complete_send(s->fab, 0, 1, 0, KMAD_WC_SUCCESS, true), 0);
	KUNIT_EXPECT_EQ(test, kmad_sim_complete_send(s->fab, 0, 1, 0, KMAD_WC_SUCCESS, true), 0);
	KUNIT_EXPECT_EQ(test, kmad_sim_complete_send(s->fab, 0, 1, 0, KMAD_WC_SUCCESS, true), 0);
	KUNIT_EXPECT_EQ(test, kmad_sim_complete_send(s->fab, 0, 1, 0, KMAD_WC_LOC_ERR, true), 0);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(s->fab, 0, 1), 0U);
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(s->fab, 0, 1), 4U);
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(s->fab, 1, 1), 1U);
	kmad_sim_fire_cq_event(s->fab, 0, 1, false);
	kmad_sim_fire_cq_event(s->fab, 1, 1, false);
	kmad_sim_settle(s->fab);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->sends), 4);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->status[KMAD_SEND_OK]), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->status[KMAD_SEND_LOCAL_ERROR]), 1);
	kmad_sim_get_stats(s->fab, 0, &s0);
	kmad_sim_get_stats(s->fab, 1, &s1);
	KUNIT_EXPECT_EQ(test, s0.sent, 3ULL);
	KUNIT_EXPECT_EQ(test, s0.send_errors, 1ULL);
	KUNIT_EXPECT_EQ(test, s0.dropped_no_route, 1ULL);
	KUNIT_EXPECT_EQ(test, s1.dropped_bad_qkey, 1ULL);
	KUNIT_EXPECT_EQ(test, s1.delivered, 1ULL);
}

/*
 * kmad_sim_advance_clock() from a handler, while kmad_sim_settle() waits
 * for that handler: a send-only agent's handler moves the clock 1 s on,
 * which makes the other agent's request (500 ms timeout) time out in the
 * same settle.  (Before, settle held the fabric's device mutex while it
 * waited for kmad's work, and the advance took it: a hang.)  Also the
 * argument conventions of kmad_sim_hold_queries().
 */
static void st_clock_send_handler(struct kmad_agent *agent,
				  struct kmad_send_wc *wc)
{
	struct st *s = agent->context;

	kmad_sim_advance_clock(s->fab, 1000);
	st_send_handler(agent, wc);
}

static void sim_advance_clock_from_handler(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_STEP, KMAD_SIM_NOTIFY_IBTA, 0);
	struct kmad_dest dest = {
		.dlid = 2, .remote_qpn = 1, .remote_qkey = KMAD_QP1_QKEY,
	};
	struct kmad_send_buf *buf;
	struct kmad_agent *a;

	KUNIT_EXPECT_EQ(test, kmad_sim_hold_queries(NULL, 0, true), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_hold_queries(s->fab, 2, true), -EINVAL);
	a = kmad_register_agent(s->port[0], KMAD_QPT_GSI, NULL,
				st_clock_send_handler, NULL, s);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	st_post(s, 2, KMAD_QP1_QKEY, KMAD_METHOD_GET, 1, 500);
	buf = kmad_alloc_send_buf(a, &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(buf));
	st_mad(buf->mad, KMAD_METHOD_GET_RESP, 2);
	KUNIT_ASSERT_EQ(test, kmad_post_send(buf), 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_complete_send(s->fab, 0, 1, 0,
						     KMAD_WC_SUCCESS, false), 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_complete_send(s->fab, 0, 1, 0,
						     KMAD_WC_SUCCESS, false), 0);
	kmad_sim_fire_cq_event(s->fab, 0, 1, false);
	kmad_sim_settle(s->fab);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->sends), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->status[KMAD_SEND_OK]), 1);
	KUNIT_EXPECT_EQ(test,
			atomic_read(&s->status[KMAD_SEND_RESP_TIMEOUT]), 1);
	kmad_unregister_agent(a);
}

/* Step mode: a device removed with sends pending on its peer's wire. */
static void sim_step_remove(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_STEP, KMAD_SIM_NOTIFY_IBTA, 0);
	struct kmad_sim_stats s0;

	st_post(s, 2, KMAD_QP1_QKEY, KMAD_METHOD_GET_RESP, 1, 0);
	kmad_sim_remove_device(s->fab, 1);
	KUNIT_EXPECT_EQ(test, kmad_sim_complete_send(s->fab, 0, 1, 0, KMAD_WC_SUCCESS, true), 0);
	kmad_sim_fire_cq_event(s->fab, 0, 1, false);
	kmad_sim_settle(s->fab);
	kmad_sim_get_stats(s->fab, 0, &s0);
	KUNIT_EXPECT_EQ(test, s0.dropped_no_route, 1ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->sends), 1);
}

struct st_poster {
	struct st *s;
	int n;
	u64 tid;
	struct completion done;
};

static int st_poster_fn(void *arg)
{
	struct st_poster *p = arg;
	int i;

	for (i = 0; i < p->n; i++)
		st_post(p->s, 2, KMAD_QP1_QKEY, KMAD_METHOD_GET, p->tid + i, 50);
	complete(&p->done);
	return 0;
}

static void st_wait_sends(struct st *s, int n)
{
	int i;

	for (i = 0; i < 500 && atomic_read(&s->sends) < n; i++)
		msleep(20);
	KUNIT_EXPECT_EQ(s->test, atomic_read(&s->sends), n);
}

/* Async: two CPUs post requests; device 1 answers them; then goes away. */
static void sim_async_traffic_remove(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_ASYNC, KMAD_SIM_NOTIFY_MISSED, 0);
	struct st_poster p = { .s = s, .n = 100, .tid = 1000 };
	struct kmad_sim_stats s0, s1;
	struct task_struct *t;
	int i;

	init_completion(&p.done);
	t = kthread_run(st_poster_fn, &p, "st_poster");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (i = 0; i < 100; i++)
		st_post(s, 2, KMAD_QP1_QKEY, KMAD_METHOD_GET, i, 50);
	wait_for_completion(&p.done);
	kmad_sim_settle(s->fab);
	st_wait_sends(s, 200);
	kmad_sim_get_stats(s->fab, 0, &s0);
	kmad_sim_get_stats(s->fab, 1, &s1);
	kunit_info(test, "dev0 sent %llu delivered %llu events %llu; dev1 sent %llu delivered %llu no_recv %llu; ok %d timeout %d",
		   s0.sent, s0.delivered, s0.cq_events, s1.sent, s1.delivered,
		   s1.dropped_no_recv, atomic_read(&s->status[KMAD_SEND_OK]),
		   atomic_read(&s->status[KMAD_SEND_RESP_TIMEOUT]));
	KUNIT_EXPECT_EQ(test, s0.sent, 200ULL);

	/* Now traffic while device 1 goes away. */
	atomic_set(&s->sends, 0);
	p.tid = 5000;
	reinit_completion(&p.done);
	t = kthread_run(st_poster_fn, &p, "st_poster");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (i = 0; i < 30; i++)
		st_post(s, 2, KMAD_QP1_QKEY, KMAD_METHOD_GET, 3000 + i, 50);
	kmad_sim_remove_device(s->fab, 1);
	for (i = 30; i < 100; i++)
		st_post(s, 2, KMAD_QP1_QKEY, KMAD_METHOD_GET, 3000 + i, 50);
	wait_for_completion(&p.done);
	kmad_sim_settle(s->fab);
	st_wait_sends(s, 200);
	kmad_sim_get_stats(s->fab, 0, &s0);
	kunit_info(test, "after removal: dev0 no_route %llu", s0.dropped_no_route);
	KUNIT_EXPECT_GT(test, s0.dropped_no_route, 0ULL);
}

static void sim_async_faults(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_ASYNC, KMAD_SIM_NOTIFY_IBTA, 0);
	struct kmad_sim_faults faults = {
		.drop_pct = 20, .dup_pct = 20, .corrupt_pct = 20,
		.send_err_pct = 10, .delay_us = 100,
	};
	struct kmad_sim_stats s0, s1;
	int i;

	kmad_sim_set_faults(s->fab, &faults);
	for (i = 0; i < 150; i++)
		st_post(s, 2, KMAD_QP1_QKEY, KMAD_METHOD_GET, i, 100);
	kmad_sim_settle(s->fab);
	st_wait_sends(s, 150);
	kmad_sim_get_stats(s->fab, 0, &s0);
	kmad_sim_get_stats(s->fab, 1, &s1);
	kunit_info(test, "dev0 sent %llu err %llu drop %llu dup %llu corrupt %llu; dev1 delivered %llu; ok %d timeout %d lerr %d",
		   s0.sent, s0.send_errors, s0.dropped_fault, s0.duplicated,
		   s0.corrupted, s1.delivered,
		   atomic_read(&s->status[KMAD_SEND_OK]),
		   atomic_read(&s->status[KMAD_SEND_RESP_TIMEOUT]),
		   atomic_read(&s->status[KMAD_SEND_LOCAL_ERROR]));
	KUNIT_EXPECT_EQ(test, s0.sent + s0.send_errors, 150ULL);
	KUNIT_EXPECT_GT(test, s0.dropped_fault, 0ULL);
	KUNIT_EXPECT_GT(test, s0.duplicated, 0ULL);
	KUNIT_EXPECT_GT(test, s0.corrupted, 0ULL);
}

/*
 * latency_us plus delay_us beyond 2^32 us is the longest delay, not what
 * is left after a wrap: with delay_us UINT_MAX and latency_us 5 a send
 * waits 71 minutes.  Before, it waited 4 us (sent 1 after 300 ms).  The
 * fabric's removal at exit flushes it.
 */
static void sim_async_delay_saturates(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_ASYNC, KMAD_SIM_NOTIFY_IBTA, 0);
	struct kmad_sim_faults faults = { .delay_us = UINT_MAX };
	struct kmad_sim_stats s0;

	kmad_sim_set_faults(s->fab, &faults);
	st_post(s, 2, KMAD_QP1_QKEY, KMAD_METHOD_GET, 1, 100);
	msleep(300);
	kmad_sim_get_stats(s->fab, 0, &s0);
	KUNIT_EXPECT_EQ(test, s0.sent, 0ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->sends), 0);
}

/*
 * A provider's numbers kmad cannot use are refused: an LMC above 7 (the
 * send path shifts by it: 1 << 40 is undefined), a queue depth above
 * KMAD_MAX_QP_DEPTH.  Before, both were taken (0).
 */
static void sim_port_attr_ranges(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_STEP, KMAD_SIM_NOTIFY_IBTA, 0);
	const struct kmad_provider_ops *ops = kmad_sim_device(s->fab, 0)->ops;
	struct kmad_port_attr attr = {
		.link_layer = KMAD_LINK_LAYER_INFINIBAND,
		.lid = 9,
		.lmc = 8,
	};
	struct kmad_device *dev;

	dev = kmad_device_alloc(ops, "st_attr", 1, 0);
	KUNIT_ASSERT_NOT_NULL(test, dev);
	KUNIT_EXPECT_EQ(test, kmad_device_set_port_attr(dev, 1, &attr), -EINVAL);
	attr.lmc = KMAD_MAX_LMC;
	/* The sim has query_pkey: a table of no entry is refused. */
	KUNIT_EXPECT_EQ(test, kmad_device_set_port_attr(dev, 1, &attr), -EINVAL);
	attr.pkey_tbl_len = 1;
	KUNIT_EXPECT_EQ(test, kmad_device_set_port_attr(dev, 1, &attr), 0);
	attr.sq_depth = KMAD_MAX_QP_DEPTH + 1;
	KUNIT_EXPECT_EQ(test, kmad_device_set_port_attr(dev, 1, &attr), -EINVAL);
	attr.sq_depth = 0;
	attr.rq_depth = KMAD_MAX_QP_DEPTH + 1;
	KUNIT_EXPECT_EQ(test, kmad_device_set_port_attr(dev, 1, &attr), -EINVAL);
	kmad_device_free(dev);

	attr.rq_depth = 0;
	attr.lid = kmad_port_lid(s->port[0]);
	attr.lmc = 40;
	KUNIT_EXPECT_EQ(test, kmad_device_port_changed(kmad_sim_device(s->fab, 0),
						       1, &attr), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_port_lmc(s->port[0]), 0);
}

/*
 * kmad_device_alloc() with a priv_size that wraps the size: NULL.
 * Before, the sum wrapped to a small allocation and the port setup wrote
 * past it (KASAN).
 */
static void sim_device_alloc_overflow(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_STEP, KMAD_SIM_NOTIFY_IBTA, 0);
	const struct kmad_provider_ops *ops = kmad_sim_device(s->fab, 0)->ops;

	KUNIT_EXPECT_NULL(test, kmad_device_alloc(ops, "st_big", 1,
						  SIZE_MAX - 8));
}

/*
 * kmad_sim_create() refuses queue depths above KMAD_MAX_QP_DEPTH.
 * Before, sq_depth UINT_MAX went to kcalloc(), whose page allocation
 * warned (order above MAX_ORDER).
 */
static void sim_config_depth_range(struct kunit *test)
{
	struct kmad_sim_config cfg = {
		.name = "st_depth",
		.topology = KMAD_SIM_TOPO_PAIR,
		.mode = KMAD_SIM_STEP,
		.sq_depth = UINT_MAX,
	};

	KUNIT_EXPECT_EQ(test, PTR_ERR(kmad_sim_create(&cfg)), -EINVAL);
	cfg.sq_depth = 0;
	cfg.rq_depth = KMAD_MAX_QP_DEPTH + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(kmad_sim_create(&cfg)), -EINVAL);
	cfg.rq_depth = 0;
	cfg.cq_depth = UINT_MAX;
	KUNIT_EXPECT_EQ(test, PTR_ERR(kmad_sim_create(&cfg)), -EINVAL);
}

/* Write @val to kmad_sim's "link" parameter, as an admin would. */
static int st_write_link(const char *val)
{
	struct file *filp;
	loff_t pos = 0;
	ssize_t n;

	filp = filp_open("/sys/module/kmad_sim/parameters/link", O_WRONLY, 0);
	if (IS_ERR(filp))
		return PTR_ERR(filp);
	n = kernel_write(filp, val, strlen(val), &pos);
	filp_close(filp, NULL);
	return n < 0 ? n : 0;
}

/*
 * A "link" value longer than 64 characters is refused whole.  Before, it
 * was cut at 64, so "sim1:1 down", spaces, then junk took the link down
 * and the write succeeded.
 */
static void sim_link_param_too_long(struct kunit *test)
{
	char val[96];

	if (!kmad_sim_default_fabric())
		kunit_skip(test, "no default fabric (kmad_sim topology=none)");
	snprintf(val, sizeof(val), "sim1:1 down%60sjunk", "");
	KUNIT_EXPECT_EQ(test, st_write_link(val), -EINVAL);
	/* Whatever happened, the link is up again for whoever comes next. */
	KUNIT_EXPECT_EQ(test, st_write_link("sim1:1 up"), 0);
}

/*
 * QP0: the permissive LID reaches the peer from QP0, not from QP1.  The
 * SMP is a Trap, which the peer's SMA leaves to kmad.
 */
static void sim_qp0_permissive(struct kunit *test)
{
	struct st *s = st_setup(test, KMAD_SIM_STEP, KMAD_SIM_NOTIFY_IBTA, 0);
	struct kmad_dest dest = { .dlid = 0xffff, .remote_qpn = 0 };
	struct kmad_sim_stats s0, s1;
	struct kmad_send_buf *buf;
	struct kmad_agent *smi;
	int ret;

	smi = kmad_register_agent(s->port[0], KMAD_QPT_SMI, NULL,
				  st_send_handler, st_recv_handler, s);
	KUNIT_ASSERT_FALSE(test, IS_ERR(smi));
	buf = kmad_alloc_send_buf(smi, &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(buf));
	st_mad(buf->mad, KMAD_METHOD_TRAP, 1);
	buf->mad->mad_hdr.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED;
	buf->mad->mad_hdr.class_version = 1;
	buf->mad->mad_hdr.attr_id = cpu_to_be16(KMAD_ATTR_NOTICE);
	ret = kmad_post_send(buf);
	if (ret) {
		kmad_free_send_buf(buf);
		kmad_unregister_agent(smi);
	}
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "kmad refused the SMP");
	KUNIT_ASSERT_EQ(test, kmad_sim_pending_sends(s->fab, 0, 0), 1U);
	KUNIT_EXPECT_EQ(test, kmad_sim_complete_send(s->fab, 0, 0, 0, KMAD_WC_SUCCESS, true), 0);
	kmad_sim_fire_cq_event(s->fab, 0, 0, false);
	kmad_sim_fire_cq_event(s->fab, 1, 0, false);
	kmad_sim_settle(s->fab);
	kmad_sim_get_stats(s->fab, 0, &s0);
	kmad_sim_get_stats(s->fab, 1, &s1);
	KUNIT_EXPECT_EQ(test, s0.dropped_no_route, 0ULL);
	KUNIT_EXPECT_EQ(test, s1.delivered, 1ULL);
	/* From QP1 the permissive LID goes nowhere. */
	st_post(s, 0xffff, KMAD_QP1_QKEY, KMAD_METHOD_GET_RESP, 2, 0);
	KUNIT_EXPECT_EQ(test, kmad_sim_complete_send(s->fab, 0, 1, 0, KMAD_WC_SUCCESS, true), 0);
	kmad_sim_get_stats(s->fab, 0, &s0);
	KUNIT_EXPECT_EQ(test, s0.dropped_no_route, 1ULL);
	kmad_sim_fire_cq_event(s->fab, 0, 1, false);
	kmad_sim_settle(s->fab);
	kmad_unregister_agent(smi);
}

static struct kunit_case sim_cases[] = {
	KUNIT_CASE(sim_qp0_permissive),
	KUNIT_CASE(sim_bad_args),
	KUNIT_CASE(sim_inject_event),
	KUNIT_CASE(sim_inject_oversized),
	KUNIT_CASE(sim_qp_created_hook),
	KUNIT_CASE(sim_ibta_hook),
	KUNIT_CASE(sim_missed_hook),
	KUNIT_CASE(sim_missed_plain),
	KUNIT_CASE(sim_qp_error_recovers),
	KUNIT_CASE(sim_cq_overflow),
	KUNIT_CASE(sim_step_send),
	KUNIT_CASE(sim_advance_clock_from_handler),
	KUNIT_CASE(sim_step_remove),
	KUNIT_CASE(sim_async_traffic_remove),
	KUNIT_CASE(sim_async_faults),
	KUNIT_CASE(sim_async_delay_saturates),
	KUNIT_CASE(sim_link_param_too_long),
	KUNIT_CASE(sim_port_attr_ranges),
	KUNIT_CASE(sim_device_alloc_overflow),
	KUNIT_CASE(sim_config_depth_range),
	{}
};

static struct kunit_suite sim_suite = {
	.name = "kmad_sim",
	.exit = st_exit,
	.test_cases = sim_cases,
};

kunit_test_suite(sim_suite);

MODULE_LICENSE("GPL");
