// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_port: a provider reports a port's new LID, LMC and SM LID with
 * kmad_device_port_changed(); kmad_port_lid() and kmad_port_sm_lid() show
 * them at once, and clients' port_changed callbacks follow, only for the
 * port that changed, only between their add and remove, never after the
 * device is gone.  The device's removal waits for a provider op in
 * progress; a device registers once.
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

/* The case's client, unregistered by pt_exit() if an assertion ended it. */
static struct pt_client *pt_current;

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

static struct pt_client *pt_client(struct kunit *test)
{
	struct pt_client *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->f = test->priv;
	c->client.name = "kmad_port_test";
	c->client.add = pt_add;
	c->client.remove = pt_remove;
	c->client.port_changed = pt_changed;
	init_completion(&c->entered);
	init_completion(&c->release);
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
	if (pt_current) {
		complete_all(&pt_current->release);
		pt_unregister(pt_current);
		pt_current = NULL;
	}
	kt_fix_exit(test);
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

static struct kunit_case port_cases[] = {
	KUNIT_CASE(port_changed_tells_clients),
	KUNIT_CASE(port_changed_bad_calls),
	KUNIT_CASE(port_reregister_tells_clients),
	KUNIT_CASE(port_changed_then_removed),
	KUNIT_CASE(port_removed_during_query),
	KUNIT_CASE(port_device_registers_once),
	KUNIT_CASE(port_changed_cancel_settled),
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
