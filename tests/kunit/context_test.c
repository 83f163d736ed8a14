// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_context: the calling contexts mad.h promises.
 *
 * kmad_alloc_send_buf(GFP_ATOMIC), kmad_post_send(), kmad_cancel_send(),
 * kmad_modify_send(), kmad_free_send_buf() and kmad_free_recv() may be
 * called from softirq (timer) context and with interrupts disabled under
 * the caller's own spin_lock_irqsave(), as ib_cm does.  Lockdep and
 * DEBUG_ATOMIC_SLEEP in the test kernel turn any lock taken the wrong way,
 * or any sleep, into a splat, which fails make check.
 */

#include <linux/completion.h>
#include <linux/timer.h>

#include "kmad_test.h"

/* A ULP lock taken with interrupts disabled, as ib_cm's cm.lock is. */
static DEFINE_SPINLOCK(ctx_ulp_lock);

/* Everything the ULP may call with interrupts off works, and the sends
 * end as they would from process context: one canceled, one OK.
 */
static void ctx_post_cancel_modify_under_irqsave(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_dest dest = { .dlid = kmad_port_lid(f->port[KT_DEV1]),
				  .remote_qpn = KT_QPN,
				  .remote_qkey = KMAD_QP1_QKEY };
	struct kmad_send_buf *req, *plain, *spare;
	unsigned long flags;
	int post_req, post_plain, modify, cancel;

	req = kt_request(f, f->agent, KMAD_METHOD_GET, 1, 1000, 0);
	plain = kt_request(f, f->agent, KMAD_METHOD_SET, 2, 0, 0);

	spin_lock_irqsave(&ctx_ulp_lock, flags);
	spare = kmad_alloc_send_buf(f->agent, &dest, GFP_ATOMIC);
	post_req = kmad_post_send(req);
	post_plain = kmad_post_send(plain);
	modify = kmad_modify_send(req, 5000);
	cancel = kmad_cancel_send(req);
	if (!IS_ERR(spare))
		kmad_free_send_buf(spare);
	spin_unlock_irqrestore(&ctx_ulp_lock, flags);

	KUNIT_EXPECT_FALSE(test, IS_ERR(spare));
	KUNIT_EXPECT_EQ(test, post_req, 0);
	KUNIT_EXPECT_EQ(test, post_plain, 0);
	KUNIT_EXPECT_EQ(test, modify, 0);
	KUNIT_EXPECT_EQ(test, cancel, 0);

	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 0, req, KMAD_SEND_CANCELED);
	kt_expect_send(f, 1, plain, KMAD_SEND_OK);
	kmad_free_send_buf(req);
	kmad_free_send_buf(plain);
}

/* A received MAD may be given back with interrupts disabled. */
static void ctx_free_recv_under_irqsave(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *req;
	unsigned long flags;

	f->keep_recv = true;
	req = kt_request(f, f->agent, KMAD_METHOD_GET, 3, 1000, 0);
	kt_post(f, req);
	kt_respond(f, req, 0);
	kt_event(f, KT_DEV0);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	KUNIT_ASSERT_NOT_NULL(test, f->kept_recv);

	spin_lock_irqsave(&ctx_ulp_lock, flags);
	kmad_free_recv(f->kept_recv);
	f->kept_recv = NULL;
	spin_unlock_irqrestore(&ctx_ulp_lock, flags);
	kmad_free_send_buf(req);
}

struct ctx_timer {
	struct timer_list timer;
	struct kt_fix *f;
	struct kmad_send_buf *to_post;	/* posted from the timer */
	struct kmad_send_buf *to_cancel; /* canceled from the timer */
	struct kmad_send_buf *allocated; /* allocated there, GFP_ATOMIC */
	int post, cancel, modify;
	bool in_softirq;
	struct completion ran;
};

static void ctx_timer_fn(struct timer_list *t)
{
	struct ctx_timer *ct = from_timer(ct, t, timer);
	struct kmad_dest dest = { .dlid = kmad_port_lid(ct->f->port[KT_DEV1]),
				  .remote_qpn = KT_QPN,
				  .remote_qkey = KMAD_QP1_QKEY };

	ct->in_softirq = in_softirq();
	ct->post = kmad_post_send(ct->to_post);
	ct->modify = kmad_modify_send(ct->to_post, 3000);
	ct->cancel = kmad_cancel_send(ct->to_cancel);
	ct->allocated = kmad_alloc_send_buf(ct->f->agent, &dest, GFP_ATOMIC);
	if (!IS_ERR(ct->allocated)) {
		kmad_free_send_buf(ct->allocated);
		ct->allocated = NULL;
	}
	complete(&ct->ran);
}

/* From a timer callback (softirq): post, modify, cancel, allocate and
 * free work, and the sends end as usual.
 */
static void ctx_post_cancel_from_timer(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct ctx_timer *ct = kunit_kzalloc(test, sizeof(*ct), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ct);
	ct->f = f;
	init_completion(&ct->ran);
	ct->to_cancel = kt_request(f, f->agent, KMAD_METHOD_GET, 4, 1000, 0);
	ct->to_post = kt_request(f, f->agent, KMAD_METHOD_GET, 5, 1000, 0);
	kt_post(f, ct->to_cancel);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_state(ct->to_cancel, NULL),
			KMAD_SS_WAIT_RESP);

	timer_setup(&ct->timer, ctx_timer_fn, 0);
	mod_timer(&ct->timer, jiffies + 1);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&ct->ran, 10 * HZ),
			0UL);
	del_timer_sync(&ct->timer);

	KUNIT_EXPECT_TRUE(test, ct->in_softirq);
	KUNIT_EXPECT_EQ(test, ct->post, 0);
	KUNIT_EXPECT_EQ(test, ct->modify, 0);
	KUNIT_EXPECT_EQ(test, ct->cancel, 0);
	KUNIT_EXPECT_NULL(test, ct->allocated);

	kt_settle(f);
	kt_respond(f, ct->to_post, 0);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 3);
	kt_expect_send(f, 0, ct->to_cancel, KMAD_SEND_CANCELED);
	kt_expect_recv(f, 1, ct->to_post, KMAD_METHOD_GET_RESP);
	kt_expect_send(f, 2, ct->to_post, KMAD_SEND_OK);
	kmad_free_send_buf(ct->to_cancel);
	kmad_free_send_buf(ct->to_post);
}

/* Many outstanding requests posted with interrupts off: the TID table
 * grows (from the agent's work) and every response still matches.
 */
static void ctx_many_posts_under_irqsave_match(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	const int n = 200;
	struct kmad_send_buf **bufs;
	unsigned long flags;
	int i, ret = 0;

	bufs = kunit_kcalloc(test, n, sizeof(*bufs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bufs);
	/* All n on the wire at once: no solicited flow control (its
	 * default for the fixture's agent, 128, would hold 72 back).
	 */
	kmad_agent_set_flow_limit(f->agent, 0);

	for (i = 0; i < n; i++)
		bufs[i] = kt_request(f, f->agent, KMAD_METHOD_GET, 100 + i,
				     60000, 0);
	spin_lock_irqsave(&ctx_ulp_lock, flags);
	for (i = 0; i < n && !ret; i++)
		ret = kmad_post_send(bufs[i]);
	spin_unlock_irqrestore(&ctx_ulp_lock, flags);
	KUNIT_ASSERT_EQ(test, ret, 0);
	kt_settle(f);

	for (i = 0; i < n; i++)
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	/* In batches the receive queue (KT_RQ_DEPTH) can hold. */
	for (i = 0; i < n; i++) {
		kt_respond(f, bufs[i], 0);
		if (i % 16 == 15 || i == n - 1)
			kt_event(f, KT_DEV0);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&f->sends), n);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->recvs), n);
	for (i = 0; i < n; i++)
		kmad_free_send_buf(bufs[i]);
}

static struct kunit_case ctx_cases[] = {
	KUNIT_CASE(ctx_post_cancel_modify_under_irqsave),
	KUNIT_CASE(ctx_free_recv_under_irqsave),
	KUNIT_CASE(ctx_post_cancel_from_timer),
	KUNIT_CASE(ctx_many_posts_under_irqsave_match),
	{}
};

static struct kunit_suite ctx_suite = {
	.name = "kmad_context",
	.init = kt_fix_init,
	.exit = kt_fix_exit,
	.test_cases = ctx_cases,
};

kunit_test_suites(&ctx_suite);

MODULE_DESCRIPTION("KUnit tests for the contexts kmad's API may be called from");
MODULE_LICENSE("GPL");
