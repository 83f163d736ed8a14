// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_handlers: what a ULP's send_handler and recv_handler may do.
 *
 * Every handler runs from its agent's work, never from a CQ drain and
 * never under a kmad lock, so a handler may wait for kmad: look up ports,
 * register clients, unregister *other* agents, also while a device is
 * being removed.  Unregistering its own agent is refused (-EDEADLK), never
 * a hang.  While recv_handler runs for a response, the matched request is
 * still kmad's (posted).
 *
 * A case whose handler would block kmad waits for it with a timeout, so a
 * regression fails the case instead of hanging the run.
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>

#include "kmad_test.h"

#define KH_WAIT		(20 * HZ)

enum kh_action {
	KH_NOTHING,
	KH_UNREGISTER_SELF,	/* kmad_unregister_agent(own agent) */
	KH_UNREGISTER_OTHER,	/* kmad_unregister_agent(kh->other) */
	KH_PORT_GET,		/* kmad_port_get() + kmad_port_put() */
	KH_REGISTER_CLIENT,	/* kmad_register_client(&kh->client) */
	KH_TOUCH_REQUEST,	/* post/cancel/modify the matched request */
};

struct kh_ctx {
	struct kt_fix *f;
	enum kh_action action;
	struct kmad_agent *agent;	/* the agent whose handler acts */
	struct kmad_agent *other;	/* KH_UNREGISTER_OTHER */
	int result[3];			/* what the calls returned */
	bool acted;
	struct completion handler_in;	/* the acting handler started */
	struct completion handler_out;	/* ... and returned */
	struct kmad_client client;
	atomic_t client_adds;		/* for this fabric's device 1 */
	atomic_t client_removes;
	atomic_t client_adds_dev0;
	char dev1_name[KMAD_NAME_LEN];
};

static void kh_act(struct kh_ctx *kh, struct kmad_agent *agent,
		   struct kmad_send_buf *request)
{
	struct kmad_port *port;

	if (kh->acted || agent != kh->agent || kh->action == KH_NOTHING)
		return;
	kh->acted = true;
	complete(&kh->handler_in);
	switch (kh->action) {
	case KH_UNREGISTER_SELF:
		kh->result[0] = kmad_unregister_agent(agent);
		break;
	case KH_UNREGISTER_OTHER:
		kh->result[0] = kmad_unregister_agent(kh->other);
		/* The other agent's callbacks all ran before it returned. */
		kh->result[1] = atomic_read(&kh->f->sends);
		break;
	case KH_PORT_GET:
		port = kmad_port_get(kh->dev1_name, 1);
		kh->result[0] = port ? 0 : -ENODEV;
		kmad_port_put(port);
		break;
	case KH_REGISTER_CLIENT:
		kh->result[0] = kmad_register_client(&kh->client);
		break;
	case KH_TOUCH_REQUEST:
		kh->result[0] = kmad_post_send(request);
		kh->result[1] = kmad_cancel_send(request);
		kh->result[2] = kmad_modify_send(request, 1000);
		break;
	default:
		break;
	}
	complete(&kh->handler_out);
}

/* The running case's context (handlers get the kt_fix as theirs). */
static struct kh_ctx *kh_current;

static void kh_send_handler(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	kh_act(kh_current, agent, NULL);
	kt_send_handler(agent, wc);
}

static void kh_recv_handler(struct kmad_agent *agent,
			    struct kmad_send_buf *request,
			    struct kmad_recv_wc *wc)
{
	kh_act(kh_current, agent, request);
	kt_recv_handler(agent, request, wc);
}

static int kh_client_add(struct kmad_client *client, struct kmad_port *port,
			 void **data)
{
	struct kh_ctx *kh = container_of(client, struct kh_ctx, client);

	/* Other suites' fabrics may be registered too: count ours. */
	if (port == kh->f->port[KT_DEV1])
		atomic_inc(&kh->client_adds);
	if (port == kh->f->port[KT_DEV0])
		atomic_inc(&kh->client_adds_dev0);
	return 0;
}

static void kh_client_remove(struct kmad_client *client,
			     struct kmad_port *port, void *data)
{
	struct kh_ctx *kh = container_of(client, struct kh_ctx, client);

	if (port == kh->f->port[KT_DEV1])
		atomic_inc(&kh->client_removes);
}

static int kh_init(struct kunit *test)
{
	struct kh_ctx *kh;
	int ret;

	ret = kt_fix_init(test);
	if (ret)
		return ret;
	kh = kunit_kzalloc(test, sizeof(*kh), GFP_KERNEL);
	if (!kh)
		return -ENOMEM;
	kh->f = test->priv;
	init_completion(&kh->handler_in);
	init_completion(&kh->handler_out);
	kh->client.name = "kmad_handlers_test";
	kh->client.add = kh_client_add;
	kh->client.remove = kh_client_remove;
	strscpy(kh->dev1_name, kmad_port_dev_name(kh->f->port[KT_DEV1]),
		sizeof(kh->dev1_name));
	kh_current = kh;
	return 0;
}

static void kh_exit(struct kunit *test)
{
	kt_fix_exit(test);
	kh_current = NULL;
}

/* A requester agent on device 0 whose handlers act as @kh says. */
static struct kmad_agent *kh_agent(struct kh_ctx *kh)
{
	struct kmad_agent *agent;

	agent = kmad_register_agent(kh->f->port[KT_DEV0], KMAD_QPT_GSI, NULL,
				    kh_send_handler, kh_recv_handler, kh->f);
	KUNIT_ASSERT_FALSE(kh->f->test, IS_ERR(agent));
	return agent;
}

/* An agent on device 0 that takes unsolicited Gets of KT_CLASS. */
static struct kmad_agent *kh_server(struct kh_ctx *kh)
{
	struct kmad_reg_req req = {
		.mgmt_class = KT_CLASS,
		.class_version = KT_VERSION,
	};
	struct kmad_agent *agent;

	set_bit(KMAD_METHOD_GET, req.method_mask);
	agent = kmad_register_agent(kh->f->port[KT_DEV0], KMAD_QPT_GSI, &req,
				    kh_send_handler, kh_recv_handler, kh->f);
	KUNIT_ASSERT_FALSE(kh->f->test, IS_ERR(agent));
	return agent;
}

/* Make a Get of KT_CLASS arrive at device 0, as from device 1. */
static void kh_inject_get(struct kh_ctx *kh, u32 tid)
{
	struct kmad_mad mad = {};

	mad.mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	mad.mad_hdr.mgmt_class = KT_CLASS;
	mad.mad_hdr.class_version = KT_VERSION;
	mad.mad_hdr.method = KMAD_METHOD_GET;
	mad.mad_hdr.tid = cpu_to_be64(tid);
	mad.mad_hdr.attr_id = cpu_to_be16(KMAD_PMA_ATTR_PORT_COUNTERS);
	KUNIT_ASSERT_EQ(kh->f->test,
			kmad_sim_inject(kh->f->fab, KT_DEV0, KT_QPN, &mad,
					sizeof(mad),
					kmad_port_lid(kh->f->port[KT_DEV1]),
					KT_QPN), 0);
}

static void kh_wait_out(struct kh_ctx *kh)
{
	KUNIT_ASSERT_NE(kh->f->test,
			wait_for_completion_timeout(&kh->handler_out, KH_WAIT),
			0UL);
}

/* send_handler unregistering its own agent is refused at once with
 * -EDEADLK; the agent keeps working and unregisters normally later.
 */
static void handler_unregister_self_from_send_handler(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kh_ctx *kh = kh_current;
	struct kmad_send_buf *a, *b;

	kh->agent = kh_agent(kh);
	kh->action = KH_UNREGISTER_SELF;
	a = kt_request(f, kh->agent, KMAD_METHOD_SET, 1, 0, 0);
	kt_post(f, a);
	kmad_sim_complete_send(f->fab, KT_DEV0, KT_QPN, 0, KMAD_WC_SUCCESS,
			       false);
	kmad_sim_fire_cq_event(f->fab, KT_DEV0, KT_QPN, false);
	kh_wait_out(kh);
	KUNIT_EXPECT_EQ(test, kh->result[0], -EDEADLK);

	b = kt_request(f, kh->agent, KMAD_METHOD_SET, 2, 0, 0);
	kt_post(f, b);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 1, b, KMAD_SEND_OK);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(kh->agent), 0);
	kmad_free_send_buf(a);
	kmad_free_send_buf(b);
}

/* The same from recv_handler, for an unsolicited request. */
static void handler_unregister_self_from_recv_handler(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kh_ctx *kh = kh_current;

	kh->agent = kh_server(kh);
	kh->action = KH_UNREGISTER_SELF;
	kh_inject_get(kh, 7);
	kmad_sim_fire_cq_event(f->fab, KT_DEV0, KT_QPN, false);
	kh_wait_out(kh);
	KUNIT_EXPECT_EQ(test, kh->result[0], -EDEADLK);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->recvs), 1);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(kh->agent), 0);
}

/* A handler unregisters another agent of the same QP whose send the
 * hardware still holds: it waits for that send's completion, which the
 * CQ drain can still reap, and returns once the other agent is gone.
 */
static void handler_unregister_other_agent_same_qp(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kh_ctx *kh = kh_current;
	struct kmad_send_buf *held;

	kh->agent = kh_server(kh);
	kh->other = f->agent;		/* the fixture's requester */
	f->agent = NULL;
	kh->action = KH_UNREGISTER_OTHER;
	held = kt_request(f, kh->other, KMAD_METHOD_GET, 1, 1000, 0);
	kt_post(f, held);

	kh_inject_get(kh, 8);
	kmad_sim_fire_cq_event(f->fab, KT_DEV0, KT_QPN, false);
	KUNIT_ASSERT_NE(test,
			wait_for_completion_timeout(&kh->handler_in, KH_WAIT),
			0UL);
	/* The handler now waits for @held, which the hardware holds: its
	 * unregister cannot return, nor @held's callback run.
	 */
	msleep(50);
	KUNIT_EXPECT_FALSE(test, completion_done(&kh->handler_out));
	KUNIT_EXPECT_EQ(test, atomic_read(&f->sends), 0);
	/* Complete it on the wire. */
	KUNIT_ASSERT_EQ(test,
			kmad_sim_complete_send(f->fab, KT_DEV0, KT_QPN, 0,
					       KMAD_WC_SUCCESS, false), 0);
	kmad_sim_fire_cq_event(f->fab, KT_DEV0, KT_QPN, false);
	kh_wait_out(kh);
	KUNIT_EXPECT_EQ(test, kh->result[0], 0);
	KUNIT_EXPECT_EQ(test, kh->result[1], 1);
	kt_settle(f);
	kt_expect_send(f, 0, held, KMAD_SEND_FLUSHED);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(kh->agent), 0);
	kmad_free_send_buf(held);
}

/* Remove device 0 in a kthread while a send the hardware holds makes
 * the acting handler run; the removal must finish.
 */
static void kh_remove_with_handler(struct kunit *test, enum kh_action act)
{
	struct kt_fix *f = test->priv;
	struct kh_ctx *kh = kh_current;
	struct kmad_send_buf *held;
	struct kt_remover *r;

	kh->agent = kh_agent(kh);
	kh->action = act;
	held = kt_request(f, kh->agent, KMAD_METHOD_GET, 1, 1000, 0);
	kt_post(f, held);

	r = kt_remove_start(f, KT_DEV0);
	KUNIT_ASSERT_NOT_NULL(test, r);
	kh_wait_out(kh);
	KUNIT_ASSERT_TRUE(test, kt_remove_wait(f, r, KH_WAIT));
	KUNIT_EXPECT_EQ(test, kh->result[0], 0);
	kt_settle(f);
	kt_expect_send(f, 0, held, KMAD_SEND_FLUSHED);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(kh->agent), 0);
	kmad_free_send_buf(held);
}

/* A send_handler that looks up a port while its device is removed. */
static void handler_port_get_during_removal(struct kunit *test)
{
	kh_remove_with_handler(test, KH_PORT_GET);
}

/* A send_handler that registers a client while its device is removed:
 * the client's add runs afterwards, for the port still there only.
 */
static void handler_register_client_during_removal(struct kunit *test)
{
	struct kh_ctx *kh = kh_current;

	kh_remove_with_handler(test, KH_REGISTER_CLIENT);
	kmad_device_flush(kmad_sim_device(kh->f->fab, KT_DEV1));
	KUNIT_EXPECT_EQ(test, atomic_read(&kh->client_adds), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&kh->client_adds_dev0), 0);
	kmad_unregister_client(&kh->client);
	KUNIT_EXPECT_EQ(test, atomic_read(&kh->client_removes), 1);
}

/*
 * A handler registering a client registered already gets -EBUSY, as in
 * process context (mad.h), and the client is not added again: the
 * handler's path, which cannot take the client lock G, checks under the
 * spinlock every writer of the client list holds.
 */
static void handler_register_client_twice(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kh_ctx *kh = kh_current;

	KUNIT_ASSERT_EQ(test, kmad_register_client(&kh->client), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&kh->client_adds), 1);
	kh->agent = kh_server(kh);
	kh->action = KH_REGISTER_CLIENT;
	kh_inject_get(kh, 9);
	kmad_sim_fire_cq_event(f->fab, KT_DEV0, KT_QPN, false);
	kh_wait_out(kh);
	KUNIT_EXPECT_EQ(test, kh->result[0], -EBUSY);
	kt_settle(f);
	kmad_device_flush(kmad_sim_device(f->fab, KT_DEV1));
	KUNIT_EXPECT_EQ(test, atomic_read(&kh->client_adds), 1);
	kmad_unregister_client(&kh->client);
	KUNIT_EXPECT_EQ(test, atomic_read(&kh->client_removes), 1);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(kh->agent), 0);
}

/* Inside recv_handler for a response, the matched request is still
 * posted: post -EINVAL, cancel and modify -EALREADY; after its
 * send_handler it may be posted again.
 */
static void handler_request_still_posted_in_recv_handler(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kh_ctx *kh = kh_current;
	struct kmad_send_buf *req;

	kh->agent = kh_agent(kh);
	kh->action = KH_TOUCH_REQUEST;
	req = kt_request(f, kh->agent, KMAD_METHOD_GET, 1, 1000, 0);
	kt_post(f, req);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_respond(f, req, 0);
	kt_event(f, KT_DEV0);
	kh_wait_out(kh);
	KUNIT_EXPECT_EQ(test, kh->result[0], -EINVAL);
	KUNIT_EXPECT_EQ(test, kh->result[1], -EALREADY);
	KUNIT_EXPECT_EQ(test, kh->result[2], -EALREADY);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_recv(f, 0, req, KMAD_METHOD_GET_RESP);
	kt_expect_send(f, 1, req, KMAD_SEND_OK);
	/* Now it is the ULP's again. */
	req->timeout_ms = 0;
	req->mad->mad_hdr.method = KMAD_METHOD_SET;
	kt_post(f, req);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, kt_events(f), 3);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(kh->agent), 0);
	kmad_free_send_buf(req);
}

/* One agent of handler_cancel_chain_flushed. */
struct kh_link {
	struct kmad_send_buf *buf;
	struct kh_link *next;		/* whose send this handler cancels */
	atomic_t *calls;
	int cancel_ret;
	enum kmad_send_status status;
};

#define KH_CHAIN	12

/*
 * A send_handler that, some time after its callback began, cancels the
 * next agent's send: every callback is queued by the handler before it,
 * at the end of that handler's run.
 */
static void kh_chain_handler(struct kmad_agent *agent,
			     struct kmad_send_wc *wc)
{
	struct kh_link *l = agent->context;

	l->status = wc->status;
	msleep(20);
	if (l->next)
		l->cancel_ret = kmad_cancel_send(l->next->buf);
	atomic_inc(l->calls);
}

/*
 * kmad_device_flush() waits for a chain of handlers, each queued by the
 * one before, however long: it repeats its rounds until one in which none
 * of kmad's work ran, where it used to stop after a fixed number of
 * workqueue flushes.
 */
static void handler_cancel_chain_flushed(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent *agent[KH_CHAIN];
	struct kh_link *link;
	atomic_t calls = ATOMIC_INIT(0);
	unsigned int i;

	link = kunit_kcalloc(test, KH_CHAIN, sizeof(*link), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, link);
	for (i = 0; i < KH_CHAIN; i++) {
		link[i].calls = &calls;
		link[i].next = i + 1 < KH_CHAIN ? &link[i + 1] : NULL;
		agent[i] = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI,
					       NULL, kh_chain_handler, NULL,
					       &link[i]);
		KUNIT_ASSERT_FALSE(test, IS_ERR(agent[i]));
		link[i].buf = kt_request(f, agent[i], KMAD_METHOD_GET, i + 1,
					 1000, 0);
		kt_post(f, link[i].buf);
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	}
	KUNIT_ASSERT_EQ(test, atomic_read(&calls), 0);

	KUNIT_ASSERT_EQ(test, kmad_cancel_send(link[0].buf), 0);
	kmad_device_flush(kmad_sim_device(f->fab, KT_DEV0));
	KUNIT_EXPECT_EQ(test, atomic_read(&calls), KH_CHAIN);

	/* Whatever the flush left, before anything is freed. */
	KUNIT_EXPECT_TRUE(test, kt_wait_until(atomic_read(&calls) == KH_CHAIN,
					      10000));
	for (i = 0; i < KH_CHAIN; i++) {
		KUNIT_EXPECT_EQ(test, link[i].status, KMAD_SEND_CANCELED);
		KUNIT_EXPECT_EQ(test, link[i].cancel_ret, 0);
		KUNIT_EXPECT_EQ(test, kmad_unregister_agent(agent[i]), 0);
		kmad_free_send_buf(link[i].buf);
	}
}

static struct kunit_case kh_cases[] = {
	KUNIT_CASE(handler_unregister_self_from_send_handler),
	KUNIT_CASE(handler_unregister_self_from_recv_handler),
	KUNIT_CASE(handler_unregister_other_agent_same_qp),
	KUNIT_CASE(handler_port_get_during_removal),
	KUNIT_CASE(handler_register_client_during_removal),
	KUNIT_CASE(handler_register_client_twice),
	KUNIT_CASE(handler_request_still_posted_in_recv_handler),
	KUNIT_CASE(handler_cancel_chain_flushed),
	{}
};

static struct kunit_suite kh_suite = {
	.name = "kmad_handlers",
	.init = kh_init,
	.exit = kh_exit,
	.test_cases = kh_cases,
};

kunit_test_suites(&kh_suite);

MODULE_DESCRIPTION("KUnit tests for what kmad's handlers may do");
MODULE_LICENSE("GPL");
