// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_race: randomized multi-threaded stress on the asynchronous
 * simulated fabric.
 *
 * Two poster kthreads post Get requests from a send-only requester agent
 * on device 0 to a responder agent on device 1, which answers every Get
 * with kmad_create_response() + kmad_post_send() and frees its responses
 * in its send_handler.  The posters pick random timeouts (none, short,
 * long) and retries, and cancel or modify their own sends at random.  A
 * third kthread may disturb the traffic: unregister the requester, fail
 * device 0's QP1, or remove a device.  Each case then checks the contract:
 *
 * - exactly one send_handler call for every post that returned 0, none for
 *   the others, and an outcome the case allows;
 * - CANCELED exactly for the sends a cancel (or modify to 0) succeeded on;
 * - RESP_TIMEOUT only for sends posted with a timeout;
 * - one recv_handler call, before send_handler, exactly for the sends that
 *   expected a response and ended OK: duplicates never deliver twice;
 * - no handler of an agent runs after kmad_unregister_agent() returned;
 * - every buffer is freed (kmemleak and KASAN run in the harness).
 *
 * The random choices of every thread come from prandom states seeded from
 * the printed seed (module parameter "seed"), so they are reproducible;
 * the interleaving is not.  Every wait is bounded.
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/prandom.h>

#include "kmad_test.h"

#define RACE_SEED		0x6b6d61645f726163ULL
#define RACE_POSTERS		2
#define RACE_SENDS		300	/* per poster */
#define RACE_EXTRA		4	/* posted by the case itself */
#define RACE_MAX_OUT		96	/* outstanding: posters wait */
#define RACE_CASE_MS		30000	/* all waits of a case */
#define RACE_SHORT_MS		3	/* short timeouts: 1..3 ms */
#define RACE_QP_ERRORS		5

#define RACE_NORMAL	(BIT(KMAD_SEND_OK) | BIT(KMAD_SEND_RESP_TIMEOUT) | \
			 BIT(KMAD_SEND_CANCELED))

/* Few send slots: posts wait on the overflow list, cancels take them back. */
static const struct kmad_sim_config race_small_sq = {
	.notify = KMAD_SIM_NOTIFY_IBTA, .latency_us = 5, .sq_depth = 8,
};

/* kmad's default depths, CQs that report missed events. */
static const struct kmad_sim_config race_default = {
	.notify = KMAD_SIM_NOTIFY_MISSED, .latency_us = 5,
};

/* Few slots of both kinds: a QP error flushes little, in one drain pass. */
static const struct kmad_sim_config race_small_qp = {
	.notify = KMAD_SIM_NOTIFY_IBTA, .latency_us = 5, .sq_depth = 16,
	.rq_depth = 16,
};

static unsigned long long race_seed = RACE_SEED;
module_param_named(seed, race_seed, ullong, 0444);
MODULE_PARM_DESC(seed, "base seed of the random choices");

struct race_ctx;

/* One send buffer and what became of it. */
struct race_send {
	struct kmad_send_buf *buf;
	atomic_t cbs;		/* send_handler calls */
	atomic_t resps;		/* recv_handler calls for its response */
	int status;		/* of the last send_handler call */
	bool posted;		/* kmad_post_send() returned 0 */
	bool timed;		/* posted with a timeout */
	bool canceled;		/* a cancel or modify to 0 returned 0 */
};

/*
 * What the third thread does, @n times: the k-th time at a random point of
 * the k-th of @n equal stretches of [@from, @to) percent of all posts.
 */
struct race_chaos {
	void (*fn)(struct race_ctx *ctx);
	unsigned int n, from, to;
};

struct race_ctx {
	struct kunit *test;
	struct kmad_sim_fabric *fab;
	struct kmad_port *port[2];
	struct kmad_agent *req;		/* send-only, device 0 QP1 */
	struct kmad_agent *resp;	/* Get responder, device 1 QP1 */
	u64 seed;
	ktime_t start;
	unsigned long deadline;		/* jiffies: all waits end here */
	struct race_send *sends;
	unsigned int nsends;
	unsigned int long_ms;		/* long timeouts: 1-2 long_ms */
	unsigned int allowed;		/* BIT(status) of requests */
	unsigned int resp_allowed;	/* BIT(status) of responses */
	bool stop_on_shutdown;		/* -ESHUTDOWN ends a poster */
	const struct race_chaos *chaos;
	unsigned int chaos_dev;		/* device the chaos removes */
	bool req_gone, resp_gone;	/* kmad_unregister_agent() returned */
	int req_cbs_at_unreg, resp_cbs_at_unreg;
	atomic_t posted, cbs, late, bogus, bad_ret, stuck, posters_done;
	atomic_t shut_out;		/* posters stopped by -ESHUTDOWN */
	atomic_t posted_dying;		/* accepted, port going away */
	atomic_t status[KMAD_SEND_LOCAL_ERROR + 1];
	atomic_t resp_posted, resp_cbs, resp_late;
};

struct race_thread {
	struct race_ctx *ctx;
	struct completion done;
	struct rnd_state rnd;
	unsigned int first;		/* its slice of ctx->sends */
};

static struct race_send *race_send_of(struct race_ctx *ctx,
				      struct kmad_send_buf *buf)
{
	unsigned long id = buf ? (unsigned long)buf->context[1] : ULONG_MAX;

	if (id >= ctx->nsends || ctx->sends[id].buf != buf) {
		atomic_inc(&ctx->bogus);
		return NULL;
	}
	return &ctx->sends[id];
}

static void race_req_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct race_ctx *ctx = agent->context;
	struct race_send *rs = race_send_of(ctx, wc->send_buf);

	if (READ_ONCE(ctx->req_gone))
		atomic_inc(&ctx->late);
	if (wc->status < ARRAY_SIZE(ctx->status))
		atomic_inc(&ctx->status[wc->status]);
	if (rs) {
		WRITE_ONCE(rs->status, wc->status);
		/* Pairs with atomic_read_acquire() in race_probe(). */
		atomic_inc_return_release(&rs->cbs);
	}
	atomic_inc(&ctx->cbs);
}

/* A matched response: it must come before its send's callback. */
static void race_req_recv(struct kmad_agent *agent,
			  struct kmad_send_buf *request,
			  struct kmad_recv_wc *wc)
{
	struct race_ctx *ctx = agent->context;
	struct race_send *rs = race_send_of(ctx, request);

	if (READ_ONCE(ctx->req_gone))
		atomic_inc(&ctx->late);
	if (rs && atomic_read(&rs->cbs))
		atomic_inc(&ctx->bogus);
	if (rs)
		atomic_inc(&rs->resps);
	kmad_free_recv(wc);
}

static void race_resp_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct race_ctx *ctx = agent->context;

	if (READ_ONCE(ctx->resp_gone))
		atomic_inc(&ctx->resp_late);
	if (!(ctx->resp_allowed & BIT(wc->status)))
		atomic_inc(&ctx->bogus);
	kmad_free_send_buf(wc->send_buf);
	atomic_inc(&ctx->resp_cbs);
}

/* Answer every Get; a post fails only while the agent goes away. */
static void race_resp_recv(struct kmad_agent *agent,
			   struct kmad_send_buf *request,
			   struct kmad_recv_wc *wc)
{
	struct race_ctx *ctx = agent->context;
	struct kmad_send_buf *buf;
	int ret;

	if (READ_ONCE(ctx->resp_gone))
		atomic_inc(&ctx->resp_late);
	if (request)
		atomic_inc(&ctx->bogus);
	buf = kmad_create_response(agent, wc, GFP_KERNEL);
	kmad_free_recv(wc);
	if (IS_ERR(buf)) {
		atomic_inc(&ctx->bogus);
		return;
	}
	ret = kmad_post_send(buf);
	if (ret) {
		if (ret != -ESHUTDOWN)
			atomic_inc(&ctx->bogus);
		kmad_free_send_buf(buf);
		return;
	}
	atomic_inc(&ctx->resp_posted);
}

/* Unregister, then note that it returned and how many callbacks ran. */
static void race_unregister_req(struct race_ctx *ctx)
{
	if (ctx->req_gone || IS_ERR_OR_NULL(ctx->req))
		return;
	kmad_unregister_agent(ctx->req);
	WRITE_ONCE(ctx->req_gone, true);
	ctx->req_cbs_at_unreg = atomic_read(&ctx->cbs);
}

static void race_unregister_resp(struct race_ctx *ctx)
{
	if (ctx->resp_gone || IS_ERR_OR_NULL(ctx->resp))
		return;
	kmad_unregister_agent(ctx->resp);
	WRITE_ONCE(ctx->resp_gone, true);
	ctx->resp_cbs_at_unreg = atomic_read(&ctx->resp_cbs);
}

/* None, short (retries race with late responses), or long. */
static unsigned int race_pick_timeout(struct race_thread *t)
{
	u32 r = prandom_u32_state(&t->rnd);

	switch (r % 4) {
	case 0:
		return 0;
	case 1:
		return 1 + (r >> 2) % RACE_SHORT_MS;
	default:
		return t->ctx->long_ms + (r >> 2) % t->ctx->long_ms;
	}
}

/*
 * Calls that touch the agent are made under rcu_read_lock() and only until
 * its unregistration returned: one that starts later is a caller bug (the
 * agent is freed an RCU grace period after it).  Returns -ESHUTDOWN
 * without calling once it has.
 */
static int race_post(struct race_thread *t, struct race_send *rs)
{
	struct race_ctx *ctx = t->ctx;
	bool dying = READ_ONCE(ctx->port[KT_DEV0]->dying);
	int ret = -ESHUTDOWN;

	rs->buf->timeout_ms = race_pick_timeout(t);
	rs->buf->retries = prandom_u32_state(&t->rnd) % 4;
	rs->timed = rs->buf->timeout_ms;
	rcu_read_lock();
	if (!READ_ONCE(ctx->req_gone))
		ret = kmad_post_send(rs->buf);
	rcu_read_unlock();
	if (!ret) {
		rs->posted = true;
		atomic_inc(&ctx->posted);
		/* The contract: -ESHUTDOWN once the port is going away. */
		if (dying)
			atomic_inc(&ctx->posted_dying);
	} else if (ret != -ESHUTDOWN || !ctx->stop_on_shutdown) {
		atomic_inc(&ctx->bad_ret);
	}
	return ret;
}

/* Maybe cancel, or change the timeout of, one of sends first..first+n. */
static void race_poke(struct race_thread *t, unsigned int n)
{
	struct race_ctx *ctx = t->ctx;
	u32 what = prandom_u32_state(&t->rnd) % 100;
	unsigned int timeout = 0;
	struct race_send *rs;
	int ret = -ESHUTDOWN;

	if (what >= 30)
		return;
	rs = &ctx->sends[t->first + prandom_u32_state(&t->rnd) % (n + 1)];
	if (what >= 15)
		timeout = race_pick_timeout(t);
	rcu_read_lock();
	if (!READ_ONCE(ctx->req_gone))
		ret = what < 15 ? kmad_cancel_send(rs->buf) :
				  kmad_modify_send(rs->buf, timeout);
	rcu_read_unlock();
	if (!ret && !timeout)
		rs->canceled = true;
	else if (ret && ret != -EALREADY && ret != -EINVAL && ret != -ESHUTDOWN)
		atomic_inc(&ctx->bad_ret);
}

/* Wait while too many sends are outstanding; false if that never ends. */
static bool race_throttle(struct race_ctx *ctx)
{
	while (atomic_read(&ctx->posted) - atomic_read(&ctx->cbs) >=
	       RACE_MAX_OUT && !READ_ONCE(ctx->req_gone)) {
		if (time_after(jiffies, ctx->deadline)) {
			atomic_inc(&ctx->stuck);
			return false;
		}
		usleep_range(100, 300);
	}
	return true;
}

static int race_poster(void *arg)
{
	struct race_thread *t = arg;
	struct race_ctx *ctx = t->ctx;
	unsigned int i;

	for (i = 0; i < RACE_SENDS; i++) {
		if (!race_throttle(ctx))
			break;
		if (race_post(t, &ctx->sends[t->first + i]) == -ESHUTDOWN) {
			atomic_inc(&ctx->shut_out);
			break;
		}
		race_poke(t, i);
		cond_resched();
	}
	atomic_inc(&ctx->posters_done);
	kthread_complete_and_exit(&t->done, 0);
}

/* Wait until @n sends were posted or the posters are done. */
static void race_wait_posted(struct race_ctx *ctx, unsigned int n)
{
	while (atomic_read(&ctx->posted) < n &&
	       atomic_read(&ctx->posters_done) < RACE_POSTERS &&
	       time_before(jiffies, ctx->deadline))
		usleep_range(50, 150);
}

static int race_chaos_thread(void *arg)
{
	struct race_thread *t = arg;
	struct race_ctx *ctx = t->ctx;
	const struct race_chaos *c = ctx->chaos;
	unsigned int total = RACE_POSTERS * RACE_SENDS;
	unsigned int k, first = total * c->from / 100;
	unsigned int stretch = max(total * (c->to - c->from) / 100 / c->n, 1U);

	for (k = 0; k < c->n; k++) {
		race_wait_posted(ctx, first + stretch * k +
				 prandom_u32_state(&t->rnd) % stretch);
		c->fn(ctx);
	}
	kthread_complete_and_exit(&t->done, 0);
}

/* Run the posters and the chaos thread, if any, and join them all. */
static void race_run(struct race_ctx *ctx)
{
	unsigned int i, n = RACE_POSTERS + !!ctx->chaos;
	struct task_struct *task;
	struct race_thread *t;

	t = kunit_kcalloc(ctx->test, n, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(ctx->test, t);
	for (i = 0; i < n; i++) {
		t[i].ctx = ctx;
		init_completion(&t[i].done);
		prandom_seed_state(&t[i].rnd, ctx->seed + i);
		t[i].first = i * RACE_SENDS;
	}
	for (i = 0; i < n; i++) {
		task = kthread_run(i < RACE_POSTERS ? race_poster :
				   race_chaos_thread, &t[i], "kmad_race%u", i);
		if (IS_ERR(task)) {
			KUNIT_FAIL(ctx->test, "kthread_run: %ld",
				   PTR_ERR(task));
			atomic_inc(&ctx->posters_done);
			complete(&t[i].done);
		}
	}
	/* In slices, so that a long run is no hung task. */
	for (i = 0; i < n; i++)
		while (!wait_for_completion_timeout(&t[i].done, HZ))
			;
}

/* Where a port's QP1 stands, to tell why callbacks do not come. */
static void race_dump_qp(struct race_ctx *ctx, unsigned int dev)
{
	struct kmad_qp_info *qpi = &ctx->port[dev]->qpi[KMAD_QPT_GSI];
	unsigned long flags;

	spin_lock_irqsave(&qpi->lock, flags);
	kunit_info(ctx->test, "device %u QP1: run %d, %u sends and %u receives posted, overflow %sempty, replay %sempty\n",
		   dev, qpi->run, qpi->sq_posted, qpi->rq_posted,
		   list_empty(&qpi->overflow) ? "" : "not ",
		   list_empty(&qpi->replay) ? "" : "not ");
	spin_unlock_irqrestore(&qpi->lock, flags);
}

/* Wait until every posted send had its callback; false at the deadline. */
static bool race_wait_callbacks(struct race_ctx *ctx)
{
	while (atomic_read(&ctx->cbs) < atomic_read(&ctx->posted)) {
		if (time_after(jiffies, ctx->deadline)) {
			kunit_info(ctx->test, "%d callbacks for %d posts\n",
				   atomic_read(&ctx->cbs),
				   atomic_read(&ctx->posted));
			race_dump_qp(ctx, KT_DEV0);
			race_dump_qp(ctx, KT_DEV1);
			return false;
		}
		usleep_range(2000, 4000);
	}
	return true;
}

/* Post slot @i from the case itself and wait for its outcome. */
static int race_probe(struct race_ctx *ctx, unsigned int i,
		      unsigned int timeout_ms, unsigned int retries)
{
	struct race_send *rs = &ctx->sends[i];
	int ret;

	rs->buf->timeout_ms = timeout_ms;
	rs->buf->retries = retries;
	rs->timed = timeout_ms;
	ret = kmad_post_send(rs->buf);
	if (ret)
		return ret;
	rs->posted = true;
	atomic_inc(&ctx->posted);
	while (!atomic_read_acquire(&rs->cbs)) {
		if (time_after(jiffies, ctx->deadline))
			return -ETIMEDOUT;
		usleep_range(1000, 2000);
	}
	return READ_ONCE(rs->status);
}

static s64 race_pstat(struct race_ctx *ctx, unsigned int dev,
		      enum kmad_port_stat s)
{
	return atomic64_read(&ctx->port[dev]->stats[s]);
}

static struct kmad_send_buf *race_alloc(struct race_ctx *ctx, unsigned int i)
{
	struct kmad_dest dest = {
		.dlid = kmad_port_lid(ctx->port[KT_DEV1]),
		.remote_qpn = KT_QPN,
		.remote_qkey = KMAD_QP1_QKEY,
	};
	struct kmad_send_buf *buf;

	buf = kmad_alloc_send_buf(ctx->req, &dest, GFP_KERNEL);
	if (IS_ERR(buf))
		return buf;
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.mgmt_class = KT_CLASS;
	buf->mad->mad_hdr.class_version = KT_VERSION;
	buf->mad->mad_hdr.method = KMAD_METHOD_GET;
	buf->mad->mad_hdr.tid = cpu_to_be64(i + 1);
	buf->mad->mad_hdr.attr_id = cpu_to_be16(KMAD_PMA_ATTR_PORT_COUNTERS);
	buf->context[0] = ctx;
	buf->context[1] = (void *)(unsigned long)i;
	return buf;
}

/*
 * An asynchronous two-device fabric built from @cfg (depths, notification,
 * latency), both agents and every send buffer; nothing runs yet.
 */
static struct race_ctx *race_setup(struct kunit *test, u64 salt,
				   const struct kmad_sim_config *cfg)
{
	struct kmad_sim_config c = *cfg;
	struct kmad_reg_req get = {
		.mgmt_class = KT_CLASS,
		.class_version = KT_VERSION,
	};
	char name[KMAD_NAME_LEN - 4], dev[KMAD_NAME_LEN];
	struct race_ctx *ctx;
	unsigned int i;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	ctx->test = test;
	ctx->seed = race_seed + salt;
	ctx->start = ktime_get();
	ctx->deadline = jiffies + msecs_to_jiffies(RACE_CASE_MS);
	ctx->long_ms = 100;
	ctx->allowed = RACE_NORMAL;
	ctx->resp_allowed = BIT(KMAD_SEND_OK);
	kunit_info(test, "seed %#llx\n", ctx->seed);

	snprintf(name, sizeof(name), "%s%d_", KBUILD_MODNAME,
		 atomic_inc_return(&kt_fabric_seq));
	c.name = name;
	c.topology = KMAD_SIM_TOPO_PAIR;
	c.mode = KMAD_SIM_ASYNC;
	ctx->fab = kmad_sim_create(&c);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(ctx->fab));
	for (i = 0; i < 2; i++) {
		snprintf(dev, sizeof(dev), "%s%u", name, i);
		ctx->port[i] = kmad_port_get(dev, 1);
		KUNIT_ASSERT_NOT_NULL(test, ctx->port[i]);
	}

	__set_bit(KMAD_METHOD_GET, get.method_mask);
	ctx->resp = kmad_register_agent(ctx->port[KT_DEV1], KMAD_QPT_GSI,
					&get, race_resp_send, race_resp_recv,
					ctx);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ctx->resp));
	ctx->req = kmad_register_agent(ctx->port[KT_DEV0], KMAD_QPT_GSI,
				       NULL, race_req_send, race_req_recv, ctx);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ctx->req));

	ctx->nsends = RACE_POSTERS * RACE_SENDS + RACE_EXTRA;
	ctx->sends = kunit_kcalloc(test, ctx->nsends, sizeof(*ctx->sends),
				   GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->sends);
	for (i = 0; i < ctx->nsends; i++) {
		ctx->sends[i].buf = race_alloc(ctx, i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(ctx->sends[i].buf));
	}
	return ctx;
}

/* Every posted send: one callback, a plausible outcome, and its response. */
static void race_check_sends(struct race_ctx *ctx)
{
	unsigned int i, lost = 0, doubled = 0, ghost = 0, bad = 0;
	unsigned int bad_cancel = 0, bad_resp = 0;
	struct race_send *rs;
	int st;

	for (i = 0; i < ctx->nsends; i++) {
		rs = &ctx->sends[i];
		st = READ_ONCE(rs->status);
		if (!rs->posted || !atomic_read(&rs->cbs)) {
			ghost += !rs->posted && atomic_read(&rs->cbs);
			lost += rs->posted;
			continue;
		}
		doubled += atomic_read(&rs->cbs) > 1;
		bad += !(ctx->allowed & BIT(st)) ||
		       (st == KMAD_SEND_RESP_TIMEOUT && !rs->timed);
		bad_cancel += rs->canceled != (st == KMAD_SEND_CANCELED);
		bad_resp += atomic_read(&rs->resps) !=
			    (rs->timed && st == KMAD_SEND_OK);
	}
	KUNIT_EXPECT_EQ(ctx->test, lost, 0U);
	KUNIT_EXPECT_EQ(ctx->test, doubled, 0U);
	KUNIT_EXPECT_EQ(ctx->test, ghost, 0U);
	KUNIT_EXPECT_EQ(ctx->test, bad, 0U);
	KUNIT_EXPECT_EQ(ctx->test, bad_cancel, 0U);
	KUNIT_EXPECT_EQ(ctx->test, bad_resp, 0U);
}

/*
 * Wait for the traffic to end, unregister both agents (requester first, so
 * that no request reaches the responder after it), and check everything.
 */
static void race_finish(struct race_ctx *ctx)
{
	struct kunit *test = ctx->test;

	KUNIT_EXPECT_TRUE(test, race_wait_callbacks(ctx));
	kmad_sim_settle(ctx->fab);
	race_unregister_req(ctx);
	kmad_sim_settle(ctx->fab);
	race_unregister_resp(ctx);
	kmad_sim_settle(ctx->fab);
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->cbs), ctx->req_cbs_at_unreg);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->cbs),
			atomic_read(&ctx->posted));
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->late), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->resp_cbs),
			ctx->resp_cbs_at_unreg);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->resp_cbs),
			atomic_read(&ctx->resp_posted));
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->resp_late), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->bogus), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->bad_ret), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->stuck), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->posted_dying), 0);
	/* kmad's own accounting agrees (the requester is device 0's only
	 * agent with timeouts and cancels).
	 */
	KUNIT_EXPECT_EQ(test, race_pstat(ctx, KT_DEV0, KMAD_PSTAT_TIMEOUTS),
			(s64)atomic_read(&ctx->status[KMAD_SEND_RESP_TIMEOUT]));
	KUNIT_EXPECT_EQ(test, race_pstat(ctx, KT_DEV0, KMAD_PSTAT_CANCELED),
			(s64)atomic_read(&ctx->status[KMAD_SEND_CANCELED]));
	race_check_sends(ctx);
	kunit_info(test, "%d posted (%d posters stopped by -ESHUTDOWN): %d ok %d timeout %d canceled %d flushed %d error; %d responses; %lld ms\n",
		   atomic_read(&ctx->posted), atomic_read(&ctx->shut_out),
		   atomic_read(&ctx->status[KMAD_SEND_OK]),
		   atomic_read(&ctx->status[KMAD_SEND_RESP_TIMEOUT]),
		   atomic_read(&ctx->status[KMAD_SEND_CANCELED]),
		   atomic_read(&ctx->status[KMAD_SEND_FLUSHED]),
		   atomic_read(&ctx->status[KMAD_SEND_LOCAL_ERROR]),
		   atomic_read(&ctx->resp_posted),
		   ktime_ms_delta(ktime_get(), ctx->start));
}

/* Also on a failed case: no agent is left, no buffer leaks. */
static void race_exit(struct kunit *test)
{
	struct race_ctx *ctx = test->priv;
	struct race_send *rs;
	unsigned int i;

	if (!ctx)
		return;
	race_unregister_req(ctx);
	race_unregister_resp(ctx);
	for (i = 0; ctx->sends && i < ctx->nsends; i++) {
		rs = &ctx->sends[i];
		/* One whose callback never came is still kmad's. */
		if (!IS_ERR_OR_NULL(rs->buf) &&
		    (!rs->posted || atomic_read(&rs->cbs)))
			kmad_free_send_buf(rs->buf);
	}
	kmad_sim_destroy(ctx->fab);
	for (i = 0; i < 2; i++)
		kmad_port_put(ctx->port[i]);
}

/*
 * Posts, cancels and modifies from two threads against the responder.
 * Expected: one callback per post, ending OK, RESP_TIMEOUT (only with a
 * timeout: short ones expire) or CANCELED (exactly the successful
 * cancels); no LOCAL_ERROR or FLUSHED.
 */
static void race_post_cancel_modify(struct kunit *test)
{
	struct race_ctx *ctx = race_setup(test, 1, &race_small_sq);

	race_run(ctx);
	race_finish(ctx);
	KUNIT_EXPECT_GT(test, atomic_read(&ctx->status[KMAD_SEND_OK]), 0);
}

/*
 * The same with MADs dropped, duplicated, corrupted and failed.  Expected:
 * still one callback per post, and one response per OK (duplicates never
 * deliver twice); LOCAL_ERROR now allowed.  Then, with every MAD dropped,
 * requests end RESP_TIMEOUT after all their retries.
 */
static void race_faults(struct kunit *test)
{
	struct kmad_sim_faults faults = {
		.drop_pct = 3, .dup_pct = 5, .corrupt_pct = 2,
		.send_err_pct = 1,
	};
	struct kmad_sim_faults all_lost = { .drop_pct = 100 };
	struct race_ctx *ctx = race_setup(test, 2, &race_default);
	struct kmad_sim_stats st0, st1;
	unsigned int i = RACE_POSTERS * RACE_SENDS;
	s64 retries;

	ctx->allowed |= BIT(KMAD_SEND_LOCAL_ERROR);
	ctx->resp_allowed |= BIT(KMAD_SEND_LOCAL_ERROR);
	kmad_sim_set_faults(ctx->fab, &faults);
	race_run(ctx);
	KUNIT_EXPECT_TRUE(test, race_wait_callbacks(ctx));
	kmad_sim_get_stats(ctx->fab, KT_DEV0, &st0);
	kmad_sim_get_stats(ctx->fab, KT_DEV1, &st1);
	KUNIT_EXPECT_GT(test, st0.dropped_fault + st1.dropped_fault, 0ULL);
	KUNIT_EXPECT_GT(test, st0.duplicated + st1.duplicated, 0ULL);
	KUNIT_EXPECT_GT(test, st0.corrupted + st1.corrupted, 0ULL);

	kmad_sim_set_faults(ctx->fab, &all_lost);
	retries = race_pstat(ctx, KT_DEV0, KMAD_PSTAT_RETRIES);
	for (; i < ctx->nsends; i++)
		KUNIT_EXPECT_EQ(test, race_probe(ctx, i, 5, 2),
				KMAD_SEND_RESP_TIMEOUT);
	KUNIT_EXPECT_EQ(test, race_pstat(ctx, KT_DEV0, KMAD_PSTAT_RETRIES),
			retries + 2 * RACE_EXTRA);
	memset(&faults, 0, sizeof(faults));
	kmad_sim_set_faults(ctx->fab, &faults);
	race_finish(ctx);
}

static void race_chaos_unregister(struct race_ctx *ctx)
{
	race_unregister_req(ctx);
}

static const struct race_chaos race_unregister_mid = {
	.fn = race_chaos_unregister, .n = 1, .from = 10, .to = 60,
};

/*
 * A third thread unregisters the requester while the posters post; they
 * stop at their first -ESHUTDOWN.  Expected: every post that returned 0
 * got exactly one callback (FLUSHED allowed), all of them before
 * kmad_unregister_agent() returned, and none after.
 */
static void race_unregister_while_posting(struct kunit *test)
{
	struct race_ctx *ctx = race_setup(test, 3, &race_small_sq);

	ctx->allowed |= BIT(KMAD_SEND_FLUSHED);
	ctx->stop_on_shutdown = true;
	ctx->chaos = &race_unregister_mid;
	race_run(ctx);
	KUNIT_EXPECT_TRUE(test, ctx->req_gone);
	/* No waiting: unregistering waited for every callback. */
	KUNIT_EXPECT_EQ(test, ctx->req_cbs_at_unreg,
			atomic_read(&ctx->posted));
	race_finish(ctx);
}

static void race_chaos_qp_error(struct race_ctx *ctx)
{
	KUNIT_EXPECT_EQ(ctx->test,
			kmad_sim_qp_error(ctx->fab, KT_DEV0, KT_QPN), 0);
}

static const struct race_chaos race_qp_errors = {
	.fn = race_chaos_qp_error, .n = RACE_QP_ERRORS, .from = 5, .to = 95,
};

/*
 * Device 0's QP1 fails a few times under traffic.  Expected: kmad replays
 * the flushed sends after recovery, so every post still gets exactly one
 * callback (OK, RESP_TIMEOUT or CANCELED, never FLUSHED), the QP
 * recovered, and a request afterwards succeeds.
 */
static void race_qp_error_while_posting(struct kunit *test)
{
	struct race_ctx *ctx = race_setup(test, 4, &race_small_qp);
	s64 recoveries = race_pstat(ctx, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES);

	ctx->chaos = &race_qp_errors;
	race_run(ctx);
	KUNIT_EXPECT_TRUE(test, race_wait_callbacks(ctx));
	KUNIT_EXPECT_GT(test, race_pstat(ctx, KT_DEV0,
					 KMAD_PSTAT_QP_RECOVERIES), recoveries);
	KUNIT_EXPECT_EQ(test, race_probe(ctx, RACE_POSTERS * RACE_SENDS,
					 1000, 3), KMAD_SEND_OK);
	race_finish(ctx);
}

static void race_chaos_remove(struct race_ctx *ctx)
{
	int posted = atomic_read(&ctx->posted);
	ktime_t start = ktime_get();

	kmad_sim_remove_device(ctx->fab, ctx->chaos_dev);
	kunit_info(ctx->test, "device %u removed in %lld ms, %d posts meanwhile\n",
		   ctx->chaos_dev, ktime_ms_delta(ktime_get(), start),
		   atomic_read(&ctx->posted) - posted);
}

/* Early, so that posting goes on through the whole teardown. */
static const struct race_chaos race_remove_mid = {
	.fn = race_chaos_remove, .n = 1, .from = 5, .to = 25,
};

static const unsigned int race_remove_devs[] = { KT_DEV0, KT_DEV1 };

static void race_remove_desc(const unsigned int *dev, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "device %u", *dev);
}

KUNIT_ARRAY_PARAM(race_remove, race_remove_devs, race_remove_desc);

/*
 * A device goes away under traffic: the requester's (its agent is flushed,
 * posts then fail with -ESHUTDOWN) or the responder's (requests go
 * nowhere).  Expected: every post gets exactly one callback, FLUSHED
 * allowed; both agents then unregister cleanly.
 */
static void race_remove_while_posting(struct kunit *test)
{
	struct race_ctx *ctx = race_setup(test, 5, &race_small_sq);

	ctx->chaos_dev = *(const unsigned int *)test->param_value;
	ctx->long_ms = 20;
	ctx->allowed |= BIT(KMAD_SEND_FLUSHED);
	ctx->resp_allowed |= BIT(KMAD_SEND_FLUSHED);
	ctx->stop_on_shutdown = true;
	ctx->chaos = &race_remove_mid;
	race_run(ctx);
	KUNIT_EXPECT_NULL(test, kmad_sim_device(ctx->fab, ctx->chaos_dev));
	race_finish(ctx);
}

static struct kunit_case race_cases[] = {
	KUNIT_CASE(race_post_cancel_modify),
	KUNIT_CASE(race_faults),
	KUNIT_CASE(race_unregister_while_posting),
	KUNIT_CASE(race_qp_error_while_posting),
	KUNIT_CASE_PARAM(race_remove_while_posting, race_remove_gen_params),
	{}
};

static struct kunit_suite race_suite = {
	.name = "kmad_race",
	.exit = race_exit,
	.test_cases = race_cases,
};

kunit_test_suites(&race_suite);

MODULE_DESCRIPTION("KUnit stress tests for kmad: threads, faults, teardown");
MODULE_LICENSE("GPL");
