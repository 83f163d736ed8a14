// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_send: the life of a send, stepped one event at a time.
 */

#include <linux/delay.h>

#include "kmad_test.h"

/* Seed rule: a send expecting a response holds 2 references; it ends with
 * the response: recv_handler (matched to the request), then send_handler.
 */
static void send_request_response(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       1, 1000, 0);
	unsigned int refs;

	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kt_state(buf, &refs), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, refs, 2U);

	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, kt_state(buf, &refs), KMAD_SS_WAIT_RESP);
	KUNIT_EXPECT_EQ(test, refs, 1U);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);

	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_recv(f, 0, buf, KMAD_METHOD_GET_RESP);
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_INIT);
	kmad_free_send_buf(buf);
}

/*
 * A response is delivered by one run of the agent's work, with other
 * sends waiting for theirs: the run does not queue itself once more for
 * the callback it is about to deliver.  Before 2026-12-01 it did
 * (agent_expire(), with deadlines in the wheel, re-armed through the path
 * for callers outside the work, which queues the work when the done list
 * is not empty): two runs per response, the second with nothing to do.
 */
static void send_response_one_work_run(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent_priv *agent = kmad_agent_priv(f->agent);
	struct kmad_send_buf *other = kt_request(f, f->agent, KMAD_METHOD_GET,
						 1, 60000, 0);
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       2, 1000, 0);
	unsigned long runs;

	kt_post(f, other);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_state(other, NULL), KMAD_SS_WAIT_RESP);
	KUNIT_ASSERT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	runs = READ_ONCE(agent->work_runs);
	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
	runs = READ_ONCE(agent->work_runs) - runs;
	KUNIT_EXPECT_EQ(test, runs, 1UL);

	KUNIT_EXPECT_EQ(test, kmad_cancel_send(other), 0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 3);
	kt_expect_send(f, 2, other, KMAD_SEND_CANCELED);
	kmad_free_send_buf(other);
	kmad_free_send_buf(buf);
}

/* Seed rule: the callback never runs before the hardware send completion;
 * a response that arrives first waits for it.
 */
static void send_early_response_waits(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       2, 1000, 0);

	kt_post(f, buf);
	kt_expect_early_response(f, buf, KMAD_WC_SUCCESS);
	kmad_free_send_buf(buf);
}

/*
 * Seed rule: a response decides a send once.  A second response to a send
 * whose first is parked (EARLY_RESP) matches nothing and is counted
 * unmatched; at the send completion the ULP gets the first response,
 * then OK, and nothing else.
 */
static void send_second_early_response_unmatched(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       45, 1000, 0);
	s64 unmatched = atomic64_read(&f->port[KT_DEV0]->stats
				      [KMAD_PSTAT_RESP_UNMATCHED]);
	s64 matched = atomic64_read(&f->port[KT_DEV0]->stats
				    [KMAD_PSTAT_RESP_MATCHED]);

	kt_post(f, buf);
	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	kt_expect_state(f, buf, KMAD_SS_EARLY_RESP, 1);
	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	kt_expect_state(f, buf, KMAD_SS_EARLY_RESP, 1);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->port[KT_DEV0]->stats
					    [KMAD_PSTAT_RESP_UNMATCHED]),
			unmatched + 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->port[KT_DEV0]->stats
					    [KMAD_PSTAT_RESP_MATCHED]),
			matched + 1);

	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_expect_answered(f, buf);
	kmad_free_send_buf(buf);
}

/* Seed rule: a send without a timeout holds 1 reference and ends at its
 * send completion.
 */
static void send_without_timeout(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_SET,
					       3, 0, 0);
	unsigned int refs;

	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kt_state(buf, &refs), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, refs, 1U);
	kmad_sim_advance_clock(f->fab, 60000);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);

	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/* The response timeout counts from the send completion, not the post:
 * a send the hardware holds for 10 s still has its 100 ms after that.
 */
static void send_timeout_starts_at_completion(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       44, 100, 0);

	kt_post(f, buf);
	kt_advance(f, 10000);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kt_expect_state(f, buf, KMAD_SS_SENDING, 2);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_expect_timeout_in(f, buf, 100);
	kmad_free_send_buf(buf);
}

/* A timeout resends with the same TID until the retries run out, then the
 * send ends once, with a response timeout.
 */
static void send_timeout_retries_keep_tid(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       4, 100, 2);
	struct kmad_mad seen;
	u64 tid;
	int i;

	kt_post(f, buf);
	tid = be64_to_cpu(buf->mad->mad_hdr.tid);
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0,
							     KT_QPN), 1U);
		KUNIT_ASSERT_EQ(test, kmad_sim_peek_send(f->fab, KT_DEV0, KT_QPN,
							 0, &seen, sizeof(seen)),
			(int)sizeof(seen));
		KUNIT_EXPECT_EQ(test, be64_to_cpu(seen.mad_hdr.tid), tid);
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
		kmad_sim_advance_clock(f->fab, 99);
		kt_settle(f);
		KUNIT_EXPECT_EQ(test, kt_events(f), 0);
		kmad_sim_advance_clock(f->fab, 1);
		kt_settle(f);
	}
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			0U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_RESP_TIMEOUT);
	kmad_free_send_buf(buf);
}

/*
 * provider.h, post_send: a send the provider refuses gets no CQE and ends
 * with LOCAL_ERROR, retries or not: the first transmission (@retry
 * false) or a retry (@retry true) refused ends the request once, at
 * once, with two retries left; no deadline runs for it afterwards and
 * nothing goes on the wire.
 */
static void kt_post_refused(struct kunit *test, bool retry)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       4, 100, 2);
	s64 errors = kt_pstat(f, KT_DEV0, KMAD_PSTAT_SEND_ERRORS);

	if (retry) {
		kt_post(f, buf);
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	}
	KUNIT_ASSERT_EQ(test, kmad_sim_fail_post_send(f->fab, KT_DEV0, KT_QPN,
						      1), 0);
	if (retry) {
		kmad_sim_advance_clock(f->fab, 100);	/* the retry */
		kt_settle(f);
	} else {
		kt_post(f, buf);	/* 0: the send is kmad's to end */
		kt_settle(f);
	}
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			0U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_LOCAL_ERROR);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_SEND_ERRORS),
			errors + 1);
	/* Ended for good: no retry, no second callback. */
	kmad_sim_advance_clock(f->fab, 1000);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			0U);
	kmad_free_send_buf(buf);
}

static void send_post_refused(struct kunit *test)
{
	kt_post_refused(test, false);
}

static void send_retry_post_refused(struct kunit *test)
{
	kt_post_refused(test, true);
}

/*
 * Post a GET with a 100 ms timeout and one retry, complete it, and let the
 * timeout resend it: on return the retry is on the wire, the send SENDING
 * again with both its references.
 */
static struct kmad_send_buf *kt_retried_request(struct kt_fix *f, u32 tid_lo)
{
	struct kunit *test = f->test;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       tid_lo, 100, 1);

	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_advance(f, 100);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			1U);
	kt_expect_state(f, buf, KMAD_SS_SENDING, 2);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	return buf;
}

/* Seed rules on a retry: a response that comes before the retry's send
 * completion waits for it, and ends the send once, OK.
 */
static void send_retry_response_before_completion(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_retried_request(f, 40);

	kt_expect_early_response(f, buf, KMAD_WC_SUCCESS);
	kmad_free_send_buf(buf);
}

/*
 * A late response to a request whose retry still waits for a send queue
 * slot ends the request at once: the retry, which the hardware never
 * held, is taken back and never sent.  Before, it waited for a slot, went
 * on the wire and the callback came only at its send completion.
 */
static void send_response_to_retry_waiting_for_slot(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	unsigned int depth = KMAD_DEFAULT_SQ_DEPTH, i;
	struct kmad_send_buf *req;

	f->free_on_send = true;
	req = kt_request(f, f->agent, KMAD_METHOD_GET, 50, 100, 1);
	kt_post(f, req);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	for (i = 0; i < depth; i++)
		kt_post(f, kt_request(f, f->agent, KMAD_METHOD_SET, 200 + i,
				      0, 0));
	kt_advance(f, 100);
	/* Retried: SENDING again, behind the full send queue. */
	kt_expect_state(f, req, KMAD_SS_SENDING, 2);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			depth);
	kt_respond(f, req, 0);
	kt_event(f, KT_DEV0);
	kt_expect_answered(f, req);
	for (i = 0; i < depth; i++)
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			0U);
	KUNIT_EXPECT_EQ(test, kt_events(f), 2 + (int)depth);
}

/* Seed rules on a retry: cancel before the retry's send completion drops
 * the response reference, and the callback waits for that completion.
 */
static void send_retry_cancel_before_completion(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_retried_request(f, 41);

	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	kt_expect_state(f, buf, KMAD_SS_CANCELED, 1);
	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_expect_only_send(f, buf, KMAD_SEND_CANCELED);
	kmad_free_send_buf(buf);
}

/*
 * A response came before the send completion, and that completion then
 * reports an error: the ULP already has the response, so the send ends
 * OK, once, at that completion (ib_mad, which hands the response over
 * before the completion, reports the completion's error instead).
 */
static void send_early_response_then_send_error(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       42, 1000, 0);

	kt_post(f, buf);
	kt_expect_early_response(f, buf, KMAD_WC_LOC_ERR);
	kmad_free_send_buf(buf);
}

/*
 * A response to @buf, whose outcome is decided and delivered, matches
 * nothing: it is counted unmatched, and the log still holds @events.
 */
static void ks_expect_late_response_unmatched(struct kt_fix *f,
					      struct kmad_send_buf *buf,
					      int events)
{
	s64 unmatched = kt_pstat(f, KT_DEV0, KMAD_PSTAT_RESP_UNMATCHED);

	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	KUNIT_EXPECT_EQ(f->test, kt_events(f), events);
	KUNIT_EXPECT_EQ(f->test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_RESP_UNMATCHED),
			unmatched + 1);
}

/* A response after the timeout callback matches nothing. */
static void send_response_after_timeout_unmatched(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       43, 100, 0);

	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_expect_timeout_in(f, buf, 100);
	ks_expect_late_response_unmatched(f, buf, 1);
	kmad_free_send_buf(buf);
}

/* kmad_agent_get_stats() counts what happened and how late the timeout
 * callback ran after the last deadline (a retry is not a callback).
 */
static void send_stats_timeout_lateness(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       7, 100, 1);
	struct kmad_agent_stats st;

	kmad_agent_get_stats(f->agent, &st);
	KUNIT_EXPECT_EQ(test, st.posted, 0ULL);
	KUNIT_EXPECT_EQ(test, st.timeout_late_max_us, 0ULL);

	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kmad_sim_advance_clock(f->fab, 140);	/* retry, 40 ms late */
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kmad_sim_advance_clock(f->fab, 130);	/* timeout, 30 ms late */
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_RESP_TIMEOUT);

	kmad_agent_get_stats(f->agent, &st);
	KUNIT_EXPECT_EQ(test, st.posted, 1ULL);
	KUNIT_EXPECT_EQ(test, st.completed, 1ULL);
	KUNIT_EXPECT_EQ(test, st.timeouts, 1ULL);
	KUNIT_EXPECT_EQ(test, st.retries, 1ULL);
	KUNIT_EXPECT_EQ(test, st.responses, 0ULL);
	KUNIT_EXPECT_EQ(test, st.timeout_late_max_us,
			(u64)jiffies_to_usecs(msecs_to_jiffies(30)));

	/* Far past what 32 bits of microseconds hold (71 minutes). */
	buf->retries = 0;
	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kmad_sim_advance_clock(f->fab, 100 + 5000000);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kmad_agent_get_stats(f->agent, &st);
	KUNIT_EXPECT_EQ(test, st.timeouts, 2ULL);
	KUNIT_EXPECT_EQ(test, st.timeout_late_max_us,
			div_u64(jiffies64_to_nsecs(msecs_to_jiffies(5000000)),
				NSEC_PER_USEC));
	kmad_free_send_buf(buf);
}

/* A send the hardware fails ends with a local error, and only it. */
static void send_error_fails_only_that_send(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *bad = kt_request(f, f->agent, KMAD_METHOD_GET,
					       5, 1000, 3);
	struct kmad_send_buf *good = kt_request(f, f->agent, KMAD_METHOD_SET,
						6, 0, 0);

	kt_post(f, bad);
	kt_post(f, good);
	kt_complete(f, KT_DEV0, KMAD_WC_LOC_ERR, false);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 0, bad, KMAD_SEND_LOCAL_ERROR);
	kt_expect_send(f, 1, good, KMAD_SEND_OK);
	kmad_free_send_buf(bad);
	kmad_free_send_buf(good);
}

/*
 * A send the hardware fails ends LOCAL_ERROR at that completion, once,
 * for good: its timeout and retries are dropped (no resend, no timeout
 * callback), and a response that comes afterwards matches nothing.
 */
static void send_error_then_late_response_unmatched(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       46, 1000, 2);

	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_LOC_ERR, false);
	kt_expect_only_send(f, buf, KMAD_SEND_LOCAL_ERROR);
	ks_expect_late_response_unmatched(f, buf, 1);
	kt_advance(f, 3000);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			0U);
	kmad_free_send_buf(buf);
}

/* kmad puts the agent's hi_tid in the upper 32 bits of a request's TID. */
static void send_request_carries_hi_tid(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       0x1234, 0, 0);
	struct kmad_mad seen;

	buf->mad->mad_hdr.tid = cpu_to_be64(0xdeadbeef00001234ULL);
	kt_post(f, buf);
	KUNIT_ASSERT_EQ(test, kmad_sim_peek_send(f->fab, KT_DEV0, KT_QPN, 0,
						 &seen, sizeof(seen)),
			(int)sizeof(seen));
	KUNIT_EXPECT_EQ(test, be64_to_cpu(seen.mad_hdr.tid),
			((u64)f->agent->hi_tid << 32) | 0x1234);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kmad_free_send_buf(buf);
}

/* Two outstanding requests of one agent may not share a TID. */
static void send_duplicate_tid_busy(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *a = kt_request(f, f->agent, KMAD_METHOD_GET,
					     7, 1000, 0);
	struct kmad_send_buf *b = kt_request(f, f->agent, KMAD_METHOD_GET,
					     7, 1000, 0);

	kt_post(f, a);
	KUNIT_EXPECT_EQ(test, kmad_post_send(b), -EBUSY);
	KUNIT_EXPECT_EQ(test, kt_state(b, NULL), KMAD_SS_INIT);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_respond(f, a, 0);
	kt_event(f, KT_DEV0);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->sends), 1);
	kmad_free_send_buf(a);
	kmad_free_send_buf(b);
}

/* Bad posts get -EINVAL and no callback. */
static void send_bad_arguments(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       8, 0, 0);

	KUNIT_EXPECT_EQ(test, kmad_post_send(NULL), -EINVAL);
	buf->mad->mad_hdr.base_version = 2;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	buf->mad->mad_hdr.mgmt_class = KT_CLASS;
	buf->mad->mad_hdr.method = KMAD_METHOD_GET_RESP;
	buf->timeout_ms = 100;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	buf->mad->mad_hdr.method = KMAD_METHOD_GET;
	buf->timeout_ms = 0;
	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	kmad_free_send_buf(buf);
}

/*
 * What a failed allocation returned, passed on by a careless error path:
 * every call that takes an agent, a send buffer or a received MAD
 * ignores an error pointer or refuses it, never dereferences it.
 */
static void send_error_pointers(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *ebuf = ERR_PTR(-ENOMEM);
	struct kmad_agent *eagent = ERR_PTR(-ENOMEM);
	struct kmad_recv_wc *ewc = ERR_PTR(-ENOMEM);
	struct kmad_send_buf *buf;
	struct kmad_dest dest = {};
	u8 path[2] = { 0, 1 };

	kmad_free_send_buf(ebuf);
	kmad_free_recv(ewc);
	KUNIT_EXPECT_EQ(test, kmad_post_send(ebuf), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(ebuf), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(ebuf, 100), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_send_buf_set_dr_path(ebuf, path, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_send_buf_seg_count(ebuf), 0U);
	KUNIT_EXPECT_NULL(test, kmad_send_buf_seg(ebuf, 1));
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(eagent), -EINVAL);
	buf = kmad_alloc_send_buf(eagent, &dest, GFP_KERNEL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(buf), -EINVAL);
	buf = kmad_alloc_send_buf_rmpp(eagent, &dest, 40, 100, GFP_KERNEL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(buf), -EINVAL);
	KUNIT_EXPECT_TRUE(test, IS_ERR(kmad_create_response(eagent, ewc,
							    GFP_KERNEL)));
	KUNIT_EXPECT_TRUE(test, IS_ERR(kmad_create_response(f->agent, ewc,
							    GFP_KERNEL)));
	KUNIT_EXPECT_EQ(test, kmad_dest_from_wc(f->port[KT_DEV0], ewc, &dest),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
}

/*
 * An SL above 15 or a P_Key index past the port's table (the sim's has 64
 * entries) gets -EINVAL and no callback; the MAD stays as it was.  The
 * highest of each is taken.
 */
static void send_bad_sl_pkey_index(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       8, 0, 0);
	u64 tid = be64_to_cpu(buf->mad->mad_hdr.tid);

	buf->dest.sl = KMAD_MAX_SL + 1;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	buf->dest.sl = 0xff;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	buf->dest.sl = KMAD_MAX_SL;
	buf->dest.pkey_index = 64;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	buf->dest.pkey_index = 0xffff;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(buf->mad->mad_hdr.tid), tid);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	buf->dest.pkey_index = 63;
	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	kmad_free_send_buf(buf);
}

/* Past the send queue depth, sends wait and go out in post order. */
static void send_overflow_keeps_order(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	unsigned int depth = KMAD_DEFAULT_SQ_DEPTH, i;
	struct kmad_send_buf **bufs;
	struct kmad_mad seen;

	bufs = kunit_kcalloc(test, depth + 2, sizeof(*bufs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bufs);
	f->free_on_send = true;
	for (i = 0; i < depth + 2; i++) {
		bufs[i] = kt_request(f, f->agent, KMAD_METHOD_SET, 100 + i, 0, 0);
		kt_post(f, bufs[i]);
	}
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			depth);
	for (i = 0; i < depth + 2; i++) {
		KUNIT_ASSERT_EQ(test, kmad_sim_peek_send(f->fab, KT_DEV0, KT_QPN,
							 0, &seen, sizeof(seen)),
			(int)sizeof(seen));
		KUNIT_EXPECT_EQ(test, (u32)be64_to_cpu(seen.mad_hdr.tid), 100 + i);
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&f->sends), (int)depth + 2);
}

/*
 * Inject into device @dev a GetResp to @req, from @slid, of class @cls;
 * fire the event and settle.
 */
static void ks_respond_from(struct kt_fix *f, unsigned int dev,
			    struct kmad_send_buf *req, u16 slid, u8 cls,
			    u8 class_version)
{
	struct kmad_mad resp = *req->mad;

	resp.mad_hdr.mgmt_class = cls;
	resp.mad_hdr.class_version = class_version;
	resp.mad_hdr.method = KMAD_METHOD_GET_RESP;
	KUNIT_ASSERT_EQ(f->test, kmad_sim_inject(f->fab, dev, KT_QPN, &resp,
						 sizeof(resp), slid, KT_QPN),
			0);
	kt_event(f, dev);
}

/*
 * A LID-routed response matches its request by TID and class, whatever
 * LID it comes from: IBTA lets a port answer from any LID of its LMC
 * range, which the requester cannot know, and ib_mad does not compare the
 * responder's LID either.  Here device 1's port answers from its LID + 1
 * (LMC 1), from its base LID to a request sent to LID + 1 (kmad itself
 * answers from the base LID), and from a LID unrelated to it.  Another
 * class with the same TID does not match.
 */
static void send_response_from_any_lid(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	u16 lid = kmad_port_lid(f->port[KT_DEV1]);
	const struct {
		u16 dlid;
		u16 slid;
	} rows[] = {
		{ lid, lid + 1 },
		{ lid + 1, lid },
		{ lid, 77 },
	};
	struct kmad_send_buf *buf;
	int i;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		buf = kt_request(f, f->agent, KMAD_METHOD_GET, 20 + i, 1000, 0);
		buf->dest.dlid = rows[i].dlid;
		kt_post(f, buf);
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
		ks_respond_from(f, KT_DEV0, buf, rows[i].slid, KT_CLASS,
				KT_VERSION);
		KUNIT_ASSERT_EQ_MSG(test, kt_events(f), 2 * (i + 1),
				    "request to LID %u, response from %u",
				    rows[i].dlid, rows[i].slid);
		kt_expect_recv(f, 2 * i, buf, KMAD_METHOD_GET_RESP);
		kt_expect_send(f, 2 * i + 1, buf, KMAD_SEND_OK);
		kmad_free_send_buf(buf);
	}

	buf = kt_request(f, f->agent, KMAD_METHOD_GET, 30, 1000, 0);
	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	ks_respond_from(f, KT_DEV0, buf, lid, KMAD_MGMT_CLASS_PERF_MGMT,
			KMAD_PMA_CLASS_VERSION);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2 * i + 1);
	kt_expect_send(f, 2 * i, buf, KMAD_SEND_CANCELED);
	kmad_free_send_buf(buf);
}

/*
 * A response matches only on the port its request went out of: TIDs carry
 * the agent's hi_tid, which is unique in all of kmad, so a response with
 * the right TID arriving at another port (here device 1's, the peer) is
 * wire input for nothing there: dropped and counted unmatched, and the
 * request still waits for its own.
 */
static void send_response_on_other_port_not_matched(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_port *p1 = f->port[KT_DEV1];
	struct kmad_send_buf *buf;
	s64 unmatched;

	buf = kt_request(f, f->agent, KMAD_METHOD_GET, 40, 1000, 0);
	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	unmatched = atomic64_read(&p1->stats[KMAD_PSTAT_RESP_UNMATCHED]);
	ks_respond_from(f, KT_DEV1, buf, kmad_port_lid(f->port[KT_DEV0]),
			KT_CLASS, KT_VERSION);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&p1->stats[KMAD_PSTAT_RESP_UNMATCHED]),
			unmatched + 1);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&p1->stats[KMAD_PSTAT_RESP_MATCHED]), 0);

	ks_respond_from(f, KT_DEV0, buf, kmad_port_lid(p1), KT_CLASS,
			KT_VERSION);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_recv(f, 0, buf, KMAD_METHOD_GET_RESP);
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/*
 * hi_tids are handed out in turn, not lowest free first: an agent
 * registered right after another unregistered does not get its hi_tid,
 * so a late response to the old agent's request (same low TID) does not
 * match the new agent's.
 */
static void send_late_response_to_unregistered_agent(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *old, *buf;
	struct kmad_agent *a, *b;
	u32 a_hi;

	a = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, NULL,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	a_hi = a->hi_tid;
	old = kt_request(f, a, KMAD_METHOD_GET, 7, 1000, 0);
	kt_post(f, old);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(a), 0);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, old, KMAD_SEND_FLUSHED);

	b = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, NULL,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(b));
	KUNIT_EXPECT_NE(test, b->hi_tid, a_hi);
	buf = kt_request(f, b, KMAD_METHOD_GET, 7, 1000, 0);
	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	/* a's response, late: its buffer still holds a's MAD and TID. */
	ks_respond_from(f, KT_DEV0, old, kmad_port_lid(f->port[KT_DEV1]),
			KT_CLASS, KT_VERSION);
	kmad_free_send_buf(old);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(b), 0);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 1, buf, KMAD_SEND_FLUSHED);
	kmad_free_send_buf(buf);
}

/* A directed-route SMP goes out on QP0 to the permissive LID with its
 * initial path, and its response (from a permissive source) matches.
 */
static void send_directed_route_smp(struct kunit *test)
{
	static const u8 path[] = { 1 };
	struct kt_fix *f = test->priv;
	struct kmad_dest dest = { };
	struct kmad_send_buf *buf;
	struct kmad_agent *smi;
	struct kmad_smp seen;

	smi = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_SMI, NULL,
				  kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(smi));
	buf = kmad_alloc_send_buf(smi, &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(buf));
	KUNIT_EXPECT_EQ(test, kmad_send_buf_set_dr_path(buf, path, 64), -EINVAL);
	KUNIT_ASSERT_EQ(test, kmad_send_buf_set_dr_path(buf, path, 1), 0);
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.class_version = 1;
	buf->mad->mad_hdr.method = KMAD_METHOD_GET;
	buf->mad->mad_hdr.attr_id = cpu_to_be16(KMAD_SMP_ATTR_NODE_INFO);
	buf->timeout_ms = 1000;
	kt_post(f, buf);
	KUNIT_ASSERT_EQ(test, kmad_sim_peek_send(f->fab, KT_DEV0, 0, 0, &seen,
						 sizeof(seen)),
			(int)sizeof(seen));
	KUNIT_EXPECT_EQ(test, seen.hop_cnt, 1);
	KUNIT_EXPECT_EQ(test, seen.initial_path[1], 1);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(seen.dr_dlid), KMAD_PERMISSIVE_LID);
	KUNIT_ASSERT_EQ(test, kmad_sim_complete_send(f->fab, KT_DEV0, 0, 0,
						     KMAD_WC_SUCCESS, false), 0);
	seen.method = KMAD_METHOD_GET_RESP;
	seen.status = cpu_to_be16(KMAD_SMP_DIRECTION);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject(f->fab, KT_DEV0, 0, &seen,
					      sizeof(seen), KMAD_PERMISSIVE_LID,
					      0), 0);
	kmad_sim_fire_cq_event(f->fab, KT_DEV0, 0, false);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_recv(f, 0, buf, KMAD_METHOD_GET_RESP);
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
	kmad_unregister_agent(smi);
}

/* A directed-route path must leave through the sending port: the SMI
 * refuses any other at post.
 */
static void send_dr_path_wrong_port(struct kunit *test)
{
	static const u8 path[] = { 2 };
	struct kt_fix *f = test->priv;
	struct kmad_dest dest = { };
	struct kmad_send_buf *buf;
	struct kmad_agent *smi;

	smi = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_SMI, NULL,
				  kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(smi));
	buf = kmad_alloc_send_buf(smi, &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(buf));
	KUNIT_ASSERT_EQ(test, kmad_send_buf_set_dr_path(buf, path, 1), 0);
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.class_version = 1;
	buf->mad->mad_hdr.method = KMAD_METHOD_GET;
	buf->mad->mad_hdr.attr_id = cpu_to_be16(KMAD_SMP_ATTR_NODE_INFO);
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, 0), 0U);
	kmad_free_send_buf(buf);
	kmad_unregister_agent(smi);
}

/* An agent on device 0's QP0, for directed-route SMPs. */
static struct kmad_agent *ks_smi_agent(struct kt_fix *f)
{
	struct kmad_agent *smi;

	smi = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_SMI, NULL,
				  kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(f->test, IS_ERR(smi));
	return smi;
}

/* A directed-route Get(NodeInfo) out of port 1, one hop, TID @tid_lo. */
static struct kmad_send_buf *ks_dr_get(struct kt_fix *f,
				       struct kmad_agent *smi, u32 tid_lo,
				       unsigned int timeout_ms)
{
	static const u8 path[] = { 1 };
	struct kmad_dest dest = { };
	struct kmad_send_buf *buf;

	buf = kmad_alloc_send_buf(smi, &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(f->test, IS_ERR(buf));
	KUNIT_ASSERT_EQ(f->test, kmad_send_buf_set_dr_path(buf, path, 1), 0);
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.class_version = KMAD_SMP_CLASS_VERSION;
	buf->mad->mad_hdr.method = KMAD_METHOD_GET;
	buf->mad->mad_hdr.tid = cpu_to_be64(tid_lo);
	buf->mad->mad_hdr.attr_id = cpu_to_be16(KMAD_SMP_ATTR_NODE_INFO);
	buf->timeout_ms = timeout_ms;
	return buf;
}

/* Complete the oldest pending send of device 0's QP0 and run the drain. */
static void ks_complete_smi(struct kt_fix *f)
{
	KUNIT_ASSERT_EQ(f->test, kmad_sim_complete_send(f->fab, KT_DEV0, 0, 0,
							KMAD_WC_SUCCESS, false),
			0);
	kmad_sim_fire_cq_event(f->fab, KT_DEV0, 0, false);
	kt_settle(f);
}

/*
 * A TID table whose new buckets cannot be allocated keeps its size and
 * works on with longer chains; that size is not asked for again with
 * every post (each would run the agent's work and try once more), only
 * when the count wants another.  300 requests outstanding want 7 bits
 * past 128 and 8 past 256: two attempts, both failing here.  Before the
 * fix every post past the 129th tried again (about 170 failures).  The
 * sends are freed by their callbacks, which the fixture's port removal
 * brings (a send never called back would leak, which the module's
 * unload reports).
 */
static void send_tid_resize_failure_not_retried(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent_priv *priv = kmad_agent_priv(f->agent);
	struct kmad_send_buf *buf;
	unsigned long runs;
	unsigned int i;

	f->free_on_send = true;
	kt_fail_allocs(KMAD_ALLOC_TID_BUCKETS, 1000);
	runs = READ_ONCE(priv->work_runs);
	for (i = 0; i < 300; i++) {
		buf = kt_request(f, f->agent, KMAD_METHOD_GET, i + 1, 60000, 0);
		kt_post(f, buf);
		kt_settle(f);
	}
	KUNIT_EXPECT_EQ(test, kt_allocs_failed(KMAD_ALLOC_TID_BUCKETS), 2);
	KUNIT_EXPECT_LT(test, READ_ONCE(priv->work_runs) - runs, 20UL);
	KUNIT_EXPECT_EQ(test, READ_ONCE(priv->tids.bits), KMAD_TID_MIN_BITS);
}

/*
 * The same for a shrink: 300 requests grow the table to 8 bits; with
 * allocations failing, cancelling 280 of them asks for 7 bits once (at
 * 31 outstanding), and 50 more requests posted and cancelled around 20
 * outstanding do not ask again.  Before the fix the failed shrink was
 * forgotten at the next check (the rule that forgets a failed growth
 * when the count halves held at once for a shrink): every post and
 * cancel after it ran the work and failed again.
 */
static void send_tid_shrink_failure_not_retried(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent_priv *priv = kmad_agent_priv(f->agent);
	struct kmad_send_buf **bufs, *buf;
	unsigned int i;

	bufs = kunit_kcalloc(test, 300, sizeof(*bufs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bufs);
	f->free_on_send = true;
	for (i = 0; i < 300; i++) {
		bufs[i] = kt_request(f, f->agent, KMAD_METHOD_GET, i + 1, 60000,
				     0);
		kt_post(f, bufs[i]);
		kt_settle(f);
	}
	KUNIT_ASSERT_EQ(test, READ_ONCE(priv->tids.bits), 8U);
	kt_fail_allocs(KMAD_ALLOC_TID_BUCKETS, 1000);
	for (i = 0; i < 280; i++) {
		KUNIT_ASSERT_EQ(test, kmad_cancel_send(bufs[i]), 0);
		kt_settle(f);
	}
	KUNIT_EXPECT_EQ(test, kt_allocs_failed(KMAD_ALLOC_TID_BUCKETS), 1);
	for (i = 0; i < 50; i++) {
		buf = kt_request(f, f->agent, KMAD_METHOD_GET, 1000 + i, 60000,
				 0);
		kt_post(f, buf);
		kt_settle(f);
		KUNIT_ASSERT_EQ(test, kmad_cancel_send(buf), 0);
		kt_settle(f);
	}
	KUNIT_EXPECT_EQ(test, kt_allocs_failed(KMAD_ALLOC_TID_BUCKETS), 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(priv->tids.bits), 8U);
}

/*
 * A struct kmad_send_buf the caller made itself (kmad did not allocate
 * it, its mad pointing at the caller's MAD) is refused by every call that
 * takes a send buffer before anything past it is read: -EINVAL, 0 or
 * NULL.  (kmad_free_send_buf() warns, which a test cannot show under
 * panic_on_warn.)  It is allocated at its exact size, so that a read past
 * it is a KASAN report; before the fix cancel, modify and the segment
 * calls read the send's state and RMPP flag from beyond it.
 */
static void send_foreign_buf_refused(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent *smi = ks_smi_agent(f);
	static const u8 path[] = { 1 };
	struct kmad_send_buf *b;
	struct kmad_mad *m;

	b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_NOT_NULL(test, m);
	b->agent = f->agent;
	b->mad = m;
	b->timeout_ms = 100;
	KUNIT_EXPECT_EQ(test, kmad_post_send(b), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(b), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(b, 100), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(b, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, b->timeout_ms, 100U);
	KUNIT_EXPECT_EQ(test, kmad_send_buf_seg_count(b), 0U);
	KUNIT_EXPECT_NULL(test, kmad_send_buf_seg(b, 1));
	b->agent = smi;
	KUNIT_EXPECT_EQ(test, kmad_send_buf_set_dr_path(b, path, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, m->mad_hdr.mgmt_class, 0);
	kmad_unregister_agent(smi);
}

/*
 * A directed-route SMP that starts LID-routed (its DrSLID not permissive)
 * takes no directed step at post, but its hop fields are still checked
 * (IBTA C14-6: HopCount at most 63, HopPointer at most HopCount + 1):
 * -EINVAL, unchanged, nothing sent.  Before the fix both were posted.
 */
static void send_dr_lid_routed_start_hops_checked(struct kunit *test)
{
	static const u8 path[] = { 1 };
	struct kt_fix *f = test->priv;
	struct kmad_agent *smi = ks_smi_agent(f);
	struct kmad_dest dest = { };
	struct kmad_send_buf *buf;
	struct kmad_smp *smp, before;

	buf = kmad_alloc_send_buf(smi, &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(buf));
	KUNIT_ASSERT_EQ(test, kmad_send_buf_set_dr_path(buf, path, 1), 0);
	smp = (struct kmad_smp *)buf->mad;
	smp->base_version = KMAD_MGMT_BASE_VERSION;
	smp->class_version = KMAD_SMP_CLASS_VERSION;
	smp->method = KMAD_METHOD_GET;
	smp->attr_id = cpu_to_be16(KMAD_SMP_ATTR_NODE_INFO);
	smp->dr_slid = cpu_to_be16(kmad_port_lid(f->port[KT_DEV0]));
	buf->dest.dlid = kmad_port_lid(f->port[KT_DEV1]);

	smp->hop_cnt = KMAD_SMP_DR_MAX_HOP_CNT + 1;
	before = *smp;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	KUNIT_EXPECT_EQ(test, memcmp(smp, &before, sizeof(before)), 0);

	smp->hop_cnt = 1;
	smp->hop_ptr = 3;
	before = *smp;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	KUNIT_EXPECT_EQ(test, memcmp(smp, &before, sizeof(before)), 0);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, 0), 0U);

	/* In range, it goes (by LID, no directed step here). */
	smp->hop_ptr = 0;
	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, 0), 1U);
	ks_complete_smi(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
	kmad_unregister_agent(smi);
}

/*
 * The SMI send step advances a directed-route SMP's hop pointer when it
 * is posted (mad.h): posted again as it is, a two-hop SMP is refused
 * (-EINVAL); given its path again with kmad_send_buf_set_dr_path(), it
 * goes out as the first post did.
 */
static void send_dr_repost_sets_path_again(struct kunit *test)
{
	static const u8 path[] = { 1, 1 };
	struct kt_fix *f = test->priv;
	struct kmad_agent *smi = ks_smi_agent(f);
	struct kmad_send_buf *buf = ks_dr_get(f, smi, 9, 0);
	struct kmad_smp first, again;

	KUNIT_ASSERT_EQ(test, kmad_send_buf_set_dr_path(buf, path, 2), 0);
	kt_post(f, buf);
	KUNIT_ASSERT_EQ(test, kmad_sim_peek_send(f->fab, KT_DEV0, 0, 0, &first,
						 sizeof(first)),
			(int)sizeof(first));
	ks_complete_smi(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	KUNIT_ASSERT_EQ(test, kmad_send_buf_set_dr_path(buf, path, 2), 0);
	kt_post(f, buf);
	KUNIT_ASSERT_EQ(test, kmad_sim_peek_send(f->fab, KT_DEV0, 0, 0, &again,
						 sizeof(again)),
			(int)sizeof(again));
	KUNIT_EXPECT_EQ(test, again.hop_ptr, first.hop_ptr);
	KUNIT_EXPECT_EQ(test, again.hop_cnt, 2);
	ks_complete_smi(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 2);
	kmad_free_send_buf(buf);
	kmad_unregister_agent(smi);
}

/*
 * A post that fails leaves the MAD byte for byte as the ULP left it: a
 * directed-route SMP refused for a duplicate TID keeps its hop pointer and
 * its TID.  Posted again once the first one ended, it goes out with the
 * hop pointer one step on, as a first post does.
 */
static void send_failed_post_leaves_mad_untouched(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent *smi = ks_smi_agent(f);
	struct kmad_send_buf *a = ks_dr_get(f, smi, 7, 1000);
	struct kmad_send_buf *b = ks_dr_get(f, smi, 7, 1000);
	struct kmad_mad before;
	struct kmad_smp seen;

	kt_post(f, a);
	before = *b->mad;
	KUNIT_EXPECT_EQ(test, kmad_post_send(b), -EBUSY);
	KUNIT_EXPECT_EQ(test, ((struct kmad_smp *)b->mad)->hop_ptr, 0);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(b->mad->mad_hdr.tid), 7ULL);
	KUNIT_EXPECT_EQ(test, memcmp(&before, b->mad, sizeof(before)), 0);

	/* End the first one: sent, then canceled. */
	ks_complete_smi(f);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(a), 0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, a, KMAD_SEND_CANCELED);

	kt_post(f, b);
	KUNIT_ASSERT_EQ(test, kmad_sim_peek_send(f->fab, KT_DEV0, 0, 0, &seen,
						 sizeof(seen)),
			(int)sizeof(seen));
	KUNIT_EXPECT_EQ(test, seen.hop_ptr, 1);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(seen.tid),
			((u64)smi->hi_tid << 32) | 7);
	ks_complete_smi(f);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(b), 0);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 2);
	kmad_free_send_buf(a);
	kmad_free_send_buf(b);
	kmad_unregister_agent(smi);
}

/* What kmad_post_send() must take for a response, and for a request. */
struct ks_resp_row {
	const char *name;
	u8 mgmt_class;
	u8 method;
	u32 attr_mod;
	bool response;
};

static const struct ks_resp_row ks_resp_rows[] = {
	{ "bm_send_resp_bit", KMAD_MGMT_CLASS_BM, KMAD_METHOD_SEND, 1, true },
	{ "bm_get_resp_bit", KMAD_MGMT_CLASS_BM, KMAD_METHOD_GET, 1, true },
	{ "bm_send_request", KMAD_MGMT_CLASS_BM, KMAD_METHOD_SEND, 2, false },
	{ "sa_get_attr_mod_1", KT_CLASS, KMAD_METHOD_GET, 1, false },
	{ "sa_get_resp", KT_CLASS, KMAD_METHOD_GET_RESP, 0, true },
	{ "trap_repress", KT_CLASS, KMAD_METHOD_TRAP_REPRESS, 0, true },
};

/*
 * Post judges "response" as receive does (kmad_mad_is_response()):
 * baseboard management marks a response with bit 0 of the
 * AttributeModifier, whatever the method.  A response keeps the TID the
 * ULP gave it (the requester's) and may not wait for a response; a
 * request gets the agent's hi_tid.
 */
static void send_response_judged_by_header(struct kunit *test)
{
	const u64 tid = 0xabcd000000000055ULL;
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf;
	struct kmad_mad seen;
	u64 want;
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(ks_resp_rows); i++) {
		const struct ks_resp_row *row = &ks_resp_rows[i];

		want = row->response ? tid :
		       ((u64)f->agent->hi_tid << 32) | (tid & 0xffffffffULL);
		buf = kt_request(f, f->agent, row->method, 0, 0, 0);
		buf->mad->mad_hdr.mgmt_class = row->mgmt_class;
		buf->mad->mad_hdr.tid = cpu_to_be64(tid);
		buf->mad->mad_hdr.attr_mod = cpu_to_be32(row->attr_mod);
		if (row->response) {
			buf->timeout_ms = 100;
			ret = kmad_post_send(buf);
			KUNIT_EXPECT_EQ_MSG(test, ret, -EINVAL, "%s", row->name);
			if (!ret) {
				kmad_cancel_send(buf);
				kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
			}
			buf->timeout_ms = 0;
		}
		kt_post(f, buf);
		KUNIT_ASSERT_EQ(test, kmad_sim_peek_send(f->fab, KT_DEV0, KT_QPN,
							 0, &seen, sizeof(seen)),
				(int)sizeof(seen));
		KUNIT_EXPECT_EQ_MSG(test, be64_to_cpu(seen.mad_hdr.tid), want,
				    "%s", row->name);
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
		kmad_free_send_buf(buf);
	}
}

/* Expect kmad_post_send() to refuse @buf; end it if it was posted. */
static void ks_post_refused(struct kt_fix *f, struct kmad_send_buf *buf)
{
	int ret = kmad_post_send(buf);

	KUNIT_EXPECT_EQ_MSG(f->test, ret, -EINVAL, "timeout_ms %u",
			    buf->timeout_ms);
	if (!ret) {
		kmad_cancel_send(buf);
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	}
}

/*
 * timeout_ms runs up to KMAD_MAX_TIMEOUT_MS (msecs_to_jiffies() makes
 * anything larger an infinite timeout).  Post and modify refuse one more;
 * the largest is accepted by both and expires exactly on time.
 */
static void send_timeout_range(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       40, KMAD_MAX_TIMEOUT_MS + 1U, 0);

	ks_post_refused(f, buf);
	buf->timeout_ms = UINT_MAX;
	ks_post_refused(f, buf);
	KUNIT_ASSERT_EQ(test, kt_events(f), 0);

	buf->timeout_ms = KMAD_MAX_TIMEOUT_MS;
	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, KMAD_MAX_TIMEOUT_MS + 1U),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, KMAD_MAX_TIMEOUT_MS), 0);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, KMAD_MAX_TIMEOUT_MS + 1U),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, KMAD_MAX_TIMEOUT_MS), 0);
	kmad_sim_advance_clock(f->fab, KMAD_MAX_TIMEOUT_MS - 1);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kmad_sim_advance_clock(f->fab, 1);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_RESP_TIMEOUT);
	kmad_free_send_buf(buf);
}

/* Entries the agent's deadline wheel has placed again since it began. */
static u64 ks_wheel_moves(struct kmad_agent *agent)
{
	struct kmad_agent_priv *priv = kmad_agent_priv(agent);
	unsigned long flags;
	u64 moves;

	spin_lock_irqsave(&priv->lock, flags);
	moves = priv->deadlines.moves;
	spin_unlock_irqrestore(&priv->lock, flags);
	return moves;
}

/*
 * The provider's clock jumps UINT_MAX ms ahead (about 2^62 ticks: an
 * infinite timeout to msecs_to_jiffies()), past sends waiting 100 ms, a
 * minute and KMAD_MAX_TIMEOUT_MS.  They all time out at once, in deadline
 * order, and the wheel placed each again at most once per level, not once
 * per 2^24 ticks jumped.  A send posted after the jump times out 100 ms
 * later.
 */
static void send_clock_jump(struct kunit *test)
{
	static const unsigned int timeouts[] = {
		KMAD_MAX_TIMEOUT_MS, 60000, 100,
	};
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf[ARRAY_SIZE(timeouts)], *late;
	struct kmad_agent_stats st;
	u64 moves;
	int i;

	for (i = 0; i < ARRAY_SIZE(timeouts); i++) {
		buf[i] = kt_request(f, f->agent, KMAD_METHOD_GET, 50 + i,
				    timeouts[i], 0);
		kt_post(f, buf[i]);
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	}
	moves = ks_wheel_moves(f->agent);
	kmad_sim_advance_clock(f->fab, UINT_MAX);
	kt_settle(f);
	KUNIT_EXPECT_LE(test, ks_wheel_moves(f->agent) - moves,
			(u64)ARRAY_SIZE(timeouts) * KMAD_WHEEL_LEVELS);
	KUNIT_ASSERT_EQ(test, kt_events(f), 3);
	kt_expect_send(f, 0, buf[2], KMAD_SEND_RESP_TIMEOUT);
	kt_expect_send(f, 1, buf[1], KMAD_SEND_RESP_TIMEOUT);
	kt_expect_send(f, 2, buf[0], KMAD_SEND_RESP_TIMEOUT);
	/*
	 * The 100 ms send timed out about MAX_JIFFY_OFFSET ticks late, more
	 * nanoseconds than u64 counts: saturated (it was the product's
	 * overflow, a far smaller number).
	 */
	kmad_agent_get_stats(f->agent, &st);
	KUNIT_EXPECT_EQ(test, st.timeout_late_max_us, U64_MAX);

	late = kt_request(f, f->agent, KMAD_METHOD_GET, 60, 100, 0);
	kt_post(f, late);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kmad_sim_advance_clock(f->fab, 99);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 3);
	kmad_sim_advance_clock(f->fab, 1);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 4);
	kt_expect_send(f, 3, late, KMAD_SEND_RESP_TIMEOUT);
	for (i = 0; i < ARRAY_SIZE(timeouts); i++)
		kmad_free_send_buf(buf[i]);
	kmad_free_send_buf(late);
}

#define KS_EXPIRE_N	200

struct ks_expire {
	struct kunit *test;
	struct kmad_send_buf *cancel;	/* canceled after the first batch */
	int batches;			/* hook calls */
};

static struct ks_expire *ks_expire_ctx;

static void ks_expire_batch_hook(struct kmad_agent_priv *agent)
{
	struct ks_expire *x = ks_expire_ctx;

	if (x->batches++ == 0)
		KUNIT_EXPECT_EQ(x->test, kmad_cancel_send(x->cancel), 0);
}

/*
 * @n requests (TIDs @tid on, @timeout_ms each), flow control off, freed
 * at their callbacks, every send completion reaped: all wait for their
 * response, no callback yet.
 */
static struct kmad_send_buf **ks_post_requests(struct kt_fix *f, int n,
					       u32 tid,
					       unsigned int timeout_ms)
{
	struct kunit *test = f->test;
	struct kmad_send_buf **bufs;
	int i;

	bufs = kunit_kcalloc(test, n, sizeof(*bufs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bufs);
	kmad_agent_set_flow_limit(f->agent, 0);
	f->free_on_send = true;
	for (i = 0; i < n; i++) {
		bufs[i] = kt_request(f, f->agent, KMAD_METHOD_GET, tid + i,
				     timeout_ms, 0);
		kt_post(f, bufs[i]);
	}
	while (kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN)) {
		while (!kmad_sim_complete_send(f->fab, KT_DEV0, KT_QPN, 0,
					       KMAD_WC_SUCCESS, false))
			;
		kt_event(f, KT_DEV0);
	}
	KUNIT_ASSERT_EQ(test, kt_events(f), 0);
	return bufs;
}

/*
 * Deadlines that fall in one tick are ended in batches of
 * KMAD_EXPIRE_BATCH, each in its own hold of the agent lock (interrupts
 * off), not all in one: 200 sends time out together.  Between two
 * batches the lock is free, and a cancel of a send still due wins over
 * its timeout; the batches after it read the wheel afresh.
 */
static void send_expire_in_batches(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct ks_expire x = { .test = test };
	struct kmad_send_buf **bufs;
	int i, timeouts = 0;

	bufs = ks_post_requests(f, KS_EXPIRE_N, 1000, 10);
	x.cancel = bufs[KS_EXPIRE_N - 1];
	ks_expire_ctx = &x;
	WRITE_ONCE(kmad_test_expire_batch_hook, ks_expire_batch_hook);
	kt_advance(f, 10);
	WRITE_ONCE(kmad_test_expire_batch_hook, NULL);
	/* 64 ended, the cancel, then 135 due left: 64, 64 and 7. */
	KUNIT_EXPECT_EQ(test, x.batches,
			(int)DIV_ROUND_UP(KS_EXPIRE_N - 1, KMAD_EXPIRE_BATCH) - 1);
	KUNIT_ASSERT_EQ(test, kt_events(f), KS_EXPIRE_N);
	kt_expect_send(f, KMAD_EXPIRE_BATCH, x.cancel, KMAD_SEND_CANCELED);
	for (i = 0; i < KS_EXPIRE_N; i++)
		timeouts += f->ev[i].status == KMAD_SEND_RESP_TIMEOUT;
	KUNIT_EXPECT_EQ(test, timeouts, KS_EXPIRE_N - 1);
}

#define KS_RESIZE_N	300

/* Forget the handler calls logged so far (the log holds KT_MAX_EVENTS). */
static void ks_clear_events(struct kt_fix *f)
{
	spin_lock(&f->lock);
	f->n = 0;
	spin_unlock(&f->lock);
}

/*
 * Requests outstanding when the agent's TID table grows are found in it
 * afterwards: 300 waiting requests take the table from 2^6 buckets (more
 * than 128 entries: 2^7; more than 256: 2^8, tid.c) and the agent's work
 * moves them to the buckets of the new size.  Each response then matches
 * its request: recv_handler, then OK, and none is unmatched.
 */
static void send_tid_resize_keeps_matching(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent_priv *agent = kmad_agent_priv(f->agent);
	struct kmad_send_buf **bufs;
	unsigned long flags;
	unsigned int bits;
	s64 unmatched;
	int i;

	bufs = ks_post_requests(f, KS_RESIZE_N, 3000, 10000);
	spin_lock_irqsave(&agent->lock, flags);
	bits = agent->tids.bits;
	spin_unlock_irqrestore(&agent->lock, flags);
	KUNIT_ASSERT_EQ(test, bits, KMAD_TID_MIN_BITS + 2U);

	unmatched = kt_pstat(f, KT_DEV0, KMAD_PSTAT_RESP_UNMATCHED);
	for (i = 0; i < KS_RESIZE_N; i++) {
		KUNIT_ASSERT_EQ(test, kt_state(bufs[i], NULL),
				KMAD_SS_WAIT_RESP);
		ks_clear_events(f);
		kt_respond(f, bufs[i], 0);
		kt_event(f, KT_DEV0);
		KUNIT_ASSERT_EQ_MSG(test, kt_events(f), 2, "request %d", i);
		kt_expect_recv(f, 0, bufs[i], KMAD_METHOD_GET_RESP);
		kt_expect_send(f, 1, bufs[i], KMAD_SEND_OK);
	}
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_RESP_UNMATCHED),
			unmatched);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->recvs), KS_RESIZE_N);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->sends), KS_RESIZE_N);
}

/*
 * When a timer queued with @delay fires at the latest, in ticks from now,
 * by the rule of Linux 6.1's timer wheel (kernel/time/timer.c,
 * calc_wheel_index() and calc_index()): level n >= 1 holds delays from
 * 63 << 3(n - 1) and rounds the expiry up to the next multiple of 8^n,
 * level 0 to the next tick.
 */
static unsigned long ks_linux_fires_by(unsigned long delay)
{
	unsigned int shift = 0;

	while (delay >= (63UL << shift))
		shift += 3;
	return delay + (1UL << shift);
}

/*
 * kmad_timer_delay() (agent.c) queues the agent's work early enough that
 * Linux's timer fires it by the time &kmad_agent_priv.timer_at promises:
 * for every delay up to 2^22 ticks, a tick late at most (below 63 ticks,
 * where Linux itself fires a tick after the expiry), else on time.
 */
static void send_timer_delay_by_deadline(struct kunit *test)
{
	unsigned long d, fires, late = 0, first = 0;

	for (d = 1; d < (1UL << 22); d++) {
		fires = ks_linux_fires_by(kmad_timer_delay(d));
		if (fires <= d || (d < 63 && fires == d + 1))
			continue;
		if (!late++)
			first = d;
	}
	KUNIT_EXPECT_EQ_MSG(test, late, 0UL, "first late delay %lu", first);
	/* Queued as asked, a 4104-tick delay could fire 512 ticks late. */
	KUNIT_EXPECT_EQ(test, ks_linux_fires_by(4104), 4104UL + 512);
}

static struct kunit_case send_cases[] = {
	KUNIT_CASE(send_request_response),
	KUNIT_CASE(send_response_one_work_run),
	KUNIT_CASE(send_early_response_waits),
	KUNIT_CASE(send_second_early_response_unmatched),
	KUNIT_CASE(send_without_timeout),
	KUNIT_CASE(send_timeout_starts_at_completion),
	KUNIT_CASE(send_timeout_retries_keep_tid),
	KUNIT_CASE(send_post_refused),
	KUNIT_CASE(send_retry_post_refused),
	KUNIT_CASE(send_retry_response_before_completion),
	KUNIT_CASE(send_retry_cancel_before_completion),
	KUNIT_CASE(send_response_to_retry_waiting_for_slot),
	KUNIT_CASE(send_early_response_then_send_error),
	KUNIT_CASE(send_response_after_timeout_unmatched),
	KUNIT_CASE(send_stats_timeout_lateness),
	KUNIT_CASE(send_error_fails_only_that_send),
	KUNIT_CASE(send_error_then_late_response_unmatched),
	KUNIT_CASE(send_request_carries_hi_tid),
	KUNIT_CASE(send_duplicate_tid_busy),
	KUNIT_CASE(send_bad_arguments),
	KUNIT_CASE(send_bad_sl_pkey_index),
	KUNIT_CASE(send_error_pointers),
	KUNIT_CASE(send_overflow_keeps_order),
	KUNIT_CASE(send_response_from_any_lid),
	KUNIT_CASE(send_response_on_other_port_not_matched),
	KUNIT_CASE(send_late_response_to_unregistered_agent),
	KUNIT_CASE(send_directed_route_smp),
	KUNIT_CASE(send_dr_path_wrong_port),
	KUNIT_CASE(send_dr_lid_routed_start_hops_checked),
	KUNIT_CASE(send_tid_resize_failure_not_retried),
	KUNIT_CASE(send_tid_shrink_failure_not_retried),
	KUNIT_CASE(send_foreign_buf_refused),
	KUNIT_CASE(send_failed_post_leaves_mad_untouched),
	KUNIT_CASE(send_dr_repost_sets_path_again),
	KUNIT_CASE(send_response_judged_by_header),
	KUNIT_CASE(send_timeout_range),
	KUNIT_CASE(send_clock_jump),
	KUNIT_CASE(send_expire_in_batches),
	KUNIT_CASE(send_tid_resize_keeps_matching),
	KUNIT_CASE(send_timer_delay_by_deadline),
	{}
};

static struct kunit_suite send_suite = {
	.name = "kmad_send",
	.init = kt_fix_init,
	.exit = kt_fix_exit,
	.test_cases = send_cases,
};

/*
 * Post @buf to LID 0x100, which nobody has (the send completes, no
 * response comes), and wait until it waits for its response.
 */
static void ks_post_waiting(struct kt_fix *f, struct kmad_send_buf *buf)
{
	buf->dest.dlid = 0x100;
	kt_post(f, buf);
	KUNIT_ASSERT_TRUE(f->test, kt_wait_until(kt_state(buf, NULL) ==
						 KMAD_SS_WAIT_RESP,
						 KT_ASYNC_WAIT_MS));
}

/* The later send's timeout: far beyond any stall of a loaded guest. */
#define KS_LATE_MS	60000
/* The sooner one's. */
#define KS_SOON_MS	50
/*
 * How long the sooner send may take to time out, on the real clock: a
 * wheel that held it back to the later send's deadline (or the cascade
 * before it, some 56 s on) would take far longer; a loaded guest, which
 * delays the timer and the work by up to seconds, takes less.
 */
#define KS_SOON_BOUND_MS	(KS_LATE_MS / 3)

/*
 * Real clock (async fabric): the agent's work is queued for its wheel's
 * next event, at or before its next deadline; a send with a sooner
 * deadline moves it up and times out on time while the later one still
 * waits.  Both go to a LID nobody has.
 *
 * "On time" is what the real clock allows to assert: not before its
 * deadline, and long before the later send's.  An earlier version
 * expected the timeout within 1 s of the post, which a loaded guest
 * (timer and agent work delayed) can exceed.
 */
static void send_async_sooner_deadline(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent_priv *agent = kmad_agent_priv(f->agent);
	struct kmad_send_buf *late = kt_request(f, f->agent, KMAD_METHOD_GET,
						1, KS_LATE_MS, 0);
	struct kmad_send_buf *soon = kt_request(f, f->agent, KMAD_METHOD_GET,
						2, KS_SOON_MS, 0);
	u64 armed, late_deadline;
	unsigned long t0, flags;
	unsigned int took;

	soon->dest.dlid = 0x100;
	ks_post_waiting(f, late);
	spin_lock_irqsave(&agent->lock, flags);
	armed = agent->timer_at;
	late_deadline = kmad_send_wr(late)->deadline_node.expires;
	spin_unlock_irqrestore(&agent->lock, flags);
	KUNIT_EXPECT_LE(test, armed, late_deadline);
	KUNIT_EXPECT_GT(test, armed, get_jiffies_64() + msecs_to_jiffies(1000));

	t0 = jiffies;
	kt_post(f, soon);
	KUNIT_ASSERT_TRUE(test, kt_wait_until(kt_events(f) >= 1,
					      KS_SOON_BOUND_MS));
	took = jiffies_to_msecs(jiffies - t0);
	kunit_info(test, "the sooner send timed out after %u ms\n", took);
	KUNIT_EXPECT_GE(test, took, KS_SOON_MS);
	KUNIT_EXPECT_LT(test, took, KS_SOON_BOUND_MS);
	kt_expect_send(f, 0, soon, KMAD_SEND_RESP_TIMEOUT);
	/* After it, the work is queued again, not past the late one. */
	spin_lock_irqsave(&agent->lock, flags);
	armed = agent->timer_at;
	spin_unlock_irqrestore(&agent->lock, flags);
	KUNIT_EXPECT_LE(test, armed, late_deadline);
	KUNIT_EXPECT_EQ(test, kt_state(late, NULL), KMAD_SS_WAIT_RESP);

	KUNIT_EXPECT_EQ(test, kmad_cancel_send(late), 0);
	KUNIT_ASSERT_TRUE(test, kt_wait_until(kt_events(f) >= 2,
					      KT_ASYNC_WAIT_MS));
	kt_expect_send(f, 1, late, KMAD_SEND_CANCELED);
	kmad_free_send_buf(late);
	kmad_free_send_buf(soon);
}

/*
 * Real clock: kmad_modify_send() that brings a waiting send's deadline
 * closer queues the agent's work for the new one, which it then keeps:
 * the send times out after the new timeout, not the old.
 */
static void send_async_modify_sooner(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent_priv *agent = kmad_agent_priv(f->agent);
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       1, KS_LATE_MS, 0);
	u64 armed = 0, deadline = 0;
	unsigned long t0, flags;
	bool waiting;
	unsigned int took;

	ks_post_waiting(f, buf);
	t0 = jiffies;
	KUNIT_ASSERT_EQ(test, kmad_modify_send(buf, KS_SOON_MS), 0);
	/* Unless a stalled test thread let it time out already. */
	spin_lock_irqsave(&agent->lock, flags);
	waiting = kmad_send_wr(buf)->state == KMAD_SS_WAIT_RESP;
	if (waiting) {
		armed = agent->timer_at;
		deadline = kmad_send_wr(buf)->deadline_node.expires;
	}
	spin_unlock_irqrestore(&agent->lock, flags);
	if (waiting)
		KUNIT_EXPECT_LE(test, armed, deadline);
	KUNIT_ASSERT_TRUE(test, kt_wait_until(kt_events(f) >= 1,
					      KS_SOON_BOUND_MS));
	took = jiffies_to_msecs(jiffies - t0);
	KUNIT_EXPECT_GE(test, took, KS_SOON_MS);
	kt_expect_send(f, 0, buf, KMAD_SEND_RESP_TIMEOUT);
	kmad_free_send_buf(buf);
}

/* A send whose deadline lies past a cascade of the wheel's 4096-tick
 * level at least 4032 ticks away, where Linux's timer granule is 512.
 */
#define KS_CASCADE_MS		8200

/*
 * Real clock: the agent's work is queued so that Linux's timer wheel
 * fires it by &kmad_agent_priv.timer_at, the time kmad believes it runs
 * by (a later deadline's arm is skipped as "not sooner").  The 8.2 s send
 * has the work queued for its wheel slot's cascade, 4104-8200 ticks
 * ahead; Linux picks the timer's level from its delay when it is added
 * (at most its expiry minus the post) and fires it up to that level's
 * granule after its expiry (ks_linux_fires_by()).  Before 2026-12-02
 * the timer expired at timer_at itself, 512 ticks too late at worst: a
 * 1 ms send posted at the cascade then timed out 513 ms after its post
 * (measured with a real-time version of this case; 9 ms after the fix).
 */
static void send_async_timer_fires_by_deadline(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent_priv *agent = kmad_agent_priv(f->agent);
	struct kmad_send_buf *late = kt_request(f, f->agent, KMAD_METHOD_GET,
						1, KS_CASCADE_MS, 0);
	unsigned long posted = jiffies, expires, delay, flags;
	bool pending;
	u64 armed;

	ks_post_waiting(f, late);
	spin_lock_irqsave(&agent->lock, flags);
	armed = agent->timer_at;
	pending = delayed_work_pending(&agent->work);
	expires = agent->work.timer.expires;
	spin_unlock_irqrestore(&agent->lock, flags);
	KUNIT_ASSERT_TRUE(test, pending);
	KUNIT_ASSERT_LT(test, armed,
			kmad_send_wr(late)->deadline_node.expires + 1);
	delay = expires - posted;
	kunit_info(test, "timer_at %llu ticks after the post, timer expiry %lu, fires by %lu\n",
		   armed - posted, delay, ks_linux_fires_by(delay));
	KUNIT_EXPECT_LE(test, ks_linux_fires_by(delay),
			(unsigned long)(armed - posted));

	KUNIT_EXPECT_EQ(test, kmad_cancel_send(late), 0);
	KUNIT_ASSERT_TRUE(test, kt_wait_until(kt_events(f) >= 1,
					      KT_ASYNC_WAIT_MS));
	kt_expect_send(f, 0, late, KMAD_SEND_CANCELED);
	kmad_free_send_buf(late);
}

/*
 * A run of the agent's work queued to start at once while the work is
 * already running (here from the work's test seam, as a TID table resize
 * or a callback would queue it) is not put off by the running work's
 * re-arm for its next deadline.  Before 2026-12-01 agent_expire() marked
 * the work "queued for no deadline" at its start, over the run just
 * queued, and its re-arm then moved that run to the next deadline, here
 * about a minute away: the second run did not come within the bound.
 */
static struct kmad_agent_priv *ks_requeue_agent;
static atomic_t ks_requeued;

static void ks_requeue_hook(struct kmad_agent_priv *agent)
{
	unsigned long flags;

	if (agent != READ_ONCE(ks_requeue_agent) ||
	    atomic_cmpxchg(&ks_requeued, 0, 1))
		return;
	spin_lock_irqsave(&agent->lock, flags);
	kmad_agent_run_now(agent);
	spin_unlock_irqrestore(&agent->lock, flags);
}

static void send_async_run_queued_meanwhile(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent_priv *agent = kmad_agent_priv(f->agent);
	struct kmad_send_buf *late = kt_request(f, f->agent, KMAD_METHOD_GET,
						1, KS_LATE_MS, 0);
	unsigned long runs, flags;

	ks_post_waiting(f, late);
	kt_settle(f);
	atomic_set(&ks_requeued, 0);
	WRITE_ONCE(ks_requeue_agent, agent);
	WRITE_ONCE(kmad_test_agent_work_hook, ks_requeue_hook);
	runs = READ_ONCE(agent->work_runs);
	spin_lock_irqsave(&agent->lock, flags);
	kmad_agent_run_now(agent);
	spin_unlock_irqrestore(&agent->lock, flags);
	/* This run, then the one its seam queued. */
	KUNIT_EXPECT_TRUE(test, kt_wait_until(READ_ONCE(agent->work_runs) -
					      runs >= 2, KT_ASYNC_WAIT_MS));
	WRITE_ONCE(kmad_test_agent_work_hook, NULL);
	WRITE_ONCE(ks_requeue_agent, NULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&ks_requeued), 1);

	KUNIT_EXPECT_EQ(test, kmad_cancel_send(late), 0);
	KUNIT_ASSERT_TRUE(test, kt_wait_until(kt_events(f) >= 1,
					      KT_ASYNC_WAIT_MS));
	kt_expect_send(f, 0, late, KMAD_SEND_CANCELED);
	kmad_free_send_buf(late);
}

static int ks_async_init(struct kunit *test)
{
	return kt_fix_setup(test, KMAD_SIM_ASYNC, KMAD_SIM_NOTIFY_IBTA);
}

static struct kunit_case send_async_cases[] = {
	KUNIT_CASE(send_async_sooner_deadline),
	KUNIT_CASE(send_async_modify_sooner),
	KUNIT_CASE(send_async_run_queued_meanwhile),
	KUNIT_CASE(send_async_timer_fires_by_deadline),
	{}
};

static struct kunit_suite send_async_suite = {
	.name = "kmad_send_async",
	.init = ks_async_init,
	.exit = kt_fix_exit,
	.test_cases = send_async_cases,
};

kunit_test_suites(&send_suite, &send_async_suite);

MODULE_DESCRIPTION("KUnit tests for kmad's send path");
MODULE_LICENSE("GPL");
