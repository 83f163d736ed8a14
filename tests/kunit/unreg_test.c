// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_unreg: unregistering an agent with many sends outstanding, on an
 * asynchronous fabric, and what changed with the smaller send object.
 *
 * Callbacks are delivered in batches (kmad_agent_work()) and unregister no
 * longer waits for a grace period; the seed contract must hold all the
 * same: every posted send gets exactly one callback, in the order the
 * flush ended them, none after kmad_unregister_agent() returns.
 */

#include <linux/delay.h>
#include <linux/slab.h>

#include "kmad_test.h"

/* More than a batch (64) many times over, and not a multiple of it. */
#define KU_MANY		4099
/* A far timeout: nothing expires during a test. */
#define KU_FAR_MS	(10 * 60 * 1000)
/*
 * Real time the KU_MANY sends may take to complete on a loaded host; the
 * whole case must end within the hung task detector's 60 s, for which
 * the KUnit runner waits on it.
 */
#define KU_FENCE_WAIT_MS	(3 * KT_ASYNC_WAIT_MS)

/* What one agent's send_handler saw. */
struct ku_log {
	struct kt_fix *f;
	unsigned int n;			/* sends posted */
	atomic_t *calls;		/* per send, by context[0] */
	atomic_t total;
	atomic_t bad_status;		/* not what the send expects */
	atomic_t out_of_order;		/* a flushed send before an earlier */
	atomic_t after_return;		/* callbacks after unregister returned */
	atomic_t last_flushed;		/* index + 1 of the latest flushed */
	bool returned;			/* unregister has returned */
};

static void ku_send_handler(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct ku_log *log = agent->context;
	unsigned long i = (unsigned long)wc->send_buf->context[0];
	enum kmad_send_status want = (unsigned long)wc->send_buf->context[1];

	if (READ_ONCE(log->returned))
		atomic_inc(&log->after_return);
	if (i < log->n)
		atomic_inc(&log->calls[i]);
	if (wc->status != want)
		atomic_inc(&log->bad_status);
	if (wc->status == KMAD_SEND_FLUSHED) {
		/* One work runs the callbacks, in done-list order. */
		if (atomic_read(&log->last_flushed) > i)
			atomic_inc(&log->out_of_order);
		atomic_set(&log->last_flushed, i + 1);
	}
	atomic_inc(&log->total);
}

/* A log for @n sends of @f, freed with the test. */
static struct ku_log *ku_log_new(struct kunit *test, struct kt_fix *f,
				 unsigned int n)
{
	struct ku_log *log;

	log = kunit_kzalloc(test, sizeof(*log), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, log);
	log->calls = kunit_kcalloc(test, n, sizeof(*log->calls), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, log->calls);
	log->f = f;
	log->n = n;
	return log;
}

static void ku_recv_handler(struct kmad_agent *agent,
			    struct kmad_send_buf *request,
			    struct kmad_recv_wc *wc)
{
	kmad_free_recv(wc);
}

static int ku_init(struct kunit *test)
{
	return kt_fix_setup(test, KMAD_SIM_ASYNC, KMAD_SIM_NOTIFY_IBTA);
}

/* A Get of @agent to a LID nobody has: it completes and is never answered. */
static struct kmad_send_buf *ku_request(struct kt_fix *f,
					struct kmad_agent *agent,
					unsigned long i, unsigned int timeout_ms,
					enum kmad_send_status want)
{
	struct kmad_send_buf *buf;

	buf = kt_request(f, agent, KMAD_METHOD_GET, i + 1, timeout_ms, 0);
	buf->dest.dlid = 0x100;
	buf->context[0] = (void *)i;
	buf->context[1] = (void *)(unsigned long)want;
	return buf;
}

/*
 * Seed rule, with many outstanding: unregister ends every send once (the
 * ones waiting for a response flushed, in posting order; the ones without
 * a timeout as they complete, OK or flushed), counts them, and no callback
 * follows its return.
 */
static void unreg_many_every_callback_once(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_port *port = f->port[KT_DEV0];
	struct kmad_send_buf **bufs, *fence;
	struct kmad_agent *agent;
	struct ku_log *log;
	unsigned int i;
	s64 flushed0;

	log = ku_log_new(test, f, KU_MANY);
	bufs = kunit_kcalloc(test, KU_MANY, sizeof(*bufs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bufs);
	agent = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, NULL,
				    ku_send_handler, ku_recv_handler, log);
	KUNIT_ASSERT_FALSE(test, IS_ERR(agent));

	for (i = 0; i < KU_MANY; i++) {
		bufs[i] = ku_request(f, agent, i, KU_FAR_MS, KMAD_SEND_FLUSHED);
		kt_post(f, bufs[i]);
	}
	/* A fence (no timeout, so it ends OK): its callback comes after
	 * every send before it completed and waits for its response.
	 */
	fence = ku_request(f, agent, KU_MANY, 0, KMAD_SEND_OK);
	kt_post(f, fence);
	KUNIT_ASSERT_TRUE(test, kt_wait_until(atomic_read(&log->total),
					      KU_FENCE_WAIT_MS));
	KUNIT_ASSERT_EQ(test, atomic_read(&log->total), 1);

	flushed0 = atomic64_read(&port->stats[KMAD_PSTAT_FLUSHED]);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(agent), 0);
	WRITE_ONCE(log->returned, true);
	KUNIT_EXPECT_EQ(test, atomic_read(&log->total), KU_MANY + 1);
	for (i = 0; i < KU_MANY; i++)
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&log->calls[i]), 1,
				    "send %u", i);
	KUNIT_EXPECT_EQ(test, atomic_read(&log->bad_status), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&log->out_of_order), 0);

	/* Nothing more comes: not from the work, not from a late CQE. */
	kt_settle(f);
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&log->after_return), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&log->total), KU_MANY + 1);
	for (i = 0; i < KU_MANY; i++)
		kmad_free_send_buf(bufs[i]);
	kmad_free_send_buf(fence);
	/* The port's counter saw each flushed send once, in batches. */
	KUNIT_EXPECT_EQ(test, atomic64_read(&port->stats[KMAD_PSTAT_FLUSHED]) -
			flushed0, (s64)KU_MANY);
}

/*
 * Sends still waiting when the flush starts end FLUSHED, in posting order,
 * one callback each, even when a handler of the unregister tries to
 * cancel or modify one of them before its callback: to the ULP they have
 * ended at the flush (-EALREADY), although the agent's work ends each
 * only just before its callback, in batches of 64 (kmad_agent_work()).
 * More than a batch, and fewer than a send-only agent's flow control
 * limit (128), so that every send is waiting, none backlogged.
 */
#define KU_LATE		120

static struct kmad_send_buf *ku_late_bufs[KU_LATE];
static int ku_late_cancel, ku_late_modify;

static void ku_late_handler(struct kmad_agent *agent,
			    struct kmad_send_wc *wc)
{
	unsigned long i = (unsigned long)wc->send_buf->context[0];

	if (i == 0) {
		ku_late_cancel = kmad_cancel_send(ku_late_bufs[KU_LATE - 1]);
		ku_late_modify = kmad_modify_send(ku_late_bufs[KU_LATE - 2],
						  1000);
	}
	ku_send_handler(agent, wc);
}

static void unreg_handler_cancels_flushed_send(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent *agent;
	struct ku_log *log;
	unsigned int i;

	log = ku_log_new(test, f, KU_LATE);
	ku_late_cancel = 1;
	ku_late_modify = 1;
	agent = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, NULL,
				    ku_late_handler, ku_recv_handler, log);
	KUNIT_ASSERT_FALSE(test, IS_ERR(agent));
	for (i = 0; i < KU_LATE; i++) {
		ku_late_bufs[i] = ku_request(f, agent, i, KU_FAR_MS,
					     KMAD_SEND_FLUSHED);
		kt_post(f, ku_late_bufs[i]);
	}
	for (i = 0; i < KU_LATE; i++)
		KUNIT_ASSERT_TRUE(test,
				  kt_wait_until(kt_state(ku_late_bufs[i], NULL) ==
						KMAD_SS_WAIT_RESP,
						KU_FENCE_WAIT_MS));

	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(agent), 0);
	WRITE_ONCE(log->returned, true);
	KUNIT_EXPECT_EQ(test, ku_late_cancel, -EALREADY);
	KUNIT_EXPECT_EQ(test, ku_late_modify, -EALREADY);
	KUNIT_EXPECT_EQ(test, atomic_read(&log->total), KU_LATE);
	for (i = 0; i < KU_LATE; i++)
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&log->calls[i]), 1,
				    "send %u", i);
	KUNIT_EXPECT_EQ(test, atomic_read(&log->bad_status), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&log->out_of_order), 0);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, atomic_read(&log->after_return), 0);
	for (i = 0; i < KU_LATE; i++)
		kmad_free_send_buf(ku_late_bufs[i]);
}

/* The counters a send_handler reads already count its own send. */
static struct kmad_agent_stats ku_seen_stats;

static void ku_stats_handler(struct kmad_agent *agent,
			     struct kmad_send_wc *wc)
{
	struct kt_fix *f = agent->context;

	kmad_agent_get_stats(agent, &ku_seen_stats);
	atomic_inc(&f->sends);
}

static void unreg_stats_before_callback(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf;
	struct kmad_agent *agent;

	agent = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, NULL,
				    ku_stats_handler, ku_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(agent));
	buf = kt_request(f, agent, KMAD_METHOD_GET, 1, KU_FAR_MS, 0);
	buf->dest.dlid = 0x100;
	kt_post(f, buf);
	KUNIT_ASSERT_TRUE(test, kt_wait_until(kt_state(buf, NULL) ==
					      KMAD_SS_WAIT_RESP,
					      KT_ASYNC_WAIT_MS));
	KUNIT_ASSERT_EQ(test, kmad_cancel_send(buf), 0);
	KUNIT_ASSERT_TRUE(test, kt_wait_until(atomic_read(&f->sends),
					      KT_ASYNC_WAIT_MS));
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, atomic_read(&f->sends), 1);
	KUNIT_EXPECT_EQ(test, ku_seen_stats.completed, 1ULL);
	KUNIT_EXPECT_EQ(test, ku_seen_stats.canceled, 1ULL);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(agent), 0);
	kmad_free_send_buf(buf);
}

/*
 * kmad_modify_send() changes the buffer's timeout_ms, as ib_modify_mad()
 * does: the send keeps no copy of it.
 */
static void unreg_modify_sets_timeout_ms(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf;

	buf = ku_request(f, f->agent, 0, KU_FAR_MS, KMAD_SEND_FLUSHED);
	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 12345), 0);
	KUNIT_EXPECT_EQ(test, buf->timeout_ms, 12345U);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(f->agent), 0);
	f->agent = NULL;
	kmad_free_send_buf(buf);
}

/* The send object's size: MAD, public buffer and tracking in 424 bytes. */
static void unreg_send_object_size(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct kmad_send_buf), (size_t)80);
	KUNIT_EXPECT_LE(test, sizeof(struct kmad_send_wr), (size_t)424);
}

static struct kunit_case unreg_cases[] = {
	KUNIT_CASE(unreg_many_every_callback_once),
	KUNIT_CASE(unreg_handler_cancels_flushed_send),
	KUNIT_CASE(unreg_stats_before_callback),
	KUNIT_CASE(unreg_modify_sets_timeout_ms),
	KUNIT_CASE(unreg_send_object_size),
	{}
};

static struct kunit_suite unreg_suite = {
	.name = "kmad_unreg",
	.init = ku_init,
	.exit = kt_fix_exit,
	.test_cases = unreg_cases,
};

kunit_test_suite(unreg_suite);

MODULE_DESCRIPTION("kmad KUnit: unregister with many sends outstanding");
MODULE_LICENSE("GPL");
