/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared fixture for kmad's KUnit suites.
 *
 * kt_fix_init() builds a two-HCA simulated fabric in step mode (nothing
 * moves unless the test steps it), registers a requester agent on device
 * 0 and gives the test helpers to post requests, step the fabric and read
 * what happened.  Every send_handler and recv_handler call is recorded in
 * an event log; tests compare the log with what they expect, kept apart
 * from what happened.
 *
 * Everything here is static: each suite is its own module.
 */
#ifndef KMAD_TEST_H
#define KMAD_TEST_H

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/jiffies.h>
#include <linux/spinlock.h>

#include <kmad/mad.h>
#include <kmad/sim.h>

#include "kmad_priv.h"

/* The fixture reaches kmad's KUnit seams (EXPORT_SYMBOL_IF_KUNIT). */
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define KT_MAX_EVENTS	256
#define KT_CLASS	KMAD_MGMT_CLASS_SUBN_ADM
#define KT_VERSION	2
#define KT_QPN		1
#define KT_DEV0		0
#define KT_DEV1		1
/* Receive buffers per QP in test fabrics: plenty for the tests, and far
 * cheaper to set up under KASAN than kmad's default of 256.
 */
#define KT_RQ_DEPTH	32

/*
 * How long a test on the asynchronous fabric waits, on the real clock, for
 * something that must come (a callback, an answer, a state): work items
 * and timers there are scheduled by the guest, which a loaded host (make
 * check beside other guests, QEMU TCG) stalls for hundreds of
 * milliseconds, now and then for seconds.  A passing test pays nothing
 * for the bound, so it is long; a response timeout that must not expire
 * before its answer comes is set to it too.  Not longer: the KUnit runner
 * waits for a case in D state, and the debug kernel panics on a task
 * blocked for 60 s, so every case must end well within that.
 */
#define KT_ASYNC_WAIT_MS	10000

/*
 * Poll @cond (evaluated once a round, sleeping 1-2 ms between rounds)
 * until it holds or @ms of real time have passed; its last value, which
 * is read once more after the time is up.
 */
#define kt_wait_until(cond, ms) ({					\
	unsigned long __kt_end = jiffies + msecs_to_jiffies(ms);	\
	bool __kt_ok, __kt_late;					\
									\
	for (;;) {							\
		__kt_late = !time_before(jiffies, __kt_end);		\
		__kt_ok = (cond);					\
		if (__kt_ok || __kt_late)				\
			break;						\
		usleep_range(1000, 2000);				\
	}								\
	__kt_ok;							\
})

enum kt_kind {
	KT_SEND,	/* send_handler ran */
	KT_RECV,	/* recv_handler ran */
};

struct kt_event {
	enum kt_kind kind;
	struct kmad_agent *agent;	/* whose handler ran */
	struct kmad_send_buf *buf;	/* KT_SEND: the send; KT_RECV: request */
	enum kmad_send_status status;	/* KT_SEND */
	u8 method;			/* KT_RECV */
	u16 mad_status;			/* KT_RECV */
	u64 tid;			/* KT_RECV */
	struct task_struct *task;	/* who ran the handler */
};

struct kt_fix {
	struct kunit *test;
	struct kmad_sim_fabric *fab;
	struct kmad_port *port[2];
	struct kmad_agent *agent;	/* send-only requester on dev 0, QP1 */
	spinlock_t lock;		/* guards n and ev */
	int n;
	struct kt_event ev[KT_MAX_EVENTS];
	atomic_t sends;			/* send_handler calls */
	atomic_t recvs;			/* recv_handler calls */
	bool free_on_send;		/* send_handler frees the buffer */
	bool keep_recv;			/* recv_handler keeps the last MAD */
	struct kmad_recv_wc *kept_recv;	/* ... here, for the test to free */
};

static atomic_t kt_fabric_seq = ATOMIC_INIT(0);

static inline void kt_record(struct kt_fix *f, const struct kt_event *e)
{
	spin_lock(&f->lock);
	if (f->n < KT_MAX_EVENTS)
		f->ev[f->n] = *e;
	f->n++;
	spin_unlock(&f->lock);
}

static inline void kt_send_handler(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct kt_fix *f = agent->context;
	struct kt_event e = {
		.kind = KT_SEND, .agent = agent, .buf = wc->send_buf,
		.status = wc->status, .task = current,
	};

	atomic_inc(&f->sends);
	kt_record(f, &e);
	if (f->free_on_send)
		kmad_free_send_buf(wc->send_buf);
}

static inline void kt_recv_handler(struct kmad_agent *agent,
				   struct kmad_send_buf *request,
				   struct kmad_recv_wc *wc)
{
	struct kt_fix *f = agent->context;
	struct kt_event e = {
		.kind = KT_RECV, .agent = agent, .buf = request,
		.method = wc->mad->mad_hdr.method,
		.mad_status = be16_to_cpu(wc->mad->mad_hdr.status),
		.tid = be64_to_cpu(wc->mad->mad_hdr.tid),
		.task = current,
	};

	atomic_inc(&f->recvs);
	kt_record(f, &e);
	if (f->keep_recv && !f->kept_recv)
		f->kept_recv = wc;
	else
		kmad_free_recv(wc);
}

/*
 * Build the fixture on a fabric of @cfg (its name is made here); the
 * test owns it.  test->priv is set as soon as the fabric exists, so that
 * kt_fix_exit() tears down whatever a failed setup left.
 */
static inline int kt_fix_setup_cfg(struct kunit *test,
				   struct kmad_sim_config *cfg)
{
	struct kt_fix *f;
	char name[KMAD_NAME_LEN - 4], dev[KMAD_NAME_LEN];
	int i;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	f->test = test;
	spin_lock_init(&f->lock);
	snprintf(name, sizeof(name), "%s%d_", KBUILD_MODNAME,
		 atomic_inc_return(&kt_fabric_seq));
	cfg->name = name;
	f->fab = kmad_sim_create(cfg);
	if (IS_ERR_OR_NULL(f->fab))
		return f->fab ? PTR_ERR(f->fab) : -ENOMEM;
	test->priv = f;
	for (i = 0; i < 2; i++) {
		snprintf(dev, sizeof(dev), "%s%d", name, i);
		f->port[i] = kmad_port_get(dev, 1);
		if (!f->port[i])
			return -ENODEV;
	}
	f->agent = kmad_register_agent(f->port[0], KMAD_QPT_GSI, NULL,
				       kt_send_handler, kt_recv_handler, f);
	if (IS_ERR(f->agent)) {
		int ret = PTR_ERR(f->agent);

		f->agent = NULL;
		return ret;
	}
	return 0;
}

/*
 * The fixture's fabric in @mode: a pair, IBTA notification, KT_RQ_DEPTH
 * receive buffers.  Suites that need more (address handles, a link
 * layer, a minimal provider) set it on top and call kt_fix_setup_cfg().
 */
static inline void kt_fix_config(struct kmad_sim_config *cfg,
				 enum kmad_sim_mode mode)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->topology = KMAD_SIM_TOPO_PAIR;
	cfg->mode = mode;
	cfg->notify = KMAD_SIM_NOTIFY_IBTA;
	cfg->latency_us = 5;
	cfg->rq_depth = KT_RQ_DEPTH;
}

/* Build the fixture with an explicit mode; the test owns it. */
static inline int kt_fix_setup(struct kunit *test, enum kmad_sim_mode mode,
			       enum kmad_sim_notify notify)
{
	struct kmad_sim_config cfg;

	kt_fix_config(&cfg, mode);
	cfg.notify = notify;
	return kt_fix_setup_cfg(test, &cfg);
}

static inline int kt_fix_init(struct kunit *test)
{
	return kt_fix_setup(test, KMAD_SIM_STEP, KMAD_SIM_NOTIFY_IBTA);
}

/*
 * Allocations at kmad's drain and work sites (enum kmad_alloc_site) made
 * to fail: kt_fail_allocs() arms the next @n of a site, the fixture's exit
 * disarms them all.
 */
static atomic_t kt_alloc_fail[KMAD_ALLOC_SITES] __maybe_unused;
static atomic_t kt_alloc_failed[KMAD_ALLOC_SITES] __maybe_unused;

static inline bool kt_alloc_hook(enum kmad_alloc_site site)
{
	if (atomic_dec_if_positive(&kt_alloc_fail[site]) < 0)
		return false;
	atomic_inc(&kt_alloc_failed[site]);
	return true;
}

/* The next @n allocations at @site fail. */
static inline void kt_fail_allocs(enum kmad_alloc_site site, int n)
{
	atomic_set(&kt_alloc_failed[site], 0);
	atomic_set(&kt_alloc_fail[site], n);
	WRITE_ONCE(kmad_test_alloc_hook, kt_alloc_hook);
}

/* How many allocations at @site failed since kt_fail_allocs(). */
static inline int kt_allocs_failed(enum kmad_alloc_site site)
{
	return atomic_read(&kt_alloc_failed[site]);
}

static inline void kt_allocs_disarm(void)
{
	int i;

	WRITE_ONCE(kmad_test_alloc_hook, NULL);
	for (i = 0; i < KMAD_ALLOC_SITES; i++)
		atomic_set(&kt_alloc_fail[i], 0);
}

static inline void kt_fix_exit(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	int i;

	kt_allocs_disarm();
	if (!f)
		return;
	/* Ports first: their removal flushes every send the test left on
	 * the (step-mode) wire, so unregistering cannot wait forever.
	 */
	if (!IS_ERR_OR_NULL(f->fab))
		kmad_sim_destroy(f->fab);
	if (f->agent)
		kmad_unregister_agent(f->agent);
	for (i = 0; i < 2; i++)
		kmad_port_put(f->port[i]);
}

/* Removing a device of the fixture's fabric in a thread (kt_remove_start()). */
struct kt_remover {
	struct kmad_sim_fabric *fab;
	unsigned int dev;
	struct completion done;
};

static inline int kt_remove_fn(void *arg)
{
	struct kt_remover *r = arg;

	kmad_sim_remove_device(r->fab, r->dev);
	complete(&r->done);
	return 0;
}

/*
 * Start removing device @dev in a thread, so that the test can step the
 * fabric or watch a handler meanwhile; NULL if the thread could not start.
 * The record is kmalloc'd, not the test's: kt_remove_wait() frees it, or
 * leaves it to a thread that did not end.
 */
static inline struct kt_remover *kt_remove_start(struct kt_fix *f,
						 unsigned int dev)
{
	struct kt_remover *r = kzalloc(sizeof(*r), GFP_KERNEL);
	struct task_struct *t;

	if (!r)
		return NULL;
	r->fab = f->fab;
	r->dev = dev;
	init_completion(&r->done);
	t = kthread_run(kt_remove_fn, r, "kt_remove");
	if (IS_ERR(t)) {
		kfree(r);
		return NULL;
	}
	return r;
}

/*
 * Wait up to @timeout jiffies for the removal to end: true if it did.
 * If not, the thread still uses @r and the fabric: both are left to it
 * (leaked), and the fixture forgets the fabric and its agent rather than
 * tear them down under it.
 */
static inline bool kt_remove_wait(struct kt_fix *f, struct kt_remover *r,
				  unsigned long timeout)
{
	if (!wait_for_completion_timeout(&r->done, timeout)) {
		f->fab = NULL;
		f->agent = NULL;
		return false;
	}
	kfree(r);
	return true;
}

/* A GMP request of @method from @agent to device 1, QP1. */
static inline struct kmad_send_buf *kt_request(struct kt_fix *f,
					       struct kmad_agent *agent, u8 method,
					       u32 tid_lo, unsigned int timeout_ms,
					       unsigned int retries)
{
	struct kmad_dest dest = {
		.dlid = kmad_port_lid(f->port[KT_DEV1]),
		.remote_qpn = KT_QPN,
		.remote_qkey = KMAD_QP1_QKEY,
	};
	struct kmad_send_buf *buf;

	buf = kmad_alloc_send_buf(agent, &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(f->test, IS_ERR(buf));
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.mgmt_class = KT_CLASS;
	buf->mad->mad_hdr.class_version = KT_VERSION;
	buf->mad->mad_hdr.method = method;
	buf->mad->mad_hdr.tid = cpu_to_be64(tid_lo);
	buf->mad->mad_hdr.attr_id = cpu_to_be16(KMAD_PMA_ATTR_PORT_COUNTERS);
	buf->timeout_ms = timeout_ms;
	buf->retries = retries;
	return buf;
}

/* Post @buf and expect success. */
static inline void kt_post(struct kt_fix *f, struct kmad_send_buf *buf)
{
	KUNIT_ASSERT_EQ(f->test, kmad_post_send(buf), 0);
}

/* Let every queued CQ event and work item run to completion. */
static inline void kt_settle(struct kt_fix *f)
{
	kmad_sim_settle(f->fab);
}

/* Fire the pending completion event on (@dev, QP1), if any, and settle. */
static inline void kt_event(struct kt_fix *f, unsigned int dev)
{
	kmad_sim_fire_cq_event(f->fab, dev, KT_QPN, false);
	kt_settle(f);
}

/* Complete the oldest pending send of @dev (QP1) and run the drain. */
static inline void kt_complete(struct kt_fix *f, unsigned int dev,
			       enum kmad_wc_status status, bool deliver)
{
	KUNIT_ASSERT_EQ(f->test, kmad_sim_complete_send(f->fab, dev, KT_QPN, 0,
							status, deliver), 0);
	kt_event(f, dev);
}

/*
 * Inject the response to @req into device 0, as device 1 would send it;
 * returns kmad_sim_inject()'s result (no assertion: callable from a
 * thread other than the case's).  Not inlined: its MAD copy would add
 * to the frame of a case that answers several times.
 */
static noinline __maybe_unused int
kt_inject_response(struct kt_fix *f, struct kmad_send_buf *req, u16 status)
{
	struct kmad_mad resp = *req->mad;

	resp.mad_hdr.method = KMAD_METHOD_GET_RESP;
	resp.mad_hdr.status = cpu_to_be16(status);
	return kmad_sim_inject(f->fab, KT_DEV0, KT_QPN, &resp, sizeof(resp),
			       kmad_port_lid(f->port[KT_DEV1]), KT_QPN);
}

/* The same, asserting that the injection worked. */
static inline void kt_respond(struct kt_fix *f, struct kmad_send_buf *req,
			      u16 status)
{
	KUNIT_ASSERT_EQ(f->test, kt_inject_response(f, req, status), 0);
}

/* The send's state and references, read under its agent's lock. */
static inline enum kmad_send_state kt_state(struct kmad_send_buf *buf,
					    unsigned int *refs)
{
	struct kmad_send_wr *wr = kmad_send_wr(buf);
	enum kmad_send_state state;
	unsigned long flags;

	spin_lock_irqsave(&kmad_send_agent(wr)->lock, flags);
	state = wr->state;
	if (refs)
		*refs = wr->refs;
	spin_unlock_irqrestore(&kmad_send_agent(wr)->lock, flags);
	return state;
}

/* Where a QP is in its life, read under its lock. */
static inline enum kmad_qp_run kt_qp_run(struct kmad_qp_info *qpi)
{
	enum kmad_qp_run run;
	unsigned long flags;

	spin_lock_irqsave(&qpi->lock, flags);
	run = qpi->run;
	spin_unlock_irqrestore(&qpi->lock, flags);
	return run;
}

/* How many receive buffers the provider holds for a QP. */
static inline unsigned int kt_qp_rq_posted(struct kmad_qp_info *qpi)
{
	unsigned int n;
	unsigned long flags;

	spin_lock_irqsave(&qpi->lock, flags);
	n = qpi->rq_posted;
	spin_unlock_irqrestore(&qpi->lock, flags);
	return n;
}

static inline int kt_events(struct kt_fix *f)
{
	int n;

	spin_lock(&f->lock);
	n = f->n;
	spin_unlock(&f->lock);
	return n;
}

/* Print the event log, for a failing case. */
static inline void kt_dump(struct kt_fix *f)
{
	int i;

	for (i = 0; i < min(kt_events(f), KT_MAX_EVENTS); i++)
		kunit_info(f->test, "event %d: %s buf %p status %d method %#x tid %#llx\n",
			   i, f->ev[i].kind == KT_SEND ? "send" : "recv",
			   f->ev[i].buf, f->ev[i].status, f->ev[i].method,
			   f->ev[i].tid);
}

/* Expect event @i to be a send callback for @buf with @status. */
static inline void kt_expect_send(struct kt_fix *f, int i,
				  struct kmad_send_buf *buf,
				  enum kmad_send_status status)
{
	KUNIT_ASSERT_GE(f->test, i, 0);
	KUNIT_ASSERT_LT(f->test, i, min(kt_events(f), KT_MAX_EVENTS));
	if (f->ev[i].kind != KT_SEND || f->ev[i].buf != buf ||
	    f->ev[i].status != status) {
		kunit_info(f->test, "expected event %d: send buf %p status %d\n",
			   i, buf, status);
		kt_dump(f);
	}
	KUNIT_EXPECT_EQ(f->test, f->ev[i].kind, KT_SEND);
	KUNIT_EXPECT_PTR_EQ(f->test, f->ev[i].buf, buf);
	KUNIT_EXPECT_EQ(f->test, f->ev[i].status, status);
}

/* Expect the callbacks so far to be one, for @buf with @status. */
static inline void kt_expect_only_send(struct kt_fix *f,
				       struct kmad_send_buf *buf,
				       enum kmad_send_status status)
{
	KUNIT_ASSERT_EQ(f->test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, status);
}

/* Move the virtual clock @ms on and let what became due run. */
static inline void kt_advance(struct kt_fix *f, unsigned int ms)
{
	kmad_sim_advance_clock(f->fab, ms);
	kt_settle(f);
}

/*
 * Expect @buf, the only send, to time out @ms from now: no callback at
 * @ms - 1, its KMAD_SEND_RESP_TIMEOUT at @ms.  One millisecond is one tick
 * at HZ=1000 only, which the test kernels have (testing.rst).
 */
static inline void kt_expect_timeout_in(struct kt_fix *f,
					struct kmad_send_buf *buf,
					unsigned int ms)
{
	kt_advance(f, ms - 1);
	KUNIT_EXPECT_EQ(f->test, kt_events(f), 0);
	kt_advance(f, 1);
	kt_expect_only_send(f, buf, KMAD_SEND_RESP_TIMEOUT);
}

/* Expect event @i to be a receive for @request with @method. */
static inline void kt_expect_recv(struct kt_fix *f, int i,
				  struct kmad_send_buf *request, u8 method)
{
	KUNIT_ASSERT_LT(f->test, i, min(kt_events(f), KT_MAX_EVENTS));
	KUNIT_EXPECT_EQ(f->test, f->ev[i].kind, KT_RECV);
	KUNIT_EXPECT_PTR_EQ(f->test, f->ev[i].buf, request);
	KUNIT_EXPECT_EQ(f->test, f->ev[i].method, method);
}

/* Expect the send's state and references, read under its agent's lock. */
static inline void kt_expect_state(struct kt_fix *f, struct kmad_send_buf *buf,
				   enum kmad_send_state state,
				   unsigned int refs)
{
	unsigned int r;

	KUNIT_EXPECT_EQ(f->test, kt_state(buf, &r), state);
	KUNIT_EXPECT_EQ(f->test, r, refs);
}

/* Give device 0's port LMC @lmc in kmad's view (its LID and SM LID kept). */
static inline void kt_set_lmc(struct kt_fix *f, u8 lmc)
{
	struct kmad_port_attr attr = {
		.lid = kmad_port_lid(f->port[KT_DEV0]),
		.lmc = lmc,
		.sm_lid = kmad_port_sm_lid(f->port[KT_DEV0]),
	};

	KUNIT_ASSERT_EQ(f->test,
			kmad_device_port_changed(kmad_sim_device(f->fab, KT_DEV0),
						 1, &attr), 0);
}

/* Device @dev's port counter @s. */
static inline s64 kt_pstat(struct kt_fix *f, unsigned int dev,
			   enum kmad_port_stat s)
{
	return atomic64_read(&f->port[dev]->stats[s]);
}

/* Inject @mad into device 1's QP1 as if device 0 had sent it; settle. */
static inline void kt_inject1(struct kt_fix *f, const struct kmad_mad *mad)
{
	KUNIT_ASSERT_EQ(f->test, kmad_sim_inject(f->fab, KT_DEV1, KT_QPN, mad,
						 sizeof(*mad),
						 kmad_port_lid(f->port[KT_DEV0]),
						 KT_QPN), 0);
	kmad_sim_fire_cq_event(f->fab, KT_DEV1, KT_QPN, false);
	kt_settle(f);
}

/* A request of (@cls, @version, @method) with a fixed TID and attribute. */
static inline void kt_mad(struct kmad_mad *mad, u8 cls, u8 version,
			  u8 method)
{
	memset(mad, 0, sizeof(*mad));
	mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	mad->mad_hdr.mgmt_class = cls;
	mad->mad_hdr.class_version = version;
	mad->mad_hdr.method = method;
	mad->mad_hdr.tid = cpu_to_be64(0x0000000500000042ULL);
	mad->mad_hdr.attr_id = cpu_to_be16(KMAD_PMA_ATTR_PORT_COUNTERS);
}

/* Inject into device 0 the response to @req, arriving as @rx says (its
 * SLID and source QP are set here: device 1's); fire the event.
 */
static inline void kt_respond_rx(struct kt_fix *f, struct kmad_send_buf *req,
				 struct kmad_sim_rx *rx)
{
	struct kmad_mad resp = *req->mad;

	resp.mad_hdr.method = KMAD_METHOD_GET_RESP;
	rx->slid = kmad_port_lid(f->port[KT_DEV1]);
	rx->src_qpn = KT_QPN;
	KUNIT_ASSERT_EQ(f->test, kmad_sim_inject_rx(f->fab, KT_DEV0, KT_QPN,
						    &resp, sizeof(resp), rx),
			0);
	kt_event(f, KT_DEV0);
}

/* Expect the log to hold just @buf's response, then its OK. */
static inline void kt_expect_answered(struct kt_fix *f,
				      struct kmad_send_buf *buf)
{
	KUNIT_ASSERT_EQ(f->test, kt_events(f), 2);
	kt_expect_recv(f, 0, buf, KMAD_METHOD_GET_RESP);
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
}

/*
 * @buf, the only send, is still on the wire: its response arrives first
 * and is parked (EARLY_RESP, 1 reference, no callback); at the send
 * completion the ULP gets the response, then OK.
 */
static inline void kt_expect_early_response(struct kt_fix *f,
					    struct kmad_send_buf *buf,
					    enum kmad_wc_status wc_status)
{
	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	kt_expect_state(f, buf, KMAD_SS_EARLY_RESP, 1);
	KUNIT_EXPECT_EQ(f->test, kt_events(f), 0);
	kt_complete(f, KT_DEV0, wc_status, false);
	kt_expect_answered(f, buf);
}

#endif /* KMAD_TEST_H */
