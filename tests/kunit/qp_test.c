// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_qp: a QP's error recovery and teardown, step by step on the
 * simulated fabric.
 */

#include "kmad_test.h"

/* A send canceled while the hardware holds it, then flushed by a QP
 * error, is not sent again after recovery: it ends CANCELED when its
 * flush is reaped.  A flushed send that was not canceled is replayed.
 */
static void qp_canceled_send_not_replayed(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *a, *b;

	f->free_on_send = true;
	a = kt_request(f, f->agent, KMAD_METHOD_GET, 1, 100, 0);
	b = kt_request(f, f->agent, KMAD_METHOD_SET, 2, 0, 0);
	kt_post(f, a);
	kt_post(f, b);
	KUNIT_ASSERT_EQ(test, kmad_cancel_send(a), 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_qp_error(f->fab, KT_DEV0, KT_QPN), 0);
	kt_settle(f);

	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			1U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, a, KMAD_SEND_CANCELED);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 1, b, KMAD_SEND_OK);
}

static struct kunit_case qp_cases[] = {
	KUNIT_CASE(qp_canceled_send_not_replayed),
	{}
};

static struct kunit_suite qp_suite = {
	.name = "kmad_qp",
	.init = kt_fix_init,
	.exit = kt_fix_exit,
	.test_cases = qp_cases,
};

kunit_test_suites(&qp_suite);

MODULE_DESCRIPTION("KUnit tests for kmad's QP recovery and teardown");
MODULE_LICENSE("GPL");
