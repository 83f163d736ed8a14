// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_deregister: unregistering an agent with sends in every state.
 *
 * kmad_unregister_agent() must wait for the hardware to give back what it
 * holds, and in step mode the test is the hardware, so unregister runs in
 * a kthread while the test steps the fabric.
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>

#include "kmad_test.h"

struct kt_unreg {
	struct kt_fix *f;
	struct kmad_agent *agent;
	struct completion done;
	int sends_at_return;	/* send callbacks seen when it returned */
};

static int kt_unreg_fn(void *arg)
{
	struct kt_unreg *u = arg;

	kmad_unregister_agent(u->agent);
	u->sends_at_return = atomic_read(&u->f->sends);
	complete(&u->done);
	return 0;
}

/*
 * Start unregistering @agent in a kthread; return 0 once it is DYING,
 * -ETIMEDOUT if it did not get there (the thread has it), or
 * kthread_run()'s error (no thread: the agent is still the caller's).  No
 * assertion: a caller may hold a lock the unregister waits for.  Only for
 * an agent whose unregister cannot return at once (a send the hardware
 * holds, a lock the caller holds): it would free the agent under the poll
 * of its state.
 */
static int kt_unreg_begin(struct kt_fix *f, struct kt_unreg *u,
			  struct kmad_agent *agent)
{
	struct kmad_agent_priv *priv = kmad_agent_priv(agent);
	struct task_struct *t;
	int i;

	u->f = f;
	u->agent = agent;
	init_completion(&u->done);
	t = kthread_run(kt_unreg_fn, u, "kt_unreg");
	if (IS_ERR(t))
		return PTR_ERR(t);
	for (i = 0; i < 5000 && READ_ONCE(priv->state) != KMAD_AGENT_DYING; i++)
		usleep_range(1000, 2000);
	return READ_ONCE(priv->state) == KMAD_AGENT_DYING ? 0 : -ETIMEDOUT;
}

/* kt_unreg_begin(), asserting that the agent is DYING. */
static void kt_unreg_start(struct kt_fix *f, struct kt_unreg *u,
			   struct kmad_agent *agent)
{
	KUNIT_ASSERT_EQ(f->test, kt_unreg_begin(f, u, agent), 0);
}

static void kt_unreg_wait(struct kt_fix *f, struct kt_unreg *u)
{
	KUNIT_ASSERT_NE(f->test,
			wait_for_completion_timeout(&u->done, 30 * HZ), 0UL);
}

/*
 * Start unregistering the fixture's agent and wait for the flush's first
 * effect (DYING comes just before it): one callback, @first's, flushed,
 * while unregister still waits for the sends the hardware holds.
 */
static void kt_unreg_start_flushed(struct kt_fix *f, struct kt_unreg *u,
				   struct kmad_send_buf *first)
{
	int i;

	kt_unreg_start(f, u, f->agent);
	f->agent = NULL;
	for (i = 0; i < 5000 && !kt_events(f); i++)
		usleep_range(1000, 2000);
	kt_settle(f);
	KUNIT_ASSERT_EQ(f->test, kt_events(f), 1);
	kt_expect_send(f, 0, first, KMAD_SEND_FLUSHED);
	KUNIT_EXPECT_FALSE(f->test, completion_done(&u->done));
}

/* Find the send event for @buf in the log; -1 if none. */
static int kt_find_send(struct kt_fix *f, struct kmad_send_buf *buf)
{
	int i;

	for (i = 0; i < min(kt_events(f), KT_MAX_EVENTS); i++)
		if (f->ev[i].kind == KT_SEND && f->ev[i].buf == buf)
			return i;
	return -1;
}

/* Seed rule: deregistering cancels everything outstanding and waits for
 * it; every posted send gets its callback -- a send waiting for its
 * response at once (flushed), sends the hardware holds at their send
 * completion (flushed, canceled, or answered before) -- and none after
 * unregister returns.
 */
static void dereg_sends_in_every_state(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *wait, *sending, *early, *canceled, *plain;
	struct kt_unreg u;
	int i;

	wait = kt_request(f, f->agent, KMAD_METHOD_GET, 1, 1000, 0);
	kt_post(f, wait);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	sending = kt_request(f, f->agent, KMAD_METHOD_GET, 2, 1000, 0);
	early = kt_request(f, f->agent, KMAD_METHOD_GET, 3, 1000, 0);
	canceled = kt_request(f, f->agent, KMAD_METHOD_GET, 4, 1000, 0);
	plain = kt_request(f, f->agent, KMAD_METHOD_SET, 5, 0, 0);
	kt_post(f, sending);
	kt_post(f, early);
	kt_post(f, canceled);
	kt_post(f, plain);
	kt_respond(f, early, 0);
	kt_event(f, KT_DEV0);
	KUNIT_ASSERT_EQ(test, kmad_cancel_send(canceled), 0);
	KUNIT_ASSERT_EQ(test, kt_state(early, NULL), KMAD_SS_EARLY_RESP);

	/* Only the send that was waiting for its response ends at once. */
	kt_unreg_start_flushed(f, &u, wait);

	for (i = 0; i < 4; i++)
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_unreg_wait(f, &u);
	KUNIT_EXPECT_EQ(test, u.sends_at_return, 5);
	kt_expect_send(f, kt_find_send(f, sending), sending, KMAD_SEND_FLUSHED);
	kt_expect_send(f, kt_find_send(f, early), early, KMAD_SEND_OK);
	kt_expect_send(f, kt_find_send(f, canceled), canceled,
		       KMAD_SEND_CANCELED);
	kt_expect_send(f, kt_find_send(f, plain), plain, KMAD_SEND_FLUSHED);
	/* The early response reached the ULP just before its send ended. */
	kt_expect_recv(f, kt_find_send(f, early) - 1, early,
		       KMAD_METHOD_GET_RESP);

	kt_settle(f);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->sends), 5);
	KUNIT_EXPECT_EQ(test, kt_events(f), 6);
	kmad_free_send_buf(wait);
	kmad_free_send_buf(sending);
	kmad_free_send_buf(early);
	kmad_free_send_buf(canceled);
	kmad_free_send_buf(plain);
}

/* A post that races with unregister either fails or gets its callback:
 * once unregister has begun, posts fail and nothing is called for them.
 */
static void dereg_post_while_deregistering_fails(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *held, *late;
	struct kt_unreg u;

	held = kt_request(f, f->agent, KMAD_METHOD_SET, 1, 0, 0);
	late = kt_request(f, f->agent, KMAD_METHOD_SET, 2, 0, 0);
	kt_post(f, held);
	kt_unreg_start(f, &u, f->agent);
	f->agent = NULL;
	KUNIT_EXPECT_EQ(test, kmad_post_send(late), -ESHUTDOWN);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_unreg_wait(f, &u);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, held, KMAD_SEND_FLUSHED);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			0U);
	kmad_free_send_buf(held);
	kmad_free_send_buf(late);
}

/*
 * A send still on the QP's overflow list never reached the hardware:
 * unregister ends it at once, flushed, and still waits for the sends the
 * hardware holds.
 */
static void dereg_overflow_send_flushed_at_once(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	unsigned int depth = KMAD_DEFAULT_SQ_DEPTH, i;
	struct kmad_send_buf *over;
	struct kt_unreg u;

	f->free_on_send = true;
	for (i = 0; i < depth; i++)
		kt_post(f, kt_request(f, f->agent, KMAD_METHOD_SET, i, 0, 0));
	over = kt_request(f, f->agent, KMAD_METHOD_GET, depth, 1000, 0);
	kt_post(f, over);
	KUNIT_ASSERT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			depth);

	kt_unreg_start_flushed(f, &u, over);

	for (i = 0; i < depth; i++)
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_unreg_wait(f, &u);
	KUNIT_EXPECT_EQ(test, u.sends_at_return, (int)depth + 1);
	for (i = 1; i <= depth; i++)
		KUNIT_EXPECT_EQ(test, f->ev[i].status, KMAD_SEND_FLUSHED);
}

/*
 * Unregister with a flow-control backlog behind a send the hardware holds:
 * the flush takes the holder's slot back, but a DYING agent sends nothing
 * more.  The backlogged send ends FLUSHED at once, never on the wire; the
 * holder at its send completion.
 */
static void dereg_backlog_not_sent_when_slot_freed(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *a, *b;
	struct kt_unreg u;

	kmad_agent_set_flow_limit(f->agent, 1);
	a = kt_request(f, f->agent, KMAD_METHOD_GET, 1, 1000, 0);
	b = kt_request(f, f->agent, KMAD_METHOD_GET, 2, 1000, 0);
	kt_post(f, a);
	kt_post(f, b);
	KUNIT_ASSERT_EQ(test, kt_state(b, NULL), KMAD_SS_BACKLOG);

	kt_unreg_start_flushed(f, &u, b);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			1U);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_unreg_wait(f, &u);
	KUNIT_EXPECT_EQ(test, u.sends_at_return, 2);
	kt_expect_send(f, 1, a, KMAD_SEND_FLUSHED);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			0U);
	kmad_free_send_buf(a);
	kmad_free_send_buf(b);
}

/* What kt_repost_handler saw. */
struct kt_repost {
	atomic_t calls;
	int ret[2];
};

/* A send_handler that posts its send again. */
static void kt_repost_handler(struct kmad_agent *agent,
			      struct kmad_send_wc *wc)
{
	struct kt_repost *r = agent->context;
	unsigned int n = atomic_inc_return(&r->calls) - 1;
	int ret = kmad_post_send(wc->send_buf);

	if (n < ARRAY_SIZE(r->ret))
		r->ret[n] = ret;
}

/*
 * A send_handler that posts its send again while its agent unregisters
 * is refused (-ESHUTDOWN): every send posted before gets one callback,
 * nothing is left on the wire.
 */
static void dereg_repost_from_handler_refused(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kt_repost r = { .calls = ATOMIC_INIT(0) };
	struct kmad_send_buf *waiting, *sending;
	struct kmad_agent *a;
	struct kt_unreg u;

	a = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, NULL,
				kt_repost_handler, NULL, &r);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	waiting = kt_request(f, a, KMAD_METHOD_GET, 1, 1000, 0);
	kt_post(f, waiting);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	sending = kt_request(f, a, KMAD_METHOD_SET, 2, 0, 0);
	kt_post(f, sending);

	kt_unreg_start(f, &u, a);
	kt_settle(f);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_unreg_wait(f, &u);
	KUNIT_EXPECT_EQ(test, atomic_read(&r.calls), 2);
	KUNIT_EXPECT_EQ(test, r.ret[0], -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, r.ret[1], -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			0U);
	kmad_free_send_buf(waiting);
	kmad_free_send_buf(sending);
}

/* A recv_handler that holds up its agent's work on its first call. */
struct kt_held_recv {
	struct completion entered;	/* the first call began */
	struct completion release;	/* ... and may return */
	atomic_t calls;
};

static void kt_held_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
}

static void kt_held_recv_handler(struct kmad_agent *agent,
				 struct kmad_send_buf *req,
				 struct kmad_recv_wc *wc)
{
	struct kt_held_recv *h = agent->context;

	kmad_free_recv(wc);
	if (atomic_inc_return(&h->calls) == 1) {
		complete(&h->entered);
		wait_for_completion(&h->release);
	}
}

/* Inject a Get of KT_CLASS into device 0's QP1, as device 1 would send it. */
static int kt_inject_get(struct kt_fix *f, u32 tid_lo)
{
	struct kmad_mad mad = {};

	mad.mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	mad.mad_hdr.mgmt_class = KT_CLASS;
	mad.mad_hdr.class_version = KT_VERSION;
	mad.mad_hdr.method = KMAD_METHOD_GET;
	mad.mad_hdr.tid = cpu_to_be64(tid_lo);
	return kmad_sim_inject(f->fab, KT_DEV0, KT_QPN, &mad, sizeof(mad),
			       kmad_port_lid(f->port[KT_DEV1]), KT_QPN);
}

static bool kt_recvs_queued(struct kmad_agent_priv *priv)
{
	bool queued;

	spin_lock_irq(&priv->lock);
	queued = !list_empty(&priv->recvs);
	spin_unlock_irq(&priv->lock);
	return queued;
}

/*
 * The steps of the case below while the first handler is held: a request
 * in the handler, a second queued behind it, unregister begun in @u.
 * Return: NULL, or what failed.
 */
static const char *kt_held_unreg_start(struct kt_fix *f,
				       struct kt_held_recv *h,
				       struct kmad_agent_priv *priv,
				       struct kt_unreg *u,
				       struct task_struct **t)
{
	if (kt_inject_get(f, 1))
		return "inject 1";
	kmad_sim_fire_cq_event(f->fab, KT_DEV0, KT_QPN, false);
	if (!wait_for_completion_timeout(&h->entered, 30 * HZ))
		return "the first request reached no handler";
	/* The second waits on the agent's list behind the first. */
	if (kt_inject_get(f, 2))
		return "inject 2";
	kmad_sim_fire_cq_event(f->fab, KT_DEV0, KT_QPN, false);
	if (!kt_wait_until(kt_recvs_queued(priv), KT_ASYNC_WAIT_MS))
		return "the second request was not queued";
	*t = kthread_run(kt_unreg_fn, u, "kt_unreg");
	if (IS_ERR(*t))
		return "kthread_run";
	if (!kt_wait_until(READ_ONCE(priv->state) == KMAD_AGENT_DYING,
			   KT_ASYNC_WAIT_MS))
		return "unregister did not begin";
	return NULL;
}

/*
 * The receive side of unregister: a request dispatched to the agent
 * before unregister began (queued behind a handler still running) is
 * handed to recv_handler before unregister returns; none is after.
 *
 * While the first handler is held nothing may abort the case (a
 * KUNIT_ASSERT would leave a kmad worker blocked for good, and the next
 * settle with it): a failure there releases the handler and finishes
 * the unregister before it fails the case.
 */
static void dereg_queued_request_delivered_before_return(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kt_held_recv h = { .calls = ATOMIC_INIT(0) };
	struct kmad_reg_req req = {
		.mgmt_class = KT_CLASS,
		.class_version = KT_VERSION,
	};
	struct kmad_agent_priv *priv;
	struct task_struct *t = NULL;
	struct kmad_agent *a;
	struct kt_unreg u;
	const char *failed;

	init_completion(&h.entered);
	init_completion(&h.release);
	__set_bit(KMAD_METHOD_GET, req.method_mask);
	a = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, &req,
				kt_held_send, kt_held_recv_handler, &h);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	priv = kmad_agent_priv(a);
	u.f = f;
	u.agent = a;
	init_completion(&u.done);

	failed = kt_held_unreg_start(f, &h, priv, &u, &t);
	if (!failed)
		KUNIT_EXPECT_FALSE(test, completion_done(&u.done));
	complete_all(&h.release);
	if (failed) {
		if (IS_ERR_OR_NULL(t))
			kmad_unregister_agent(a);
		else
			wait_for_completion(&u.done);
		KUNIT_FAIL(test, "%s", failed);
		return;
	}
	kt_unreg_wait(f, &u);
	KUNIT_EXPECT_EQ(test, atomic_read(&h.calls), 2);

	KUNIT_ASSERT_EQ(test, kt_inject_get(f, 3), 0);
	kt_event(f, KT_DEV0);
	KUNIT_EXPECT_EQ(test, kmad_sim_cqes(f->fab, KT_DEV0, KT_QPN), 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&h.calls), 2);
}

/* With nothing outstanding, unregister returns at once; a response that
 * arrives afterwards for one of its old TIDs reaches nobody.
 */
static void dereg_idle_then_late_response(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       1, 1000, 0);
	s64 unmatched;

	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kmad_unregister_agent(f->agent);
	f->agent = NULL;
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_FLUSHED);
	unmatched = atomic64_read(&f->port[KT_DEV0]->stats[KMAD_PSTAT_RESP_UNMATCHED]);
	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&f->port[KT_DEV0]->stats[KMAD_PSTAT_RESP_UNMATCHED]),
			unmatched + 1);
	kmad_free_send_buf(buf);
}

/*
 * mad.h: from the unregister mark on, every send not ended yet ends
 * FLUSHED and no MAD goes to the recv_handler.  The mark and the unlinking
 * are apart (the unlinking waits for the port's registration mutex, and
 * for a bridged provider's bridge_del()): the test holds that mutex so
 * unregister stops there, then answers the request (@respond) or lets its
 * deadline pass with retries left.  Either must find nothing: the
 * response unmatched, no retry, no timeout; R ends FLUSHED.  The fabric
 * is stepped from another thread: settling takes the fabric's device
 * mutex, which removal takes before a port's registration mutex.
 */
struct kt_after_mark {
	struct kt_fix *f;
	struct kmad_send_buf *r;
	bool respond;
	int inject_ret;
	struct completion done;
};

/* No KUnit assertion here: it would end the case from this thread. */
static int kt_after_mark_fn(void *arg)
{
	struct kt_after_mark *m = arg;
	struct kt_fix *f = m->f;

	if (m->respond) {
		m->inject_ret = kt_inject_response(f, m->r, 0);
		kmad_sim_fire_cq_event(f->fab, KT_DEV0, KT_QPN, false);
	} else {
		kmad_sim_advance_clock(f->fab, 1000);
	}
	kt_settle(f);
	complete(&m->done);
	return 0;
}

static void kt_dereg_after_mark(struct kunit *test, bool respond)
{
	struct kt_fix *f = test->priv;
	struct kmad_port *port = f->port[KT_DEV0];
	struct kmad_send_buf *r = kt_request(f, f->agent, KMAD_METHOD_GET,
					     1, 1000, 3);
	struct kt_after_mark *m;
	struct task_struct *t;
	struct kt_unreg u;
	s64 unmatched, retries;
	bool stepped = false;
	int ret;

	kt_post(f, r);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_state(r, NULL), KMAD_SS_WAIT_RESP);
	unmatched = atomic64_read(&port->stats[KMAD_PSTAT_RESP_UNMATCHED]);
	retries = atomic64_read(&port->stats[KMAD_PSTAT_RETRIES]);
	/* Left to the thread if it does not end (a failed case). */
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	m->f = f;
	m->r = r;
	m->respond = respond;
	init_completion(&m->done);

	/* Unregister in a thread, stopped at P; no assertion while the
	 * test holds P (an ended case would leave it held).
	 */
	mutex_lock(&port->reg_mutex);
	ret = kt_unreg_begin(f, &u, f->agent);
	if (ret && ret != -ETIMEDOUT) {
		mutex_unlock(&port->reg_mutex);
		kfree(m);
		KUNIT_FAIL(test, "kthread_run: %d", ret);
		return;
	}
	f->agent = NULL;
	if (!ret) {
		t = kthread_run(kt_after_mark_fn, m, "kt_after_mark");
		stepped = !IS_ERR(t) &&
			  wait_for_completion_timeout(&m->done, 30 * HZ);
	}
	KUNIT_EXPECT_FALSE(test, completion_done(&u.done));
	mutex_unlock(&port->reg_mutex);
	kt_unreg_wait(f, &u);
	KUNIT_ASSERT_TRUE(test, stepped);
	kt_settle(f);

	KUNIT_EXPECT_EQ(test, m->inject_ret, 0);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, r, KMAD_SEND_FLUSHED);
	KUNIT_EXPECT_EQ(test, u.sends_at_return, 1);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&port->stats[KMAD_PSTAT_RESP_UNMATCHED]),
			unmatched + (respond ? 1 : 0));
	KUNIT_EXPECT_EQ(test, atomic64_read(&port->stats[KMAD_PSTAT_RETRIES]),
			retries);
	/* Nothing went on the wire after the first transmission. */
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			0U);
	kfree(m);
	kmad_free_send_buf(r);
}

static void dereg_no_response_matches_after_mark(struct kunit *test)
{
	kt_dereg_after_mark(test, true);
}

static void dereg_no_deadline_after_mark(struct kunit *test)
{
	kt_dereg_after_mark(test, false);
}

/* Unregistering different agents at the same time is safe, and each
 * waits only for its own sends.
 */
static void dereg_concurrent_agents(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent *agents[3];
	struct kt_unreg u[3];
	int i;

	f->free_on_send = true;
	for (i = 0; i < 3; i++) {
		agents[i] = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI,
						NULL, kt_send_handler,
						kt_recv_handler, f);
		KUNIT_ASSERT_FALSE(test, IS_ERR(agents[i]));
		kt_post(f, kt_request(f, agents[i], KMAD_METHOD_GET, i, 1000, 0));
		kt_post(f, kt_request(f, agents[i], KMAD_METHOD_SET, 10 + i, 0, 0));
	}
	for (i = 0; i < 3; i++)
		kt_unreg_start(f, &u[i], agents[i]);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	/* The wire holds agent 0's two sends first: their completions end
	 * its unregister, not the others'.
	 */
	for (i = 0; i < 2; i++)
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_unreg_wait(f, &u[0]);
	msleep(20);
	KUNIT_EXPECT_FALSE(test, completion_done(&u[1].done));
	KUNIT_EXPECT_FALSE(test, completion_done(&u[2].done));
	KUNIT_EXPECT_EQ(test, atomic_read(&f->sends), 2);
	for (i = 2; i < 6; i++)
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	for (i = 1; i < 3; i++)
		kt_unreg_wait(f, &u[i]);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->sends), 6);
	for (i = 0; i < 6; i++)
		KUNIT_EXPECT_EQ(test, f->ev[i].status, KMAD_SEND_FLUSHED);
}

/* Port removal flushes everything outstanding, each send with its
 * callback, even while the test still holds the agent.
 */
static void dereg_port_removal_flushes(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *a, *b;

	a = kt_request(f, f->agent, KMAD_METHOD_GET, 1, 1000, 0);
	b = kt_request(f, f->agent, KMAD_METHOD_GET, 2, 1000, 0);
	kt_post(f, a);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_post(f, b);
	kmad_sim_remove_device(f->fab, KT_DEV0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, kt_find_send(f, a), a, KMAD_SEND_FLUSHED);
	kt_expect_send(f, kt_find_send(f, b), b, KMAD_SEND_FLUSHED);
	KUNIT_EXPECT_EQ(test, kmad_post_send(a), -ESHUTDOWN);
	kmad_free_send_buf(a);
	kmad_free_send_buf(b);
}

/*
 * Port removal keeps an outcome decided before it: a send whose response
 * is parked (EARLY_RESP) and one canceled, both still held by the
 * hardware, end at their flushed completions as OK (its response
 * delivered first) and CANCELED, not FLUSHED.
 */
static void dereg_port_removal_keeps_decided_outcomes(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *early, *canceled;

	early = kt_request(f, f->agent, KMAD_METHOD_GET, 1, 1000, 0);
	canceled = kt_request(f, f->agent, KMAD_METHOD_GET, 2, 1000, 0);
	kt_post(f, early);
	kt_post(f, canceled);
	kt_respond(f, early, 0);
	kt_event(f, KT_DEV0);
	KUNIT_ASSERT_EQ(test, kmad_cancel_send(canceled), 0);
	kt_expect_state(f, early, KMAD_SS_EARLY_RESP, 1);
	kt_expect_state(f, canceled, KMAD_SS_CANCELED, 1);
	KUNIT_ASSERT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			2U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 0);

	kmad_sim_remove_device(f->fab, KT_DEV0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 3);
	kt_expect_recv(f, 0, early, KMAD_METHOD_GET_RESP);
	kt_expect_send(f, 1, early, KMAD_SEND_OK);
	kt_expect_send(f, 2, canceled, KMAD_SEND_CANCELED);
	kmad_free_send_buf(early);
	kmad_free_send_buf(canceled);
}

/*
 * Port removal ends a send the QP never took (the overflow list: the send
 * queue was full) as FLUSHED, like those it took: without a timeout the
 * status is the send completion's, and that send never had one.
 */
static void dereg_port_removal_flushes_overflow(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	unsigned int depth = KMAD_DEFAULT_SQ_DEPTH, i;

	f->free_on_send = true;
	for (i = 0; i <= depth; i++)
		kt_post(f, kt_request(f, f->agent, KMAD_METHOD_SET, i, 0, 0));
	KUNIT_ASSERT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			depth);
	kmad_sim_remove_device(f->fab, KT_DEV0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), (int)depth + 1);
	for (i = 0; i <= depth; i++)
		KUNIT_EXPECT_EQ_MSG(test, f->ev[i].status, KMAD_SEND_FLUSHED,
				    "event %u", i);
}

/* Item: port removal's flush and the ULP's unregister on one agent. */
struct kt_overlap {
	struct kt_fix *f;
	struct kt_unreg u;
	bool unreg_done_in_hook;	/* unregister returned inside the hook */
	bool hold_rcu;			/* hold a reader across the hook */
	bool saw_poison;		/* the ULP's stop had unlinked it */
	atomic_t rcu_held;
	atomic_t rcu_release;
	struct completion rcu_out;
};

static struct kt_overlap *kt_overlap_ctx;

/*
 * The hook waits up to this long (real clock) for the ULP's unregister,
 * in a kthread, to unlink the agent: a loaded guest may run that kthread
 * late.  (It waited 2000 rounds of a 100-200 us sleep, a fraction of a
 * second.)  The reader holds its section a second longer at most, so
 * that the unlinking comes while no grace period can end; the test lets
 * it go as soon as the removal returns.  Far below the 21 s RCU stall
 * warning.
 */
#define KT_UNLINK_WAIT_MS	5000
#define KT_RCU_HOLD_MS		(KT_UNLINK_WAIT_MS + 1000)

/* Hold an RCU read-side section until told (or KT_RCU_HOLD_MS),
 * busy-waiting, so a synchronize_rcu() that starts meanwhile cannot end.
 */
static int kt_rcu_holder(void *arg)
{
	struct kt_overlap *o = arg;
	unsigned long end = jiffies + msecs_to_jiffies(KT_RCU_HOLD_MS);

	rcu_read_lock();
	atomic_set(&o->rcu_held, 1);
	while (!atomic_read(&o->rcu_release) && time_before(jiffies, end))
		cpu_relax();
	rcu_read_unlock();
	complete(&o->rcu_out);
	return 0;
}

/* Runs inside kmad_port_flush_agents(), after it found the agent. */
static void kt_overlap_hook(struct kmad_agent_priv *agent)
{
	struct kt_overlap *o = kt_overlap_ctx;
	struct task_struct *t;

	if (!o || &agent->agent != o->u.agent)
		return;
	if (o->hold_rcu) {
		t = kthread_run(kt_rcu_holder, o, "kt_rcu_hold");
		if (IS_ERR(t))
			return;
		while (!atomic_read(&o->rcu_held))
			usleep_range(100, 200);
	}
	o->u.f = o->f;
	init_completion(&o->u.done);
	t = kthread_run(kt_unreg_fn, &o->u, "kt_unreg");
	if (IS_ERR(t))
		return;
	if (o->hold_rcu) {
		/* Wait until the ULP's stop has unlinked the agent and sits
		 * in its grace period, then let the flush stop it too.
		 */
		o->saw_poison =
			kt_wait_until(agent->port_entry.prev == LIST_POISON2,
				      KT_UNLINK_WAIT_MS);
		return;
	}
	/* Give the ULP's unregister every chance to finish, and its
	 * kfree_rcu() to run, before the flush goes on with the agent.
	 */
	o->unreg_done_in_hook = wait_for_completion_timeout(&o->u.done, HZ);
	if (o->unreg_done_in_hook)
		rcu_barrier();
}

static void kt_overlap_run(struct kunit *test, bool hold_rcu)
{
	struct kt_fix *f = test->priv;
	struct kt_overlap *o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, o);
	o->f = f;
	o->hold_rcu = hold_rcu;
	o->u.agent = f->agent;
	init_completion(&o->rcu_out);
	f->agent = NULL;
	kt_overlap_ctx = o;
	WRITE_ONCE(kmad_test_port_flush_hook, kt_overlap_hook);
	kmad_sim_remove_device(f->fab, KT_DEV0);
	WRITE_ONCE(kmad_test_port_flush_hook, NULL);
	atomic_set(&o->rcu_release, 1);
	if (hold_rcu)
		wait_for_completion(&o->rcu_out);
	kt_unreg_wait(f, &o->u);
	kt_overlap_ctx = NULL;
	if (hold_rcu)
		KUNIT_EXPECT_TRUE(test, o->saw_poison);
	/* The flush held a reference: unregister waited for it. */
	KUNIT_EXPECT_FALSE(test, o->unreg_done_in_hook);
}

/* The ULP unregisters an agent after port removal found it and before it
 * stopped it: the flush holds a reference, so unregister waits for the
 * flush and the agent is not freed under it (used to be a KASAN
 * use-after-free in agent_stop()).
 */
static void dereg_unregister_inside_port_flush(struct kunit *test)
{
	kt_overlap_run(test, false);
}

/* Port removal stops an agent whose ULP's stop has unlinked it and waits
 * for its grace period: the second stop must not unlink it again (used to
 * be a list_del corruption on the poisoned entry).
 */
static void dereg_overlapping_stops(struct kunit *test)
{
	kt_overlap_run(test, true);
}

/*
 * Posting order at unregister, across the hand-over to the agent's work:
 * the flush leaves sends waiting for their response to the work, which
 * ends each just before its callback, in batches of 64.  A send the
 * hardware still held (CANCELED) that completes meanwhile must come
 * behind them, as it did when the flush ended every waiting send at once
 * (c4529d6 put it on the done list, which the work takes first: its
 * callback came before those of the last 6 waiting sends).
 */
#define KT_ORDER_WAITING	70

struct kt_order {
	struct kt_fix *f;
	struct kmad_send_buf *bufs[KT_ORDER_WAITING + 1];
	unsigned int seen[KT_ORDER_WAITING + 1];	/* index of each, in
							 * callback order
							 */
	atomic_t n;
	struct completion entered;	/* the first callback runs */
	struct completion go;		/* ... and may return */
};

static void kt_order_handler(struct kmad_agent *agent,
			     struct kmad_send_wc *wc)
{
	struct kt_order *o = agent->context;
	unsigned long i = (unsigned long)wc->send_buf->context[0];
	int k = atomic_inc_return(&o->n) - 1;

	if (k <= KT_ORDER_WAITING)
		o->seen[k] = i;
	if (k == 0) {
		complete(&o->entered);
		wait_for_completion_timeout(&o->go, 20 * HZ);
	}
}

static void kt_order_recv(struct kmad_agent *agent,
			  struct kmad_send_buf *request,
			  struct kmad_recv_wc *wc)
{
	kmad_free_recv(wc);
}

static void dereg_late_completion_keeps_order(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *late;
	struct kt_order *o;
	struct kt_unreg u;
	unsigned int i;

	o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, o);
	o->f = f;
	init_completion(&o->entered);
	init_completion(&o->go);
	/* Send-only: flow control lets 128 through, all of these. */
	u.agent = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, NULL,
				      kt_order_handler, kt_order_recv, o);
	KUNIT_ASSERT_FALSE(test, IS_ERR(u.agent));
	for (i = 0; i <= KT_ORDER_WAITING; i++) {
		o->bufs[i] = kt_request(f, u.agent, KMAD_METHOD_GET, i + 1,
					60000, 0);
		o->bufs[i]->context[0] = (void *)(unsigned long)i;
		kt_post(f, o->bufs[i]);
	}
	for (i = 0; i < KT_ORDER_WAITING; i++)
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	late = o->bufs[KT_ORDER_WAITING];
	KUNIT_ASSERT_EQ(test, kt_state(o->bufs[0], NULL), KMAD_SS_WAIT_RESP);
	KUNIT_ASSERT_EQ(test, kt_state(late, NULL), KMAD_SS_SENDING);

	kt_unreg_start(f, &u, u.agent);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&o->entered,
							  20 * HZ), 0UL);
	/* The first batch is being delivered; the hardware gives the last
	 * send back now, and the CQ drain (not the blocked work) ends it.
	 */
	KUNIT_EXPECT_EQ(test, kmad_sim_complete_send(f->fab, KT_DEV0, KT_QPN,
						     0, KMAD_WC_SUCCESS,
						     false), 0);
	KUNIT_EXPECT_EQ(test, kmad_sim_fire_cq_event(f->fab, KT_DEV0, KT_QPN,
						     false), 0);
	for (i = 0; i < 5000 && kt_state(late, NULL) != KMAD_SS_DONE; i++)
		usleep_range(1000, 2000);
	KUNIT_EXPECT_EQ(test, kt_state(late, NULL), KMAD_SS_DONE);
	complete(&o->go);
	kt_unreg_wait(f, &u);

	KUNIT_ASSERT_EQ(test, atomic_read(&o->n), KT_ORDER_WAITING + 1);
	for (i = 0; i <= KT_ORDER_WAITING; i++)
		KUNIT_EXPECT_EQ_MSG(test, o->seen[i], i, "callback %u", i);
	for (i = 0; i <= KT_ORDER_WAITING; i++)
		kmad_free_send_buf(o->bufs[i]);
}

struct kt_last_ref {
	struct kmad_agent *agent;
	struct completion go;
	struct completion done;
};

static int kt_last_ref_fn(void *arg)
{
	struct kt_last_ref *l = arg;

	wait_for_completion(&l->go);
	kmad_unregister_agent(l->agent);
	complete(&l->done);
	return 0;
}

/*
 * A post that races an unregister holding the device's last reference:
 * the device went away (the provider removed it; the agent stays
 * registered, flushed) and the agent's reference is the last.  A post in
 * its RCU read section (the test holds one, as kmad_post_send() does from
 * its start) while the unregister returns must still read the agent's
 * port and get -ESHUTDOWN: the device, like the agent, is freed only
 * after a grace period.  Before, unregister freed it at once (KASAN:
 * use-after-free in kmad_post_send()).
 */
static void dereg_post_races_last_device_ref(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       1, 0, 0);
	unsigned long end = jiffies + 5 * HZ;
	struct task_struct *t;
	struct kt_last_ref *l;
	bool done;
	int ret;

	l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, l);
	l->agent = f->agent;
	init_completion(&l->go);
	init_completion(&l->done);
	kmad_sim_destroy(f->fab);
	f->fab = NULL;
	kmad_port_put(f->port[KT_DEV0]);
	kmad_port_put(f->port[KT_DEV1]);
	f->port[KT_DEV0] = NULL;
	f->port[KT_DEV1] = NULL;
	t = kthread_run(kt_last_ref_fn, l, "kt_last_ref");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	/* From here the thread owns the agent. */
	f->agent = NULL;

	rcu_read_lock();
	complete(&l->go);
	/* No sleeping in the read section: spin (preemptible) until the
	 * unregister returned.
	 */
	while (!(done = completion_done(&l->done)) && time_before(jiffies, end))
		cpu_relax();
	ret = kmad_post_send(buf);
	rcu_read_unlock();

	wait_for_completion(&l->done);
	KUNIT_EXPECT_TRUE_MSG(test, done, "unregister took over 5 s");
	KUNIT_EXPECT_EQ(test, ret, -ESHUTDOWN);
	kmad_free_send_buf(buf);
}

static struct kunit_case dereg_cases[] = {
	KUNIT_CASE(dereg_sends_in_every_state),
	KUNIT_CASE(dereg_post_while_deregistering_fails),
	KUNIT_CASE(dereg_idle_then_late_response),
	KUNIT_CASE(dereg_concurrent_agents),
	KUNIT_CASE(dereg_port_removal_flushes),
	KUNIT_CASE(dereg_port_removal_keeps_decided_outcomes),
	KUNIT_CASE(dereg_backlog_not_sent_when_slot_freed),
	KUNIT_CASE(dereg_port_removal_flushes_overflow),
	KUNIT_CASE(dereg_unregister_inside_port_flush),
	KUNIT_CASE(dereg_overlapping_stops),
	KUNIT_CASE(dereg_late_completion_keeps_order),
	KUNIT_CASE(dereg_overflow_send_flushed_at_once),
	KUNIT_CASE(dereg_repost_from_handler_refused),
	KUNIT_CASE(dereg_queued_request_delivered_before_return),
	KUNIT_CASE(dereg_post_races_last_device_ref),
	KUNIT_CASE(dereg_no_response_matches_after_mark),
	KUNIT_CASE(dereg_no_deadline_after_mark),
	{}
};

static struct kunit_suite dereg_suite = {
	.name = "kmad_deregister",
	.init = kt_fix_init,
	.exit = kt_fix_exit,
	.test_cases = dereg_cases,
};

kunit_test_suites(&dereg_suite);

MODULE_DESCRIPTION("KUnit tests for kmad agent unregistration");
MODULE_LICENSE("GPL");
