// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_qp: a QP's error recovery and teardown, step by step on the
 * simulated fabric.
 */

#include <linux/delay.h>

#include "kmad_test.h"

/* Recovery backs off in real time: how long a test waits for it. */
#define KT_RECOVERY_WAIT_MS	5000

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

/* The sends on device 0's (QP1) wire. */
static unsigned int kt_qp_wire(struct kt_fix *f)
{
	return kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN);
}

/* Settle until @n sends wait on device 0's wire; false after the wait. */
static bool kt_wait_pending(struct kt_fix *f, unsigned int n)
{
	int i;

	for (i = 0; i < KT_RECOVERY_WAIT_MS / 20; i++) {
		kt_settle(f);
		if (kt_qp_wire(f) == n)
			return true;
		msleep(20);
	}
	return false;
}

/*
 * Remove device 0 in a thread and wait for the removal, bounded: a stop
 * that never gave up waiting would sleep and wake for ever, which no
 * hung-task check sees.
 */
static void kt_remove_dev0(struct kt_fix *f)
{
	struct kt_remover *r = kt_remove_start(f, KT_DEV0);

	KUNIT_ASSERT_NOT_NULL(f->test, r);
	KUNIT_ASSERT_TRUE_MSG(f->test, kt_remove_wait(f, r, 20 * HZ),
			      "the removal did not end within 20 s");
}

/*
 * Fire device 0's CQ event and settle, every 20 ms, until @cond holds;
 * false if it did not within KT_RECOVERY_WAIT_MS.  In step mode nothing
 * else fires the events that a recovery's flushes raise.
 */
#define kt_events_until(f, cond) ({					\
	int __kt_i;							\
									\
	for (__kt_i = 0; __kt_i < KT_RECOVERY_WAIT_MS / 20; __kt_i++) {	\
		kt_event(f, KT_DEV0);					\
		if (cond)						\
			break;						\
		msleep(20);						\
	}								\
	__kt_i < KT_RECOVERY_WAIT_MS / 20;				\
})

/*
 * Fire device 0's CQ events until its QP runs again after a recovery (the
 * receives' flushes raise them; in step mode nothing else fires them),
 * then expect nothing on its wire -- no send was replayed -- and @events
 * callbacks in all.
 */
static void kt_expect_recovered_quiet(struct kt_fix *f, int events)
{
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];

	KUNIT_EXPECT_TRUE(f->test, kt_events_until(f, kt_qp_run(qpi) ==
						   KMAD_QP_RUNNING));
	kt_settle(f);
	KUNIT_EXPECT_EQ(f->test, kt_qp_wire(f), 0U);
	KUNIT_EXPECT_EQ(f->test, kt_events(f), events);
}

/* Settle until the log holds @n events; false after the wait. */
static bool kt_wait_events(struct kt_fix *f, int n)
{
	int i;

	for (i = 0; i < KT_RECOVERY_WAIT_MS / 20; i++) {
		kt_settle(f);
		if (kt_events(f) >= n)
			return true;
		msleep(20);
	}
	return false;
}

/*
 * A send completed with a flush while the QP still runs, as real UD
 * hardware does in SQE (a send error: sends flushed, receives not): kmad
 * moves the QP to the error state itself, recovers it and sends the
 * request again, which then times out as usual.  Before, the QP stayed
 * RECOVERING with its receives posted, waiting for them, and the request
 * was never sent again nor timed out.
 */
static void qp_send_flush_while_running(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];

	f->free_on_send = true;
	kt_post(f, kt_request(f, f->agent, KMAD_METHOD_GET, 1, 100, 0));
	kt_complete(f, KT_DEV0, KMAD_WC_FLUSH_ERR, false);
	/* The receives' flushes raise completion events, fired here. */
	KUNIT_EXPECT_TRUE(test, kt_events_until(f, kt_qp_wire(f) == 1));
	KUNIT_EXPECT_EQ(test, kt_qp_run(qpi), KMAD_QP_RUNNING);
	KUNIT_EXPECT_EQ(test, kt_qp_rq_posted(qpi), KT_RQ_DEPTH);
	KUNIT_ASSERT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			1U);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_advance(f, 100);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	KUNIT_EXPECT_EQ(test, f->ev[0].status, KMAD_SEND_RESP_TIMEOUT);
}

/*
 * A response that arrived before its request's send completion decides
 * the outcome: a flush of that send on a running QP ends it (OK, the
 * response delivered, as after a send error) instead of sending it again
 * after the recovery.  Before, the request went on the wire a second time
 * and its callback waited for the recovery and for that completion.
 */
static void qp_early_response_flush_not_replayed(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       1, 1000, 0);

	kt_post(f, buf);
	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	kt_expect_state(f, buf, KMAD_SS_EARLY_RESP, 1);
	kt_complete(f, KT_DEV0, KMAD_WC_FLUSH_ERR, false);
	kt_expect_answered(f, buf);
	kt_expect_recovered_quiet(f, 2);
	kmad_free_send_buf(buf);
}

/* Whether @buf is on @qpi's replay list, read under the QP's lock. */
static bool kt_on_replay(struct kmad_qp_info *qpi, struct kmad_send_buf *buf)
{
	struct kmad_send_wr *wr = kmad_send_wr(buf), *pos;
	unsigned long flags;
	bool found = false;

	spin_lock_irqsave(&qpi->lock, flags);
	list_for_each_entry(pos, &qpi->replay, qp_entry)
		if (pos == wr)
			found = true;
	spin_unlock_irqrestore(&qpi->lock, flags);
	return found;
}

/*
 * Post a GET with a 1000 ms timeout and have the hardware flush it while
 * the QP runs: kmad puts it on the replay list and starts a recovery.  On
 * return the QP is RECOVERING, and stays so until the test fires device
 * 0's CQ events; the send is SENDING with both its references, on the
 * replay list, on no wire, and nothing was called.
 *
 * The recovery's first move to the error state is made to fail: without
 * that, the recovery work (unbound, queued by the drain that reaps the
 * flush) could move the QP to error while that drain still polls, which
 * would then reap the receives' flushes, finish the recovery and put the
 * send back on the wire before this returns.  Failed once, the move is
 * tried again KMAD_QP_RECOVER_BACKOFF_MS later (real time), and the
 * receives it flushes wait in the CQ behind an event nobody fires.
 */
static struct kmad_send_buf *kt_replay_waiting(struct kt_fix *f)
{
	struct kunit *test = f->test;
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       1, 1000, 0);

	KUNIT_ASSERT_EQ(test, kmad_sim_fail_modify_qp(f->fab, KT_DEV0, KT_QPN,
						      KMAD_QPS_ERR, 1), 0);
	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_FLUSH_ERR, false);
	/* The recovery ran once, failed and waits for its retry. */
	KUNIT_ASSERT_EQ(test, READ_ONCE(qpi->recover_tries), 1U);
	KUNIT_ASSERT_EQ(test, kt_qp_run(qpi), KMAD_QP_RECOVERING);
	KUNIT_ASSERT_TRUE(test, kt_on_replay(qpi, buf));
	KUNIT_ASSERT_EQ(test, kt_qp_wire(f), 0U);
	kt_expect_state(f, buf, KMAD_SS_SENDING, 2);
	KUNIT_ASSERT_EQ(test, kt_events(f), 0);
	return buf;
}

/*
 * A send flushed on a running QP waits on the replay list, which the
 * hardware does not hold: cancel ends it at once, CANCELED, with no send
 * completion to wait for (the QP is still RECOVERING when the callback
 * has come), and the recovery does not send it again.
 */
static void qp_replay_send_canceled_at_once(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];
	struct kmad_send_buf *buf = kt_replay_waiting(f);

	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_CANCELED);
	KUNIT_EXPECT_PTR_NE(test, f->ev[0].task, current);
	KUNIT_EXPECT_EQ(test, kt_qp_run(qpi), KMAD_QP_RECOVERING);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), -EINVAL);
	kt_expect_recovered_quiet(f, 1);
	kmad_free_send_buf(buf);
}

/*
 * A response to a send waiting on the replay list (the hardware flushed
 * it, the QP recovers) ends it at once, OK, with its response: the
 * hardware does not hold it, so it is taken back and not sent again after
 * the recovery.  The flush and the response are reaped by one drain, the
 * response behind the flush; the recovery's first move to the error state
 * fails, so the QP is still recovering when the callbacks have come.
 */
static void qp_replay_send_taken_back_by_response(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       1, 1000, 0);

	KUNIT_ASSERT_EQ(test, kmad_sim_fail_modify_qp(f->fab, KT_DEV0, KT_QPN,
						      KMAD_QPS_ERR, 1), 0);
	kt_post(f, buf);
	KUNIT_ASSERT_EQ(test, kmad_sim_complete_send(f->fab, KT_DEV0, KT_QPN, 0,
						     KMAD_WC_FLUSH_ERR, false),
			0);
	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	kt_expect_answered(f, buf);
	kt_expect_recovered_quiet(f, 2);
	kmad_free_send_buf(buf);
}

/*
 * Unregister with a send on the replay list of a recovering QP: the send
 * never reached the hardware, so unregister ends it at once, FLUSHED,
 * and returns without waiting for the recovery (which only the test's
 * events move on) with its one callback delivered; the recovery then
 * sends nothing.  (An unregister that waited for the send's completion
 * would hang here: the hung task detector panics the guest.)
 */
static void qp_replay_send_flushed_by_unregister(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];
	struct kmad_send_buf *buf = kt_replay_waiting(f);

	kmad_unregister_agent(f->agent);
	f->agent = NULL;
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_FLUSHED);
	KUNIT_EXPECT_EQ(test, kt_qp_run(qpi), KMAD_QP_RECOVERING);
	kt_expect_recovered_quiet(f, 1);
	kmad_free_send_buf(buf);
}

/*
 * Port removal with a send on the replay list of a recovering QP: the
 * stop ends it FLUSHED, once, though the recovery never finished and
 * the send never went back to the hardware.
 */
static void qp_replay_send_flushed_by_port_removal(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_replay_waiting(f);

	kt_remove_dev0(f);
	kt_settle(f);
	kt_expect_only_send(f, buf, KMAD_SEND_FLUSHED);
	kmad_free_send_buf(buf);
}

/* Recovery retries a QP reset that failed: a modify_qp failure costs one
 * retry, after which the QP is back in RTS with its receive buffers, and
 * its flushed sends are posted again.
 */
static void qp_recovery_retries_failed_reset(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];
	s64 recoveries = kt_pstat(f, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES);
	s64 sent = kt_pstat(f, KT_DEV0, KMAD_PSTAT_SENT);
	s64 errors = kt_pstat(f, KT_DEV0, KMAD_PSTAT_SEND_ERRORS);
	int i;

	f->free_on_send = true;
	for (i = 0; i < 2; i++)
		kt_post(f, kt_request(f, f->agent, KMAD_METHOD_SET, i, 0, 0));
	KUNIT_ASSERT_EQ(test, kmad_sim_fail_modify_qp(f->fab, KT_DEV0, KT_QPN,
						      KMAD_QPS_RESET, 1), 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_qp_error(f->fab, KT_DEV0, KT_QPN), 0);
	KUNIT_ASSERT_TRUE(test, kt_wait_pending(f, 2));
	KUNIT_EXPECT_EQ(test, kt_qp_run(qpi), KMAD_QP_RUNNING);
	KUNIT_EXPECT_EQ(test, kt_qp_rq_posted(qpi), KT_RQ_DEPTH);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES),
			recoveries + 1);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	for (i = 0; i < 2; i++)
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, f->ev[i].status, KMAD_SEND_OK);
	/* Two flushes and two good completions. */
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_SENT), sent + 4);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_SEND_ERRORS),
			errors + 2);
}

/*
 * Failed resets count toward giving the QP up within one recovery only:
 * a QP that recovers after one failed reset, KMAD_QP_RECOVER_TRIES times
 * over, still runs and still sends.
 */
static void qp_recovery_tries_per_recovery(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];
	s64 recoveries = kt_pstat(f, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES);
	int i;

	f->free_on_send = true;
	for (i = 0; i < KMAD_QP_RECOVER_TRIES; i++) {
		kt_post(f, kt_request(f, f->agent, KMAD_METHOD_SET, i, 0, 0));
		KUNIT_ASSERT_EQ(test,
				kmad_sim_fail_modify_qp(f->fab, KT_DEV0, KT_QPN,
							KMAD_QPS_RESET, 1), 0);
		KUNIT_ASSERT_EQ(test, kmad_sim_qp_error(f->fab, KT_DEV0,
							KT_QPN), 0);
		KUNIT_ASSERT_TRUE_MSG(test, kt_wait_pending(f, 1),
				      "recovery %d", i + 1);
		KUNIT_ASSERT_EQ(test, kt_qp_run(qpi), KMAD_QP_RUNNING);
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
		KUNIT_ASSERT_EQ(test, kt_events(f), i + 1);
		KUNIT_EXPECT_EQ(test, f->ev[i].status, KMAD_SEND_OK);
	}
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES),
			recoveries + KMAD_QP_RECOVER_TRIES);
	KUNIT_EXPECT_EQ(test, kt_qp_rq_posted(qpi), KT_RQ_DEPTH);
}

/*
 * A QP that goes to the error state with no event and nothing to send:
 * only its receive buffers come back, flushed.  Those alone make kmad
 * recover it (it stayed in error, deaf, its receive queue empty).
 */
static void qp_recv_flush_without_event_recovers(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];
	s64 recoveries = kt_pstat(f, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES);
	s64 flushed = kt_pstat(f, KT_DEV0, KMAD_PSTAT_RECV_FLUSHED);

	f->free_on_send = true;
	KUNIT_ASSERT_EQ(test, kmad_sim_qp_error_no_event(f->fab, KT_DEV0,
							 KT_QPN), 0);
	KUNIT_EXPECT_TRUE(test, kt_events_until(f,
						kt_qp_run(qpi) == KMAD_QP_RUNNING &&
						kt_qp_rq_posted(qpi) == KT_RQ_DEPTH &&
						kt_pstat(f, KT_DEV0,
							 KMAD_PSTAT_QP_RECOVERIES) >
						recoveries));
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_RECV_FLUSHED),
			flushed + KT_RQ_DEPTH);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES),
			recoveries + 1);
	/* It sends again. */
	kt_post(f, kt_request(f, f->agent, KMAD_METHOD_SET, 1, 0, 0));
	KUNIT_ASSERT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			1U);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	KUNIT_EXPECT_EQ(test, f->ev[0].status, KMAD_SEND_OK);
}

/* A QP whose reset keeps failing is given up after a bounded number of
 * tries: every send waiting on it (flushed, or posted during recovery),
 * and every send posted later, ends with a local error, and the QP stays
 * FAILED.
 */
static void qp_recovery_gives_up(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];
	s64 recoveries = kt_pstat(f, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES);
	struct kmad_send_buf *a, *b, *c, *d;

	f->free_on_send = true;
	a = kt_request(f, f->agent, KMAD_METHOD_SET, 1, 0, 0);
	b = kt_request(f, f->agent, KMAD_METHOD_SET, 2, 0, 0);
	c = kt_request(f, f->agent, KMAD_METHOD_SET, 3, 0, 0);
	d = kt_request(f, f->agent, KMAD_METHOD_SET, 4, 0, 0);
	kt_post(f, a);
	kt_post(f, b);
	KUNIT_ASSERT_EQ(test, kmad_sim_fail_modify_qp(f->fab, KT_DEV0, KT_QPN,
						      KMAD_QPS_RESET, UINT_MAX),
			0);
	KUNIT_ASSERT_EQ(test, kmad_sim_qp_error(f->fab, KT_DEV0, KT_QPN), 0);
	kt_settle(f);
	kt_post(f, c);
	KUNIT_ASSERT_TRUE(test, kt_wait_events(f, 3));
	kt_expect_send(f, 0, a, KMAD_SEND_LOCAL_ERROR);
	kt_expect_send(f, 1, b, KMAD_SEND_LOCAL_ERROR);
	kt_expect_send(f, 2, c, KMAD_SEND_LOCAL_ERROR);
	KUNIT_EXPECT_EQ(test, kt_qp_run(qpi), KMAD_QP_FAILED);
	KUNIT_EXPECT_EQ(test, kt_qp_rq_posted(qpi), 0U);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES),
			recoveries);

	kt_post(f, d);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 4);
	kt_expect_send(f, 3, d, KMAD_SEND_LOCAL_ERROR);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			0U);
	KUNIT_EXPECT_EQ(test, kmad_sim_fail_modify_qp(f->fab, KT_DEV0, KT_QPN,
						      KMAD_QPS_RESET, 0), 0);
}

/*
 * Device 0's QP1 given up because its provider refused every move to the
 * error state, with a send the provider still holds: returns the send
 * (freed by the fixture when it ends), NULL after a failed assertion.
 */
static struct kmad_send_buf *kt_given_up_holding(struct kt_fix *f)
{
	struct kunit *test = f->test;
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];
	struct kmad_send_buf *a;
	bool given_up;

	f->free_on_send = true;
	a = kt_request(f, f->agent, KMAD_METHOD_SET, 1, 0, 0);
	kt_post(f, a);
	KUNIT_ASSERT_EQ(test, kt_qp_wire(f), 1U);
	KUNIT_ASSERT_EQ(test, kmad_sim_fail_modify_qp(f->fab, KT_DEV0, KT_QPN,
						      KMAD_QPS_ERR, UINT_MAX),
			0);
	kmad_qp_event(&qpi->qp, KMAD_QP_EVENT_FATAL);
	/* Five refused moves, 10 + 20 + 40 + 80 ms of backoff between. */
	given_up = kt_events_until(f, kt_qp_run(qpi) == KMAD_QP_FAILED);
	/* The port's removal must be able to move it. */
	KUNIT_ASSERT_EQ(test, kmad_sim_fail_modify_qp(f->fab, KT_DEV0, KT_QPN,
						      KMAD_QPS_ERR, 0), 0);
	KUNIT_ASSERT_TRUE(test, given_up);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 0);
	KUNIT_ASSERT_EQ(test, kt_qp_wire(f), 1U);
	return a;
}

/*
 * A QP given up because its provider refused every move to the error
 * state: a send the provider still held ends with a local error when it
 * completes flushed at last, as every send of a given-up QP does
 * (provider.h), not FLUSHED, which is for an agent unregistering or a
 * port going away (mad.h).
 */
static void qp_given_up_flush_is_local_error(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];
	struct kmad_send_buf *a = kt_given_up_holding(f);

	kt_complete(f, KT_DEV0, KMAD_WC_FLUSH_ERR, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, a, KMAD_SEND_LOCAL_ERROR);
	KUNIT_EXPECT_EQ(test, kt_qp_run(qpi), KMAD_QP_FAILED);
}

/* ... but the port going away flushes it: FLUSHED, as any send then. */
static void qp_given_up_send_flushed_by_port_removal(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *a = kt_given_up_holding(f);

	kt_remove_dev0(f);
	kt_settle(f);
	kt_expect_only_send(f, a, KMAD_SEND_FLUSHED);
}

/* ... and one canceled first ends CANCELED at its completion. */
static void qp_given_up_send_canceled(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *a = kt_given_up_holding(f);

	KUNIT_ASSERT_EQ(test, kmad_cancel_send(a), 0);
	kt_settle(f);
	/* Not before the hardware gives the buffer back. */
	KUNIT_ASSERT_EQ(test, kt_events(f), 0);
	kt_complete(f, KT_DEV0, KMAD_WC_FLUSH_ERR, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, a, KMAD_SEND_CANCELED);
}

/*
 * A fatal event that comes after its recovery reset the QP has the
 * recovery move it to the error state; if the provider refuses that
 * move once, it is tried again after the backoff, and the QP recovers
 * (it stayed RECOVERING for good, its receives held, sends queued
 * behind it never sent).
 */
static void qp_recovery_retries_failed_flush(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];
	s64 recoveries = kt_pstat(f, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES);

	f->free_on_send = true;
	KUNIT_ASSERT_EQ(test, kmad_sim_fail_modify_qp(f->fab, KT_DEV0, KT_QPN,
						      KMAD_QPS_ERR, 1), 0);
	kmad_qp_event(&qpi->qp, KMAD_QP_EVENT_FATAL);
	kt_settle(f);
	kt_post(f, kt_request(f, f->agent, KMAD_METHOD_SET, 1, 0, 0));
	/* The flushes raise completion events, fired here (step mode). */
	KUNIT_ASSERT_TRUE(test, kt_events_until(f, kt_qp_wire(f) == 1));
	KUNIT_EXPECT_EQ(test, kt_qp_run(qpi), KMAD_QP_RUNNING);
	KUNIT_EXPECT_EQ(test, kt_qp_rq_posted(qpi), KT_RQ_DEPTH);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES),
			recoveries + 1);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	KUNIT_EXPECT_EQ(test, f->ev[0].status, KMAD_SEND_OK);
}

/*
 * The port goes away while the provider refuses the QP's move to the
 * error state once: the stop tries it again, and the removal ends (it
 * waited for ever for receives the provider kept).
 */
static void qp_stop_retries_failed_flush(struct kunit *test)
{
	struct kt_fix *f = test->priv;

	KUNIT_ASSERT_EQ(test, kmad_sim_fail_modify_qp(f->fab, KT_DEV0, KT_QPN,
						      KMAD_QPS_ERR, 1), 0);
	kt_remove_dev0(f);
	KUNIT_EXPECT_NULL(test, kmad_sim_device(f->fab, KT_DEV0));
}

struct kt_destroy_probe {
	struct kmad_qp_info *qpi;	/* the QP to probe */
	bool ran;
	s64 empty_before, empty_after;
};

static struct kt_destroy_probe *kt_probe;

/* Raise a CQ event on the QP being destroyed and let its drain run. */
static void kt_destroy_hook(struct kmad_qp_info *qpi)
{
	struct kt_destroy_probe *p = kt_probe;

	if (!p || qpi != p->qpi)
		return;
	p->ran = true;
	p->empty_before = atomic64_read(&qpi->port->stats[KMAD_PSTAT_CQ_EMPTY_EVENTS]);
	kmad_cq_event(&qpi->cq);
	flush_work(&qpi->cq.drain_work);
	p->empty_after = atomic64_read(&qpi->port->stats[KMAD_PSTAT_CQ_EMPTY_EVENTS]);
}

/* Teardown marks the QP down before it cancels the drain: a CQ event
 * that comes once the drain is cancelled queues a drain that finds the
 * QP down and leaves the CQ alone (it neither polls nor re-arms it).
 */
static void qp_destroy_event_after_drain_cancel(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kt_destroy_probe p = {
		.qpi = &f->port[KT_DEV1]->qpi[KMAD_QPT_GSI],
	};

	kt_probe = &p;
	kmad_test_set_qp_hook(KMAD_TEST_QP_DESTROY, kt_destroy_hook);
	kmad_sim_remove_device(f->fab, KT_DEV1);
	kmad_test_set_qp_hook(KMAD_TEST_QP_DESTROY, NULL);
	kt_probe = NULL;

	KUNIT_ASSERT_TRUE(test, p.ran);
	KUNIT_EXPECT_EQ(test, p.empty_after, p.empty_before);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_CQ_EMPTY_EVENTS),
			p.empty_before);
}

struct kt_reset_probe {
	struct kt_fix *f;
	struct kmad_qp_info *qpi;	/* the QP to probe */
	bool ran, flagged;
};

static struct kt_reset_probe *kt_reset_probe;

/*
 * In the recovery work, once it found the QP quiet, before its reset: make
 * the provider refuse every move to the error state, raise a fatal event
 * and wait until the drain handled it (asked the recovery for that move).
 * Not flush_work(): this runs on kmad's workqueue, as the drain does.
 */
static void kt_reset_hook(struct kmad_qp_info *qpi)
{
	struct kt_reset_probe *p = kt_reset_probe;
	int i;

	if (!p || qpi != p->qpi || p->ran)
		return;
	p->ran = true;
	kmad_sim_fail_modify_qp(p->f->fab, KT_DEV0, KT_QPN, KMAD_QPS_ERR,
				UINT_MAX);
	kmad_qp_event(&qpi->qp, KMAD_QP_EVENT_FATAL);
	for (i = 0; i < 1000 && !p->flagged; i++) {
		usleep_range(1000, 2000);
		p->flagged = test_bit(KMAD_QP_FLUSH_PENDING, &qpi->flags);
	}
}

/*
 * A fatal event handled while a recovery resets the QP (late: its flushes
 * were reaped and the QP found quiet) has the next recovery move the QP
 * to the error state.  That is a recovery like any other: five refused
 * moves give the QP up, and its sends end with a local error.  (Before,
 * the moves were made while the QP counted as RUNNING: the five refusals
 * were counted, the give-up skipped, and the QP went on running with
 * five failures on its next recovery's count, which gave up at its first
 * failure; here the send was posted to the QP.)
 */
static void qp_late_fatal_during_reset(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];
	struct kt_reset_probe p = { .f = f, .qpi = qpi };
	struct kmad_send_buf *a;
	bool given_up;

	f->free_on_send = true;
	kt_reset_probe = &p;
	kmad_test_set_qp_hook(KMAD_TEST_QP_RESET, kt_reset_hook);
	KUNIT_ASSERT_EQ(test, kmad_sim_qp_error_no_event(f->fab, KT_DEV0,
							 KT_QPN), 0);
	given_up = kt_events_until(f, kt_qp_run(qpi) == KMAD_QP_FAILED);
	kmad_test_set_qp_hook(KMAD_TEST_QP_RESET, NULL);
	kt_reset_probe = NULL;
	/* The port's removal must be able to move it. */
	KUNIT_ASSERT_EQ(test, kmad_sim_fail_modify_qp(f->fab, KT_DEV0, KT_QPN,
						      KMAD_QPS_ERR, 0), 0);
	KUNIT_ASSERT_TRUE(test, p.ran);
	KUNIT_ASSERT_TRUE(test, p.flagged);
	KUNIT_EXPECT_TRUE(test, given_up);

	a = kt_request(f, f->agent, KMAD_METHOD_SET, 1, 0, 0);
	kt_post(f, a);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_qp_wire(f), 0U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, a, KMAD_SEND_LOCAL_ERROR);
}

/*
 * A QP whose refills all failed until it held no receive buffer is not
 * deaf for good: with nothing posted no receive completion comes to try
 * the refill again, so a work does (KMAD_RECV_REFILL_RETRY_MS later) and
 * the next MAD is received.  (It stayed deaf: the sim dropped every MAD
 * after for want of a buffer.)
 */
static void qp_refill_retried_when_empty(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp_info *qpi = &f->port[KT_DEV1]->qpi[KMAD_QPT_GSI];
	s64 unmatched = kt_pstat(f, KT_DEV1, KMAD_PSTAT_RESP_UNMATCHED);
	struct kmad_mad mad = { };
	unsigned int i, posted;

	/* A response nobody waits for: received, counted, freed. */
	mad.mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	mad.mad_hdr.mgmt_class = KT_CLASS;
	mad.mad_hdr.class_version = KT_VERSION;
	mad.mad_hdr.method = KMAD_METHOD_GET_RESP;
	mad.mad_hdr.tid = cpu_to_be64(0xfffffff0ULL << 32);
	KUNIT_ASSERT_EQ(test, kmad_sim_fail_post_recv(f->fab, KT_DEV1, KT_QPN,
						      UINT_MAX), 0);
	for (i = 0; i < KT_RQ_DEPTH; i++)
		KUNIT_ASSERT_EQ(test,
				kmad_sim_inject(f->fab, KT_DEV1, KT_QPN, &mad,
						sizeof(mad), 1, KT_QPN), 0);
	kt_event(f, KT_DEV1);
	KUNIT_ASSERT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_RESP_UNMATCHED),
			unmatched + KT_RQ_DEPTH);
	posted = kt_qp_rq_posted(qpi);
	KUNIT_ASSERT_EQ(test, posted, 0U);
	/* Refused buffers are counted (recv_post_failures). */
	KUNIT_EXPECT_GE(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_RECV_POST_FAILED),
			1LL);

	KUNIT_ASSERT_EQ(test, kmad_sim_fail_post_recv(f->fab, KT_DEV1, KT_QPN,
						      0), 0);
	for (i = 0; i < 500 && kt_qp_rq_posted(qpi) < KT_RQ_DEPTH; i++)
		msleep(20);
	posted = kt_qp_rq_posted(qpi);
	KUNIT_EXPECT_EQ(test, posted, KT_RQ_DEPTH);
	KUNIT_EXPECT_EQ(test, kmad_sim_inject(f->fab, KT_DEV1, KT_QPN, &mad,
					      sizeof(mad), 1, KT_QPN), 0);
	kt_event(f, KT_DEV1);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_RESP_UNMATCHED),
			unmatched + KT_RQ_DEPTH + 1);
}

/* kt_refill_cancel_hook()'s send, and what its cancel returned. */
static struct {
	struct kmad_qp_info *qpi;
	struct kmad_send_buf *buf;
	atomic_t done;
	int ret;
} kt_refill_cancel;

/*
 * At the first receive buffer a running QP's refill allocates while the
 * send is still on its replay list -- the recovery's refill, after the
 * QP runs again and before it posts what waits -- cancel the send.
 */
static bool kt_refill_cancel_hook(enum kmad_alloc_site site)
{
	if (site == KMAD_ALLOC_RECV_BUF && !atomic_read(&kt_refill_cancel.done) &&
	    kt_qp_run(kt_refill_cancel.qpi) == KMAD_QP_RUNNING &&
	    kt_on_replay(kt_refill_cancel.qpi, kt_refill_cancel.buf)) {
		kt_refill_cancel.ret = kmad_cancel_send(kt_refill_cancel.buf);
		atomic_set(&kt_refill_cancel.done, 1);
	}
	return false;
}

/* The hook canceled its send, and the refill it was called from ended. */
static bool kt_refill_canceled(void)
{
	return atomic_read(&kt_refill_cancel.done) &&
	       kt_qp_rq_posted(kt_refill_cancel.qpi) == KT_RQ_DEPTH;
}

/*
 * A cancel that frees a flow-control slot hands the backlog to the QP,
 * which then posts what waits for a slot: the canceled send must be taken
 * back before that, or it goes on the wire again.  A (solicited, the
 * agent's one slot) is flushed and waits on the replay list; B waits in
 * the backlog; A is canceled while the recovery refills the receive queue
 * of the running QP.  A ends at once, CANCELED, and only B goes on the
 * wire.  Before, the cancel's backlog drain posted A and B, and A's
 * callback waited for A's second send completion.
 */
static void qp_replay_send_canceled_with_backlog(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];
	struct kmad_send_buf *a, *b;
	int i;

	f->free_on_send = true;
	kmad_agent_set_flow_limit(f->agent, 1);
	a = kt_request(f, f->agent, KMAD_METHOD_GET, 1, 1000, 0);
	b = kt_request(f, f->agent, KMAD_METHOD_GET, 2, 1000, 0);
	kt_post(f, a);
	kt_post(f, b);
	kt_expect_state(f, b, KMAD_SS_BACKLOG, 2);
	KUNIT_ASSERT_EQ(test, kt_qp_wire(f), 1U);
	kt_refill_cancel.qpi = qpi;
	kt_refill_cancel.buf = a;
	kt_refill_cancel.ret = -1;
	atomic_set(&kt_refill_cancel.done, 0);
	WRITE_ONCE(kmad_test_alloc_hook, kt_refill_cancel_hook);
	kt_complete(f, KT_DEV0, KMAD_WC_FLUSH_ERR, false);
	KUNIT_ASSERT_TRUE(test, kt_events_until(f, kt_refill_canceled()));
	WRITE_ONCE(kmad_test_alloc_hook, NULL);
	KUNIT_EXPECT_EQ(test, kt_refill_cancel.ret, 0);
	/* The recovery posts what waits right after its refill. */
	for (i = 0; i < 50 && kt_qp_wire(f) == 0; i++)
		msleep(20);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_qp_wire(f), 1U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, a, KMAD_SEND_CANCELED);
	kt_expect_state(f, b, KMAD_SS_SENDING, 2);
}

static struct kunit_case qp_cases[] = {
	KUNIT_CASE(qp_canceled_send_not_replayed),
	KUNIT_CASE(qp_send_flush_while_running),
	KUNIT_CASE(qp_early_response_flush_not_replayed),
	KUNIT_CASE(qp_replay_send_canceled_at_once),
	KUNIT_CASE(qp_replay_send_taken_back_by_response),
	KUNIT_CASE(qp_replay_send_canceled_with_backlog),
	KUNIT_CASE(qp_replay_send_flushed_by_unregister),
	KUNIT_CASE(qp_replay_send_flushed_by_port_removal),
	KUNIT_CASE(qp_recovery_retries_failed_reset),
	KUNIT_CASE(qp_recovery_gives_up),
	KUNIT_CASE(qp_given_up_flush_is_local_error),
	KUNIT_CASE(qp_given_up_send_flushed_by_port_removal),
	KUNIT_CASE(qp_given_up_send_canceled),
	KUNIT_CASE(qp_recovery_tries_per_recovery),
	KUNIT_CASE(qp_recv_flush_without_event_recovers),
	KUNIT_CASE(qp_recovery_retries_failed_flush),
	KUNIT_CASE(qp_stop_retries_failed_flush),
	KUNIT_CASE(qp_destroy_event_after_drain_cancel),
	KUNIT_CASE(qp_late_fatal_during_reset),
	KUNIT_CASE(qp_refill_retried_when_empty),
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
