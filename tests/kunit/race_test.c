// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_race: randomized multi-threaded stress on the asynchronous
 * simulated fabric, over a matrix of faults.
 *
 * Traffic.  Two poster kthreads and a timer (softirq) post Get requests
 * from a send-only requester agent on device 0 to a responder agent on
 * device 1, which answers every Get with kmad_create_response() +
 * kmad_post_send() and frees its responses in its send_handler.  Each
 * poster owns a slice of the send slots; it picks random timeouts (none,
 * short, long) and retries, and cancels or modifies its own sends at
 * random, some of the posts and cancels under a spinlock the test holds
 * with spin_lock_irqsave().  Four victim agents, two on each device, keep
 * a few requests of their own in flight: their send_handler posts the
 * buffer again, or frees it once posting fails or the case stops posting.
 *
 * Handlers.  Each request draws at post time what its handlers will do
 * (RACE_ACT_*): free the buffer inside send_handler (under the test's
 * lock, which cancels of such sends also hold), look up and release both
 * ports with kmad_port_get()/kmad_port_put(), unregister their own agent
 * (which must be refused with -EDEADLK, the agent working on), unregister
 * the next victim agent.  The responder's and the victims' handlers draw
 * the same from a hash of the seed (victims never unregister another
 * agent).  While a device is being removed every handler looks the ports
 * up.
 *
 * Disturbances, one set per case: none; MAD faults; unregistering the
 * requester; QP errors; removing a device; cancel storms (two threads
 * cancelling or modifying to 0 most outstanding sends at once) with QP
 * errors on both devices; unregistering every agent of a device while
 * another thread removes that device.  Documentation/testing.rst has the
 * matrix.  Each case then checks the contract:
 *
 * - exactly one send_handler call for every post that returned 0, none for
 *   the others, and an outcome the case allows; the same for the victims;
 * - CANCELED exactly for the sends a cancel (or modify to 0) succeeded on;
 * - RESP_TIMEOUT only for sends posted with a timeout;
 * - one recv_handler call, before send_handler, exactly for the sends that
 *   expected a response and ended OK: duplicates never deliver twice;
 * - no handler of an agent runs after kmad_unregister_agent() returned,
 *   which returns 0 for another agent and -EDEADLK for the handler's own;
 * - kmad_port_get() finds a port until its device's removal has begun;
 * - every buffer is freed once (kmemleak and KASAN run in the harness);
 * - a disturbance met posting: posts were accepted before it began and
 *   the poster kthreads tried to post after it began (they go on past the
 *   posting time until they have, and keep their last send for it:
 *   race_go_on(), race_hold_last()).
 *
 * The random choices of every thread come from prandom states seeded from
 * the printed seed (module parameter "seed"), so they are reproducible;
 * the interleaving is not.  Module parameter "dims" turns dimensions of
 * the matrix off (RACE_DIM_*), "post_ms" sets how long each case posts.
 * Every wait is bounded.
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/string.h>
#include <linux/timer.h>

#include "kmad_test.h"

#define RACE_SEED		0x6b6d61645f726163ULL
#define RACE_POSTERS		2	/* poster kthreads */
#define RACE_TIMER		RACE_POSTERS	/* the timer's slice */
#define RACE_SLICES		(RACE_POSTERS + 1)
#define RACE_SENDS		300	/* per slice, at most */
#define RACE_EXTRA		4	/* posted by the case itself */
#define RACE_MAX_OUT		32	/* outstanding per slice: it waits */
#define RACE_POST_MS		2500	/* how long a case posts */
#define RACE_CASE_MS		30000	/* all waits after that */
#define RACE_SHORT_MS		3	/* short timeouts: 1..3 ms */
#define RACE_QP_ERRORS		5
#define RACE_STORMS		4
#define RACE_VICTIMS		4	/* alternately on devices 0 and 1 */
#define RACE_VICTIM_SENDS	4	/* requests each keeps in flight */
#define RACE_VICTIM_MS		200	/* their timeouts: 1-2 times this */

#define RACE_NORMAL	(BIT(KMAD_SEND_OK) | BIT(KMAD_SEND_RESP_TIMEOUT) | \
			 BIT(KMAD_SEND_CANCELED))

/*
 * Dimensions of the matrix (module parameter "dims"; all by default).  The
 * first four are also what a handler may draw (RACE_ACT_*).
 */
#define RACE_DIM_FREE		BIT(0)	/* send_handler frees the buffer */
#define RACE_DIM_PORT_GET	BIT(1)	/* handlers look up both ports */
#define RACE_DIM_UNREG_SELF	BIT(2)	/* ... unregister their own agent */
#define RACE_DIM_VICTIMS	BIT(3)	/* victims, unregistered by handlers */
#define RACE_DIM_TIMER		BIT(4)	/* a timer posts, cancels, modifies */
#define RACE_DIM_IRQSAVE	BIT(5)	/* ... some under spin_lock_irqsave */
#define RACE_DIM_ALL		(BIT(6) - 1)

#define RACE_ACT_FREE		RACE_DIM_FREE
#define RACE_ACT_PORT_GET	RACE_DIM_PORT_GET
#define RACE_ACT_UNREG_SELF	RACE_DIM_UNREG_SELF
#define RACE_ACT_UNREG_OTHER	RACE_DIM_VICTIMS

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

/* Cancel storms: sends wait on the overflow and replay lists. */
static const struct kmad_sim_config race_storm_qp = {
	.notify = KMAD_SIM_NOTIFY_MISSED, .latency_us = 5, .sq_depth = 8,
	.rq_depth = 64,
};

/* Address handles made at once: every send goes through kmad's AH cache. */
static const struct kmad_sim_config race_ah_storm_qp = {
	.notify = KMAD_SIM_NOTIFY_MISSED, .latency_us = 5, .sq_depth = 8,
	.rq_depth = 64, .ah = KMAD_SIM_AH_AUTO,
};

static const struct kmad_sim_config race_ah_small_sq = {
	.notify = KMAD_SIM_NOTIFY_IBTA, .latency_us = 5, .sq_depth = 8,
	.ah = KMAD_SIM_AH_AUTO,
};

static unsigned long long race_seed = RACE_SEED;
module_param_named(seed, race_seed, ullong, 0444);
MODULE_PARM_DESC(seed, "base seed of the random choices");

static unsigned int race_dims = RACE_DIM_ALL;
module_param_named(dims, race_dims, uint, 0444);
MODULE_PARM_DESC(dims, "matrix dimensions, a mask (default 63): 1 send_handler frees, 2 handlers look up ports, 4 handlers unregister their own agent, 8 victim agents that handlers unregister, 16 a timer posts, 32 posts and cancels under spin_lock_irqsave");

static unsigned int race_post_ms = RACE_POST_MS;
module_param_named(post_ms, race_post_ms, uint, 0444);
MODULE_PARM_DESC(post_ms, "how long each case posts, in ms (default 2500)");

/*
 * The test kernel's KUnit runs a module's suites while the module is
 * still COMING, before the kernel parses its parameters (it does right
 * after: 6.1 stable has upstream's 2810c1e99867, and not yet the fix that
 * runs them once the module is LIVE).  So read ours from the raw
 * argument string; the kernel then sets the same values.
 */
static int race_suite_init(struct kunit_suite *suite)
{
#ifdef MODULE
	char *args, *next, *param, *val;
	int ret = 0;

	args = kstrdup(THIS_MODULE->args ?: "", GFP_KERNEL);
	if (!args)
		return -ENOMEM;
	next = skip_spaces(args);
	while (*next && !ret) {
		next = next_arg(next, &param, &val);
		if (!val)
			ret = -EINVAL;
		else if (!strcmp(param, "seed"))
			ret = kstrtoull(val, 0, &race_seed);
		else if (!strcmp(param, "dims"))
			ret = kstrtouint(val, 0, &race_dims);
		else if (!strcmp(param, "post_ms"))
			ret = kstrtouint(val, 0, &race_post_ms);
	}
	kfree(args);
	if (ret)
		pr_err("kmad_race: bad module parameters\n");
	return ret;
#else
	return 0;
#endif
}

struct race_ctx;

/* One send buffer and what became of it. */
struct race_send {
	struct kmad_send_buf *buf;
	atomic_t cbs;		/* send_handler calls */
	atomic_t resps;		/* recv_handler calls for its response */
	int status;		/* of the last send_handler call */
	unsigned int acts;	/* RACE_ACT_*: what its handlers do */
	bool posted;		/* kmad_post_send() returned 0 */
	bool timed;		/* posted with a timeout */
	bool canceled;		/* a cancel or modify to 0 returned 0 */
	bool freed;		/* ulp_lock: send_handler freed buf */
};

/* An agent that handlers unregister, with requests of its own in flight. */
struct race_victim {
	struct race_ctx *ctx;
	struct kmad_agent *agent;
	unsigned int idx;
	unsigned int dev;		/* its device */
	atomic_t claimed;		/* someone unregisters it */
	bool gone;			/* kmad_unregister_agent() returned */
	bool by_handler;		/* ... in another agent's handler */
	int ret;			/* what it returned */
	int cbs_at_unreg, posted_at_unreg;
	atomic_t posted, cbs, resps, late;
	atomic_t live;			/* its buffers not yet freed */
};

struct race_thread;

/*
 * What the chaos threads do, @n times: the k-th time at a random point of
 * the k-th of @n equal stretches of [@from, @to) percent of the posting
 * (of all posts, or of the posting time, whichever comes first).  @fn2,
 * if set, runs in a second thread at the same points.
 */
struct race_chaos {
	void (*fn)(struct race_thread *t);
	void (*fn2)(struct race_thread *t);
	unsigned int n, from, to;
};

struct race_ctx {
	struct kunit *test;
	struct kmad_sim_fabric *fab;
	struct kmad_port *port[2];
	char dev_name[2][KMAD_NAME_LEN];
	struct kmad_agent *req;		/* send-only, device 0 QP1 */
	struct kmad_agent *resp;	/* Get responder, device 1 QP1 */
	u64 seed;
	unsigned int dims;		/* RACE_DIM_* */
	ktime_t start;
	unsigned long run_start;	/* jiffies: posting started */
	unsigned long post_end;		/* jiffies: posting stops */
	unsigned long deadline;		/* jiffies: all waits end here */
	unsigned int nslices;		/* posting slices that run */
	spinlock_t ulp_lock;		/* the ULP's; guards race_send.freed */
	struct race_send *sends;
	unsigned int nsends;
	struct race_victim victims[RACE_VICTIMS];
	unsigned int nvictims;		/* registered */
	atomic_t victim_next;		/* the next one a handler takes */
	atomic_t ah_flushes;		/* race_chaos_ah_flush() calls */
	unsigned int long_ms;		/* long timeouts: 1-2 long_ms */
	unsigned int allowed;		/* BIT(status) of requests */
	unsigned int resp_allowed;	/* BIT(status) of responses */
	unsigned int victim_allowed;	/* BIT(status) of victims' sends */
	bool stop_on_shutdown;		/* -ESHUTDOWN ends a poster */
	const struct race_chaos *chaos;
	unsigned int chaos_dev;		/* device the chaos removes */
	bool keep_dev_victims;		/* handlers leave its victims */
	bool removing, removed;		/* its removal began, ended */
	bool req_gone, resp_gone;	/* kmad_unregister_agent() returned */
	int req_cbs_at_unreg, resp_cbs_at_unreg;
	atomic_t posted, cbs, late, bogus, bad_ret, posters_done;
	atomic_t slice_out[RACE_SLICES];	/* outstanding per slice */
	atomic_t shut_out;		/* posters stopped by -ESHUTDOWN */
	atomic_t posted_dying;		/* accepted, port going away */
	atomic_t status[KMAD_SEND_LOCAL_ERROR + 1];
	atomic_t vstatus[2][KMAD_SEND_LOCAL_ERROR + 1];	/* victims' */
	atomic_t resp_posted, resp_cbs, resp_late, resp_recvs;
	/* What the matrix did, for the summary and the cases' checks. */
	atomic_t freed, port_gets, port_gets_removing, port_nulls;
	atomic_t deadlk, req_deadlk, ok_after_deadlk, victims_by_handler;
	atomic_t timer_posts, locked_posts, storm_cancels;
	/* The overlap of the chaos with the posting, checked by
	 * race_finish(): the chaos began (its first call), posts accepted
	 * by then, and the poster kthreads' post calls made after.
	 */
	atomic_t chaos_began;
	int posted_at_chaos;
	atomic_t tries_after_chaos;
};

/* A poster (kthread or timer) or a chaos thread. */
struct race_thread {
	struct race_ctx *ctx;
	unsigned int idx;
	struct completion done;
	struct rnd_state rnd;		/* its own choices */
	struct rnd_state when;		/* chaos: its points (both alike) */
	unsigned int first;		/* posters: their slice of sends */
	unsigned int next;		/* timer: the next send of its slice */
	bool tried_after_chaos;		/* posters: a post after the chaos
					 * began (race_go_on())
					 */
	struct timer_list timer;
};

static u32 race_hash(struct race_ctx *ctx, u32 salt, u32 n)
{
	return hash_64(ctx->seed ^ ((u64)salt << 32 | n), 32);
}

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

/* Look up and release both ports, as a handler may, also during removal. */
static void race_port_get(struct race_ctx *ctx)
{
	struct kmad_port *port;
	unsigned int d;

	for (d = 0; d < 2; d++) {
		port = kmad_port_get(ctx->dev_name[d], 1);
		/* Gone only once its removal began (the lookup orders it). */
		if (!port) {
			atomic_inc(&ctx->port_nulls);
			if (!READ_ONCE(ctx->removing) || d != ctx->chaos_dev)
				atomic_inc(&ctx->bogus);
			continue;
		}
		if (port != ctx->port[d])
			atomic_inc(&ctx->bogus);
		if (READ_ONCE(ctx->removing) && !READ_ONCE(ctx->removed))
			atomic_inc(&ctx->port_gets_removing);
		atomic_inc(&ctx->port_gets);
		kmad_port_put(port);
	}
}

/* Unregister @v unless someone else does; then note what it did. */
static void race_victim_unregister(struct race_victim *v, bool by_handler)
{
	if (atomic_cmpxchg(&v->claimed, 0, 1))
		return;
	v->ret = kmad_unregister_agent(v->agent);
	v->cbs_at_unreg = atomic_read(&v->cbs);
	v->posted_at_unreg = atomic_read(&v->posted);
	v->by_handler = by_handler;
	if (by_handler)
		atomic_inc(&v->ctx->victims_by_handler);
	WRITE_ONCE(v->gone, true);
}

/*
 * Unregister every victim nobody else does, and wait (bounded) for those
 * a handler is unregistering: until then one may still retry a send.
 */
static void race_victims_unregister(struct race_ctx *ctx)
{
	unsigned long until = jiffies + msecs_to_jiffies(RACE_CASE_MS);
	unsigned int i;

	for (i = 0; i < ctx->nvictims; i++) {
		race_victim_unregister(&ctx->victims[i], false);
		while (!READ_ONCE(ctx->victims[i].gone) &&
		       time_before(jiffies, until))
			usleep_range(1000, 2000);
	}
}

/*
 * Do what a handler of @agent drew (RACE_ACT_*; freeing is its caller's).
 * Returns how often unregistering its own agent was refused.
 */
static int race_act(struct race_ctx *ctx, struct kmad_agent *agent,
		    unsigned int acts)
{
	unsigned int i;
	int ret;

	/* While a device goes away, every handler looks the ports up. */
	if ((ctx->dims & RACE_DIM_PORT_GET) && READ_ONCE(ctx->removing) &&
	    !READ_ONCE(ctx->removed))
		acts |= RACE_ACT_PORT_GET;
	if (acts & RACE_ACT_PORT_GET)
		race_port_get(ctx);
	if (acts & RACE_ACT_UNREG_OTHER) {
		do {
			i = atomic_inc_return(&ctx->victim_next) - 1;
		} while (i < ctx->nvictims && ctx->keep_dev_victims &&
			 ctx->victims[i].dev == ctx->chaos_dev);
		if (i < ctx->nvictims)
			race_victim_unregister(&ctx->victims[i], true);
	}
	if (!(acts & RACE_ACT_UNREG_SELF))
		return 0;
	ret = kmad_unregister_agent(agent);
	if (ret != -EDEADLK) {
		atomic_inc(&ctx->bogus);
		return 0;
	}
	atomic_inc(&ctx->deadlk);
	return 1;
}

/*
 * What a handler without a race_send draws from @h: a port lookup 1 in 8,
 * unregistering its own agent 1 in 32, a victim 1 in 128.
 */
static unsigned int race_hash_acts(struct race_ctx *ctx, u32 h)
{
	unsigned int acts = 0;

	if (h % 8 == 0)
		acts |= RACE_ACT_PORT_GET;
	if ((h >> 3) % 32 == 0)
		acts |= RACE_ACT_UNREG_SELF;
	if ((h >> 8) % 128 == 0)
		acts |= RACE_ACT_UNREG_OTHER;
	return acts & ctx->dims;
}

static void race_req_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct race_ctx *ctx = agent->context;
	struct race_send *rs = race_send_of(ctx, wc->send_buf);
	unsigned long flags;

	if (READ_ONCE(ctx->req_gone))
		atomic_inc(&ctx->late);
	if (wc->status < ARRAY_SIZE(ctx->status))
		atomic_inc(&ctx->status[wc->status]);
	if (wc->status == KMAD_SEND_OK && atomic_read(&ctx->req_deadlk))
		atomic_inc(&ctx->ok_after_deadlk);
	if (rs) {
		WRITE_ONCE(rs->status, wc->status);
		/* Pairs with atomic_read_acquire() in race_probe(). */
		atomic_inc_return_release(&rs->cbs);
		if (rs - ctx->sends < RACE_SLICES * RACE_SENDS)
			atomic_dec(&ctx->slice_out[(rs - ctx->sends) /
						   RACE_SENDS]);
		atomic_add(race_act(ctx, agent, rs->acts), &ctx->req_deadlk);
		if (rs->acts & RACE_ACT_FREE) {
			/* Cancels of this send hold the lock and test freed. */
			spin_lock_irqsave(&ctx->ulp_lock, flags);
			WRITE_ONCE(rs->freed, true);
			kmad_free_send_buf(wc->send_buf);
			spin_unlock_irqrestore(&ctx->ulp_lock, flags);
			atomic_inc(&ctx->freed);
		}
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
	if (rs) {
		atomic_inc(&rs->resps);
		atomic_add(race_act(ctx, agent, rs->acts &
				    (RACE_ACT_PORT_GET | RACE_ACT_UNREG_SELF)),
			   &ctx->req_deadlk);
	}
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

/*
 * Answer every Get, after what the handler drew (it keeps answering after
 * a refused unregister); a post fails only while the agent goes away.
 */
static void race_resp_recv(struct kmad_agent *agent,
			   struct kmad_send_buf *request,
			   struct kmad_recv_wc *wc)
{
	struct race_ctx *ctx = agent->context;
	struct kmad_send_buf *buf;
	u32 h = race_hash(ctx, RACE_VICTIMS,
			  atomic_inc_return(&ctx->resp_recvs));
	int ret;

	if (READ_ONCE(ctx->resp_gone))
		atomic_inc(&ctx->resp_late);
	if (request)
		atomic_inc(&ctx->bogus);
	race_act(ctx, agent, race_hash_acts(ctx, h));
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

/* A victim's request ended: post it again while the case posts. */
static void race_victim_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct race_victim *v = agent->context;
	struct race_ctx *ctx = v->ctx;
	struct kmad_send_buf *buf = wc->send_buf;
	u32 h = race_hash(ctx, v->idx, atomic_inc_return(&v->cbs));
	int ret = -ESHUTDOWN;

	if (READ_ONCE(v->gone))
		atomic_inc(&v->late);
	if (wc->status < ARRAY_SIZE(ctx->vstatus[0]))
		atomic_inc(&ctx->vstatus[v->dev][wc->status]);
	if (!(ctx->victim_allowed & BIT(wc->status)))
		atomic_inc(&ctx->bogus);
	race_act(ctx, agent, race_hash_acts(ctx, h) & ~RACE_ACT_UNREG_OTHER);
	if (time_before(jiffies, ctx->post_end)) {
		buf->timeout_ms = RACE_VICTIM_MS + (h >> 16) % RACE_VICTIM_MS;
		buf->retries = (h >> 30) & 1;
		ret = kmad_post_send(buf);
	}
	if (!ret) {
		atomic_inc(&v->posted);
		return;
	}
	if (ret != -ESHUTDOWN)
		atomic_inc(&ctx->bogus);
	kmad_free_send_buf(buf);
	atomic_dec(&v->live);
}

static void race_victim_recv(struct kmad_agent *agent,
			     struct kmad_send_buf *request,
			     struct kmad_recv_wc *wc)
{
	struct race_victim *v = agent->context;

	if (READ_ONCE(v->gone))
		atomic_inc(&v->late);
	if (!request)
		atomic_inc(&v->ctx->bogus);
	atomic_inc(&v->resps);
	kmad_free_recv(wc);
}

/* Unregister, then note that it returned and how many callbacks ran. */
static void race_unregister_req(struct race_ctx *ctx)
{
	if (ctx->req_gone || IS_ERR_OR_NULL(ctx->req))
		return;
	KUNIT_EXPECT_EQ(ctx->test, kmad_unregister_agent(ctx->req), 0);
	WRITE_ONCE(ctx->req_gone, true);
	ctx->req_cbs_at_unreg = atomic_read(&ctx->cbs);
}

static void race_unregister_resp(struct race_ctx *ctx)
{
	if (ctx->resp_gone || IS_ERR_OR_NULL(ctx->resp))
		return;
	KUNIT_EXPECT_EQ(ctx->test, kmad_unregister_agent(ctx->resp), 0);
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
 * What the handlers of send @n of a slice will do: free it 1 in 4, look
 * up the ports 1 in 8, unregister their own agent 1 in 32, a victim 1 in
 * 64; and for certain the first poster's first send (own agent) and third
 * (a victim).
 */
static unsigned int race_pick_acts(struct race_thread *t, unsigned int n)
{
	u32 r = prandom_u32_state(&t->rnd);
	unsigned int acts = 0;

	if (r % 4 == 0)
		acts |= RACE_ACT_FREE;
	if ((r >> 2) % 8 == 0)
		acts |= RACE_ACT_PORT_GET;
	if ((r >> 5) % 32 == 0 || (t->idx == 0 && n == 0))
		acts |= RACE_ACT_UNREG_SELF;
	if ((r >> 10) % 64 == 0 || (t->idx == 0 && n == 2))
		acts |= RACE_ACT_UNREG_OTHER;
	return acts & t->ctx->dims;
}

enum race_op { RACE_POST, RACE_CANCEL, RACE_MODIFY };

/*
 * One call on @rs's buffer.  Calls that touch the agent are made under
 * rcu_read_lock() and only until its unregistration returned: one that
 * starts later is a caller bug (the agent is freed an RCU grace period
 * after it).  Nor is a buffer touched once send_handler freed it (under
 * ulp_lock, which the caller then holds).  -ESHUTDOWN without calling.
 */
static int race_call(struct race_ctx *ctx, struct race_send *rs,
		     enum race_op op, unsigned int timeout)
{
	if (READ_ONCE(ctx->req_gone) || READ_ONCE(rs->freed))
		return -ESHUTDOWN;
	switch (op) {
	case RACE_POST:
		return kmad_post_send(rs->buf);
	case RACE_CANCEL:
		return kmad_cancel_send(rs->buf);
	default:
		return kmad_modify_send(rs->buf, timeout);
	}
}

/* race_call(), under the ULP's lock with interrupts off if @locked. */
static int race_call_ctx(struct race_ctx *ctx, struct race_send *rs,
			 enum race_op op, unsigned int timeout, bool locked)
{
	unsigned long flags;
	int ret;

	rcu_read_lock();
	if (locked) {
		spin_lock_irqsave(&ctx->ulp_lock, flags);
		ret = race_call(ctx, rs, op, timeout);
		spin_unlock_irqrestore(&ctx->ulp_lock, flags);
	} else {
		ret = race_call(ctx, rs, op, timeout);
	}
	rcu_read_unlock();
	return ret;
}

/* Post send @n of @t's slice. */
static int race_post(struct race_thread *t, unsigned int n)
{
	struct race_ctx *ctx = t->ctx;
	struct race_send *rs = &ctx->sends[t->first + n];
	bool dying = READ_ONCE(ctx->port[KT_DEV0]->dying);
	bool locked;
	int ret;

	rs->buf->timeout_ms = race_pick_timeout(t);
	rs->buf->retries = prandom_u32_state(&t->rnd) % 4;
	rs->timed = rs->buf->timeout_ms;
	rs->acts = race_pick_acts(t, n);
	locked = (ctx->dims & RACE_DIM_IRQSAVE) &&
		 prandom_u32_state(&t->rnd) % 3 == 0;
	if (atomic_read(&ctx->chaos_began) && t->idx != RACE_TIMER) {
		t->tried_after_chaos = true;
		atomic_inc(&ctx->tries_after_chaos);
	}
	ret = race_call_ctx(ctx, rs, RACE_POST, 0, locked);
	if (!ret) {
		/* Pairs with smp_load_acquire() in race_chaos_storm(). */
		smp_store_release(&rs->posted, true);
		atomic_inc(&ctx->posted);
		atomic_inc(&ctx->slice_out[t->idx]);
		if (locked)
			atomic_inc(&ctx->locked_posts);
		if (t->idx == RACE_TIMER)
			atomic_inc(&ctx->timer_posts);
		/* The contract: -ESHUTDOWN once the port is going away. */
		if (dying)
			atomic_inc(&ctx->posted_dying);
	} else if (ret != -ESHUTDOWN || !ctx->stop_on_shutdown) {
		atomic_inc(&ctx->bad_ret);
	}
	return ret;
}

/*
 * Cancel @rs, or modify its timeout (0 cancels too); under the ULP's lock
 * if @locked or if its send_handler frees it.  Returns what kmad did.
 */
static int race_touch(struct race_ctx *ctx, struct race_send *rs,
		      enum race_op op, unsigned int timeout, bool locked)
{
	int ret;

	ret = race_call_ctx(ctx, rs, op, timeout,
			    locked || (rs->acts & RACE_ACT_FREE));
	if (!ret && !timeout)
		WRITE_ONCE(rs->canceled, true);
	else if (ret && ret != -EALREADY && ret != -EINVAL && ret != -ESHUTDOWN)
		atomic_inc(&ctx->bad_ret);
	return ret;
}

/* Maybe cancel, or change the timeout of, one of sends 0..n of the slice. */
static void race_poke(struct race_thread *t, unsigned int n)
{
	struct race_ctx *ctx = t->ctx;
	u32 what = prandom_u32_state(&t->rnd) % 100;
	unsigned int timeout = 0;
	struct race_send *rs;
	bool locked;

	if (what >= 30)
		return;
	rs = &ctx->sends[t->first + prandom_u32_state(&t->rnd) % (n + 1)];
	if (what >= 15)
		timeout = race_pick_timeout(t);
	locked = (ctx->dims & RACE_DIM_IRQSAVE) &&
		 (prandom_u32_state(&t->rnd) & 1);
	race_touch(ctx, rs, what < 15 ? RACE_CANCEL : RACE_MODIFY, timeout,
		   locked);
}

static bool race_posting(struct race_ctx *ctx)
{
	return time_before(jiffies, ctx->post_end);
}

/*
 * Does a poster kthread go on: within the posting time, and in a case
 * with chaos also past it until the chaos began and the poster tried one
 * more post after that (even once the requester is gone: the try is then
 * refused), so that the chaos always meets posting (a slow chaos thread
 * on a loaded host could otherwise come after it).
 */
static bool race_go_on(struct race_thread *t)
{
	struct race_ctx *ctx = t->ctx;

	if (race_posting(ctx))
		return true;
	if (!ctx->chaos)
		return false;
	return !atomic_read(&ctx->chaos_began) || !t->tried_after_chaos;
}

/*
 * A poster keeps its slice's last send until the chaos began (bounded by
 * the case's deadline), so that running out of sends does not end it
 * before the chaos either.
 */
static void race_hold_last(struct race_thread *t, unsigned int i)
{
	struct race_ctx *ctx = t->ctx;

	if (!ctx->chaos || i != RACE_SENDS - 1)
		return;
	while (!atomic_read(&ctx->chaos_began) &&
	       time_before(jiffies, ctx->deadline))
		usleep_range(100, 300);
}

/* Has slice @t too many sends outstanding? */
static bool race_full(struct race_thread *t)
{
	return atomic_read(&t->ctx->slice_out[t->idx]) >= RACE_MAX_OUT;
}

/* Wait while too many sends are outstanding; false once posting ends. */
static bool race_throttle(struct race_thread *t)
{
	struct race_ctx *ctx = t->ctx;

	while (race_full(t) && !READ_ONCE(ctx->req_gone)) {
		if (!race_go_on(t))
			return false;
		usleep_range(100, 300);
	}
	return true;
}

static int race_poster(void *arg)
{
	struct race_thread *t = arg;
	struct race_ctx *ctx = t->ctx;
	unsigned int i;

	for (i = 0; i < RACE_SENDS && race_go_on(t); i++) {
		if (!race_throttle(t))
			break;
		race_hold_last(t, i);
		if (race_post(t, i) == -ESHUTDOWN) {
			atomic_inc(&ctx->shut_out);
			break;
		}
		race_poke(t, i);
		cond_resched();
	}
	atomic_inc(&ctx->posters_done);
	kthread_complete_and_exit(&t->done, 0);
}

/* The timer's slice: one post (and maybe a poke) a tick, in softirq. */
static void race_timer_fn(struct timer_list *timer)
{
	struct race_thread *t = from_timer(t, timer, timer);
	struct race_ctx *ctx = t->ctx;

	if (t->next < RACE_SENDS && race_posting(ctx) && !race_full(t)) {
		if (race_post(t, t->next) == -ESHUTDOWN) {
			atomic_inc(&ctx->shut_out);
			goto done;
		}
		race_poke(t, t->next);
		t->next++;
	}
	if (t->next < RACE_SENDS && race_posting(ctx)) {
		mod_timer(timer, jiffies + 1);
		return;
	}
done:
	atomic_inc(&ctx->posters_done);
	complete(&t->done);
}

/* Wait until @permille of the posting is behind (posts or time). */
static void race_wait_point(struct race_ctx *ctx, unsigned int permille)
{
	int n = ctx->nslices * RACE_SENDS * permille / 1000;
	unsigned long at = ctx->run_start +
			   msecs_to_jiffies(race_post_ms) * permille / 1000;

	while (atomic_read(&ctx->posted) < n && time_before(jiffies, at) &&
	       atomic_read(&ctx->posters_done) < ctx->nslices)
		usleep_range(50, 150);
}

static int race_chaos_thread(void *arg)
{
	struct race_thread *t = arg;
	struct race_ctx *ctx = t->ctx;
	const struct race_chaos *c = ctx->chaos;
	void (*fn)(struct race_thread *t) = t->idx == RACE_SLICES ? c->fn :
								    c->fn2;
	unsigned int stretch = max((c->to - c->from) * 10 / c->n, 1U);
	unsigned int k;

	for (k = 0; k < c->n; k++) {
		race_wait_point(ctx, c->from * 10 + stretch * k +
				prandom_u32_state(&t->when) % stretch);
		if (!k && t->idx == RACE_SLICES) {
			/* Posters the host started late: one post first. */
			while (!atomic_read(&ctx->posted) &&
			       atomic_read(&ctx->posters_done) < ctx->nslices &&
			       time_before(jiffies, ctx->deadline))
				usleep_range(100, 300);
			ctx->posted_at_chaos = atomic_read(&ctx->posted);
			atomic_set(&ctx->chaos_began, 1);
		}
		fn(t);
	}
	kthread_complete_and_exit(&t->done, 0);
}

static struct kmad_send_buf *race_alloc(struct race_ctx *ctx,
					struct kmad_agent *agent,
					unsigned int to_dev, u32 tid)
{
	struct kmad_dest dest = {
		.dlid = kmad_port_lid(ctx->port[to_dev]),
		.remote_qpn = KT_QPN,
		.remote_qkey = KMAD_QP1_QKEY,
	};
	struct kmad_send_buf *buf;

	buf = kmad_alloc_send_buf(agent, &dest, GFP_KERNEL);
	if (IS_ERR(buf))
		return buf;
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.mgmt_class = KT_CLASS;
	buf->mad->mad_hdr.class_version = KT_VERSION;
	buf->mad->mad_hdr.method = KMAD_METHOD_GET;
	buf->mad->mad_hdr.tid = cpu_to_be64(tid);
	buf->mad->mad_hdr.attr_id = cpu_to_be16(KMAD_PMA_ATTR_PORT_COUNTERS);
	return buf;
}

/*
 * Each victim posts its requests to the other device: device 1's
 * responder answers those of device 0, kmad's own "unsupported" responder
 * on device 0 those of device 1.
 */
static void race_victims_start(struct race_ctx *ctx)
{
	struct kmad_send_buf *buf;
	struct race_victim *v;
	unsigned int i, j;

	for (i = 0; i < ctx->nvictims; i++) {
		v = &ctx->victims[i];
		for (j = 0; j < RACE_VICTIM_SENDS; j++) {
			buf = race_alloc(ctx, v->agent, !v->dev,
					 0x10000 + i * 16 + j);
			if (IS_ERR(buf)) {
				atomic_inc(&ctx->bogus);
				continue;
			}
			buf->timeout_ms = RACE_VICTIM_MS;
			atomic_inc(&v->live);
			if (kmad_post_send(buf)) {
				atomic_inc(&ctx->bogus);
				atomic_dec(&v->live);
				kmad_free_send_buf(buf);
				continue;
			}
			atomic_inc(&v->posted);
		}
	}
}

/*
 * Run the posters (kthreads and the timer), the victims and the chaos
 * threads, if any, and join them all.
 */
static void race_run(struct race_ctx *ctx)
{
	const struct race_chaos *c = ctx->chaos;
	unsigned int i, n = RACE_SLICES + (c ? 1 + !!c->fn2 : 0);
	bool timer = ctx->dims & RACE_DIM_TIMER;
	struct task_struct *task;
	struct race_thread *t;

	t = kunit_kcalloc(ctx->test, n, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(ctx->test, t);
	for (i = 0; i < n; i++) {
		t[i].ctx = ctx;
		t[i].idx = i;
		init_completion(&t[i].done);
		prandom_seed_state(&t[i].rnd, ctx->seed + i);
		/* Both chaos threads act at the same points. */
		prandom_seed_state(&t[i].when, ctx->seed + RACE_SLICES);
		t[i].first = i * RACE_SENDS;
	}
	ctx->nslices = RACE_POSTERS + timer;
	ctx->run_start = jiffies;
	ctx->post_end = ctx->run_start + msecs_to_jiffies(race_post_ms);
	ctx->deadline = ctx->post_end + msecs_to_jiffies(RACE_CASE_MS);
	race_victims_start(ctx);
	if (timer) {
		timer_setup(&t[RACE_TIMER].timer, race_timer_fn, 0);
		mod_timer(&t[RACE_TIMER].timer, jiffies + 1);
	} else {
		complete(&t[RACE_TIMER].done);
	}
	for (i = 0; i < n; i++) {
		if (i == RACE_TIMER)
			continue;
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
	if (timer)
		del_timer_sync(&t[RACE_TIMER].timer);
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
	rs->acts = 0;
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

/* The victims, alternately on devices 0 and 1, registered. */
static void race_victims_setup(struct race_ctx *ctx)
{
	struct kmad_agent *agent;
	struct race_victim *v;
	unsigned int i;

	if (!(ctx->dims & RACE_DIM_VICTIMS))
		return;
	for (i = 0; i < RACE_VICTIMS; i++) {
		v = &ctx->victims[i];
		v->ctx = ctx;
		v->idx = i;
		v->dev = i % 2;
		agent = kmad_register_agent(ctx->port[v->dev], KMAD_QPT_GSI,
					    NULL, race_victim_send,
					    race_victim_recv, v);
		KUNIT_ASSERT_FALSE(ctx->test, IS_ERR(agent));
		v->agent = agent;
		ctx->nvictims++;
	}
}

/*
 * An asynchronous two-device fabric built from @cfg (depths, notification,
 * latency), the agents and every send buffer; nothing runs yet.
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
	ctx->dims = race_dims & RACE_DIM_ALL;
	ctx->start = ktime_get();
	ctx->long_ms = 100;
	ctx->allowed = RACE_NORMAL;
	ctx->resp_allowed = BIT(KMAD_SEND_OK);
	ctx->victim_allowed = BIT(KMAD_SEND_OK) |
			      BIT(KMAD_SEND_RESP_TIMEOUT) |
			      BIT(KMAD_SEND_FLUSHED);
	spin_lock_init(&ctx->ulp_lock);
	kunit_info(test, "seed %#llx (module parameter %#llx + %llu), dims %#x, post_ms %u\n",
		   ctx->seed, race_seed, salt, ctx->dims, race_post_ms);

	snprintf(name, sizeof(name), "%s%d_", KBUILD_MODNAME,
		 atomic_inc_return(&kt_fabric_seq));
	c.name = name;
	c.topology = KMAD_SIM_TOPO_PAIR;
	c.mode = KMAD_SIM_ASYNC;
	ctx->fab = kmad_sim_create(&c);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(ctx->fab));
	for (i = 0; i < 2; i++) {
		snprintf(dev, sizeof(dev), "%s%u", name, i);
		strscpy(ctx->dev_name[i], dev, sizeof(ctx->dev_name[i]));
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
	race_victims_setup(ctx);

	ctx->nsends = RACE_SLICES * RACE_SENDS + RACE_EXTRA;
	ctx->sends = kunit_kcalloc(test, ctx->nsends, sizeof(*ctx->sends),
				   GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->sends);
	for (i = 0; i < ctx->nsends; i++) {
		ctx->sends[i].buf = race_alloc(ctx, ctx->req, KT_DEV1, i + 1);
		KUNIT_ASSERT_FALSE(test, IS_ERR(ctx->sends[i].buf));
		ctx->sends[i].buf->context[0] = ctx;
		ctx->sends[i].buf->context[1] = (void *)(unsigned long)i;
	}
	return ctx;
}

/* Every posted send: one callback, a plausible outcome, and its response. */
static void race_check_sends(struct race_ctx *ctx)
{
	unsigned int i, lost = 0, doubled = 0, ghost = 0, bad = 0;
	unsigned int bad_cancel = 0, bad_resp = 0, unfreed = 0;
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
		unfreed += !!(rs->acts & RACE_ACT_FREE) != rs->freed;
	}
	KUNIT_EXPECT_EQ(ctx->test, lost, 0U);
	KUNIT_EXPECT_EQ(ctx->test, doubled, 0U);
	KUNIT_EXPECT_EQ(ctx->test, ghost, 0U);
	KUNIT_EXPECT_EQ(ctx->test, bad, 0U);
	KUNIT_EXPECT_EQ(ctx->test, bad_cancel, 0U);
	KUNIT_EXPECT_EQ(ctx->test, bad_resp, 0U);
	KUNIT_EXPECT_EQ(ctx->test, unfreed, 0U);
}

/*
 * Every victim: unregistered (0), one callback per post, all of them
 * before its unregistration returned, and every buffer freed.
 */
static void race_check_victims(struct race_ctx *ctx)
{
	struct race_victim *v;
	unsigned int i;

	for (i = 0; i < ctx->nvictims; i++) {
		v = &ctx->victims[i];
		KUNIT_EXPECT_TRUE(ctx->test, v->gone);
		KUNIT_EXPECT_EQ(ctx->test, v->ret, 0);
		KUNIT_EXPECT_EQ(ctx->test, atomic_read(&v->late), 0);
		KUNIT_EXPECT_EQ(ctx->test, atomic_read(&v->cbs),
				v->cbs_at_unreg);
		KUNIT_EXPECT_EQ(ctx->test, atomic_read(&v->posted),
				v->posted_at_unreg);
		KUNIT_EXPECT_EQ(ctx->test, atomic_read(&v->cbs),
				atomic_read(&v->posted));
		KUNIT_EXPECT_EQ(ctx->test, atomic_read(&v->live), 0);
	}
}

/*
 * Wait for the traffic to end, unregister every agent (requester and
 * victims first, so that no request reaches the responder after it), and
 * check everything.
 */
static void race_finish(struct race_ctx *ctx)
{
	struct kunit *test = ctx->test;
	int vposted = 0, vcbs = 0;
	unsigned int i;

	KUNIT_EXPECT_TRUE(test, race_wait_callbacks(ctx));
	kmad_sim_settle(ctx->fab);
	race_unregister_req(ctx);
	race_victims_unregister(ctx);
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
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->posted_dying), 0);
	/* kmad's own accounting agrees (on device 0 only the requester and
	 * the victims time out or cancel; victims never cancel).
	 */
	KUNIT_EXPECT_EQ(test, race_pstat(ctx, KT_DEV0, KMAD_PSTAT_TIMEOUTS),
			(s64)atomic_read(&ctx->status[KMAD_SEND_RESP_TIMEOUT]) +
			atomic_read(&ctx->vstatus[KT_DEV0][KMAD_SEND_RESP_TIMEOUT]));
	KUNIT_EXPECT_EQ(test, race_pstat(ctx, KT_DEV0, KMAD_PSTAT_CANCELED),
			(s64)atomic_read(&ctx->status[KMAD_SEND_CANCELED]));
	/* The chaos met posting: posts before it, post calls after it. */
	if (ctx->chaos) {
		KUNIT_EXPECT_GT(test, ctx->posted_at_chaos, 0);
		KUNIT_EXPECT_GT(test, atomic_read(&ctx->tries_after_chaos), 0);
		kunit_info(test, "chaos began after %d posts; %d post calls after it\n",
			   ctx->posted_at_chaos,
			   atomic_read(&ctx->tries_after_chaos));
	}
	race_check_sends(ctx);
	race_check_victims(ctx);
	for (i = 0; i < ctx->nvictims; i++) {
		vposted += atomic_read(&ctx->victims[i].posted);
		vcbs += atomic_read(&ctx->victims[i].cbs);
	}
	kunit_info(test, "%d posted (%d by the timer, %d under irqsave; %d posters stopped by -ESHUTDOWN): %d ok %d timeout %d canceled %d flushed %d error; %d responses; %lld ms\n",
		   atomic_read(&ctx->posted), atomic_read(&ctx->timer_posts),
		   atomic_read(&ctx->locked_posts),
		   atomic_read(&ctx->shut_out),
		   atomic_read(&ctx->status[KMAD_SEND_OK]),
		   atomic_read(&ctx->status[KMAD_SEND_RESP_TIMEOUT]),
		   atomic_read(&ctx->status[KMAD_SEND_CANCELED]),
		   atomic_read(&ctx->status[KMAD_SEND_FLUSHED]),
		   atomic_read(&ctx->status[KMAD_SEND_LOCAL_ERROR]),
		   atomic_read(&ctx->resp_posted),
		   ktime_ms_delta(ktime_get(), ctx->start));
	kunit_info(test, "handlers: %d buffers freed, %d port lookups (%d during removal, %d found none), %d own unregisters refused (%d by the requester, %d OK after), %d of %u victims unregistered by handlers; victims: %d posted, %d callbacks\n",
		   atomic_read(&ctx->freed), atomic_read(&ctx->port_gets),
		   atomic_read(&ctx->port_gets_removing),
		   atomic_read(&ctx->port_nulls), atomic_read(&ctx->deadlk),
		   atomic_read(&ctx->req_deadlk),
		   atomic_read(&ctx->ok_after_deadlk),
		   atomic_read(&ctx->victims_by_handler), ctx->nvictims,
		   vposted, vcbs);
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
	race_victims_unregister(ctx);
	race_unregister_resp(ctx);
	for (i = 0; ctx->sends && i < ctx->nsends; i++) {
		rs = &ctx->sends[i];
		/* One whose callback never came is still kmad's. */
		if (!IS_ERR_OR_NULL(rs->buf) && !rs->freed &&
		    (!rs->posted || atomic_read(&rs->cbs)))
			kmad_free_send_buf(rs->buf);
	}
	kmad_sim_destroy(ctx->fab);
	for (i = 0; i < 2; i++)
		kmad_port_put(ctx->port[i]);
}

/*
 * Posts, cancels and modifies from two threads and a timer against the
 * responder, with every handler action.  Expected: one callback per post,
 * ending OK, RESP_TIMEOUT (only with a timeout: short ones expire) or
 * CANCELED (exactly the successful cancels); no LOCAL_ERROR or FLUSHED.
 * The first poster's first send's handlers were refused unregistering
 * their own agent, which still completed sends OK afterwards; its third
 * send's unregistered a victim.
 */
static void race_post_cancel_modify(struct kunit *test)
{
	struct race_ctx *ctx = race_setup(test, 1, &race_small_sq);

	race_run(ctx);
	race_finish(ctx);
	KUNIT_EXPECT_GT(test, atomic_read(&ctx->status[KMAD_SEND_OK]), 0);
	if (ctx->dims & RACE_DIM_UNREG_SELF) {
		KUNIT_EXPECT_GT(test, atomic_read(&ctx->req_deadlk), 0);
		KUNIT_EXPECT_GT(test, atomic_read(&ctx->ok_after_deadlk), 0);
	}
	if (ctx->dims & RACE_DIM_VICTIMS)
		KUNIT_EXPECT_GT(test, atomic_read(&ctx->victims_by_handler),
				0);
	if (ctx->dims & RACE_DIM_TIMER)
		KUNIT_EXPECT_GT(test, atomic_read(&ctx->timer_posts), 0);
}

/*
 * The same with MADs dropped, duplicated, corrupted and failed.  Expected:
 * still one callback per post, and one response per OK (duplicates never
 * deliver twice); LOCAL_ERROR now allowed.  Then, with every MAD dropped
 * (and the victims gone), requests end RESP_TIMEOUT after all their
 * retries.
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
	unsigned int i = RACE_SLICES * RACE_SENDS;
	s64 retries;

	ctx->allowed |= BIT(KMAD_SEND_LOCAL_ERROR);
	ctx->resp_allowed |= BIT(KMAD_SEND_LOCAL_ERROR);
	ctx->victim_allowed |= BIT(KMAD_SEND_LOCAL_ERROR);
	kmad_sim_set_faults(ctx->fab, &faults);
	race_run(ctx);
	KUNIT_EXPECT_TRUE(test, race_wait_callbacks(ctx));
	race_victims_unregister(ctx);
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

static void race_chaos_unregister(struct race_thread *t)
{
	race_unregister_req(t->ctx);
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

static void race_chaos_qp_error(struct race_thread *t)
{
	KUNIT_EXPECT_EQ(t->ctx->test,
			kmad_sim_qp_error(t->ctx->fab, KT_DEV0, KT_QPN), 0);
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
	KUNIT_EXPECT_EQ(test, race_probe(ctx, RACE_SLICES * RACE_SENDS,
					 1000, 3), KMAD_SEND_OK);
	race_finish(ctx);
}

static void race_chaos_remove(struct race_thread *t)
{
	struct race_ctx *ctx = t->ctx;
	int posted = atomic_read(&ctx->posted);
	ktime_t start = ktime_get();

	WRITE_ONCE(ctx->removing, true);
	kmad_sim_remove_device(ctx->fab, ctx->chaos_dev);
	WRITE_ONCE(ctx->removed, true);
	kunit_info(ctx->test, "device %u removed in %lld ms, %d posts and %d port lookups by handlers meanwhile\n",
		   ctx->chaos_dev, ktime_ms_delta(ktime_get(), start),
		   atomic_read(&ctx->posted) - posted,
		   atomic_read(&ctx->port_gets_removing));
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
 * nowhere), while the handlers look up both ports.  Expected: every post
 * gets exactly one callback, FLUSHED allowed; the removed device's port
 * is found until its removal began; every agent then unregisters cleanly.
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

/*
 * Cancel or modify to 0 three in four of the sends outstanding, walking
 * every slot from a random one: the first chaos thread forwards, failing
 * device 0's QP1 halfway, the second backwards, failing device 1's.
 */
static void race_chaos_storm(struct race_thread *t)
{
	struct race_ctx *ctx = t->ctx;
	bool fwd = t->idx == RACE_SLICES;
	unsigned int n = RACE_SLICES * RACE_SENDS;
	unsigned int start = prandom_u32_state(&t->rnd) % n, i, k;
	struct race_send *rs;
	u32 r;

	for (k = 0; k < n; k++) {
		if (k == n / 2)
			KUNIT_EXPECT_EQ(ctx->test,
					kmad_sim_qp_error(ctx->fab,
							  fwd ? KT_DEV0 :
								KT_DEV1,
							  KT_QPN), 0);
		i = fwd ? (start + k) % n : (start + n - k) % n;
		rs = &ctx->sends[i];
		/* Pairs with race_post(): acts was set before posted. */
		if (!smp_load_acquire(&rs->posted) || atomic_read(&rs->cbs))
			continue;
		r = prandom_u32_state(&t->rnd);
		if (r % 4 == 0)
			continue;
		if (!race_touch(ctx, rs, r & 4 ? RACE_CANCEL : RACE_MODIFY, 0,
				(ctx->dims & RACE_DIM_IRQSAVE) && (r & 8)))
			atomic_inc(&ctx->storm_cancels);
	}
}

static const struct race_chaos race_storms = {
	.fn = race_chaos_storm, .fn2 = race_chaos_storm, .n = RACE_STORMS,
	.from = 10, .to = 90,
};

/*
 * Cancel storms from two threads while both QP1s fail, the posters and
 * the timer poking too.  Expected: CANCELED exactly for the cancels that
 * succeeded, whether the send sat on the hardware, the overflow list or
 * the replay list; one callback per post, never FLUSHED; both QPs
 * recovered, and a request afterwards succeeds.
 */
static void race_cancel_storm_qp_error(struct kunit *test)
{
	struct race_ctx *ctx = race_setup(test, 6, &race_storm_qp);
	s64 rec0 = race_pstat(ctx, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES);
	s64 rec1 = race_pstat(ctx, KT_DEV1, KMAD_PSTAT_QP_RECOVERIES);

	ctx->chaos = &race_storms;
	race_run(ctx);
	KUNIT_EXPECT_TRUE(test, race_wait_callbacks(ctx));
	KUNIT_EXPECT_GT(test, atomic_read(&ctx->storm_cancels), 0);
	KUNIT_EXPECT_GT(test, race_pstat(ctx, KT_DEV0,
					 KMAD_PSTAT_QP_RECOVERIES), rec0);
	KUNIT_EXPECT_GT(test, race_pstat(ctx, KT_DEV1,
					 KMAD_PSTAT_QP_RECOVERIES), rec1);
	KUNIT_EXPECT_EQ(test, race_probe(ctx, RACE_SLICES * RACE_SENDS,
					 1000, 3), KMAD_SEND_OK);
	kunit_info(test, "%d sends canceled by the storms\n",
		   atomic_read(&ctx->storm_cancels));
	race_finish(ctx);
}

/* The requester (device 0) or the responder (device 1). */
static void race_unregister_main(struct race_ctx *ctx, unsigned int dev)
{
	if (dev == KT_DEV0)
		race_unregister_req(ctx);
	else
		race_unregister_resp(ctx);
}

/*
 * Unregister every agent of the device the other chaos thread removes:
 * the victims there and the requester or the responder at a random place
 * among them, starting 0-20 ms after the removal began and 0-5 ms apart.
 */
static void race_chaos_unregister_dev(struct race_thread *t)
{
	struct race_ctx *ctx = t->ctx;
	unsigned int dev = ctx->chaos_dev;
	unsigned int main_at = prandom_u32_state(&t->rnd) %
			       (RACE_VICTIMS / 2 + 1);
	unsigned int i, k = 0, d;

	d = prandom_u32_state(&t->rnd) % 20000;
	usleep_range(d, d + 100);
	for (i = 0; i < ctx->nvictims; i++) {
		if (ctx->victims[i].dev != dev)
			continue;
		if (k++ == main_at)
			race_unregister_main(ctx, dev);
		race_victim_unregister(&ctx->victims[i], false);
		d = prandom_u32_state(&t->rnd) % 5000;
		usleep_range(d, d + 100);
	}
	if (k <= main_at)
		race_unregister_main(ctx, dev);
}

static const struct race_chaos race_unregister_remove = {
	.fn = race_chaos_remove, .fn2 = race_chaos_unregister_dev, .n = 1,
	.from = 10, .to = 40,
};

/*
 * One thread removes a device while another unregisters the agents on it
 * (and the handlers of the others look up its port and unregister the
 * other device's victims).  Expected: every unregister returns 0 and no callback follows
 * it; every post gets exactly one callback, FLUSHED allowed.
 */
static void race_unregister_vs_remove(struct kunit *test)
{
	struct race_ctx *ctx = race_setup(test, 7, &race_small_sq);

	ctx->chaos_dev = *(const unsigned int *)test->param_value;
	ctx->long_ms = 20;
	ctx->allowed |= BIT(KMAD_SEND_FLUSHED);
	ctx->resp_allowed |= BIT(KMAD_SEND_FLUSHED);
	ctx->stop_on_shutdown = true;
	ctx->keep_dev_victims = true;
	ctx->chaos = &race_unregister_remove;
	race_run(ctx);
	KUNIT_EXPECT_NULL(test, kmad_sim_device(ctx->fab, ctx->chaos_dev));
	if (ctx->chaos_dev == KT_DEV0) {
		KUNIT_EXPECT_TRUE(test, ctx->req_gone);
		KUNIT_EXPECT_EQ(test, ctx->req_cbs_at_unreg,
				atomic_read(&ctx->posted));
	} else {
		KUNIT_EXPECT_TRUE(test, ctx->resp_gone);
	}
	race_finish(ctx);
}

/*
 * Both devices report a port change (kmad forgets their address handle
 * caches, handles in use stay until their sends' CQEs) 40 times, and
 * device 0's QP1 fails at every tenth.
 */
static void race_chaos_ah_flush(struct race_thread *t)
{
	struct race_ctx *ctx = t->ctx;
	struct kmad_port_attr attr;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ctx->port); i++) {
		attr = (struct kmad_port_attr) {
			.lid = kmad_port_lid(ctx->port[i]),
			.lmc = kmad_port_lmc(ctx->port[i]),
			.sm_lid = kmad_port_sm_lid(ctx->port[i]),
		};
		KUNIT_EXPECT_EQ(ctx->test,
				kmad_device_port_changed(kmad_sim_device(ctx->fab, i),
							 1, &attr), 0);
	}
	if (!(atomic_inc_return(&ctx->ah_flushes) % 10))
		race_chaos_qp_error(t);
}

static const struct race_chaos race_ah_flushes = {
	.fn = race_chaos_ah_flush, .n = 40, .from = 5, .to = 95,
};

/* No handle destroyed while a send on the wire used it, on either device. */
static void race_expect_ah_sane(struct race_ctx *ctx)
{
	struct kmad_sim_ah_stats st;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ctx->port); i++) {
		kmad_sim_get_ah_stats(ctx->fab, i, &st);
		KUNIT_EXPECT_EQ(ctx->test, st.destroyed_busy, 0ULL);
		KUNIT_EXPECT_GT(ctx->test, st.created, 0ULL);
	}
}

/*
 * Every send takes its address handle from kmad's cache while the caches
 * are flushed over and over and device 0's QP1 fails: sends wait for
 * handles, are replayed holding them, are canceled holding them.
 * Expected: one callback per post, never FLUSHED; no handle destroyed
 * before its sends' CQEs; a request afterwards succeeds.
 */
static void race_ah_flush_while_posting(struct kunit *test)
{
	struct race_ctx *ctx = race_setup(test, 8, &race_ah_storm_qp);

	ctx->chaos = &race_ah_flushes;
	race_run(ctx);
	KUNIT_EXPECT_TRUE(test, race_wait_callbacks(ctx));
	KUNIT_EXPECT_EQ(test, race_probe(ctx, RACE_SLICES * RACE_SENDS,
					 1000, 3), KMAD_SEND_OK);
	race_expect_ah_sane(ctx);
	kunit_info(test, "%d cache flushes, %lld handles destroyed on device 0\n",
		   atomic_read(&ctx->ah_flushes),
		   race_pstat(ctx, KT_DEV0, KMAD_PSTAT_AH_DESTROYED));
	race_finish(ctx);
}

/*
 * A device goes away under traffic whose sends hold and wait for address
 * handles.  Expected: as race_remove_while_posting, and the surviving
 * device destroyed no handle in use.
 */
static void race_ah_remove_while_posting(struct kunit *test)
{
	struct race_ctx *ctx = race_setup(test, 9, &race_ah_small_sq);

	ctx->chaos_dev = *(const unsigned int *)test->param_value;
	ctx->long_ms = 20;
	ctx->allowed |= BIT(KMAD_SEND_FLUSHED);
	ctx->resp_allowed |= BIT(KMAD_SEND_FLUSHED);
	ctx->stop_on_shutdown = true;
	ctx->chaos = &race_remove_mid;
	race_run(ctx);
	KUNIT_EXPECT_NULL(test, kmad_sim_device(ctx->fab, ctx->chaos_dev));
	race_expect_ah_sane(ctx);
	race_finish(ctx);
}

static struct kunit_case race_cases[] = {
	KUNIT_CASE(race_post_cancel_modify),
	KUNIT_CASE(race_faults),
	KUNIT_CASE(race_unregister_while_posting),
	KUNIT_CASE(race_qp_error_while_posting),
	KUNIT_CASE_PARAM(race_remove_while_posting, race_remove_gen_params),
	KUNIT_CASE(race_cancel_storm_qp_error),
	KUNIT_CASE_PARAM(race_unregister_vs_remove, race_remove_gen_params),
	KUNIT_CASE(race_ah_flush_while_posting),
	KUNIT_CASE_PARAM(race_ah_remove_while_posting, race_remove_gen_params),
	{}
};

static struct kunit_suite race_suite = {
	.name = "kmad_race",
	.suite_init = race_suite_init,
	.exit = race_exit,
	.test_cases = race_cases,
};

kunit_test_suites(&race_suite);

MODULE_DESCRIPTION("KUnit stress tests for kmad: threads, faults, teardown");
MODULE_LICENSE("GPL");
