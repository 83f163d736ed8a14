// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_port: a provider reports a port's new LID, LMC and SM LID with
 * kmad_device_port_changed(); kmad_port_lid() and kmad_port_sm_lid() show
 * them at once, and clients' port_changed callbacks follow, only for the
 * port that changed, only between their add and remove, never after the
 * device is gone.  The device's removal waits for a provider op in
 * progress, and flushes the ports' QPs before clients' remove calls; a
 * device registers once, under a name no registered device has, and its
 * port attributes are fixed from then.
 */

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>

#include "kmad_test.h"

/* A client that counts its callbacks for the two ports of the fixture. */
struct pt_client {
	struct kmad_client client;
	struct kt_fix *f;
	atomic_t added;
	atomic_t removed;
	atomic_t changed[2];		/* port_changed calls, per device */
	u16 seen_lid[2];		/* kmad_port_lid() inside the call */
	u32 seen_rereg[2];		/* kmad_port_reregisters() in it */
	bool gone[2];			/* remove ran for the device's port */
	bool late;			/* port_changed after remove */
	bool block;			/* first port_changed waits for... */
	struct completion entered;	/* ...signalling this, */
	struct completion release;	/* ...until this */
	/* port_changed for device 0 sleeps, then cancels this send */
	struct kmad_send_buf *cancel_buf;
	int cancel_ret;
	bool registered;
};

/*
 * A client whose add registers an agent on device 0's port and whose
 * remove unregisters it, as kmad_umad does.
 */
struct pt_flusher {
	struct kmad_client client;
	struct kt_fix *f;
	struct kmad_agent *agent;
	int removed;
	int unreg_ret;
	enum kmad_qp_run run_at_remove;	/* its QP1, as remove began */
	int qpn_at_remove;		/* kmad_port_qp_num() then */
};

/* The case's client, unregistered by pt_exit() if an assertion ended it. */
static struct pt_client *pt_current;

/* port_remove_stops_qps_first's client, if an assertion ended the case. */
static struct pt_flusher *pt_flusher_current;

/* port_remove_stuck_holds_no_global_lock's hold of a QP's stop. */
struct pt_stuck {
	struct kmad_qp_info *qpi;
	struct completion entered, release;
};

static struct pt_stuck *pt_stuck_ctx;

static int pt_dev_of(struct pt_client *c, struct kmad_port *port)
{
	if (port == c->f->port[0])
		return 0;
	if (port == c->f->port[1])
		return 1;
	return -1;		/* another test's fabric: ignored */
}

static int pt_add(struct kmad_client *client, struct kmad_port *port,
		  void **data)
{
	struct pt_client *c = container_of(client, struct pt_client, client);

	if (pt_dev_of(c, port) < 0)
		return -ENODEV;
	atomic_inc(&c->added);
	*data = c;
	return 0;
}

static void pt_remove(struct kmad_client *client, struct kmad_port *port,
		      void *data)
{
	struct pt_client *c = data;

	c->gone[pt_dev_of(c, port)] = true;
	atomic_inc(&c->removed);
}

static void pt_changed(struct kmad_client *client, struct kmad_port *port,
		       void *data)
{
	struct pt_client *c = data;
	int dev = pt_dev_of(c, port);

	if (dev < 0)
		return;
	if (c->gone[dev])
		c->late = true;
	c->seen_lid[dev] = kmad_port_lid(port);
	c->seen_rereg[dev] = kmad_port_reregisters(port);
	if (dev == 0 && c->cancel_buf) {
		/* Still running when the test's settle begins. */
		msleep(300);
		c->cancel_ret = kmad_cancel_send(c->cancel_buf);
	}
	atomic_inc(&c->changed[dev]);
	if (c->block) {
		c->block = false;
		complete(&c->entered);
		wait_for_completion(&c->release);
	}
}

/* A zeroed @c as the case's client, not registered. */
static void pt_client_init(struct pt_client *c, struct kt_fix *f)
{
	c->f = f;
	c->client.name = "kmad_port_test";
	c->client.add = pt_add;
	c->client.remove = pt_remove;
	c->client.port_changed = pt_changed;
	init_completion(&c->entered);
	init_completion(&c->release);
}

static struct pt_client *pt_client(struct kunit *test)
{
	struct pt_client *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	pt_client_init(c, test->priv);
	KUNIT_ASSERT_EQ(test, kmad_register_client(&c->client), 0);
	c->registered = true;
	pt_current = c;
	KUNIT_ASSERT_EQ(test, atomic_read(&c->added), 2);
	return c;
}

static void pt_unregister(struct pt_client *c)
{
	if (c->registered)
		kmad_unregister_client(&c->client);
	c->registered = false;
}

static void pt_exit(struct kunit *test)
{
	struct kt_fix *f = test->priv;

	/* A case that ended early may have left a query held. */
	if (f && !IS_ERR_OR_NULL(f->fab))
		kmad_sim_hold_queries(f->fab, KT_DEV1, false);
	WRITE_ONCE(kmad_test_agent_work_hook, NULL);
	/* port_remove_stuck_holds_no_global_lock ended early: let its
	 * removal go on (its memory is left to the threads).
	 */
	if (pt_stuck_ctx) {
		complete_all(&pt_stuck_ctx->release);
		kmad_test_set_qp_hook(KMAD_TEST_QP_STOP, NULL);
		WRITE_ONCE(pt_stuck_ctx, NULL);
	}
	if (pt_current) {
		complete_all(&pt_current->release);
		pt_unregister(pt_current);
		pt_current = NULL;
	}
	kt_fix_exit(test);
	/* After the fabric: its removal ended the sends the agent had. */
	if (pt_flusher_current) {
		kmad_unregister_client(&pt_flusher_current->client);
		kfree(pt_flusher_current);
		pt_flusher_current = NULL;
	}
}

static int pt_change(struct kt_fix *f, unsigned int dev, u16 lid, u16 sm_lid)
{
	struct kmad_port_attr attr = { .lid = lid, .lmc = 2, .sm_lid = sm_lid };

	return kmad_device_port_changed(kmad_sim_device(f->fab, dev), 1,
					&attr);
}

/* New values at once; the client's callback once the work has run, for
 * the port that changed only.
 */
static void port_changed_tells_clients(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct pt_client *c = pt_client(test);

	KUNIT_EXPECT_EQ(test, kmad_port_lid(f->port[1]), 2);
	KUNIT_ASSERT_EQ(test, pt_change(f, KT_DEV1, 0x42, 9), 0);
	KUNIT_EXPECT_EQ(test, kmad_port_lid(f->port[1]), 0x42);
	KUNIT_EXPECT_EQ(test, kmad_port_lmc(f->port[1]), 2);
	KUNIT_EXPECT_EQ(test, kmad_port_sm_lid(f->port[1]), 9);
	KUNIT_EXPECT_EQ(test, kmad_port_lid(f->port[0]), 1);

	kmad_device_flush(kmad_sim_device(f->fab, KT_DEV1));
	KUNIT_EXPECT_EQ(test, atomic_read(&c->changed[1]), 1);
	KUNIT_EXPECT_EQ(test, c->seen_lid[1], 0x42);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->changed[0]), 0);

	/* After unregistering, no more calls. */
	pt_unregister(c);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->removed), 2);
	KUNIT_ASSERT_EQ(test, pt_change(f, KT_DEV1, 0x43, 9), 0);
	kmad_device_flush(kmad_sim_device(f->fab, KT_DEV1));
	KUNIT_EXPECT_EQ(test, atomic_read(&c->changed[1]), 1);
	KUNIT_EXPECT_EQ(test, kmad_port_lid(f->port[1]), 0x43);
}

/* Bad calls are refused and change nothing. */
static void port_changed_bad_calls(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_device *dev = kmad_sim_device(f->fab, KT_DEV1);
	struct kmad_port_attr attr = { .lid = 5 };

	KUNIT_EXPECT_EQ(test, kmad_device_port_changed(NULL, 1, &attr),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_device_port_changed(dev, 0, &attr),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_device_port_changed(dev, 2, &attr),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_device_port_changed(dev, 1, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_port_lid(f->port[1]), 2);
}

/*
 * The SM's ClientReregister: counted at once (kmad_port_reregisters()),
 * for that port only, and told to the clients like a change (two close
 * together may be told in one call); the port's values stay.  Bad calls
 * are refused and count nothing.
 */
static void port_reregister_tells_clients(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_device *dev = kmad_sim_device(f->fab, KT_DEV1);
	struct pt_client *c = pt_client(test);
	int calls;

	KUNIT_EXPECT_EQ(test, kmad_port_reregisters(f->port[1]), 0U);
	KUNIT_EXPECT_EQ(test, kmad_device_port_reregister(NULL, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_device_port_reregister(dev, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_device_port_reregister(dev, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_port_reregisters(f->port[1]), 0U);
	KUNIT_EXPECT_EQ(test, kmad_port_reregisters(NULL), 0U);

	KUNIT_ASSERT_EQ(test, kmad_device_port_reregister(dev, 1), 0);
	KUNIT_ASSERT_EQ(test, kmad_device_port_reregister(dev, 1), 0);
	KUNIT_EXPECT_EQ(test, kmad_port_reregisters(f->port[1]), 2U);
	KUNIT_EXPECT_EQ(test, kmad_port_reregisters(f->port[0]), 0U);
	kmad_device_flush(dev);
	calls = atomic_read(&c->changed[1]);
	KUNIT_EXPECT_GE(test, calls, 1);
	KUNIT_EXPECT_LE(test, calls, 2);
	KUNIT_EXPECT_EQ(test, c->seen_lid[1], 2);
	/* Counted before the call: the last one saw both. */
	KUNIT_EXPECT_EQ(test, c->seen_rereg[1], 2U);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->changed[0]), 0);
	KUNIT_EXPECT_EQ(test, kmad_port_lid(f->port[1]), 2);

	pt_unregister(c);
	KUNIT_ASSERT_EQ(test, kmad_device_port_reregister(dev, 1), 0);
	kmad_device_flush(dev);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->changed[1]), calls);
	KUNIT_EXPECT_EQ(test, kmad_port_reregisters(f->port[1]), 3U);
}

struct pt_remover {
	struct kt_fix *f;
	struct completion done;
};

static int pt_remove_thread(void *arg)
{
	struct pt_remover *r = arg;

	kmad_sim_remove_device(r->f->fab, KT_DEV1);
	complete(&r->done);
	return 0;
}

/*
 * The device goes away while a client's port_changed call is running and
 * another change is queued behind it: the client hears of the queued
 * change before its remove or never, the removal waits for the running
 * call, and nothing runs afterwards (KASAN, lockdep).
 */
static void port_changed_then_removed(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct pt_client *c = pt_client(test);
	struct pt_remover r = { .f = f };
	struct task_struct *t;

	init_completion(&r.done);
	c->block = true;
	KUNIT_ASSERT_EQ(test, pt_change(f, KT_DEV1, 0x50, 1), 0);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&c->entered,
							  5 * HZ), 0UL);
	/* The first call is running and holds kmad's client lock. */
	KUNIT_ASSERT_EQ(test, pt_change(f, KT_DEV1, 0x51, 1), 0);
	t = kthread_run(pt_remove_thread, &r, "kmad_port_rm");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	msleep(50);
	KUNIT_EXPECT_FALSE(test, completion_done(&r.done));
	complete(&c->release);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&r.done, 10 * HZ),
			0UL);

	KUNIT_EXPECT_EQ(test, atomic_read(&c->removed), 1);
	KUNIT_EXPECT_GE(test, atomic_read(&c->changed[1]), 1);
	KUNIT_EXPECT_LE(test, atomic_read(&c->changed[1]), 2);
	kmad_device_flush(kmad_sim_device(f->fab, KT_DEV0));
	KUNIT_EXPECT_FALSE(test, c->late);
	pt_unregister(c);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->removed), 2);
	KUNIT_EXPECT_FALSE(test, c->late);
}

struct pt_querier {
	struct kmad_port *port;
	int ret;
	struct completion done;
};

static int pt_query_thread(void *arg)
{
	struct pt_querier *q = arg;
	union kmad_gid gid;

	q->ret = kmad_port_query_gid(q->port, 0, &gid);
	complete(&q->done);
	return 0;
}

/*
 * The device goes away while a ULP's kmad_port_query_gid() is inside the
 * provider's query_gid(): the removal waits for it to return, as after
 * kmad_device_unregister() the provider may free what its ops use (the
 * simulated fabric frees the ops themselves); a query afterwards gets
 * -ENODEV without reaching the provider.
 */
static void port_removed_during_query(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct pt_querier q = { .port = f->port[1] };
	struct pt_remover r = { .f = f };
	struct task_struct *t;
	union kmad_gid gid;
	bool returned_early;
	int i, waiting;

	init_completion(&q.done);
	init_completion(&r.done);
	KUNIT_ASSERT_EQ(test, kmad_sim_hold_queries(f->fab, KT_DEV1, true), 0);
	t = kthread_run(pt_query_thread, &q, "kmad_port_q");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (i = 0; i < 250; i++) {
		if (kmad_sim_hold_queries(f->fab, KT_DEV1, true) == 1)
			break;
		msleep(20);
	}
	KUNIT_ASSERT_LT(test, i, 250);
	/* The query is inside the provider. */
	t = kthread_run(pt_remove_thread, &r, "kmad_port_rm");
	if (IS_ERR(t))
		kmad_sim_hold_queries(f->fab, KT_DEV1, false);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	msleep(100);
	returned_early = completion_done(&r.done);
	waiting = kmad_sim_hold_queries(f->fab, KT_DEV1, false);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&q.done, 10 * HZ),
			0UL);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&r.done, 10 * HZ),
			0UL);
	KUNIT_EXPECT_FALSE_MSG(test, returned_early,
			       "removal returned with query_gid() running");
	KUNIT_EXPECT_EQ(test, waiting, 1);
	KUNIT_EXPECT_EQ(test, q.ret, 0);
	KUNIT_EXPECT_EQ(test, kmad_port_query_gid(f->port[1], 0, &gid),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, kmad_sim_hold_queries(f->fab, KT_DEV1, false),
			0);
}

/* kmad_test_agent_work_hook: every agent work run starts late. */
static void pt_agent_work_slow(struct kmad_agent_priv *agent)
{
	msleep(200);
}

/*
 * A settle sees what a client's port_changed call did: a send it canceled
 * has its callback when the settle returns, though the call was still
 * running when the settle began and the agent's work is slow to start.
 */
static void port_changed_cancel_settled(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct pt_client *c = pt_client(test);
	struct kmad_send_buf *buf;
	int n;

	buf = kt_request(f, f->agent, KMAD_METHOD_GET, 0x77, 10000, 0);
	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 0);	/* waiting for a response */

	c->cancel_buf = buf;
	WRITE_ONCE(kmad_test_agent_work_hook, pt_agent_work_slow);
	KUNIT_EXPECT_EQ(test, pt_change(f, KT_DEV0, 1, 9), 0);
	kt_settle(f);
	n = kt_events(f);
	WRITE_ONCE(kmad_test_agent_work_hook, NULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->changed[0]), 1);
	KUNIT_EXPECT_EQ(test, c->cancel_ret, 0);
	KUNIT_EXPECT_EQ(test, n, 1);
	/* The callback must have run before the buffer is freed. */
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	KUNIT_EXPECT_EQ(test, f->ev[0].kind, KT_SEND);
	KUNIT_EXPECT_EQ(test, f->ev[0].status, KMAD_SEND_CANCELED);
	pt_unregister(c);
	kmad_free_send_buf(buf);
}

/*
 * A device registers once: after its unregister (which tore its ports
 * down, address handle caches included) registering it again is refused.
 */
static void port_device_registers_once(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_device *dev = kmad_sim_device(f->fab, KT_DEV1);

	KUNIT_ASSERT_NOT_NULL(test, dev);
	KUNIT_EXPECT_EQ(test, kmad_device_register(dev), -EINVAL);
	kmad_device_unregister(dev);
	KUNIT_EXPECT_EQ(test, kmad_device_register(dev), -EINVAL);
}

/*
 * A provider whose every op fails (or does nothing), counting the calls:
 * kmad_device_register() of its device never gets past the first QP.
 */
static atomic_t pt_stub_calls;

static int pt_stub_create_cq(struct kmad_cq *cq, unsigned int depth)
{
	atomic_inc(&pt_stub_calls);
	return -EIO;
}

static void pt_stub_destroy_cq(struct kmad_cq *cq)
{
	atomic_inc(&pt_stub_calls);
}

static int pt_stub_create_qp(struct kmad_qp *qp, struct kmad_cq *cq,
			     unsigned int sq_depth, unsigned int rq_depth)
{
	atomic_inc(&pt_stub_calls);
	return -EIO;
}

static void pt_stub_destroy_qp(struct kmad_qp *qp)
{
	atomic_inc(&pt_stub_calls);
}

static int pt_stub_modify_qp(struct kmad_qp *qp, enum kmad_qp_state state)
{
	atomic_inc(&pt_stub_calls);
	return -EIO;
}

static int pt_stub_post_send(struct kmad_qp *qp, const struct kmad_hw_send *wr)
{
	atomic_inc(&pt_stub_calls);
	return -EIO;
}

static int pt_stub_post_recv(struct kmad_qp *qp, const struct kmad_hw_recv *wr)
{
	atomic_inc(&pt_stub_calls);
	return -EIO;
}

static int pt_stub_poll_cq(struct kmad_cq *cq, int nent, struct kmad_wc *wc)
{
	atomic_inc(&pt_stub_calls);
	return 0;
}

static int pt_stub_req_notify_cq(struct kmad_cq *cq, unsigned int flags)
{
	atomic_inc(&pt_stub_calls);
	return 0;
}

static const struct kmad_provider_ops pt_stub_ops = {
	.owner = THIS_MODULE,
	.create_cq = pt_stub_create_cq,
	.destroy_cq = pt_stub_destroy_cq,
	.create_qp = pt_stub_create_qp,
	.destroy_qp = pt_stub_destroy_qp,
	.modify_qp = pt_stub_modify_qp,
	.post_send = pt_stub_post_send,
	.post_recv = pt_stub_post_recv,
	.poll_cq = pt_stub_poll_cq,
	.req_notify_cq = pt_stub_req_notify_cq,
};

static int pt_stub_query_pkey(struct kmad_device *dev, u8 port_num,
			      unsigned int index, u16 *pkey)
{
	atomic_inc(&pt_stub_calls);
	return -EIO;
}

/* The stub with a P_Key table of its own (pt_stub_ops and query_pkey). */
static struct kmad_provider_ops pt_stub_pkey_ops;

/*
 * A provider with query_pkey that never described a port (no
 * kmad_device_set_port_attr(), which refuses a P_Key table of no entry):
 * the registration refuses the port's table of no entry too, -EINVAL
 * before any provider call.  (It registered: every post on the port, and
 * kmad's own answers, then failed -EINVAL, and kmad_umad made it an empty
 * pkeys directory.)
 */
static void port_register_no_pkey_table(struct kunit *test)
{
	struct kmad_port_attr attr = {
		.link_layer = KMAD_LINK_LAYER_INFINIBAND,
		.lid = 0x99,
		.pkey_tbl_len = 1,
	};
	struct kmad_device *dev;

	pt_stub_pkey_ops = pt_stub_ops;
	pt_stub_pkey_ops.query_pkey = pt_stub_query_pkey;
	atomic_set(&pt_stub_calls, 0);
	dev = kmad_device_alloc(&pt_stub_pkey_ops, "kt_no_pkeys", 2, 0);
	KUNIT_ASSERT_NOT_NULL(test, dev);
	KUNIT_EXPECT_EQ(test, kmad_device_set_port_attr(dev, 1, &attr), 0);
	KUNIT_EXPECT_EQ(test, kmad_device_register(dev), -EINVAL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pt_stub_calls), 0);
	KUNIT_EXPECT_NULL(test, kmad_port_get("kt_no_pkeys", 1));
	kmad_device_free(dev);
}

/*
 * Device names are unique: a device named as a registered one is refused
 * with -EEXIST before kmad calls its provider (a second device of the name
 * would hide one of the two from kmad_port_get()).  Its provider here
 * fails every op, so that a registration let through ends at once.
 */
static void port_device_name_taken(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_port_attr attr = {
		.link_layer = KMAD_LINK_LAYER_INFINIBAND,
		.lid = 0x99,
	};
	struct kmad_device *dup;
	const char *name;
	struct kmad_port *port;

	name = kmad_device_name(kmad_sim_device(f->fab, KT_DEV1));
	atomic_set(&pt_stub_calls, 0);
	dup = kmad_device_alloc(&pt_stub_ops, name, 1, 0);
	KUNIT_ASSERT_NOT_NULL(test, dup);
	KUNIT_EXPECT_EQ(test, kmad_device_set_port_attr(dup, 1, &attr), 0);
	KUNIT_EXPECT_EQ(test, kmad_device_register(dup), -EEXIST);
	KUNIT_EXPECT_EQ(test, atomic_read(&pt_stub_calls), 0);
	port = kmad_port_get(name, 1);
	KUNIT_EXPECT_PTR_EQ(test, port, f->port[KT_DEV1]);
	kmad_port_put(port);
	kmad_device_free(dup);
}

/*
 * A registered device's port attributes are fixed: setting them is
 * -EINVAL and changes nothing (a change goes through
 * kmad_device_port_changed()).  The attributes offered are the port's
 * own but for the LID, so that only the registration can refuse them.
 */
static void port_set_attr_registered(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_device *dev = kmad_sim_device(f->fab, KT_DEV1);
	struct kmad_port_attr attr = f->port[KT_DEV1]->attr;

	KUNIT_ASSERT_EQ(test, kmad_port_lid(f->port[KT_DEV1]), 2);
	attr.lid = 0x77;
	KUNIT_EXPECT_EQ(test, kmad_device_set_port_attr(dev, 1, &attr),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_port_lid(f->port[KT_DEV1]), 2);
	KUNIT_EXPECT_EQ(test, f->port[KT_DEV1]->attr.lid, 2);
}

/*
 * A ClientReregister for a device not registered (allocated only) is
 * -EINVAL and counts nothing.
 */
static void port_reregister_unregistered(struct kunit *test)
{
	struct kmad_device *dev;

	dev = kmad_device_alloc(&pt_stub_ops, "kmad_port_unreg", 1, 0);
	KUNIT_ASSERT_NOT_NULL(test, dev);
	KUNIT_EXPECT_EQ(test, kmad_device_port_reregister(dev, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_port_reregisters(&dev->ports[0]), 0U);
	kmad_device_free(dev);
}

/*
 * A provider's event handler may report a port change while
 * kmad_device_register() sets the ports up: the change is taken (the
 * values are the port's at once), as is a ClientReregister; attributes
 * can no longer be set then.  After the registration failed, changes are
 * refused again.  The stub's first CQ creation, kmad's first provider
 * call of the registration, reports and then fails.  (Before, both
 * calls were -EINVAL until the registration ended, and the LID an SM
 * assigned meanwhile was lost.)
 */
static int pt_changed_ret, pt_rereg_ret, pt_set_ret;
static u16 pt_changed_lid, pt_changed_sm_lid;

static int pt_stub_create_cq_changed(struct kmad_cq *cq, unsigned int depth)
{
	struct kmad_device *dev = kmad_cq_device(cq);
	struct kmad_port_attr attr = {
		.link_layer = KMAD_LINK_LAYER_INFINIBAND,
		.lid = 7,
		.sm_lid = 3,
	};

	atomic_inc(&pt_stub_calls);
	pt_changed_ret = kmad_device_port_changed(dev, 1, &attr);
	pt_rereg_ret = kmad_device_port_reregister(dev, 1);
	pt_set_ret = kmad_device_set_port_attr(dev, 1, &attr);
	pt_changed_lid = kmad_port_lid(&dev->ports[0]);
	pt_changed_sm_lid = kmad_port_sm_lid(&dev->ports[0]);
	return -EIO;
}

static struct kmad_provider_ops pt_stub_changed_ops;

static void port_changed_while_registering(struct kunit *test)
{
	struct kmad_port_attr attr = {
		.link_layer = KMAD_LINK_LAYER_INFINIBAND,
		.no_smi = true,
	};
	struct kmad_device *dev;

	pt_stub_changed_ops = pt_stub_ops;
	pt_stub_changed_ops.create_cq = pt_stub_create_cq_changed;
	pt_changed_ret = 1;
	pt_rereg_ret = 1;
	pt_set_ret = 1;
	atomic_set(&pt_stub_calls, 0);
	dev = kmad_device_alloc(&pt_stub_changed_ops, "kt_changed_reg", 1, 0);
	KUNIT_ASSERT_NOT_NULL(test, dev);
	KUNIT_EXPECT_EQ(test, kmad_device_set_port_attr(dev, 1, &attr), 0);
	/* Not registering yet: refused, as before. */
	KUNIT_EXPECT_EQ(test, kmad_device_port_changed(dev, 1, &attr),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_device_register(dev), -EIO);
	KUNIT_EXPECT_GE(test, atomic_read(&pt_stub_calls), 1);
	KUNIT_EXPECT_EQ(test, pt_changed_ret, 0);
	KUNIT_EXPECT_EQ(test, pt_rereg_ret, 0);
	KUNIT_EXPECT_EQ(test, pt_set_ret, -EINVAL);
	KUNIT_EXPECT_EQ(test, pt_changed_lid, 7);
	KUNIT_EXPECT_EQ(test, pt_changed_sm_lid, 3);
	KUNIT_EXPECT_EQ(test, kmad_port_reregisters(&dev->ports[0]), 1U);
	/* The registration failed: refused again. */
	KUNIT_EXPECT_EQ(test, kmad_device_port_changed(dev, 1, &attr),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_device_port_reregister(dev, 1), -EINVAL);
	kmad_device_free(dev);
}

static int pt_flusher_add(struct kmad_client *client, struct kmad_port *port,
			  void **data)
{
	struct pt_flusher *c = container_of(client, struct pt_flusher, client);
	struct kmad_agent *agent;

	if (port != c->f->port[KT_DEV0])
		return -ENODEV;
	agent = kmad_register_agent(port, KMAD_QPT_GSI, NULL, kt_send_handler,
				    kt_recv_handler, c->f);
	if (IS_ERR(agent))
		return PTR_ERR(agent);
	c->agent = agent;
	*data = c;
	return 0;
}

static void pt_flusher_remove(struct kmad_client *client,
			      struct kmad_port *port, void *data)
{
	struct pt_flusher *c = data;
	u32 qpn;

	c->run_at_remove = kt_qp_run(&port->qpi[KMAD_QPT_GSI]);
	c->qpn_at_remove = kmad_port_qp_num(port, KMAD_QPT_GSI, &qpn);
	c->unreg_ret = kmad_unregister_agent(c->agent);
	c->removed++;
}

struct pt_unregisterer {
	struct kmad_device *dev;
	struct completion done;
};

static int pt_unregister_fn(void *arg)
{
	struct pt_unregisterer *u = arg;

	kmad_device_unregister(u->dev);
	complete(&u->done);
	return 0;
}

/*
 * A device's removal flushes its QPs before clients' remove callbacks
 * run: a client that unregisters its agents there (as kmad_umad does)
 * finds their sends already ended, flushed, rather than waiting for the
 * hardware, which in step mode holds them until the test steps it.
 *
 * The removal is kmad_device_unregister() itself, in a thread: the sim's
 * controls then still reach the device, so that if the removal waits for
 * the send, the case ends it (a send completion) and the thread ends;
 * kmad_sim_remove_device() would make them -ENODEV from its start.
 */
static void port_remove_stops_qps_first(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct pt_unregisterer *u;
	struct kmad_send_buf *buf;
	struct task_struct *t;
	struct pt_flusher *c;
	bool in_time;

	/* kmalloc'd: the thread's remove call may outlive the case. */
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	c->f = f;
	c->client.name = "kmad_port_flusher";
	c->client.add = pt_flusher_add;
	c->client.remove = pt_flusher_remove;
	if (kmad_register_client(&c->client)) {
		kfree(c);
		KUNIT_FAIL(test, "kmad_register_client() failed");
		return;
	}
	pt_flusher_current = c;
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(c->agent));
	buf = kt_request(f, c->agent, KMAD_METHOD_GET, 0x31, 10000, 0);
	kt_post(f, buf);		/* held on device 0's wire */

	u = kzalloc(sizeof(*u), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, u);
	u->dev = kmad_sim_device(f->fab, KT_DEV0);
	init_completion(&u->done);
	t = kthread_run(pt_unregister_fn, u, "kmad_port_unreg");
	if (IS_ERR(t)) {
		kfree(u);
		KUNIT_FAIL(test, "kthread_run: %ld", PTR_ERR(t));
		return;
	}
	in_time = wait_for_completion_timeout(&u->done,
					      msecs_to_jiffies(KT_ASYNC_WAIT_MS));
	KUNIT_EXPECT_TRUE_MSG(test, in_time,
			      "removal still running after %d ms: a client's remove waited for a send the QP still held",
			      KT_ASYNC_WAIT_MS);
	if (!in_time) {
		/* End the send, so that its agent's unregister returns. */
		kmad_sim_complete_send(f->fab, KT_DEV0, KT_QPN, 0,
				       KMAD_WC_SUCCESS, false);
		kmad_sim_fire_cq_event(f->fab, KT_DEV0, KT_QPN, true);
		if (!wait_for_completion_timeout(&u->done,
						 msecs_to_jiffies(KT_ASYNC_WAIT_MS))) {
			/* Left to the thread, with the fabric and client. */
			f->fab = NULL;
			f->agent = NULL;
			pt_flusher_current = NULL;
			KUNIT_FAIL(test, "removal did not end after the send completed");
			return;
		}
	}
	kfree(u);

	KUNIT_EXPECT_EQ(test, c->removed, 1);
	KUNIT_EXPECT_EQ(test, c->unreg_ret, 0);
	KUNIT_EXPECT_EQ(test, c->run_at_remove, KMAD_QP_DYING);
	KUNIT_EXPECT_EQ(test, c->qpn_at_remove, -ENODEV);
	/* Ended once, flushed, before its agent's unregister returned. */
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	if (kt_events(f) == 1)
		kt_expect_send(f, 0, buf, KMAD_SEND_FLUSHED);
	kmad_free_send_buf(buf);
	pt_flusher_current = NULL;
	kmad_unregister_client(&c->client);
	KUNIT_EXPECT_EQ(test, c->removed, 1);
	kfree(c);
}

/*
 * A removal whose provider holds a QP's flush (a move to the error state
 * that keeps failing, sends never given back) waits for it, without a
 * time limit (provider.h); every other device's and client's
 * registration must not wait with it.  The test holds device 1's QP1
 * stop through a seam while a thread removes the device, then registers
 * a client (it must return: told of device 0 only).  A client that has
 * device 1's port, unregistering meanwhile, waits for the stop (its
 * remove may unregister agents that wait for the provider), without
 * holding up the registration: told of both ports once the stop ends.
 */
static void pt_stuck_hook(struct kmad_qp_info *qpi)
{
	struct pt_stuck *s = READ_ONCE(pt_stuck_ctx);

	if (!s || qpi != s->qpi)
		return;
	complete(&s->entered);
	wait_for_completion(&s->release);
}

struct pt_registerer {
	struct pt_client *c;
	int ret;
	struct completion done;
};

static int pt_register_fn(void *arg)
{
	struct pt_registerer *r = arg;

	r->ret = kmad_register_client(&r->c->client);
	complete(&r->done);
	return 0;
}

static int pt_unregister_client_fn(void *arg)
{
	struct pt_registerer *r = arg;

	kmad_unregister_client(&r->c->client);
	complete(&r->done);
	return 0;
}

static void port_remove_stuck_holds_no_global_lock(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct pt_client *a = pt_client(test), *b;
	struct pt_registerer *r, *ra;
	struct pt_unregisterer *u;
	struct pt_stuck *s;
	struct task_struct *t;
	bool in_time, ended;

	/* Not freed if a thread may still use them (a failed case). */
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	ra = kzalloc(sizeof(*ra), GFP_KERNEL);
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!s || !u || !r || !ra || !b) {
		kfree(s);
		kfree(u);
		kfree(r);
		kfree(ra);
		kfree(b);
		KUNIT_FAIL(test, "no memory");
		return;
	}
	pt_client_init(b, f);
	r->c = b;
	init_completion(&r->done);
	ra->c = a;
	init_completion(&ra->done);
	s->qpi = &f->port[KT_DEV1]->qpi[KMAD_QPT_GSI];
	init_completion(&s->entered);
	init_completion(&s->release);
	WRITE_ONCE(pt_stuck_ctx, s);
	kmad_test_set_qp_hook(KMAD_TEST_QP_STOP, pt_stuck_hook);

	u->dev = kmad_sim_device(f->fab, KT_DEV1);
	init_completion(&u->done);
	t = kthread_run(pt_unregister_fn, u, "kmad_port_unreg");
	if (IS_ERR(t) ||
	    !wait_for_completion_timeout(&s->entered, 30 * HZ)) {
		KUNIT_FAIL(test, "the removal did not reach its QP1 stop");
		return;		/* pt_exit() ends the hold */
	}

	/* Device 1 is stopping its QP1, held.  a unregisters, b registers. */
	a->registered = false;
	t = kthread_run(pt_unregister_client_fn, ra, "kmad_port_unreg_a");
	if (IS_ERR(t))
		complete(&ra->done);
	t = kthread_run(pt_register_fn, r, "kmad_port_reg");
	if (IS_ERR(t)) {
		r->ret = PTR_ERR(t);
		complete(&r->done);
	}
	in_time = wait_for_completion_timeout(&r->done, 30 * HZ);
	KUNIT_EXPECT_TRUE_MSG(test, in_time,
			      "a client's registration waited for another device's removal");
	if (in_time) {
		KUNIT_EXPECT_EQ(test, r->ret, 0);
		KUNIT_EXPECT_EQ(test, atomic_read(&b->added), 1);
	}
	/* a waits for device 1's stop, told of device 0 not yet either. */
	KUNIT_EXPECT_FALSE(test, completion_done(&ra->done));
	KUNIT_EXPECT_EQ(test, atomic_read(&a->removed), 0);
	KUNIT_EXPECT_FALSE(test, completion_done(&u->done));

	complete(&s->release);
	ended = wait_for_completion_timeout(&u->done, 30 * HZ) &&
		wait_for_completion_timeout(&ra->done, 30 * HZ) &&
		(in_time || wait_for_completion_timeout(&r->done, 30 * HZ));
	KUNIT_EXPECT_TRUE(test, ended);
	kmad_test_set_qp_hook(KMAD_TEST_QP_STOP, NULL);
	WRITE_ONCE(pt_stuck_ctx, NULL);
	if (!ended)
		return;
	/* Told of both ports once each; b of device 0 only. */
	KUNIT_EXPECT_EQ(test, atomic_read(&a->removed), 2);
	KUNIT_EXPECT_TRUE(test, a->gone[1]);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->removed), 0);
	if (!r->ret)
		kmad_unregister_client(&b->client);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->removed), r->ret ? 0 : 1);
	kfree(s);
	kfree(u);
	kfree(r);
	kfree(ra);
	kfree(b);
}

static struct kunit_case port_cases[] = {
	KUNIT_CASE(port_changed_tells_clients),
	KUNIT_CASE(port_changed_bad_calls),
	KUNIT_CASE(port_reregister_tells_clients),
	KUNIT_CASE(port_changed_then_removed),
	KUNIT_CASE(port_removed_during_query),
	KUNIT_CASE(port_device_registers_once),
	KUNIT_CASE(port_changed_cancel_settled),
	KUNIT_CASE(port_device_name_taken),
	KUNIT_CASE(port_register_no_pkey_table),
	KUNIT_CASE(port_set_attr_registered),
	KUNIT_CASE(port_reregister_unregistered),
	KUNIT_CASE(port_changed_while_registering),
	KUNIT_CASE(port_remove_stops_qps_first),
	KUNIT_CASE(port_remove_stuck_holds_no_global_lock),
	{}
};

static struct kunit_suite port_suite = {
	.name = "kmad_port",
	.init = kt_fix_init,
	.exit = pt_exit,
	.test_cases = port_cases,
};

kunit_test_suite(port_suite);

MODULE_DESCRIPTION("KUnit tests for kmad's port change events");
MODULE_LICENSE("GPL");
