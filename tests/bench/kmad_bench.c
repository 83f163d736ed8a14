// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_bench: kmad's benchmarks, run by `make bench` (tests/bench/bench.sh)
 * in a non-debug guest kernel.  Everything runs at module load, against a
 * private simulated fabric ("kbench": a pair of HCAs, asynchronous mode, no
 * added latency), through kmad's public API, as a ULP would use it; the
 * timeout-expiry benchmark also watches kmad's kmad_timeout tracepoint to
 * see when kmad starts expiring a batch.
 *
 * Each measurement is printed as one line
 *
 *   kmad_bench: result {"name":"...","unit":"...",<parameters>,"samples":[...]}
 *
 * with one sample per repeat; the host (tests/bench/report.py) takes the
 * median, minimum and maximum.  A line "kmad_bench: error ..." means a
 * benchmark could not do what it measures (a send ended with the wrong
 * status, a wait timed out); the host then fails the run.
 *
 * A slow or loaded host is no error.  A measurement the host spoiled by
 * stalling the guest (a timeout-expiry batch whose tick passed before all
 * its sends were armed, a round-trip window that overran by a quarter) is
 * made again, BENCH_TRIES times at most, and then kept; the figure's line
 * then has "stalls":<measurements made again> and "noisy":<samples that
 * still include one> among its parameters.
 *
 * What is measured (Documentation/benchmarks.rst has the details):
 *
 *   rtt      round trips per second (request, matched response, send
 *            callback) with 1, 2 and 4 requester agents, each keeping
 *            RTT_WINDOW requests in flight, against one responder agent
 *            on the other HCA that answers every request; and the time
 *            of one round trip alone, through kmad and through kmad_sim's
 *            raw QP pair (the bare transport, no kmad), for their ratio.
 *   scale    with N sends outstanding on the agent (N = 16 ... 65536,
 *            waiting for responses that never come), the cost per send of
 *            a response match and of a timeout expiry (the difference
 *            between batches of SCALE_K_BIG and SCALE_K_SMALL more sends)
 *            and of a timeout arm (kmad_modify_send() on the N in posting
 *            order, and at random, with the cost of merely reading random
 *            sends beside it); the cost of posting the N; memory per
 *            outstanding send; and unregistering the agent with the N
 *            outstanding.
 *   storm    STORM_N sends that all time out after one retry; STORM_N
 *            sends canceled at once.
 *   flow     FLOW_N requests posted at once, all answered, through a
 *            solicited flow control limit of FLOW_LIMIT (the SA default)
 *            and without one: round trips per second, the backlog
 *            draining as responses come back, and the resends it took
 *            (without a limit, a burst larger than the receive queues
 *            loses MADs, which time out and are sent again).
 *
 * Every requester agent but flow's runs without solicited flow control
 * (kmad_agent_set_flow_limit(0)): rtt, scale and storm measure the send
 * path with all their sends outstanding at once, as before it existed.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/vmstat.h>
#include <linux/wait.h>

#include <kmad/mad.h>
#include <kmad/sim.h>

#include "trace.h"

static char *run = "rtt,scale,storm,rmpp,flow";
module_param(run, charp, 0444);
MODULE_PARM_DESC(run, "benchmarks to run, comma-separated: rtt, scale, storm, rmpp, flow (default: all)");

static bool quick;
module_param(quick, bool, 0444);
MODULE_PARM_DESC(quick, "smaller sizes and shorter runs, for CI (default: off)");

static unsigned int repeats = 5;
module_param(repeats, uint, 0444);
MODULE_PARM_DESC(repeats, "repeats of every measurement (default 5, at least 1)");

#define BENCH_CLASS		KMAD_MGMT_CLASS_SUBN_ADM
#define BENCH_VERSION		2
#define BENCH_QPN		1
/* A LID nobody has: sends to it complete and are dropped by the fabric. */
#define BENCH_DEAD_LID		0x0100
/*
 * Longer than a guest may run (bench.sh: an hour by default, and less than
 * two hours): only the sends a benchmark shortens expire, however slow the
 * host.
 */
#define BENCH_FAR_MS		(2 * 60 * 60 * 1000)
/* send_buf->context[1]: the send handler frees the buffer. */
#define BENCH_FREE		((void *)1UL)
/* How long any wait may take before the benchmark gives up. */
#define BENCH_WAIT_S		300
/* Tries of a measurement the host stalled (see "stalls" above). */
#define BENCH_TRIES		5

#define RTT_WINDOW		16
/* A round trip's timeout: a response this late is lost, as for a wait. */
#define RTT_TIMEOUT_MS		(BENCH_WAIT_S * 1000)
/* The scale benchmark times batches of SCALE_K_SMALL and SCALE_K_BIG
 * sends; the difference cancels what a batch costs whatever its size
 * (waking threads, the timer tick), leaving the cost per send.
 */
#define SCALE_K_SMALL		16
#define SCALE_K_BIG		128
/* How far ahead scale_expire() puts a batch's common deadline. */
#define SCALE_EXPIRE_MS		4
#define STORM_N			65536
#define STORM_N_QUICK		4096
#define STORM_TIMEOUT_MS	1000
#define STORM_TIMEOUT_MS_QUICK	200

#define FLOW_N			4096
#define FLOW_N_QUICK		1024
#define FLOW_LIMIT		16
/* A burst above the responder's receive queue loses requests without
 * flow control: they are sent again after this, up to FLOW_RETRIES times.
 */
#define FLOW_TIMEOUT_MS		2000
#define FLOW_RETRIES		8

static const unsigned int scale_n[] = { 16, 256, 4096, 65536 };
static const unsigned int scale_n_quick[] = { 16, 256, 4096 };
static const unsigned int rtt_agents[] = { 1, 2, 4 };

#define BENCH_NSTATUS		(KMAD_SEND_REMOTE_ABORT + 1)

/* The fabric and its two ports, and the responder on the second. */
struct bench {
	struct kmad_sim_fabric *fab;
	struct kmad_port *port[2];
	u16 lid[2];
	struct bench_responder *resp;
	struct kmad_send_buf *batch[SCALE_K_BIG];	/* scale_expire() */
	u32 rng;			/* xorshift state: runs repeat */
	int errors;
};

/*
 * A requester agent on port 0 and what happened to its sends.  Handlers
 * run on kmad's workqueue, possibly on several CPUs at once: everything
 * they touch is atomic.
 */
struct bench_client {
	struct bench *b;
	struct kmad_agent *agent;
	u32 tid;			/* next TID (low 32 bits); owner only */
	atomic_t inflight;		/* posted, callback not yet run */
	atomic64_t callbacks;		/* send_handler calls */
	atomic64_t status[BENCH_NSTATUS];	/* ... by status */
	atomic64_t last_cb_ns;		/* latest send_handler, ktime ns */
	bool stamp;			/* send_handler sets last_cb_ns */
	wait_queue_head_t wq;		/* woken by every send_handler */
	struct task_struct *task;	/* rtt: the posting thread */
	int post_errors;		/* rtt: owner only */
};

enum bench_resp_mode {
	RESP_ECHO,			/* answer every request at once */
	RESP_STASH,			/* keep requests for the benchmark */
};

/* The agent on port 1 that answers (or keeps) the requests. */
struct bench_responder {
	struct kmad_agent *agent;
	enum bench_resp_mode mode;	/* changed only while idle */
	spinlock_t lock;		/* guards stash, n, closing, and
					 * inflight's increments
					 */
	bool closing;			/* answer nothing more */
	struct kmad_recv_wc *stash[SCALE_K_BIG];
	unsigned int n;
	wait_queue_head_t wq;		/* woken for every stashed request
					 * and every send callback
					 */
	atomic_t inflight;		/* responses posted, callback not
					 * yet run
					 */
	atomic64_t status[BENCH_NSTATUS];	/* send callbacks by status */
	atomic64_t errors;		/* responses not posted, requests
					 * past the stash
					 */
};

static void bench_max(atomic64_t *v, s64 x)
{
	s64 old = atomic64_read(v);

	while (old < x && !atomic64_try_cmpxchg(v, &old, x))
		;
}

static u32 bench_rand(struct bench *b)
{
	u32 x = b->rng;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	b->rng = x;
	return x;
}

/* A far timeout, different for each send: deadlines in random order. */
static unsigned int bench_far_ms(struct bench *b)
{
	return BENCH_FAR_MS + bench_rand(b) % 60000;
}

static __printf(2, 3) void bench_error(struct bench *b, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_err("error %pV\n", &vaf);
	va_end(args);
	b->errors++;
}

/*
 * What the host did to one figure: measurements it stalled that were made
 * again (@stalls), and samples that still include one after BENCH_TRIES
 * tries (@noisy).
 */
struct bench_noise {
	unsigned int stalls;
	unsigned int noisy;
};

/* Add @noise, if any, to a result's @params (a JSON fragment, see below). */
static void bench_noise_params(char *params, size_t size,
			       const struct bench_noise *noise)
{
	size_t len = strlen(params);

	if (noise->stalls || noise->noisy)
		scnprintf(params + len, size - len,
			  "%s\"stalls\":%u,\"noisy\":%u", len ? "," : "",
			  noise->stalls, noise->noisy);
}

/*
 * Print one result line.  @params is a JSON fragment ("\"n\":16") or "".
 */
static void bench_result(const char *name, const char *unit,
			 const char *params, const u64 *samples,
			 unsigned int n)
{
	bool bytes = !strcmp(unit, "bytes_per_send");
	char line[512];
	size_t len;
	unsigned int i;

	len = scnprintf(line, sizeof(line),
			"{\"name\":\"%s\",\"unit\":\"%s\",\"cpus\":%u%s%s,\"samples\":[",
			name, unit, num_online_cpus(), *params ? "," : "",
			params);
	/*
	 * Byte figures are differences of the kernel's page counters, which
	 * other caches move as well: they are signed (a negative one at small
	 * N says the measure is below that noise).
	 */
	for (i = 0; i < n; i++) {
		const char *sep = i ? "," : "";

		if (bytes)
			len += scnprintf(line + len, sizeof(line) - len,
					 "%s%lld", sep, (s64)samples[i]);
		else
			len += scnprintf(line + len, sizeof(line) - len,
					 "%s%llu", sep, samples[i]);
	}
	scnprintf(line + len, sizeof(line) - len, "]}");
	pr_info("result %s\n", line);
}

/*
 * bench_result() of one u64 field of each repeat's sample structure:
 * @first is the field in the first, @stride the structure's size.
 */
static void bench_result_of(const char *name, const char *unit,
			    const char *params, const u64 *first,
			    size_t stride, u64 *samples)
{
	unsigned int r;

	for (r = 0; r < repeats; r++)
		samples[r] = *(const u64 *)((const char *)first + r * stride);
	bench_result(name, unit, params, samples, repeats);
}

/* ---- agents ---- */

static void client_send_handler(struct kmad_agent *agent,
				struct kmad_send_wc *wc)
{
	struct bench_client *c = agent->context;

	if (READ_ONCE(c->stamp))
		bench_max(&c->last_cb_ns, ktime_get_ns());
	if (wc->status < BENCH_NSTATUS)
		atomic64_inc(&c->status[wc->status]);
	if (wc->send_buf->context[1] == BENCH_FREE)
		kmad_free_send_buf(wc->send_buf);
	atomic_dec(&c->inflight);
	atomic64_inc(&c->callbacks);
	/* c stays valid: it is freed only after kmad_unregister_agent(). */
	wake_up(&c->wq);
}

/* Responses are counted by their send's status; nothing else comes. */
static void client_recv_handler(struct kmad_agent *agent,
				struct kmad_send_buf *request,
				struct kmad_recv_wc *wc)
{
	kmad_free_recv(wc);
}

static struct bench_client *client_create(struct bench *b)
{
	struct bench_client *c;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return ERR_PTR(-ENOMEM);
	c->b = b;
	c->stamp = true;
	init_waitqueue_head(&c->wq);
	c->agent = kmad_register_agent(b->port[0], KMAD_QPT_GSI, NULL,
				       client_send_handler,
				       client_recv_handler, c);
	if (IS_ERR(c->agent)) {
		int ret = PTR_ERR(c->agent);

		kfree(c);
		return ERR_PTR(ret);
	}
	/* No solicited flow control unless a benchmark sets it (above). */
	kmad_agent_set_flow_limit(c->agent, 0);
	return c;
}

/* Unregister (every send gets its callback) and free.  Returns the time
 * kmad_unregister_agent() took, in ns.
 */
static u64 client_destroy(struct bench_client *c)
{
	u64 t0, t1;

	t0 = ktime_get_ns();
	kmad_unregister_agent(c->agent);
	t1 = ktime_get_ns();
	kfree(c);
	return t1 - t0;
}

/* A Get from @c to @dlid; NULL (and an error counted) if out of memory. */
static struct kmad_send_buf *client_req(struct bench_client *c, u16 dlid,
					unsigned int timeout_ms,
					unsigned int retries, bool free)
{
	struct kmad_dest dest = {
		.dlid = dlid,
		.remote_qpn = BENCH_QPN,
		.remote_qkey = KMAD_QP1_QKEY,
	};
	struct kmad_send_buf *buf;

	buf = kmad_alloc_send_buf(c->agent, &dest, GFP_KERNEL);
	if (IS_ERR(buf)) {
		bench_error(c->b, "kmad_alloc_send_buf: %ld", PTR_ERR(buf));
		return NULL;
	}
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.mgmt_class = BENCH_CLASS;
	buf->mad->mad_hdr.class_version = BENCH_VERSION;
	buf->mad->mad_hdr.method = KMAD_METHOD_GET;
	buf->mad->mad_hdr.tid = cpu_to_be64(++c->tid);
	buf->mad->mad_hdr.attr_id = cpu_to_be16(KMAD_SA_ATTR_NODE_REC);
	buf->timeout_ms = timeout_ms;
	buf->retries = retries;
	buf->context[0] = c;
	buf->context[1] = free ? BENCH_FREE : NULL;
	return buf;
}

static int client_post(struct bench_client *c, struct kmad_send_buf *buf)
{
	int ret;

	atomic_inc(&c->inflight);
	ret = kmad_post_send(buf);
	if (ret) {
		atomic_dec(&c->inflight);
		bench_error(c->b, "kmad_post_send: %d", ret);
	}
	return ret;
}

/*
 * client_req() and client_post() in one.  Returns the posted buffer, or
 * NULL (nothing posted, the error counted).  With @free, the buffer may be
 * freed by its callback as soon as this returns.
 */
static struct kmad_send_buf *client_send(struct bench_client *c, u16 dlid,
					 unsigned int timeout_ms,
					 unsigned int retries, bool free)
{
	struct kmad_send_buf *buf;

	buf = client_req(c, dlid, timeout_ms, retries, free);
	if (buf && client_post(c, buf)) {
		kmad_free_send_buf(buf);
		buf = NULL;
	}
	return buf;
}

/* Wait until @c has seen @callbacks send callbacks in all. */
static int client_wait(struct bench_client *c, u64 callbacks)
{
	if (wait_event_timeout(c->wq,
			       atomic64_read(&c->callbacks) >= callbacks,
			       BENCH_WAIT_S * HZ))
		return 0;
	bench_error(c->b, "waited %ds for %llu callbacks, saw %lld",
		    BENCH_WAIT_S, callbacks, atomic64_read(&c->callbacks));
	return -ETIMEDOUT;
}

/*
 * A fence: a send without a timeout to the dead LID, after everything @c
 * posted.  The QP sends in order and kmad reaps its completions in order,
 * so when the fence's callback has run, every earlier send of @c has had
 * its send completion (and is waiting for its response).
 */
static int client_fence(struct bench_client *c)
{
	u64 target = atomic64_read(&c->callbacks) + 1;

	if (!client_send(c, BENCH_DEAD_LID, 0, 0, true))
		return -EIO;
	return client_wait(c, target);
}

static u64 client_status(struct bench_client *c, enum kmad_send_status s)
{
	return atomic64_read(&c->status[s]);
}

static void resp_send_handler(struct kmad_agent *agent,
			      struct kmad_send_wc *wc)
{
	struct bench_responder *r = agent->context;

	if (wc->status < BENCH_NSTATUS)
		atomic64_inc(&r->status[wc->status]);
	else
		atomic64_inc(&r->errors);
	kmad_free_send_buf(wc->send_buf);
	if (atomic_dec_and_test(&r->inflight))
		wake_up(&r->wq);
}

/*
 * Answer @wc, unless the responder is closing: a request still on its way
 * then (one sent again after a loss, whose first answer ended the
 * requester's wait) is dropped, not answered, so that no answer is
 * posted after responder_destroy() has seen none in flight.
 */
static void resp_answer(struct bench_responder *r, struct kmad_recv_wc *wc)
{
	struct kmad_send_buf *buf;

	spin_lock(&r->lock);
	if (r->closing) {
		spin_unlock(&r->lock);
		return;
	}
	atomic_inc(&r->inflight);
	spin_unlock(&r->lock);
	buf = kmad_create_response(r->agent, wc, GFP_KERNEL);
	if (IS_ERR(buf)) {
		if (atomic_dec_and_test(&r->inflight))
			wake_up(&r->wq);
		atomic64_inc(&r->errors);
		return;
	}
	if (kmad_post_send(buf)) {
		if (atomic_dec_and_test(&r->inflight))
			wake_up(&r->wq);
		atomic64_inc(&r->errors);
		kmad_free_send_buf(buf);
	}
}

static void resp_recv_handler(struct kmad_agent *agent,
			      struct kmad_send_buf *request,
			      struct kmad_recv_wc *wc)
{
	struct bench_responder *r = agent->context;

	if (!request && READ_ONCE(r->mode) == RESP_STASH) {
		spin_lock(&r->lock);
		if (r->n < SCALE_K_BIG) {
			r->stash[r->n++] = wc;
			wc = NULL;
		}
		spin_unlock(&r->lock);
		if (!wc) {
			wake_up(&r->wq);
			return;
		}
		atomic64_inc(&r->errors);	/* more than asked for */
	} else if (!request) {
		resp_answer(r, wc);
	}
	kmad_free_recv(wc);
}

static int responder_create(struct bench *b)
{
	struct kmad_reg_req req = {
		.mgmt_class = BENCH_CLASS,
		.class_version = BENCH_VERSION,
	};
	struct bench_responder *r;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	spin_lock_init(&r->lock);
	init_waitqueue_head(&r->wq);
	set_bit(KMAD_METHOD_GET, req.method_mask);
	r->agent = kmad_register_agent(b->port[1], KMAD_QPT_GSI, &req,
				       resp_send_handler, resp_recv_handler,
				       r);
	if (IS_ERR(r->agent)) {
		int ret = PTR_ERR(r->agent);

		kfree(r);
		return ret;
	}
	b->resp = r;
	return 0;
}

/*
 * Every response the responder posted ends OK: a UD send the fabric took
 * is complete, whether or not its receiver had room.  Its last answers
 * (to requests the requester sent again after a loss) may still be on
 * their way when the benchmarks end, and such requests may still be
 * arriving: it stops answering, lets the fabric settle, and waits for the
 * answers in flight before the unregister, which would flush them (and
 * refuse an answer posted during it).
 */
static void responder_destroy(struct bench *b)
{
	struct bench_responder *r = b->resp;
	unsigned int i;

	spin_lock(&r->lock);
	r->closing = true;
	spin_unlock(&r->lock);
	kmad_sim_settle(b->fab);
	if (!wait_event_timeout(r->wq, !atomic_read(&r->inflight),
				BENCH_WAIT_S * HZ))
		bench_error(b, "responder: %d responses still outstanding after %ds",
			    atomic_read(&r->inflight), BENCH_WAIT_S);
	kmad_unregister_agent(r->agent);
	for (i = 0; i < r->n; i++)
		kmad_free_recv(r->stash[i]);
	for (i = KMAD_SEND_OK + 1; i < BENCH_NSTATUS; i++)
		if (atomic64_read(&r->status[i]))
			bench_error(b, "responder: %lld answers ended with status %u",
				    atomic64_read(&r->status[i]), i);
	if (atomic64_read(&r->errors))
		bench_error(b, "responder: %lld responses not posted or requests past its stash",
			    atomic64_read(&r->errors));
	kfree(r);
	b->resp = NULL;
}

/* ---- rtt: round trips per second ---- */

static int rtt_thread(void *arg)
{
	struct bench_client *c = arg;

	while (!kthread_should_stop()) {
		wait_event_timeout(c->wq,
				   atomic_read(&c->inflight) < RTT_WINDOW ||
				   kthread_should_stop(), HZ);
		if (kthread_should_stop())
			break;
		if (atomic_read(&c->inflight) >= RTT_WINDOW)
			continue;
		if (!client_send(c, c->b->lid[1], RTT_TIMEOUT_MS, 0, true)) {
			c->post_errors++;
			msleep(20);
		}
	}
	return 0;
}

static u64 rtt_ok(struct bench_client **c, unsigned int n)
{
	u64 ok = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		ok += client_status(c[i], KMAD_SEND_OK);
	return ok;
}

static void bench_rtt(struct bench *b, unsigned int agents, u64 *samples)
{
	unsigned int warm_ms = quick ? 50 : 200, ms = quick ? 200 : 1000;
	struct bench_client *c[4] = {};
	struct bench_noise noise = {};
	char params[96];
	unsigned int i, r, try;
	u64 t0, t1, ok0, ok1, bad = 0;

	WRITE_ONCE(b->resp->mode, RESP_ECHO);
	for (i = 0; i < agents; i++) {
		c[i] = client_create(b);
		if (IS_ERR(c[i])) {
			bench_error(b, "rtt: register: %ld", PTR_ERR(c[i]));
			c[i] = NULL;
			goto out;
		}
	}
	for (i = 0; i < agents; i++) {
		c[i]->task = kthread_run(rtt_thread, c[i], "kmad_bench%u", i);
		if (IS_ERR(c[i]->task)) {
			bench_error(b, "rtt: kthread: %ld",
				    PTR_ERR(c[i]->task));
			c[i]->task = NULL;
			goto out;
		}
	}
	msleep(warm_ms);
	for (r = 0; r < repeats; r++) {
		/* A window that overran by more than a quarter: the host
		 * stalled the guest at least that long, and a stalled guest
		 * makes no round trips.  Measure again.  (A stall that ends
		 * within the window is not seen; it lowers the figure.)
		 */
		for (try = 1; ; try++) {
			t0 = ktime_get_ns();
			ok0 = rtt_ok(c, agents);
			msleep(ms);
			t1 = ktime_get_ns();
			ok1 = rtt_ok(c, agents);
			if (t1 - t0 <= (u64)(ms + ms / 4) * NSEC_PER_MSEC)
				break;
			if (try == BENCH_TRIES) {
				noise.noisy++;
				break;
			}
			noise.stalls++;
		}
		samples[r] = div64_u64((ok1 - ok0) * NSEC_PER_SEC, t1 - t0);
	}
	snprintf(params, sizeof(params), "\"agents\":%u,\"window\":%u",
		 agents, RTT_WINDOW);
	bench_noise_params(params, sizeof(params), &noise);
	bench_result("rtt", "round_trips_per_s", params, samples, repeats);
out:
	for (i = 0; i < agents && c[i]; i++) {
		if (c[i]->task)
			kthread_stop(c[i]->task);
	}
	for (i = 0; i < agents && c[i]; i++) {
		client_wait(c[i], atomic64_read(&c[i]->callbacks) +
			    atomic_read(&c[i]->inflight));
		bad += atomic64_read(&c[i]->callbacks) -
		       client_status(c[i], KMAD_SEND_OK) + c[i]->post_errors;
		client_destroy(c[i]);
	}
	if (bad)
		bench_error(b, "rtt: %llu of the round trips failed", bad);
}

/* ---- latency: one round trip at a time, kmad against the transport ---- */

#define LAT_ROUNDS		1000
#define LAT_ROUNDS_QUICK	250
#define LAT_WARM		50

/* One request, its response, and its send callback through kmad. */
static int lat_kmad_one(struct bench *b, struct bench_client *c)
{
	u64 target = atomic64_read(&c->callbacks) + 1;

	if (!client_send(c, b->lid[1], RTT_TIMEOUT_MS, 0, true))
		return -EIO;
	return client_wait(c, target);
}

static int lat_raw_one(struct bench *b, struct kmad_sim_raw *raw)
{
	int ret = kmad_sim_raw_round_trip(raw, BENCH_WAIT_S * 1000);

	if (ret)
		bench_error(b, "raw round trip: %d", ret);
	return ret;
}

/*
 * The round trip of one request and its response, nothing else in
 * flight, in ns: through kmad, from kmad_post_send() of the request to
 * its send callback (the responder agent answers every request at once),
 * and through kmad_sim's raw QP pair, the same transport with no kmad
 * (drivers/kmad/sim/raw.c: post, transmit and route, poll).  Their ratio
 * is kmad's overhead over the bare transport.
 */
static void bench_latency(struct bench *b, u64 *samples)
{
	unsigned int rounds = quick ? LAT_ROUNDS_QUICK : LAT_ROUNDS;
	struct kmad_sim_raw *raw;
	struct bench_client *c;
	unsigned int i, r;
	u64 t0;

	WRITE_ONCE(b->resp->mode, RESP_ECHO);
	c = client_create(b);
	if (IS_ERR(c)) {
		bench_error(b, "latency: register: %ld", PTR_ERR(c));
		return;
	}
	WRITE_ONCE(c->stamp, false);
	for (i = 0; i < LAT_WARM; i++) {
		if (lat_kmad_one(b, c))
			goto out_client;
	}
	for (r = 0; r < repeats; r++) {
		t0 = ktime_get_ns();
		for (i = 0; i < rounds; i++) {
			if (lat_kmad_one(b, c))
				goto out_client;
		}
		samples[r] = div_u64(ktime_get_ns() - t0, rounds);
	}
	if (client_status(c, KMAD_SEND_OK) != atomic64_read(&c->callbacks)) {
		bench_error(b, "latency: %lld of %lld round trips failed",
			    atomic64_read(&c->callbacks) -
			    client_status(c, KMAD_SEND_OK),
			    atomic64_read(&c->callbacks));
		goto out_client;
	}
	bench_result("rtt_latency", "ns", "\"path\":\"kmad\"", samples,
		     repeats);

	raw = kmad_sim_raw_create(b->fab, 0, 1);
	if (IS_ERR(raw)) {
		bench_error(b, "latency: raw pair: %ld", PTR_ERR(raw));
		goto out_client;
	}
	for (i = 0; i < LAT_WARM; i++) {
		if (lat_raw_one(b, raw))
			goto out_raw;
	}
	for (r = 0; r < repeats; r++) {
		t0 = ktime_get_ns();
		for (i = 0; i < rounds; i++) {
			if (lat_raw_one(b, raw))
				goto out_raw;
		}
		samples[r] = div_u64(ktime_get_ns() - t0, rounds);
	}
	bench_result("rtt_latency", "ns", "\"path\":\"raw\"", samples,
		     repeats);
out_raw:
	kmad_sim_raw_destroy(raw);
out_client:
	client_destroy(c);
}

/* ---- scale: cost per operation with N outstanding ---- */

struct scale_sample {
	u64 post, match, arm, arm_random, touch_random, expire, unreg;
	u64 unreg_before, unreg_walk, unreg_after;	/* its phases */
	u64 slab, mem;
	struct bench_noise expire_noise;	/* noisy: 0 or 1 */
};

static unsigned long bench_slab_pages(void)
{
	return global_node_page_state_pages(NR_SLAB_UNRECLAIMABLE_B) +
	       global_node_page_state_pages(NR_SLAB_RECLAIMABLE_B);
}

static unsigned long bench_free_pages(void)
{
	return global_zone_page_state(NR_FREE_PAGES);
}

/* Post @n sends to nowhere with far, random deadlines, and fence. */
static int scale_fill(struct bench_client *c, struct kmad_send_buf **bufs,
		      unsigned int n, u64 *ns)
{
	unsigned int i;
	u64 t0;

	for (i = 0; i < n; i++) {
		bufs[i] = client_req(c, BENCH_DEAD_LID, bench_far_ms(c->b), 0,
				     false);
		if (!bufs[i])
			return -ENOMEM;
	}
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		if (client_post(c, bufs[i]))
			return -EIO;
	}
	if (client_fence(c))
		return -ETIMEDOUT;
	*ns = ktime_get_ns() - t0;
	return 0;
}

/*
 * One batch: @k requests the responder keeps, then answered in a random
 * order.  @ns: from the first answer to the last send callback.
 */
static int scale_match(struct bench *b, struct bench_client *c,
		       unsigned int k, u64 *ns)
{
	struct bench_responder *r = b->resp;
	unsigned int i, j;
	u64 t0, base;

	base = atomic64_read(&c->callbacks);
	for (i = 0; i < k; i++) {
		if (!client_send(c, b->lid[1], bench_far_ms(b), 0, true))
			return -EIO;
	}
	if (client_fence(c))
		return -ETIMEDOUT;
	base++;		/* the fence */
	if (!wait_event_timeout(r->wq, READ_ONCE(r->n) == k,
				BENCH_WAIT_S * HZ)) {
		bench_error(b, "match: the responder got %u of %u",
			    READ_ONCE(r->n), k);
		return -ETIMEDOUT;
	}
	for (i = k - 1; i > 0; i--) {
		struct kmad_recv_wc *tmp;

		j = bench_rand(b) % (i + 1);
		tmp = r->stash[i];
		r->stash[i] = r->stash[j];
		r->stash[j] = tmp;
	}
	t0 = ktime_get_ns();
	for (i = 0; i < k; i++) {
		resp_answer(r, r->stash[i]);
		kmad_free_recv(r->stash[i]);
	}
	spin_lock(&r->lock);
	r->n = 0;
	spin_unlock(&r->lock);
	if (client_wait(c, base + k))
		return -ETIMEDOUT;
	*ns = atomic64_read(&c->last_cb_ns) - t0;
	return 0;
}

/*
 * Timeout arm: kmad_modify_send() with a random new timeout on @ops of the
 * @n outstanding sends, taken in posting order or at random; ns per call.
 * Each call is timed alone, right after the caller has read the send (as
 * a ULP has its send at hand when it changes its timeout), so the time is
 * kmad's: the send's own cache misses fall outside it, those kmad causes
 * elsewhere (the wheel neighbours it unlinks) inside.  With @touch_only,
 * time only reading each picked send, cold: the machine's cost of
 * reaching a random send at this N.
 */
static int scale_arm(struct bench *b, struct kmad_send_buf **bufs,
		     unsigned int n, unsigned int ops, bool random,
		     bool touch_only, u64 *ns)
{
	unsigned int *pick, *ms, i;
	u64 t0, total = 0, clock = 0, sum = 0;
	int ret = 0;

	pick = kvmalloc_array(ops, sizeof(*pick), GFP_KERNEL);
	ms = kvmalloc_array(ops, sizeof(*ms), GFP_KERNEL);
	if (!pick || !ms) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < ops; i++) {
		pick[i] = random ? bench_rand(b) % n : i % n;
		ms[i] = bench_far_ms(b);
	}
	for (i = 0; i < ops; i++) {
		struct kmad_send_buf *buf = bufs[pick[i]];

		if (touch_only) {
			t0 = ktime_get_ns();
			sum += be64_to_cpu(READ_ONCE(buf->mad->mad_hdr.tid));
			total += ktime_get_ns() - t0;
			continue;
		}
		sum += be64_to_cpu(READ_ONCE(buf->mad->mad_hdr.tid)) +
		       READ_ONCE(buf->timeout_ms);
		t0 = ktime_get_ns();
		ret = kmad_modify_send(buf, ms[i]);
		total += ktime_get_ns() - t0;
		if (ret) {
			bench_error(b, "arm: kmad_modify_send: %d", ret);
			goto out;
		}
	}
	/* Take off what timing itself costs (ktime_get_ns() under TCG is
	 * not free), measured the same way.
	 */
	for (i = 0; i < ops; i++) {
		t0 = ktime_get_ns();
		clock += ktime_get_ns() - t0;
	}
	*ns = total > clock ? div64_u64(total - clock, ops) : 0;
	if (!sum)
		bench_error(b, "arm: every TID read was 0");
out:
	kvfree(pick);
	kvfree(ms);
	return ret;
}

/* When kmad first reported a timeout (kmad_timeout tracepoint), or 0. */
static atomic64_t bench_first_timeout = ATOMIC64_INIT(0);

static void bench_probe_timeout(void *data, const struct kmad_send_wr *wr)
{
	if (!atomic64_read(&bench_first_timeout))
		atomic64_cmpxchg(&bench_first_timeout, 0, ktime_get_ns());
}

/*
 * One batch: @k sends whose deadlines all fall on one tick,
 * SCALE_EXPIRE_MS ahead.  @ns: from kmad's first timeout of the batch (its
 * tracepoint) to the last timeout callback, so when the timer tick and the
 * work happen to run does not count.
 *
 * If the host stalls the guest past that tick before all @k are armed,
 * the rest cannot join it: they get the shortest timeout there is (one
 * tick; a timeout of 0 would cancel them), all @k must still time out,
 * and -EAGAIN says that the figure spans more than one tick.
 */
static int scale_expire(struct bench *b, struct bench_client *c,
			unsigned int k, u64 *ns)
{
	struct kmad_send_buf **bufs = b->batch;
	unsigned long when;
	u64 t0, base, timeouts;
	bool missed = false;
	unsigned int i;
	int ret;

	for (i = 0; i < k; i++) {
		bufs[i] = client_send(c, BENCH_DEAD_LID, BENCH_FAR_MS, 0, true);
		if (!bufs[i])
			return -EIO;
	}
	if (client_fence(c))
		return -ETIMEDOUT;
	base = atomic64_read(&c->callbacks);
	timeouts = client_status(c, KMAD_SEND_RESP_TIMEOUT);
	atomic64_set(&bench_first_timeout, 0);
	when = jiffies + msecs_to_jiffies(SCALE_EXPIRE_MS);
	for (i = 0; i < k; i++) {
		long left = (long)(when - jiffies);

		if (left <= 0) {
			missed = true;
			left = 1;
		}
		ret = kmad_modify_send(bufs[i], jiffies_to_msecs(left));
		if (ret) {
			bench_error(b, "expire: kmad_modify_send: %d", ret);
			return ret;
		}
	}
	if (client_wait(c, base + k))
		return -ETIMEDOUT;
	t0 = atomic64_read(&bench_first_timeout);
	if (!t0) {
		bench_error(b, "expire: no kmad_timeout event");
		return -EIO;
	}
	*ns = atomic64_read(&c->last_cb_ns) - t0;
	if (client_status(c, KMAD_SEND_RESP_TIMEOUT) - timeouts != k) {
		bench_error(b, "expire: %llu of %u sends timed out",
			    client_status(c, KMAD_SEND_RESP_TIMEOUT) - timeouts,
			    k);
		return -EIO;
	}
	return missed ? -EAGAIN : 0;
}

/*
 * @batch again while the host stalls it (it returns -EAGAIN then),
 * BENCH_TRIES times at most; the last try counts.  Returns 0, 1 if the
 * last try was stalled too, or a negative error.
 */
static int scale_try(struct bench *b, struct bench_client *c,
		     int (*batch)(struct bench *b, struct bench_client *c,
				  unsigned int k, u64 *ns),
		     unsigned int k, u64 *ns, struct bench_noise *noise)
{
	unsigned int try;
	int ret;

	for (try = 1; ; try++) {
		ret = batch(b, c, k, ns);
		if (ret != -EAGAIN)
			return ret;
		if (try == BENCH_TRIES)
			return 1;
		noise->stalls++;
	}
}

/*
 * Cost per send of @batch: the difference between batches of
 * SCALE_K_BIG and SCALE_K_SMALL sends, over @rounds of each.  @noise
 * counts the stalled batches made again (scale_try()); noisy becomes 1 if
 * a stalled one had to be kept.
 */
static int scale_marginal(struct bench *b, struct bench_client *c,
			  int (*batch)(struct bench *b, struct bench_client *c,
				       unsigned int k, u64 *ns),
			  unsigned int rounds, u64 *ns,
			  struct bench_noise *noise)
{
	u64 small = 0, big = 0, t;
	unsigned int round;
	int ret;

	for (round = 0; round < rounds; round++) {
		ret = scale_try(b, c, batch, SCALE_K_SMALL, &t, noise);
		if (ret < 0)
			return ret;
		noise->noisy |= ret;
		small += t;
		ret = scale_try(b, c, batch, SCALE_K_BIG, &t, noise);
		if (ret < 0)
			return ret;
		noise->noisy |= ret;
		big += t;
	}
	/* Noise could make the difference negative: report it as 0. */
	*ns = big > small ?
	      div64_u64(big - small, (u64)rounds *
				     (SCALE_K_BIG - SCALE_K_SMALL)) : 0;
	return 0;
}

/*
 * An unregister's flush, seen by kmad's kmad_cancel tracepoint: when the
 * first send and the last of bench_cancel_expect were flushed, ktime ns.
 * The probe reads the clock for those two only: under TCG the guest's
 * clock (HPET) is a device access, dearer than the flush of one send.
 */
static atomic_t bench_cancel_seen = ATOMIC_INIT(0);
static unsigned int bench_cancel_expect;
static u64 bench_first_cancel, bench_last_cancel;

static void bench_probe_cancel(void *data, const struct kmad_send_wr *wr)
{
	int seen = atomic_inc_return(&bench_cancel_seen);

	if (seen == 1)
		bench_first_cancel = ktime_get_ns();
	if (seen == bench_cancel_expect)
		bench_last_cancel = ktime_get_ns();
}

/*
 * Unregister @c, which has @n sends outstanding, and free it: the time the
 * call took, and its phases, split by the kmad_cancel tracepoint: from the
 * call to the first send flushed (unlinking the agent, an RCU grace
 * period), the flush walk (first to last send flushed, under the agent
 * lock), and from then to the return (the callbacks the walk left to the
 * agent's work, and the wait for them).  The send handler reads no clock
 * meanwhile (@c->stamp off): nothing here needs the time of a callback.
 * The phases are 0 if the probe could not be registered.
 */
static void scale_unregister(struct bench_client *c, unsigned int n,
			     struct scale_sample *s)
{
	u64 t0;
	int probe;

	atomic_set(&bench_cancel_seen, 0);
	bench_cancel_expect = n;
	bench_first_cancel = 0;
	bench_last_cancel = 0;
	probe = register_trace_kmad_cancel(bench_probe_cancel, NULL);
	WRITE_ONCE(c->stamp, false);
	t0 = ktime_get_ns();
	s->unreg = client_destroy(c);
	if (probe)
		return;
	unregister_trace_kmad_cancel(bench_probe_cancel, NULL);
	tracepoint_synchronize_unregister();
	if (!bench_first_cancel || bench_last_cancel < bench_first_cancel)
		return;
	s->unreg_before = bench_first_cancel - t0;
	s->unreg_walk = bench_last_cancel - bench_first_cancel;
	s->unreg_after = t0 + s->unreg - bench_last_cancel;
}

static int scale_one(struct bench *b, unsigned int n, struct scale_sample *s)
{
	unsigned int rounds = quick ? 4 : 32, ops = quick ? 1024 : 4096;
	struct bench_noise match_noise = {};
	struct kmad_send_buf **bufs;
	struct bench_client *c;
	unsigned long slab0, free0;
	u64 flushed;
	unsigned int i;
	int ret;

	memset(s, 0, sizeof(*s));
	bufs = kvcalloc(n, sizeof(*bufs), GFP_KERNEL);
	if (!bufs)
		return -ENOMEM;
	c = client_create(b);
	if (IS_ERR(c)) {
		kvfree(bufs);
		return PTR_ERR(c);
	}

	slab0 = bench_slab_pages();
	free0 = bench_free_pages();
	ret = scale_fill(c, bufs, n, &s->post);
	if (ret)
		goto out;
	/* Signed: see bench_result(). */
	s->slab = div_s64((s64)(long)(bench_slab_pages() - slab0) * PAGE_SIZE,
			  n);
	s->mem = div_s64((s64)(long)(free0 - bench_free_pages()) * PAGE_SIZE,
			 n);
	s->post = div_u64(s->post, n);

	WRITE_ONCE(b->resp->mode, RESP_STASH);
	/* scale_match() is never stalled: it has no window to miss. */
	ret = scale_marginal(b, c, scale_match, rounds, &s->match,
			     &match_noise);
	if (ret)
		goto out;
	ret = scale_arm(b, bufs, n, ops, false, false, &s->arm);
	if (!ret)
		ret = scale_arm(b, bufs, n, ops, true, false, &s->arm_random);
	if (!ret)
		ret = scale_arm(b, bufs, n, ops, true, true, &s->touch_random);
	if (ret)
		goto out;
	ret = register_trace_kmad_timeout(bench_probe_timeout, NULL);
	if (ret)
		goto out;
	ret = scale_marginal(b, c, scale_expire, rounds, &s->expire,
			     &s->expire_noise);
	unregister_trace_kmad_timeout(bench_probe_timeout, NULL);
	tracepoint_synchronize_unregister();
out:
	flushed = client_status(c, KMAD_SEND_FLUSHED);
	scale_unregister(c, n, s);
	for (i = 0; i < n && bufs[i]; i++)
		kmad_free_send_buf(bufs[i]);
	kvfree(bufs);
	WRITE_ONCE(b->resp->mode, RESP_ECHO);
	if (!ret && flushed)
		bench_error(b, "scale: %llu sends flushed before unregister",
			    flushed);
	return ret;
}

static void bench_scale(struct bench *b, u64 *samples)
{
	const unsigned int *ns = quick ? scale_n_quick : scale_n;
	unsigned int count = quick ? ARRAY_SIZE(scale_n_quick) :
				     ARRAY_SIZE(scale_n);
	struct bench_noise noise;
	struct scale_sample *s;
	unsigned int i, r;
	char params[64], expire_params[96];

	s = kcalloc(repeats, sizeof(*s), GFP_KERNEL);
	if (!s) {
		bench_error(b, "scale: out of memory");
		return;
	}
	for (i = 0; i < count; i++) {
		memset(&noise, 0, sizeof(noise));
		for (r = 0; r < repeats; r++) {
			int ret = scale_one(b, ns[i], &s[r]);

			if (ret) {
				bench_error(b, "scale n=%u: %d", ns[i], ret);
				goto out;
			}
			noise.stalls += s[r].expire_noise.stalls;
			noise.noisy += s[r].expire_noise.noisy;
		}
		snprintf(params, sizeof(params),
			 "\"n\":%u,\"k_small\":%u,\"k_big\":%u", ns[i],
			 SCALE_K_SMALL, SCALE_K_BIG);
		strscpy(expire_params, params, sizeof(expire_params));
		bench_noise_params(expire_params, sizeof(expire_params), &noise);
		bench_result_of("post", "ns_per_send", params, &s->post,
				sizeof(*s), samples);
		bench_result_of("match", "ns_per_send", params, &s->match,
				sizeof(*s), samples);
		bench_result_of("arm", "ns_per_send", params, &s->arm,
				sizeof(*s), samples);
		bench_result_of("arm_random", "ns_per_send", params,
				&s->arm_random, sizeof(*s), samples);
		bench_result_of("touch_random", "ns_per_send", params,
				&s->touch_random, sizeof(*s), samples);
		bench_result_of("expire", "ns_per_send", expire_params, &s->expire,
				sizeof(*s), samples);
		bench_result_of("unregister", "ns", params, &s->unreg,
				sizeof(*s), samples);
		bench_result_of("unregister_before", "ns", params,
				&s->unreg_before, sizeof(*s), samples);
		bench_result_of("unregister_walk", "ns", params,
				&s->unreg_walk, sizeof(*s), samples);
		bench_result_of("unregister_after", "ns", params,
				&s->unreg_after, sizeof(*s), samples);
		bench_result_of("mem_slab", "bytes_per_send", params, &s->slab,
				sizeof(*s), samples);
		bench_result_of("mem_total", "bytes_per_send", params, &s->mem,
				sizeof(*s), samples);
	}
out:
	kfree(s);
}

/* ---- storms ---- */

enum storm_kind {
	STORM_TIMEOUT,
	STORM_CANCEL,
};

struct storm_sample {
	u64 total;		/* first post or cancel to the last callback */
	u64 calls;		/* the post or cancel loop */
	u64 late_us;		/* timeout: worst deadline-to-callback */
};

static int storm_one(struct bench *b, enum storm_kind kind, unsigned int n,
		     unsigned int timeout_ms, struct storm_sample *s)
{
	enum kmad_send_status want = kind == STORM_TIMEOUT ?
				     KMAD_SEND_RESP_TIMEOUT :
				     KMAD_SEND_CANCELED;
	struct kmad_agent_stats st;
	struct kmad_send_buf **bufs;
	struct bench_client *c;
	unsigned int i;
	u64 t0, base = 0;
	int ret = 0;

	bufs = kvcalloc(n, sizeof(*bufs), GFP_KERNEL);
	if (!bufs)
		return -ENOMEM;
	c = client_create(b);
	if (IS_ERR(c)) {
		kvfree(bufs);
		return PTR_ERR(c);
	}
	for (i = 0; i < n; i++) {
		bufs[i] = client_req(c, BENCH_DEAD_LID,
				     kind == STORM_TIMEOUT ? timeout_ms :
							     BENCH_FAR_MS,
				     kind == STORM_TIMEOUT ? 1 : 0, false);
		if (!bufs[i]) {
			ret = -ENOMEM;
			goto out;
		}
	}

	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		ret = client_post(c, bufs[i]);
		if (ret)
			goto out;	/* unposted ones are freed below too */
	}
	s->calls = ktime_get_ns() - t0;
	if (kind == STORM_CANCEL) {
		ret = client_fence(c);
		if (ret)
			goto out;
		base = 1;	/* the fence */
		t0 = ktime_get_ns();
		for (i = 0; i < n; i++) {
			ret = kmad_cancel_send(bufs[i]);
			if (ret) {
				bench_error(b, "cancel storm: %d", ret);
				goto out;
			}
		}
		s->calls = ktime_get_ns() - t0;
	}
	ret = client_wait(c, base + n);
	if (ret)
		goto out;
	s->total = atomic64_read(&c->last_cb_ns) - t0;
	kmad_agent_get_stats(c->agent, &st);
	s->late_us = st.timeout_late_max_us;
	if (client_status(c, want) != n) {
		bench_error(b, "storm: %llu of %u sends ended as expected",
			    client_status(c, want), n);
		ret = -EIO;
	} else if (kind == STORM_TIMEOUT && st.retries != n) {
		bench_error(b, "timeout storm: %llu retries for %u sends",
			    st.retries, n);
		ret = -EIO;
	}
out:
	client_destroy(c);
	for (i = 0; i < n; i++) {
		if (bufs[i])
			kmad_free_send_buf(bufs[i]);
	}
	kvfree(bufs);
	return ret;
}

static void bench_storm(struct bench *b, u64 *samples)
{
	unsigned int n = quick ? STORM_N_QUICK : STORM_N;
	unsigned int tmo = quick ? STORM_TIMEOUT_MS_QUICK : STORM_TIMEOUT_MS;
	struct storm_sample *s;
	unsigned int r;
	char params[80];

	s = kcalloc(repeats, sizeof(*s), GFP_KERNEL);
	if (!s) {
		bench_error(b, "storm: out of memory");
		return;
	}
	for (r = 0; r < repeats; r++) {
		if (storm_one(b, STORM_TIMEOUT, n, tmo, &s[r])) {
			bench_error(b, "timeout storm failed");
			goto out;
		}
	}
	snprintf(params, sizeof(params),
		 "\"n\":%u,\"timeout_ms\":%u,\"retries\":1", n, tmo);
	bench_result_of("timeout_storm", "ns", params, &s->total, sizeof(*s),
			samples);
	bench_result_of("timeout_storm_late_max", "us", params, &s->late_us,
			sizeof(*s), samples);
	bench_result_of("timeout_storm_posts", "ns", params, &s->calls,
			sizeof(*s), samples);

	for (r = 0; r < repeats; r++) {
		if (storm_one(b, STORM_CANCEL, n, 0, &s[r])) {
			bench_error(b, "cancel storm failed");
			goto out;
		}
	}
	snprintf(params, sizeof(params), "\"n\":%u", n);
	bench_result_of("cancel_storm", "ns", params, &s->total, sizeof(*s),
			samples);
	bench_result_of("cancel_storm_calls", "ns", params, &s->calls,
			sizeof(*s), samples);
out:
	kfree(s);
}

/* ---- rmpp: RMPP transfers, an SA GetTable answered by a big response ---- */

#define RMPP_METHOD		0x12	/* SubnAdmGetTable */
#define RMPP_TIMEOUT_MS		(BENCH_WAIT_S * 1000)

/*
 * A client on port 0 (send-only, RMPP) asks; a server on port 1 (RMPP,
 * GetTable) answers every request with @size bytes of data in one RMPP
 * response.  The client's recv_handler checks the reassembled message
 * and stamps its arrival.
 */
struct bench_rmpp {
	struct kmad_agent *cli, *srv;
	size_t size;			/* data bytes per response */
	atomic64_t done_ns;		/* last reassembled response */
	atomic_t got, sent, bad;	/* responses, server sends, errors */
	wait_queue_head_t wq;
};

static void rmpp_cli_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct bench_rmpp *x = agent->context;

	if (wc->status != KMAD_SEND_OK)
		atomic_inc(&x->bad);
	kmad_free_send_buf(wc->send_buf);
}

static void rmpp_cli_recv(struct kmad_agent *agent,
			  struct kmad_send_buf *request,
			  struct kmad_recv_wc *wc)
{
	struct bench_rmpp *x = agent->context;
	size_t hdr = KMAD_SA_MAD_HDR_SIZE;
	const u8 *p = (const u8 *)wc->mad;

	/* The whole message, and its last byte where the server put it. */
	if (!request || wc->mad_len != hdr + x->size ||
	    p[wc->mad_len - 1] != (u8)x->size)
		atomic_inc(&x->bad);
	atomic64_set(&x->done_ns, ktime_get_ns());
	atomic_inc(&x->got);
	wake_up(&x->wq);
	kmad_free_recv(wc);
}

static void rmpp_srv_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct bench_rmpp *x = agent->context;

	if (wc->status != KMAD_SEND_OK)
		atomic_inc(&x->bad);
	atomic_inc(&x->sent);
	wake_up(&x->wq);
	kmad_free_send_buf(wc->send_buf);
}

static void rmpp_srv_recv(struct kmad_agent *agent,
			  struct kmad_send_buf *request,
			  struct kmad_recv_wc *wc)
{
	struct bench_rmpp *x = agent->context;
	unsigned int hdr = KMAD_SA_MAD_HDR_SIZE, seg, n;
	struct kmad_send_buf *resp, *tmpl;
	struct kmad_mad *m;

	tmpl = kmad_create_response(agent, wc, GFP_KERNEL);
	if (IS_ERR(tmpl))
		goto bad;
	resp = kmad_alloc_send_buf_rmpp(agent, &tmpl->dest, hdr, x->size,
					GFP_KERNEL);
	if (IS_ERR(resp)) {
		kmad_free_send_buf(tmpl);
		goto bad;
	}
	m = kmad_send_buf_seg(resp, 1);
	memcpy(m, tmpl->mad, hdr);
	kmad_free_send_buf(tmpl);
	/* Data: zeros but the last byte (the client checks it). */
	n = kmad_send_buf_seg_count(resp);
	for (seg = 1; seg <= n; seg++)
		memset((u8 *)kmad_send_buf_seg(resp, seg) + hdr, 0,
		       KMAD_MAD_SIZE - hdr);
	seg = (x->size - 1) / (KMAD_MAD_SIZE - hdr) + 1;
	((u8 *)kmad_send_buf_seg(resp, seg))[hdr + (x->size - 1) %
					      (KMAD_MAD_SIZE - hdr)] =
		(u8)x->size;
	resp->timeout_ms = 1000;
	resp->retries = 5;
	if (kmad_post_send(resp)) {
		kmad_free_send_buf(resp);
		goto bad;
	}
	kmad_free_recv(wc);
	return;
bad:
	atomic_inc(&x->bad);
	atomic_inc(&x->sent);
	wake_up(&x->wq);
	kmad_free_recv(wc);
}

/* One GetTable and its @x->size-byte answer: ns from post to arrival. */
static int rmpp_one(struct bench *b, struct bench_rmpp *x, u32 tid, u64 *ns)
{
	struct kmad_dest dest = {
		.dlid = b->lid[1],
		.remote_qpn = BENCH_QPN,
		.remote_qkey = KMAD_QP1_QKEY,
	};
	int got = atomic_read(&x->got), sent = atomic_read(&x->sent);
	struct kmad_send_buf *buf;
	u64 t0;

	buf = kmad_alloc_send_buf(x->cli, &dest, GFP_KERNEL);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.mgmt_class = BENCH_CLASS;
	buf->mad->mad_hdr.class_version = BENCH_VERSION;
	buf->mad->mad_hdr.method = RMPP_METHOD;
	buf->mad->mad_hdr.tid = cpu_to_be64(tid);
	buf->mad->mad_hdr.attr_id = cpu_to_be16(KMAD_SA_ATTR_NODE_REC);
	buf->timeout_ms = RMPP_TIMEOUT_MS;
	t0 = ktime_get_ns();
	if (kmad_post_send(buf)) {
		kmad_free_send_buf(buf);
		return -EIO;
	}
	if (!wait_event_timeout(x->wq, atomic_read(&x->got) > got &&
				atomic_read(&x->sent) > sent,
				BENCH_WAIT_S * HZ))
		return -ETIMEDOUT;
	*ns = atomic64_read(&x->done_ns) - t0;
	return 0;
}

static void bench_rmpp(struct bench *b, u64 *samples)
{
	static const size_t sizes[] = { SZ_64K, SZ_1M };
	struct kmad_reg_req sreq = {
		.mgmt_class = BENCH_CLASS,
		.class_version = BENCH_VERSION,
		.rmpp_version = KMAD_RMPP_VERSION,
	};
	struct kmad_reg_req creq = { .rmpp_version = KMAD_RMPP_VERSION };
	struct bench_rmpp *x;
	unsigned int i, r;
	char params[64];
	u64 ns;
	int ret;

	x = kzalloc(sizeof(*x), GFP_KERNEL);
	if (!x) {
		bench_error(b, "rmpp: out of memory");
		return;
	}
	init_waitqueue_head(&x->wq);
	set_bit(RMPP_METHOD, sreq.method_mask);
	x->srv = kmad_register_agent(b->port[1], KMAD_QPT_GSI, &sreq,
				     rmpp_srv_send, rmpp_srv_recv, x);
	x->cli = kmad_register_agent(b->port[0], KMAD_QPT_GSI, &creq,
				     rmpp_cli_send, rmpp_cli_recv, x);
	if (IS_ERR(x->srv) || IS_ERR(x->cli)) {
		bench_error(b, "rmpp: register: %ld %ld", PTR_ERR(x->srv),
			    PTR_ERR(x->cli));
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		x->size = sizes[i];
		/* One untimed transfer first (caches, address handles). */
		for (r = 0; r <= repeats; r++) {
			ret = rmpp_one(b, x, 0x5000 + i * 256 + r, &ns);
			if (ret) {
				bench_error(b, "rmpp: %zu bytes: %d", x->size,
					    ret);
				goto out;
			}
			if (r)
				samples[r - 1] = div64_u64((u64)x->size *
							   NSEC_PER_SEC,
							   max(ns, 1ULL));
		}
		snprintf(params, sizeof(params), "\"bytes\":%zu", x->size);
		bench_result("rmpp_throughput", "bytes_per_s", params, samples,
			     repeats);
	}
	if (atomic_read(&x->bad))
		bench_error(b, "rmpp: %d transfers went wrong",
			    atomic_read(&x->bad));
out:
	if (!IS_ERR_OR_NULL(x->cli))
		kmad_unregister_agent(x->cli);
	if (!IS_ERR_OR_NULL(x->srv))
		kmad_unregister_agent(x->srv);
	kfree(x);
}

/* ---- flow: a burst through solicited flow control ---- */

/*
 * Post @n answered Gets at once from a new client whose flow control
 * limit is @limit (0: none), and wait for every callback.  Returns round
 * trips per second from the first post to the last callback, 0 on error;
 * *@resent: the resends after a timeout it took.
 */
static u64 flow_burst(struct bench *b, unsigned int n, unsigned int limit,
		      u64 *resent)
{
	struct kmad_agent_stats st;
	struct bench_client *c;
	u64 t0, ns = 0;
	unsigned int i;

	c = client_create(b);
	if (IS_ERR(c)) {
		bench_error(b, "client_create: %ld", PTR_ERR(c));
		return 0;
	}
	kmad_agent_set_flow_limit(c->agent, limit);
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++)
		if (!client_send(c, b->lid[1], FLOW_TIMEOUT_MS, FLOW_RETRIES,
				 true))
			break;
	if (i == n && !client_wait(c, n)) {
		ns = max_t(u64, atomic64_read(&c->last_cb_ns), t0 + 1) - t0;
		if (client_status(c, KMAD_SEND_OK) != n) {
			bench_error(b, "flow burst: %llu of %u OK",
				    client_status(c, KMAD_SEND_OK), n);
			ns = 0;
		}
	}
	kmad_agent_get_stats(c->agent, &st);
	*resent = st.retries;
	client_destroy(c);
	return ns ? div64_u64((u64)n * NSEC_PER_SEC, ns) : 0;
}

static void bench_flow(struct bench *b, u64 *samples)
{
	static const unsigned int limits[] = { FLOW_LIMIT, 0 };
	unsigned int n = quick ? FLOW_N_QUICK : FLOW_N;
	char params[64];
	unsigned int i, r;
	u64 *resent;

	resent = kcalloc(repeats, sizeof(*resent), GFP_KERNEL);
	if (!resent) {
		bench_error(b, "flow: out of memory");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(limits); i++) {
		for (r = 0; r < repeats; r++)
			samples[r] = flow_burst(b, n, limits[i], &resent[r]);
		snprintf(params, sizeof(params), "\"n\":%u,\"limit\":%u", n,
			 limits[i]);
		bench_result("flow_burst", "round_trips_per_s", params,
			     samples, repeats);
		bench_result("flow_burst_resent", "sends", params, resent,
			     repeats);
	}
	kfree(resent);
}

/* ---- setup ---- */

static bool bench_wanted(const char *what)
{
	const char *p = run;
	size_t len = strlen(what);

	while (p && *p) {
		if (!strncmp(p, what, len) && (p[len] == ',' || !p[len]))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

static int bench_setup(struct bench *b)
{
	struct kmad_sim_config cfg = {
		.name = "kbench",
		.topology = KMAD_SIM_TOPO_PAIR,
		.mode = KMAD_SIM_ASYNC,
		.latency_us = 0,
	};
	char dev[16];
	int i;

	b->rng = 2463534242U;
	b->fab = kmad_sim_create(&cfg);
	if (IS_ERR(b->fab)) {
		int ret = PTR_ERR(b->fab);

		b->fab = NULL;
		return ret;
	}
	for (i = 0; i < 2; i++) {
		snprintf(dev, sizeof(dev), "kbench%d", i);
		b->port[i] = kmad_port_get(dev, 1);
		if (!b->port[i])
			return -ENODEV;
		b->lid[i] = kmad_port_lid(b->port[i]);
	}
	return responder_create(b);
}

static void bench_teardown(struct bench *b)
{
	int i;

	if (b->resp)
		responder_destroy(b);
	for (i = 0; i < 2; i++)
		kmad_port_put(b->port[i]);
	if (b->fab)
		kmad_sim_destroy(b->fab);
}

static int __init kmad_bench_init(void)
{
	struct bench *b;
	u64 *samples;
	unsigned int i;
	int ret;

	if (!repeats || repeats > 100) {
		pr_err("repeats=%u: expected 1 to 100\n", repeats);
		return -EINVAL;
	}
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	samples = kcalloc(repeats, sizeof(*samples), GFP_KERNEL);
	if (!b || !samples) {
		ret = -ENOMEM;
		goto out;
	}
	ret = bench_setup(b);
	if (ret) {
		pr_err("error setup: %d\n", ret);
		goto out_teardown;
	}
	pr_info("start run=%s quick=%d repeats=%u cpus=%u\n", run, quick,
		repeats, num_online_cpus());
	if (bench_wanted("rtt")) {
		for (i = 0; i < ARRAY_SIZE(rtt_agents); i++)
			bench_rtt(b, rtt_agents[i], samples);
		bench_latency(b, samples);
	}
	if (bench_wanted("scale"))
		bench_scale(b, samples);
	if (bench_wanted("storm"))
		bench_storm(b, samples);
	if (bench_wanted("rmpp"))
		bench_rmpp(b, samples);
	if (bench_wanted("flow"))
		bench_flow(b, samples);
	pr_info("done, %d errors\n", b->errors);
out_teardown:
	bench_teardown(b);
out:
	kfree(samples);
	kfree(b);
	/* Everything ran at load; there is nothing to keep loaded. */
	return ret;
}

static void __exit kmad_bench_exit(void)
{
}

module_init(kmad_bench_init);
module_exit(kmad_bench_exit);

MODULE_DESCRIPTION("kmad benchmarks (make bench)");
MODULE_LICENSE("GPL");
