// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_cq: the CQ drain under both notification behaviours of the 2006
 * thread ("next CQE only" and "missed events since last event").
 */

#include "kmad_test.h"

/* The two notification behaviours, for cases that must hold under both. */
static const enum kmad_sim_notify kt_notify_modes[] = {
	KMAD_SIM_NOTIFY_IBTA,
	KMAD_SIM_NOTIFY_MISSED,
};

static void kt_notify_desc(const enum kmad_sim_notify *mode, char *desc)
{
	strscpy(desc, *mode == KMAD_SIM_NOTIFY_IBTA ? "next_cqe_only" :
		"missed_events", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kt_notify, kt_notify_modes, kt_notify_desc);

/* Put device 0's QP1 CQ in the case's notification behaviour. */
static void kt_set_notify(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	const enum kmad_sim_notify *mode = test->param_value;

	KUNIT_ASSERT_EQ(test, kmad_sim_set_notify(f->fab, KT_DEV0, KT_QPN,
						  *mode), 0);
}

/* Land the oldest pending send's CQE on device 0 from the arm hook. */
static void kt_land_cqe(void *arg)
{
	struct kt_fix *f = arg;

	KUNIT_EXPECT_EQ(f->test, kmad_sim_complete_send(f->fab, KT_DEV0, KT_QPN,
							0, KMAD_WC_SUCCESS,
							false), 0);
}

/*
 * The 2006 thread's sequence: a CQE arrives, the HCA raises an event; the
 * drain polls it, polls again and finds the CQ empty; a second CQE
 * arrives; the drain re-arms.  The arm hook lands the second CQE.
 */
static void kt_cqe_before_rearm(struct kt_fix *f, struct kmad_send_buf **a,
				struct kmad_send_buf **b)
{
	*a = kt_request(f, f->agent, KMAD_METHOD_SET, 1, 0, 0);
	*b = kt_request(f, f->agent, KMAD_METHOD_SET, 2, 0, 0);
	kt_post(f, *a);
	kt_post(f, *b);
	KUNIT_ASSERT_EQ(f->test, kmad_sim_complete_send(f->fab, KT_DEV0, KT_QPN,
							0, KMAD_WC_SUCCESS,
							false), 0);
	KUNIT_ASSERT_TRUE(f->test, kmad_sim_event_pending(f->fab, KT_DEV0,
							  KT_QPN));
	KUNIT_ASSERT_EQ(f->test, kmad_sim_set_arm_hook(f->fab, KT_DEV0, KT_QPN,
						       kt_land_cqe, f), 0);
	kt_event(f, KT_DEV0);
}

/* Seed rule (IBTA HCAs): a CQE that lands between the last poll and the
 * re-arm raises no event; the poll after the re-arm must reap it.
 */
static void cq_ibta_cqe_before_rearm_not_stranded(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *a, *b;

	kt_cqe_before_rearm(f, &a, &b);
	KUNIT_EXPECT_FALSE(test, kmad_sim_event_pending(f->fab, KT_DEV0, KT_QPN));
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(f->fab, KT_DEV0, KT_QPN), 0U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 0, a, KMAD_SEND_OK);
	kt_expect_send(f, 1, b, KMAD_SEND_OK);
	kmad_free_send_buf(a);
	kmad_free_send_buf(b);
}

/* Seed rule ("missed events" HCAs): the same CQE raises an event at the
 * re-arm; kmad reaps it at once, and the event then finds an empty CQ,
 * which is harmless.
 */
static void cq_missed_events_extra_event_harmless(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *a, *b;
	s64 empty;

	KUNIT_ASSERT_EQ(test, kmad_sim_set_notify(f->fab, KT_DEV0, KT_QPN,
						  KMAD_SIM_NOTIFY_MISSED), 0);
	kt_cqe_before_rearm(f, &a, &b);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 1, b, KMAD_SEND_OK);

	KUNIT_EXPECT_TRUE(test, kmad_sim_event_pending(f->fab, KT_DEV0, KT_QPN));
	empty = kt_pstat(f, KT_DEV0, KMAD_PSTAT_CQ_EMPTY_EVENTS);
	kt_event(f, KT_DEV0);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_CQ_EMPTY_EVENTS),
			empty + 1);
	KUNIT_EXPECT_EQ(test, kt_events(f), 2);
	kmad_free_send_buf(a);
	kmad_free_send_buf(b);
}

/* Under both behaviours a CQE arriving after the re-arm raises an event,
 * and firing it delivers the completion.
 */
static void cq_cqe_after_rearm_raises_event(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_SET,
					       2, 0, 0);

	kt_set_notify(test);
	kt_post(f, buf);
	KUNIT_ASSERT_EQ(test, kmad_sim_complete_send(f->fab, KT_DEV0, KT_QPN, 0,
						     KMAD_WC_SUCCESS, false), 0);
	KUNIT_EXPECT_TRUE(test, kmad_sim_event_pending(f->fab, KT_DEV0, KT_QPN));
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kt_event(f, KT_DEV0);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/* The response to a request lands on device 0 from the arm hook. */
struct kt_resp_hook {
	struct kt_fix *f;
	struct kmad_mad resp;
};

static void kt_land_response(void *arg)
{
	struct kt_resp_hook *h = arg;

	KUNIT_EXPECT_EQ(h->f->test,
			kmad_sim_inject(h->f->fab, KT_DEV0, KT_QPN, &h->resp,
					sizeof(h->resp),
					kmad_port_lid(h->f->port[KT_DEV1]),
					KT_QPN), 0);
}

/*
 * A receive CQE (the response a request waits for) that lands as the
 * drain re-arms is reaped, under either behaviour: no completion is left
 * on the CQ, and the request ends OK.
 */
static void cq_recv_cqe_at_rearm(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       3, 1000, 0);
	struct kt_resp_hook h = { .f = f };

	kt_set_notify(test);
	kt_post(f, buf);
	h.resp = *buf->mad;
	h.resp.mad_hdr.method = KMAD_METHOD_GET_RESP;
	KUNIT_ASSERT_EQ(test, kmad_sim_complete_send(f->fab, KT_DEV0, KT_QPN, 0,
						     KMAD_WC_SUCCESS, false), 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_set_arm_hook(f->fab, KT_DEV0, KT_QPN,
						    kt_land_response, &h), 0);
	kt_event(f, KT_DEV0);
	kt_event(f, KT_DEV0);	/* the behaviour's extra event, if any */
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(f->fab, KT_DEV0, KT_QPN), 0U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_recv(f, 0, buf, KMAD_METHOD_GET_RESP);
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/* An event for an empty CQ does nothing but count itself. */
static void cq_empty_event(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	s64 empty = kt_pstat(f, KT_DEV0, KMAD_PSTAT_CQ_EMPTY_EVENTS);

	KUNIT_EXPECT_EQ(test, kmad_sim_fire_cq_event(f->fab, KT_DEV0, KT_QPN,
						     true), 0);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_CQ_EMPTY_EVENTS),
			empty + 1);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
}

/*
 * A CQ with more CQEs than the budget yields: the drain polls at most
 * KMAD_CQ_BUDGET CQEs per run, then requeues itself behind whatever was
 * queued meanwhile, so another CQ's drain is not held back until this CQ
 * is empty.  Each CQ's callbacks all come, once each.
 *
 * What is asserted is what is deterministic: device 0's 1.5 budgets take
 * exactly one requeue, device 1's few CQEs none.  The order of the two
 * agents' callbacks is not: kmad_wq is unbound, so the two drains (and the
 * agents' work they queue) may run at once on both CPUs.  An earlier
 * version expected device 1's last callback before device 0's; CI saw the
 * opposite once, on a loaded machine.
 */
static void cq_budget_fairness(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	const int many = 3 * KMAD_CQ_BUDGET / 2, few = 3;
	struct kmad_agent *b;
	int i, n_a = 0, n_b = 0;
	s64 req0 = kt_pstat(f, KT_DEV0, KMAD_PSTAT_CQ_REQUEUES);
	s64 req1 = kt_pstat(f, KT_DEV1, KMAD_PSTAT_CQ_REQUEUES);

	b = kmad_register_agent(f->port[KT_DEV1], KMAD_QPT_GSI, NULL,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(b));
	f->free_on_send = true;
	for (i = 0; i < many; i++)
		kt_post(f, kt_request(f, f->agent, KMAD_METHOD_SET, i, 0, 0));
	for (i = 0; i < few; i++)
		kt_post(f, kt_request(f, b, KMAD_METHOD_SET, i, 0, 0));
	for (i = 0; i < many; i++)
		KUNIT_ASSERT_EQ(test,
				kmad_sim_complete_send(f->fab, KT_DEV0, KT_QPN,
						       0, KMAD_WC_SUCCESS,
						       false), 0);
	for (i = 0; i < few; i++)
		KUNIT_ASSERT_EQ(test,
				kmad_sim_complete_send(f->fab, KT_DEV1, KT_QPN,
						       0, KMAD_WC_SUCCESS,
						       false), 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_cqes(f->fab, KT_DEV0, KT_QPN),
			(unsigned int)many);
	KUNIT_ASSERT_EQ(test, kt_events(f), 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_fire_cq_event(f->fab, KT_DEV0, KT_QPN,
						     false), 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_fire_cq_event(f->fab, KT_DEV1, KT_QPN,
						     false), 0);
	kt_settle(f);

	KUNIT_ASSERT_EQ(test, kt_events(f), many + few);
	for (i = 0; i < many + few; i++) {
		KUNIT_EXPECT_EQ(test, f->ev[i].status, KMAD_SEND_OK);
		if (f->ev[i].agent == b)
			n_b++;
		else
			n_a++;
	}
	KUNIT_EXPECT_EQ(test, n_a, many);
	KUNIT_EXPECT_EQ(test, n_b, few);
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(f->fab, KT_DEV0, KT_QPN), 0U);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_CQ_REQUEUES),
			req0 + 1);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_CQ_REQUEUES),
			req1);
	kmad_unregister_agent(b);
}

/* A QP that goes to error is recovered: flushed sends are posted again,
 * complete normally, and each gets one callback.
 */
static void cq_qp_error_recovered(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	s64 recoveries = kt_pstat(f, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES);
	int i;

	kt_set_notify(test);
	f->free_on_send = true;
	for (i = 0; i < 3; i++)
		kt_post(f, kt_request(f, f->agent, KMAD_METHOD_SET, i, 0, 0));
	KUNIT_ASSERT_EQ(test, kmad_sim_qp_error(f->fab, KT_DEV0, KT_QPN), 0);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES),
			recoveries + 1);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			3U);
	for (i = 0; i < 3; i++)
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 3);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, f->ev[i].status, KMAD_SEND_OK);
}

struct kt_first_arm {
	struct kmad_sim_fabric *fab;
	int hooked;		/* arm hooks set */
	int inject;		/* what the arm hook's MAD met */
};

/* A MAD arrives on device 0's QP1 as kmad first arms its CQ. */
static void kt_first_arm_inject(void *arg)
{
	struct kt_first_arm *p = arg;
	struct kmad_mad mad = {};

	mad.mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	mad.mad_hdr.mgmt_class = KT_CLASS;
	mad.mad_hdr.class_version = KT_VERSION;
	mad.mad_hdr.method = KMAD_METHOD_GET_RESP;
	p->inject = kmad_sim_inject(p->fab, KT_DEV0, KT_QPN, &mad, sizeof(mad),
				    2, KT_QPN);
}

static void kt_first_arm_qp_created(struct kmad_sim_fabric *fab,
				    unsigned int dev, u32 qpn, void *arg)
{
	struct kt_first_arm *p = arg;

	if (dev != KT_DEV0 || qpn != KT_QPN)
		return;
	p->fab = fab;
	if (!kmad_sim_set_arm_hook(fab, dev, qpn, kt_first_arm_inject, p))
		p->hooked++;
}

/* A new QP's CQ is armed before its first receive buffer is posted, so
 * that on an IBTA ("next CQE only") CQ the first receive cannot complete
 * unseen: a MAD arriving at the first arming finds no buffer, and the
 * first one after creation raises an event.
 */
static void cq_armed_before_first_receive(struct kunit *test)
{
	struct kt_first_arm p = { .inject = 1 };
	struct kmad_sim_config cfg = {
		.name = "kt_arm_",
		.topology = KMAD_SIM_TOPO_PAIR,
		.mode = KMAD_SIM_STEP,
		.notify = KMAD_SIM_NOTIFY_IBTA,
		.rq_depth = KT_RQ_DEPTH,
		.qp_created = kt_first_arm_qp_created,
		.qp_created_arg = &p,
	};
	struct kmad_sim_fabric *fab;
	struct kmad_mad mad = {};

	fab = kmad_sim_create(&cfg);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(fab));
	KUNIT_EXPECT_EQ(test, p.hooked, 1);
	KUNIT_EXPECT_EQ(test, p.inject, -ENOBUFS);
	/* Nothing sits in the CQ without an event to reap it. */
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(fab, KT_DEV0, KT_QPN), 0U);

	mad.mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	mad.mad_hdr.mgmt_class = KT_CLASS;
	mad.mad_hdr.class_version = KT_VERSION;
	mad.mad_hdr.method = KMAD_METHOD_GET_RESP;
	KUNIT_EXPECT_EQ(test, kmad_sim_inject(fab, KT_DEV0, KT_QPN, &mad,
					      sizeof(mad), 2, KT_QPN), 0);
	KUNIT_EXPECT_TRUE(test, kmad_sim_event_pending(fab, KT_DEV0, KT_QPN));
	kmad_sim_fire_cq_event(fab, KT_DEV0, KT_QPN, false);
	kmad_sim_settle(fab);
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(fab, KT_DEV0, KT_QPN), 0U);
	kmad_sim_destroy(fab);
}

/* An arm hook that counts its calls. */
static void kt_count_arm(void *arg)
{
	atomic_inc(arg);
}

/*
 * A hook the test set for an arming that never came is forgotten when the
 * device's removal starts: kmad's teardown arms the CQ once more, when the
 * hook's argument (often on the stack of a case that failed and returned)
 * may be gone.  (The teardown's arming called it.)
 */
static void cq_arm_hook_forgotten_at_removal(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	atomic_t *calls = kunit_kzalloc(test, sizeof(*calls), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, calls);
	KUNIT_ASSERT_EQ(test, kmad_sim_set_arm_hook(f->fab, KT_DEV0, KT_QPN,
						    kt_count_arm, calls), 0);
	kmad_sim_remove_device(f->fab, KT_DEV0);
	KUNIT_EXPECT_EQ(test, atomic_read(calls), 0);
	/* Nor set on a device gone (kmad_sim_qp_get() refuses it). */
	KUNIT_EXPECT_EQ(test, kmad_sim_set_arm_hook(f->fab, KT_DEV0, KT_QPN,
						    kt_count_arm, calls),
			-ENODEV);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, atomic_read(calls), 0);
}

static struct kunit_case cq_cases[] = {
	KUNIT_CASE(cq_ibta_cqe_before_rearm_not_stranded),
	KUNIT_CASE(cq_missed_events_extra_event_harmless),
	KUNIT_CASE_PARAM(cq_cqe_after_rearm_raises_event, kt_notify_gen_params),
	KUNIT_CASE_PARAM(cq_recv_cqe_at_rearm, kt_notify_gen_params),
	KUNIT_CASE(cq_empty_event),
	KUNIT_CASE(cq_budget_fairness),
	KUNIT_CASE_PARAM(cq_qp_error_recovered, kt_notify_gen_params),
	KUNIT_CASE(cq_armed_before_first_receive),
	KUNIT_CASE(cq_arm_hook_forgotten_at_removal),
	{}
};

static struct kunit_suite cq_suite = {
	.name = "kmad_cq",
	.init = kt_fix_init,
	.exit = kt_fix_exit,
	.test_cases = cq_cases,
};

kunit_test_suites(&cq_suite);

MODULE_DESCRIPTION("KUnit tests for kmad's CQ drain");
MODULE_LICENSE("GPL");
