// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_cancel: cancel and modify-timeout against every point of a send's
 * life.
 */

#include "kmad_test.h"

static s64 kt_unmatched(struct kt_fix *f)
{
	return atomic64_read(&f->port[KT_DEV0]->stats[KMAD_PSTAT_RESP_UNMATCHED]);
}

/* Seed rules: cancel before the send completion drops the response
 * reference (a timeout was set) and stops matching at once; the callback
 * still waits for the send completion.
 */
static void cancel_before_send_completion(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       1, 1000, 0);
	unsigned int refs;
	s64 unmatched = kt_unmatched(f);

	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	KUNIT_EXPECT_EQ(test, kt_state(buf, &refs), KMAD_SS_CANCELED);
	KUNIT_EXPECT_EQ(test, refs, 1U);

	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, kt_unmatched(f), unmatched + 1);

	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_CANCELED);
	kmad_free_send_buf(buf);
}

/* Seed rule: without a timeout there is no response reference to drop;
 * the send keeps its one reference until the send completion.
 */
static void cancel_without_timeout_keeps_reference(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_SET,
					       2, 0, 0);

	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	kt_expect_state(f, buf, KMAD_SS_CANCELED, 1);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);

	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_expect_only_send(f, buf, KMAD_SEND_CANCELED);
	kmad_free_send_buf(buf);
}

/* Cancel while waiting for the response ends the send, but the callback
 * never runs inside kmad_cancel_send() itself.
 */
static void cancel_while_waiting_for_response(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       3, 1000, 0);

	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_CANCELED);
	KUNIT_EXPECT_PTR_NE(test, f->ev[0].task, current);
	kmad_free_send_buf(buf);
}

/*
 * Seed rule: a send canceled while it waits for its response ends then,
 * once: its deadline goes with it, so time passing the old deadline (and
 * a retry's) brings no second callback and no resend.  The same for a
 * cancel made by modify to 0.
 */
static void cancel_waiting_no_callback_at_deadline(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *a = kt_request(f, f->agent, KMAD_METHOD_GET,
					     14, 100, 1);
	struct kmad_send_buf *b = kt_request(f, f->agent, KMAD_METHOD_GET,
					     15, 100, 1);

	kt_post(f, a);
	kt_post(f, b);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_expect_state(f, a, KMAD_SS_WAIT_RESP, 1);
	kt_expect_state(f, b, KMAD_SS_WAIT_RESP, 1);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(a), 0);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(b, 0), 0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 0, a, KMAD_SEND_CANCELED);
	kt_expect_send(f, 1, b, KMAD_SEND_CANCELED);

	kt_advance(f, 100);
	kt_advance(f, 1000);
	KUNIT_EXPECT_EQ(test, kt_events(f), 2);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			0U);
	kmad_free_send_buf(a);
	kmad_free_send_buf(b);
}

/* Once the response matched, the outcome is decided: cancel says so and
 * the ULP still gets the response, then success.
 */
static void cancel_after_response(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       4, 1000, 0);

	kt_post(f, buf);
	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), -EALREADY);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_recv(f, 0, buf, KMAD_METHOD_GET_RESP);
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/* A second cancel changes nothing: exactly one callback. */
static void cancel_twice(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       5, 1000, 0);

	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), -EALREADY);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), -EINVAL);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_CANCELED);
	kmad_free_send_buf(buf);
}

/* Seed rule: after cancel no response may match, even one arriving after
 * the callback.
 */
static void cancel_then_late_response(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       6, 1000, 0);
	s64 unmatched = kt_unmatched(f);

	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	kt_settle(f);
	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_CANCELED);
	KUNIT_EXPECT_EQ(test, kt_unmatched(f), unmatched + 1);
	kmad_free_send_buf(buf);
}

/* A new timeout counts from the modify call. */
static void cancel_modify_timeout(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       7, 100, 0);

	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 500), 0);
	kt_expect_timeout_in(f, buf, 500);
	kmad_free_send_buf(buf);
}

/* A shorter timeout, too, counts from the modify call. */
static void cancel_modify_shortens(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       10, 1000, 0);

	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_advance(f, 300);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 100), 0);
	kt_expect_timeout_in(f, buf, 100);		/* 400 ms, not 1000 */
	kmad_free_send_buf(buf);
}

/* Modify of a send still on the wire: the new timeout counts from its
 * send completion.
 */
static void cancel_modify_on_the_wire(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       11, 100, 0);

	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 500), 0);
	KUNIT_EXPECT_EQ(test, buf->timeout_ms, 500U);
	kt_advance(f, 1000);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_expect_timeout_in(f, buf, 500);
	kmad_free_send_buf(buf);
}

/* Once the outcome is decided (canceled, or a response parked until the
 * send completion) a new timeout is refused and changes nothing.
 */
static void cancel_modify_after_outcome(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *a = kt_request(f, f->agent, KMAD_METHOD_GET,
					     12, 1000, 0);
	struct kmad_send_buf *b = kt_request(f, f->agent, KMAD_METHOD_GET,
					     13, 1000, 0);

	kt_post(f, a);
	kt_post(f, b);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(a), 0);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(a, 10), -EALREADY);
	kt_respond(f, b, 0);
	kt_event(f, KT_DEV0);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(b, 10), -EALREADY);
	KUNIT_EXPECT_EQ(test, b->timeout_ms, 1000U);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 3);
	kt_expect_send(f, 0, a, KMAD_SEND_CANCELED);
	kt_expect_recv(f, 1, b, KMAD_METHOD_GET_RESP);
	kt_expect_send(f, 2, b, KMAD_SEND_OK);
	kmad_free_send_buf(a);
	kmad_free_send_buf(b);
}

/*
 * Modify to 0 is a cancel, and a response parked until the send
 * completion has decided the outcome: it is refused (-EALREADY) and
 * changes nothing, not even the buffer's timeout (only a send it cancels
 * gets 0); the ULP still gets the response, then OK.
 */
static void cancel_modify_zero_after_response(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *b = kt_request(f, f->agent, KMAD_METHOD_GET,
					     16, 1000, 0);

	kt_post(f, b);
	kt_respond(f, b, 0);
	kt_event(f, KT_DEV0);
	kt_expect_state(f, b, KMAD_SS_EARLY_RESP, 1);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(b, 0), -EALREADY);
	KUNIT_EXPECT_EQ(test, b->timeout_ms, 1000U);
	kt_expect_state(f, b, KMAD_SS_EARLY_RESP, 1);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_expect_answered(f, b);
	kmad_free_send_buf(b);
}

/* Modify to 0 is cancel, and leaves the send a timeout of 0, as
 * ib_modify_mad() does; modify of a send without a timeout is refused.
 */
static void cancel_modify_zero_and_invalid(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *a = kt_request(f, f->agent, KMAD_METHOD_GET,
					     8, 1000, 0);
	struct kmad_send_buf *b = kt_request(f, f->agent, KMAD_METHOD_SET,
					     9, 0, 0);

	KUNIT_EXPECT_EQ(test, kmad_modify_send(a, 10), -EINVAL);
	kt_post(f, a);
	kt_post(f, b);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(b, 10), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(a, 0), 0);
	KUNIT_EXPECT_EQ(test, a->timeout_ms, 0U);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(a, 0), -EALREADY);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 0, a, KMAD_SEND_CANCELED);
	kt_expect_send(f, 1, b, KMAD_SEND_OK);
	kmad_free_send_buf(a);
	kmad_free_send_buf(b);
}

/* A send still waiting for a QP slot never reached the hardware: cancel
 * ends it without a send completion.
 */
static void cancel_queued_send(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	unsigned int depth = KMAD_DEFAULT_SQ_DEPTH, i;
	struct kmad_send_buf *buf;

	f->free_on_send = true;
	for (i = 0; i < depth; i++)
		kt_post(f, kt_request(f, f->agent, KMAD_METHOD_SET, 100 + i,
				      0, 0));
	buf = kt_request(f, f->agent, KMAD_METHOD_GET, 10, 1000, 0);
	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			depth);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_CANCELED);
	for (i = 0; i < depth; i++)
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->sends), (int)depth + 1);
}

static struct kunit_case cancel_cases[] = {
	KUNIT_CASE(cancel_before_send_completion),
	KUNIT_CASE(cancel_without_timeout_keeps_reference),
	KUNIT_CASE(cancel_while_waiting_for_response),
	KUNIT_CASE(cancel_waiting_no_callback_at_deadline),
	KUNIT_CASE(cancel_after_response),
	KUNIT_CASE(cancel_twice),
	KUNIT_CASE(cancel_then_late_response),
	KUNIT_CASE(cancel_modify_timeout),
	KUNIT_CASE(cancel_modify_shortens),
	KUNIT_CASE(cancel_modify_on_the_wire),
	KUNIT_CASE(cancel_modify_after_outcome),
	KUNIT_CASE(cancel_modify_zero_after_response),
	KUNIT_CASE(cancel_modify_zero_and_invalid),
	KUNIT_CASE(cancel_queued_send),
	{}
};

static struct kunit_suite cancel_suite = {
	.name = "kmad_cancel",
	.init = kt_fix_init,
	.exit = kt_fix_exit,
	.test_cases = cancel_cases,
};

kunit_test_suites(&cancel_suite);

MODULE_DESCRIPTION("KUnit tests for kmad's cancel and modify");
MODULE_LICENSE("GPL");
