// SPDX-License-Identifier: GPL-2.0
/*
 * rxe_bench: kmad against the kernel's own MAD layer (ib_mad), on the same
 * soft-RoCE pair, in one boot (`make bench`, tests/bench/rxe/rxe.sh).
 *
 * Loaded in make interop's guest (rxe0 and rxe1 on a veth pair, kmad_ib
 * loaded, so kmad has a device rxe0), it runs everything from its init:
 *
 * - a responder: an ib_mad agent on rxe1 port 1 (GSI) for vendor class
 *   0x09 (range 1, no OUI), class version 1, method Get, answering each
 *   Get with a GetResp (status 0, same TID and attribute) to the QP the
 *   Get came from.  Both stacks' requests go to this one responder.
 * - two requester stacks on rxe0 port 1, driven by the same code through
 *   &struct rb_ops: "ib_mad" (ib_register_mad_agent() on the port's QP1)
 *   and "kmad" (kmad_register_agent() on the kmad device kmad_ib made of
 *   rxe0; its sends leave from kmad's own UD QP).
 *
 * Per repetition, for each N of ns[] and each stack (the order alternates
 * between repetitions), a fresh requester agent:
 *   fill    N background Gets to QPN 0xfffff0 of rxe1 (nobody has it; rxe
 *           drops them), timeout RB_BG_MS, no retries, then a fence (a
 *           send without timeout: its callback comes after the completion
 *           of every send before it); slab counters before and after;
 *   rtt     K probe Gets to rxe1's QP1, one at a time, timeout RB_PROBE_MS
 *           (longer than the background's, so they sort behind it): post
 *           to the send_handler reporting success, which both stacks call
 *           only after the send completed and the response matched;
 *   cancel  KC more Gets to the dead QPN (timeout RB_PROBE_MS) and a
 *           fence, then each is canceled, one at a time: the cancel call
 *           itself, and the call to its send_handler;
 *   unreg   the agent unregistered with the N + 0 outstanding: the call
 *           (both stacks call back every outstanding send before it
 *           returns).
 * Then the round trips per second: 1, 2 and 4 requester agents of one
 * stack at a time, each keeping RB_WINDOW Gets in flight to the
 * responder (a new one posted from the send_handler of each answered
 * one), no background.
 *
 * For kmad's probes it also records, through kmad's tracepoints, when kmad
 * received the response (kmad_recv), saw the send completion
 * (kmad_send_hw_done), matched the response (kmad_resp_match) and started
 * the callback (kmad_send_callback): where kmad's round trip goes.  ib_mad
 * has no tracepoints a module can attach to.  Each repetition also times
 * one synchronize_rcu(), for the unregister figures.
 *
 * Every send is checked: background and cancel targets must end as
 * flushed/canceled (never answered), probes and rate Gets as answered by
 * a GetResp with their TID and attribute modifier.  A failed check prints
 * "rxe_bench: error ...".
 *
 * Output: one line per sample,
 *   rxe_bench: sample {"name": ..., "stack": ..., "n": ..., "rep": ...,
 *                      "v": ...}
 * (times in ns, rates in round trips/s, memory in bytes per send), then
 * "rxe_bench: done, <E> errors".  tests/bench/report.py makes the tables.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kprobes.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/mm.h>
#include <linux/vmstat.h>
#include <linux/wait_bit.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include <kmad/mad.h>

#include "trace.h"	/* kmad's tracepoints: where a kmad probe's time goes */

static char *dev = "rxe0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "requester device, ib_core's and kmad's name (default rxe0)");

static char *peer = "rxe1";
module_param(peer, charp, 0444);
MODULE_PARM_DESC(peer, "responder's ib_core device (default rxe1)");

static bool quick;
module_param(quick, bool, 0444);
MODULE_PARM_DESC(quick, "N up to 4096, fewer probes, shorter rate runs (CI)");

static uint repeats = 5;
module_param(repeats, uint, 0444);
MODULE_PARM_DESC(repeats, "repetitions of every figure (default 5)");

static char *run = "scale,rate";
module_param(run, charp, 0444);
MODULE_PARM_DESC(run, "what to run: scale, rate (default both)");

/*
 * prof_n: for profiling (tests/interop/interop.sh RXE_PERF=1), 0 (the
 * default) for the benchmark.  Non-zero: scale runs N = prof_n only, rate
 * one requester only; the time one ktime_get_ns() takes is printed, and
 * every unregister and rate run prints its window in CLOCK_MONOTONIC
 * (perf record -k mono) as "prof: window <what> <stack> <start> <end>"
 * in seconds, for perf report --time.
 */
static unsigned int prof_n;
module_param(prof_n, uint, 0444);
MODULE_PARM_DESC(prof_n, "profiling: only N = prof_n and 1 requester, print time windows (default 0: off)");

/*
 * prof_noclock: for profiling, false (the default) for the benchmark.
 * True: the send handlers read no clock while an unregister runs (the
 * unreg phases line then has no cb_first/cb_last), to measure what the
 * clock read costs each callback.
 */
static bool prof_noclock;
module_param(prof_noclock, bool, 0444);
MODULE_PARM_DESC(prof_noclock, "profiling: no clock read in handlers during unregister (default false)");

#define RB_CLASS	0x09
#define RB_DEAD_QPN	0xfffff0
#define RB_BG_MS	600000		/* background: 10 minutes */
#define RB_PROBE_MS	1200000		/* probes, cancel targets: 20 min */
#define RB_WAIT_MS	300000		/* how long a step may take at most */
#define RB_PROBES	64
#define RB_PROBES_QUICK	16
#define RB_CANCELS	32
#define RB_CANCELS_QUICK 16
#define RB_WINDOW	16
#define RB_RATE_MS	2000
#define RB_RATE_MS_QUICK 500
#define RB_WARMUP_MS	100
#define RB_EXPIRE_MS	20		/* the expiring sends' timeout */
#define RB_EXPIRES	16
#define RB_EXPIRES_QUICK 8
#define RB_RANDOM_MAX_N	4096		/* random-deadline fill up to this N */
#define RB_MAX_AGENTS	4

static const unsigned int rb_ns[] = { 16, 256, 4096, 65536 };
static const unsigned int rb_ns_quick[] = { 16, 256, 4096 };
static const unsigned int rb_agents[] = { 1, 2, 4 };

/* What a send is for: its context[0] (a pointer to one of these). */
enum rb_kind { RB_BG, RB_FENCE, RB_PROBE, RB_TARGET, RB_RATE, RB_EXPIRE };
static const enum rb_kind rb_kinds[] = { RB_BG, RB_FENCE, RB_PROBE,
					 RB_TARGET, RB_RATE, RB_EXPIRE };

static int rb_errors;

static __printf(1, 2) void rb_error(const char *fmt, ...)
{
	struct va_format vaf;
	va_list ap;

	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	pr_info("error %pV\n", &vaf);
	va_end(ap);
	rb_errors++;
}

static void rb_sample(const char *name, const char *stack, unsigned int n,
		      unsigned int rep, u64 v)
{
	pr_info("sample {\"name\": \"%s\", \"stack\": \"%s\", \"n\": %u, \"rep\": %u, \"v\": %llu}\n",
		name, stack, n, rep, v);
}

/* rb_sample() of a difference, which may be negative. */
static void rb_sample_signed(const char *name, const char *stack,
			     unsigned int n, unsigned int rep, long v)
{
	pr_info("sample {\"name\": \"%s\", \"stack\": \"%s\", \"n\": %u, \"rep\": %u, \"v\": %ld}\n",
		name, stack, n, rep, v);
}

/* ---- the responder: ib_mad on the peer ---- */

static struct ib_device *rb_ibdev, *rb_peerdev;
static struct ib_mad_agent *rs_agent;
static struct ib_ah *rs_ah;		/* for requests from rs_ah_sgid */
static union ib_gid rs_ah_sgid;
static DEFINE_MUTEX(rs_lock);		/* rs_ah, rs_ah_sgid */
static atomic_t rs_answered = ATOMIC_INIT(0);
static atomic_t rs_errors = ATOMIC_INIT(0);
/* Answers posted whose send_handler has not run yet: rs_stop() waits for
 * them, or ib_unregister_mad_agent() would end them with a flush.
 */
static atomic_t rs_inflight = ATOMIC_INIT(0);
/* Which step failed, for the last line: an answer's send completion
 * (with its last status), its address handle, its allocation, its post.
 */
static atomic_t rs_err_wc, rs_err_ah, rs_err_alloc, rs_err_post;
static int rs_err_status;

static void rs_error(atomic_t *kind)
{
	atomic_inc(kind);
	atomic_inc(&rs_errors);
}

static void rs_send_handler(struct ib_mad_agent *agent,
			    struct ib_mad_send_wc *wc)
{
	if (wc->status != IB_WC_SUCCESS) {
		WRITE_ONCE(rs_err_status, wc->status);
		rs_error(&rs_err_wc);
	}
	if (wc->send_buf->context[0])	/* an AH of its own */
		rdma_destroy_ah(wc->send_buf->ah, RDMA_DESTROY_AH_SLEEPABLE);
	ib_free_send_mad(wc->send_buf);
	if (atomic_dec_and_test(&rs_inflight))
		wake_up_var(&rs_inflight);
}

/* The AH back to the requester: cached for the first source GID seen. */
static struct ib_ah *rs_get_ah(struct ib_mad_agent *agent,
			       struct ib_mad_recv_wc *rwc, bool *own)
{
	const struct ib_grh *grh = rwc->recv_buf.grh;
	struct ib_ah *ah;

	*own = false;
	mutex_lock(&rs_lock);
	if (rs_ah && grh && !memcmp(&grh->sgid, &rs_ah_sgid, sizeof(rs_ah_sgid))) {
		ah = rs_ah;
		goto out;
	}
	ah = ib_create_ah_from_wc(agent->qp->pd, rwc->wc, grh, agent->port_num);
	if (IS_ERR(ah))
		goto out;
	if (!rs_ah && grh) {
		rs_ah = ah;
		rs_ah_sgid = grh->sgid;
	} else {
		*own = true;
	}
out:
	mutex_unlock(&rs_lock);
	return ah;
}

static void rs_recv_handler(struct ib_mad_agent *agent,
			    struct ib_mad_send_buf *send_buf,
			    struct ib_mad_recv_wc *rwc)
{
	const struct ib_mad *req = rwc->recv_buf.mad;
	struct ib_mad_send_buf *sb;
	struct ib_ah *ah;
	bool own;

	if (req->mad_hdr.mgmt_class != RB_CLASS ||
	    req->mad_hdr.method != IB_MGMT_METHOD_GET)
		goto out;
	ah = rs_get_ah(agent, rwc, &own);
	if (IS_ERR(ah)) {
		rs_error(&rs_err_ah);
		goto out;
	}
	sb = ib_create_send_mad(agent, rwc->wc->src_qp, rwc->wc->pkey_index, 0,
				IB_MGMT_MAD_HDR, IB_MGMT_MAD_DATA, GFP_KERNEL,
				IB_MGMT_BASE_VERSION);
	if (IS_ERR(sb)) {
		rs_error(&rs_err_alloc);
		if (own)
			rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
		goto out;
	}
	((struct ib_mad *)sb->mad)->mad_hdr = req->mad_hdr;
	((struct ib_mad *)sb->mad)->mad_hdr.method = IB_MGMT_METHOD_GET_RESP;
	((struct ib_mad *)sb->mad)->mad_hdr.status = 0;
	sb->ah = ah;
	sb->context[0] = own ? ah : NULL;
	atomic_inc(&rs_inflight);
	if (ib_post_send_mad(sb, NULL)) {
		atomic_dec(&rs_inflight);
		rs_error(&rs_err_post);
		ib_free_send_mad(sb);
		if (own)
			rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
		goto out;
	}
	atomic_inc(&rs_answered);
out:
	ib_free_recv_mad(rwc);
}

static int rs_start(void)
{
	struct ib_mad_reg_req req = {
		.mgmt_class = RB_CLASS,
		.mgmt_class_version = 1,
	};

	set_bit(IB_MGMT_METHOD_GET, req.method_mask);
	rs_agent = ib_register_mad_agent(rb_peerdev, 1, IB_QPT_GSI, &req, 0,
					 rs_send_handler, rs_recv_handler,
					 NULL, 0);
	if (IS_ERR(rs_agent)) {
		int ret = PTR_ERR(rs_agent);

		rs_agent = NULL;
		return ret;
	}
	return 0;
}

/*
 * A requester's last callback comes once its response arrived, which may
 * be before ib_mad on the peer has reaped that response's send
 * completion: the answers of the last rate round (up to 4 x RB_WINDOW)
 * can still be in flight here.  Unregistering now would end them with
 * IB_WC_WR_FLUSH_ERR (cancel_mads()), counted as responder errors; so
 * wait for them first (10 s at most: one still missing then is an error
 * of its own).
 */
static void rs_stop(void)
{
	int left = atomic_read(&rs_inflight);

	if (left)
		pr_info("responder: %d answers still in flight at the end; waiting for them\n",
			left);
	if (rs_agent &&
	    !wait_var_event_timeout(&rs_inflight, !atomic_read(&rs_inflight),
				    10 * HZ)) {
		pr_info("responder: %d answers not completed after 10 s\n",
			atomic_read(&rs_inflight));
		atomic_inc(&rs_errors);
	}
	if (rs_agent)
		ib_unregister_mad_agent(rs_agent);
	rs_agent = NULL;
	if (rs_ah)
		rdma_destroy_ah(rs_ah, RDMA_DESTROY_AH_SLEEPABLE);
	rs_ah = NULL;
}

/* ---- the requesters: one interface, two stacks ---- */

/**
 * struct rb_req - one requester agent of either stack.
 * @ops: its stack.
 * @agent: the stack's agent (&struct ib_mad_agent or &struct kmad_agent).
 * @seq: the next TID's low 32 bits.
 * @ended: send_handler calls per &enum rb_kind.
 * @bad: sends of a kind that ended the wrong way.
 * @responses: matched responses (recv_handler with the send).
 * @bad_resp: responses with the wrong method, status or TID.
 * @outstanding: sends posted and not yet called back.
 * @drained: completed when @outstanding reaches 0 while @draining.
 * @draining: someone waits on @drained.
 * @one: completed by the callback of the send in @waited.
 * @waited: the send (buffer) @one is for.
 * @t_end: when that callback came (ktime_get_ns()).
 * @end_ok: it ended as it should.
 * @rate_stop: rate run: no more reposting.
 * @rate_ok: rate run: answered round trips.
 * @unreg: the unregister call is running: @cb_first/@cb_last record it.
 * @cb_first: first send_handler call during it (ktime_get_ns()).
 * @cb_last: last one.
 */
struct rb_req {
	const struct rb_ops *ops;
	void *agent;
	u32 seq;
	atomic_t ended[ARRAY_SIZE(rb_kinds)];
	atomic_t bad;
	atomic_t responses;
	atomic_t bad_resp;
	atomic_t outstanding;
	struct completion drained;
	bool draining;
	struct completion one;
	void *waited;
	u64 t_end;
	bool end_ok;
	bool rate_stop;
	atomic64_t rate_ok;
	bool unreg;
	u64 cb_first;
	u64 cb_last;
};

/**
 * struct rb_ops - a stack's calls; every one as its API has it.
 * @name: "ib_mad" or "kmad".
 * @open: register @r->agent.
 * @close: unregister it (every outstanding send called back first).
 * @get: a Get to @qpn with @timeout_ms, tagged @kind, ready to post;
 *	NULL on failure.
 * @post: post a buffer from @get.
 * @cancel: cancel a posted one.
 * @free: free one that was not posted, or was called back.
 */
struct rb_ops {
	const char *name;
	int (*open)(struct rb_req *r);
	void (*close)(struct rb_req *r);
	void *(*get)(struct rb_req *r, u32 qpn, unsigned int timeout_ms,
		     const enum rb_kind *kind);
	int (*post)(void *buf);
	void (*cancel)(void *buf);
	void (*free)(void *buf);
};

static void rb_req_init(struct rb_req *r, const struct rb_ops *ops)
{
	unsigned int i;

	memset(r, 0, sizeof(*r));
	r->ops = ops;
	for (i = 0; i < ARRAY_SIZE(r->ended); i++)
		atomic_set(&r->ended[i], 0);
	atomic_set(&r->bad, 0);
	atomic_set(&r->responses, 0);
	atomic_set(&r->bad_resp, 0);
	atomic_set(&r->outstanding, 0);
	init_completion(&r->drained);
	init_completion(&r->one);
	atomic64_set(&r->rate_ok, 0);
}

static void rb_repost(struct rb_req *r);

/*
 * A send of @r ended; @ok: as its kind should (answered for probes and
 * rate Gets, flushed or canceled for the others, sent for fences).
 * Returns true if the caller is to free the buffer.
 */
static void rb_ended(struct rb_req *r, void *buf, enum rb_kind kind, bool ok)
{
	bool unreg = READ_ONCE(r->unreg);
	u64 now = 0;

	/* During an unregister only its first and last callbacks read the
	 * clock (nothing is posted then, so the last is the one that finds
	 * one send outstanding): a read per callback, on the guest's HPET,
	 * cost more than either stack's own work per send.
	 */
	if (!unreg)
		now = ktime_get_ns();
	else if (!prof_noclock &&
		 (!r->cb_first || atomic_read(&r->outstanding) == 1))
		now = ktime_get_ns();
	if (unreg && now) {
		if (!r->cb_first)
			r->cb_first = now;
		r->cb_last = now;
	}
	atomic_inc(&r->ended[kind]);
	if (!ok)
		atomic_inc(&r->bad);
	if (kind == RB_RATE && ok && !READ_ONCE(r->rate_stop)) {
		atomic64_inc(&r->rate_ok);
		rb_repost(r);
	}
	if (READ_ONCE(r->waited) == buf) {
		r->t_end = now;
		r->end_ok = ok;
		WRITE_ONCE(r->waited, NULL);
		complete(&r->one);
	}
	r->ops->free(buf);
	if (atomic_dec_and_test(&r->outstanding) && READ_ONCE(r->draining))
		complete(&r->drained);
}

/* Check a response's header against the request it matched. */
static bool rb_resp_ok(const struct ib_mad_hdr *req,
		       const struct ib_mad_hdr *resp)
{
	return resp->method == IB_MGMT_METHOD_GET_RESP &&
	       resp->mgmt_class == RB_CLASS && !resp->status &&
	       resp->tid == req->tid && resp->attr_mod == req->attr_mod;
}

static void rb_fill_get(struct ib_mad_hdr *h, u64 tid, u32 seq)
{
	h->base_version = IB_MGMT_BASE_VERSION;
	h->mgmt_class = RB_CLASS;
	h->class_version = 1;
	h->method = IB_MGMT_METHOD_GET;
	h->tid = cpu_to_be64(tid);
	h->attr_id = cpu_to_be16(0x0010);
	h->attr_mod = cpu_to_be32(seq);
}

/* ---- ib_mad ---- */

static struct ib_ah *im_ah;	/* rxe0 port 1 -> rxe1's GID 0 */

static void im_send_handler(struct ib_mad_agent *agent,
			    struct ib_mad_send_wc *wc)
{
	struct rb_req *r = agent->context;
	const enum rb_kind *kind = wc->send_buf->context[0];
	bool answered = wc->send_buf->context[1];
	bool ok;

	switch (*kind) {
	case RB_FENCE:
		ok = wc->status == IB_WC_SUCCESS;
		break;
	case RB_PROBE:
	case RB_RATE:
		ok = wc->status == IB_WC_SUCCESS && answered;
		break;
	case RB_EXPIRE:
		ok = wc->status == IB_WC_RESP_TIMEOUT_ERR && !answered;
		break;
	default:	/* flushed by cancel or unregister, never answered */
		ok = wc->status == IB_WC_WR_FLUSH_ERR && !answered;
		break;
	}
	rb_ended(r, wc->send_buf, *kind, ok);
}

static void im_recv_handler(struct ib_mad_agent *agent,
			    struct ib_mad_send_buf *send_buf,
			    struct ib_mad_recv_wc *rwc)
{
	struct rb_req *r = agent->context;

	if (send_buf) {
		atomic_inc(&r->responses);
		if (rb_resp_ok(send_buf->mad, &rwc->recv_buf.mad->mad_hdr))
			send_buf->context[1] = (void *)1UL;
		else
			atomic_inc(&r->bad_resp);
	} else {
		atomic_inc(&r->bad_resp);
	}
	ib_free_recv_mad(rwc);
}

static int im_open(struct rb_req *r)
{
	struct ib_mad_agent *a;

	a = ib_register_mad_agent(rb_ibdev, 1, IB_QPT_GSI, NULL, 0,
				  im_send_handler, im_recv_handler, r, 0);
	if (IS_ERR(a))
		return PTR_ERR(a);
	r->agent = a;
	return 0;
}

static void im_close(struct rb_req *r)
{
	ib_unregister_mad_agent(r->agent);
}

static void *im_get(struct rb_req *r, u32 qpn, unsigned int timeout_ms,
		    const enum rb_kind *kind)
{
	struct ib_mad_agent *a = r->agent;
	struct ib_mad_send_buf *sb;
	u32 seq = r->seq++;

	sb = ib_create_send_mad(a, qpn, 0, 0, IB_MGMT_MAD_HDR,
				IB_MGMT_MAD_DATA, GFP_KERNEL,
				IB_MGMT_BASE_VERSION);
	if (IS_ERR(sb))
		return NULL;
	rb_fill_get(sb->mad, (u64)a->hi_tid << 32 | seq, seq);
	sb->ah = im_ah;
	sb->timeout_ms = timeout_ms;
	sb->retries = 0;
	sb->context[0] = (void *)kind;
	sb->context[1] = NULL;	/* answered */
	return sb;
}

static int im_post(void *buf)
{
	return ib_post_send_mad(buf, NULL);
}

static void im_cancel(void *buf)
{
	ib_cancel_mad(buf);	/* ib_modify_mad(buf, 0) */
}

static void im_free(void *buf)
{
	ib_free_send_mad(buf);
}

static const struct rb_ops rb_ib_mad = {
	.name = "ib_mad",
	.open = im_open,
	.close = im_close,
	.get = im_get,
	.post = im_post,
	.cancel = im_cancel,
	.free = im_free,
};

/* The AH ib_mad's requests use: GRH to the peer's GID 0, its MAC. */
static int im_make_ah(struct ib_pd *pd)
{
	const struct ib_gid_attr *attr;
	struct rdma_ah_attr ah_attr = {};
	union ib_gid dgid;
	u8 mac[ETH_ALEN];
	struct ib_ah *ah;
	int ret;

	attr = rdma_get_gid_attr(rb_peerdev, 1, 0);
	if (IS_ERR(attr))
		return PTR_ERR(attr);
	ret = rdma_read_gid_l2_fields(attr, NULL, mac);
	ah_attr.type = rdma_ah_find_type(rb_ibdev, 1);
	rdma_ah_set_port_num(&ah_attr, 1);
	dgid = attr->gid;
	rdma_ah_set_grh(&ah_attr, &dgid, 0, 0, 64, 0);
	rdma_put_gid_attr(attr);
	if (ret)
		return ret;
	memcpy(ah_attr.roce.dmac, mac, ETH_ALEN);
	ah = rdma_create_ah(pd, &ah_attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah))
		return PTR_ERR(ah);
	im_ah = ah;
	return 0;
}

/* ---- kmad ---- */

static struct kmad_port *km_port;
static union kmad_gid km_peer_gid;

static void km_send_handler(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct rb_req *r = agent->context;
	const enum rb_kind *kind = wc->send_buf->context[0];
	bool answered = wc->send_buf->context[1];
	bool ok;

	switch (*kind) {
	case RB_FENCE:
		ok = wc->status == KMAD_SEND_OK;
		break;
	case RB_PROBE:
	case RB_RATE:
		ok = wc->status == KMAD_SEND_OK && answered;
		break;
	case RB_TARGET:
		ok = (wc->status == KMAD_SEND_CANCELED ||
		      wc->status == KMAD_SEND_FLUSHED) && !answered;
		break;
	case RB_EXPIRE:
		ok = wc->status == KMAD_SEND_RESP_TIMEOUT && !answered;
		break;
	default:
		ok = wc->status == KMAD_SEND_FLUSHED && !answered;
		break;
	}
	rb_ended(r, wc->send_buf, *kind, ok);
}

static void km_recv_handler(struct kmad_agent *agent,
			    struct kmad_send_buf *request,
			    struct kmad_recv_wc *wc)
{
	struct rb_req *r = agent->context;

	if (request) {
		atomic_inc(&r->responses);
		if (rb_resp_ok((const struct ib_mad_hdr *)&request->mad->mad_hdr,
			       (const struct ib_mad_hdr *)&wc->mad->mad_hdr))
			request->context[1] = (void *)1UL;
		else
			atomic_inc(&r->bad_resp);
	} else {
		atomic_inc(&r->bad_resp);
	}
	kmad_free_recv(wc);
}

static int km_open(struct rb_req *r)
{
	struct kmad_reg_req req = {};	/* class 0: responses only */
	struct kmad_agent *a;

	a = kmad_register_agent(km_port, KMAD_QPT_GSI, &req, km_send_handler,
				km_recv_handler, r);
	if (IS_ERR(a))
		return PTR_ERR(a);
	/* Like the stock kernel's ib_mad beside it: no solicited flow
	 * control, all N outstanding at once.
	 */
	kmad_agent_set_flow_limit(a, 0);
	r->agent = a;
	return 0;
}

static void km_close(struct rb_req *r)
{
	int ret = kmad_unregister_agent(r->agent);

	if (ret)
		rb_error("kmad_unregister_agent: %d", ret);
}

static void *km_get(struct rb_req *r, u32 qpn, unsigned int timeout_ms,
		    const enum rb_kind *kind)
{
	struct kmad_dest d = {
		.remote_qpn = qpn,
		.remote_qkey = KMAD_QP1_QKEY,
		.grh_present = true,
		.grh = { .dgid = km_peer_gid, .hop_limit = 64 },
	};
	struct kmad_send_buf *buf;
	u32 seq = r->seq++;

	buf = kmad_alloc_send_buf(r->agent, &d, GFP_KERNEL);
	if (IS_ERR_OR_NULL(buf))
		return NULL;
	/* kmad puts the agent's hi_tid in the upper half. */
	rb_fill_get((struct ib_mad_hdr *)&buf->mad->mad_hdr, seq, seq);
	buf->timeout_ms = timeout_ms;
	buf->retries = 0;
	buf->context[0] = (void *)kind;
	buf->context[1] = NULL;
	return buf;
}

static int km_post(void *buf)
{
	return kmad_post_send(buf);
}

static void km_cancel(void *buf)
{
	kmad_cancel_send(buf);
}

static void km_free(void *buf)
{
	kmad_free_send_buf(buf);
}

static const struct rb_ops rb_kmad = {
	.name = "kmad",
	.open = km_open,
	.close = km_close,
	.get = km_get,
	.post = km_post,
	.cancel = km_cancel,
	.free = km_free,
};

static const struct rb_ops *const rb_stacks[] = { &rb_ib_mad, &rb_kmad };

/*
 * Where a kmad probe's round trip goes: kmad's tracepoints for the send
 * rb_kt_buf (set before the post, cleared after the callback) record when
 * the hardware completion, the response match and the callback came.
 * ib_mad has no tracepoints a module can attach to, so this is kmad's
 * only.
 */
static struct kmad_send_buf *rb_kt_buf;
static __be64 rb_kt_tid;	/* rb_kt_buf's TID, as kmad sent it */
static u64 rb_kt_recv, rb_kt_hw, rb_kt_match, rb_kt_cb;
static u64 rb_kt_samples[4][RB_PROBES];	/* per probe, from the post */

/* Any MAD kmad received: the probe's response if it has its TID. */
static void rb_kt_recv_mad(void *data, const struct kmad_qp_info *qpi,
			   const struct kmad_mad *mad, u16 slid)
{
	if (READ_ONCE(rb_kt_buf) && mad->mad_hdr.tid == READ_ONCE(rb_kt_tid) &&
	    mad->mad_hdr.method == KMAD_METHOD_GET_RESP && !rb_kt_recv)
		WRITE_ONCE(rb_kt_recv, ktime_get_ns());
}

static void rb_kt_hw_done(void *data, const struct kmad_send_wr *wr)
{
	if (&wr->buf == READ_ONCE(rb_kt_buf))
		WRITE_ONCE(rb_kt_hw, ktime_get_ns());
}

static void rb_kt_resp_match(void *data, const struct kmad_send_wr *wr)
{
	if (&wr->buf == READ_ONCE(rb_kt_buf))
		WRITE_ONCE(rb_kt_match, ktime_get_ns());
}

static void rb_kt_callback(void *data, const struct kmad_send_wr *wr)
{
	if (&wr->buf == READ_ONCE(rb_kt_buf))
		WRITE_ONCE(rb_kt_cb, ktime_get_ns());
}

static bool rb_kt_on;

/*
 * Finer still, kprobes on the first calls after a kmad probe's post (only
 * the probe is in flight then): kmad handing it to kmad_ib
 * (kmad_ib_post_send), kmad_ib's CQ event reaching kmad (kmad_cq_event),
 * and kmad's CQ drain starting (kmad_cq_drain_work).  Optional: a symbol
 * that cannot be probed leaves its figure out.
 */
static const char *const rb_kp_syms[] = {
	"kmad_ib_post_send", "kmad_cq_event", "kmad_cq_drain_work",
};

#define RB_KP	ARRAY_SIZE(rb_kp_syms)

static struct kprobe rb_kp[RB_KP];
static bool rb_kp_on[RB_KP];
static u64 rb_kp_t[RB_KP];
static u64 rb_kp_samples[RB_KP][RB_PROBES];
/*
 * Where each first call ran: its CPU, and whether in ksoftirqd (rxe's
 * tasklets run there when raised from process context).  Counted per
 * round and printed as a console line, not a figure.
 */
static int rb_kp_cpu[RB_KP];
static bool rb_kp_ksoftirqd[RB_KP];

static int rb_kp_pre(struct kprobe *kp, struct pt_regs *regs)
{
	unsigned int i = kp - rb_kp;

	if (i < RB_KP && READ_ONCE(rb_kt_buf) && !READ_ONCE(rb_kp_t[i])) {
		rb_kp_cpu[i] = raw_smp_processor_id();
		rb_kp_ksoftirqd[i] = in_serving_softirq() &&
				     (current->flags & PF_KTHREAD) &&
				     !strncmp(current->comm, "ksoftirqd", 9);
		WRITE_ONCE(rb_kp_t[i], ktime_get_ns());
	}
	return 0;
}

/*
 * Register a kprobe with @pre on each of @syms[0..@n-1]; @on[i] says
 * whether @kps[i] is registered (a missing symbol is reported, not an
 * error).  rb_kprobes_stop() unregisters what was registered.
 */
static void rb_kprobes_start(struct kprobe *kps, bool *on,
			     const char *const *syms, unsigned int n,
			     kprobe_pre_handler_t pre)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		memset(&kps[i], 0, sizeof(kps[i]));
		kps[i].symbol_name = syms[i];
		kps[i].pre_handler = pre;
		on[i] = !register_kprobe(&kps[i]);
		if (!on[i])
			pr_info("no kprobe on %s\n", syms[i]);
	}
}

static void rb_kprobes_stop(struct kprobe *kps, bool *on, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (on[i])
			unregister_kprobe(&kps[i]);
		on[i] = false;
	}
}

static void rb_kp_start(void)
{
	rb_kprobes_start(rb_kp, rb_kp_on, rb_kp_syms, RB_KP, rb_kp_pre);
}

static void rb_kp_stop(void)
{
	rb_kprobes_stop(rb_kp, rb_kp_on, RB_KP);
}

/*
 * Where kmad's unregister goes: kprobes on the first entry, once the
 * unregister call started, of kmad_agent_flush_sends() (agent_stop()
 * done with the port), kmad_agent_work() (the agent's work, which
 * delivers the flushed callbacks) and kmad_agent_tables_destroy() (the
 * wait for the last reference over).  Registered before the fill, so
 * that the kprobe optimizer, 5 jiffies after a registration, does not
 * run inside the timed call.  Printed as a console line per round, with
 * the CPU each ran on and the CPUs of the unregistering thread before
 * and after the call (a hand-off between vCPUs is a wake-up of the other
 * vCPU, which a loaded host may not run for a while).
 */
static const char *const rb_up_syms[] = {
	"kmad_agent_flush_sends", "kmad_agent_work",
	"kmad_agent_tables_destroy",
};

#define RB_UP	ARRAY_SIZE(rb_up_syms)

static struct kprobe rb_up[RB_UP];
static bool rb_up_on[RB_UP];
static bool rb_up_armed;
static u64 rb_up_t[RB_UP];
static int rb_up_cpu[RB_UP];

static int rb_up_pre(struct kprobe *kp, struct pt_regs *regs)
{
	unsigned int i = kp - rb_up;

	if (i < RB_UP && READ_ONCE(rb_up_armed) && !READ_ONCE(rb_up_t[i])) {
		rb_up_cpu[i] = raw_smp_processor_id();
		WRITE_ONCE(rb_up_t[i], ktime_get_ns());
	}
	return 0;
}

static void rb_up_start(void)
{
	rb_kprobes_start(rb_up, rb_up_on, rb_up_syms, RB_UP, rb_up_pre);
}

static void rb_up_stop(void)
{
	WRITE_ONCE(rb_up_armed, false);
	rb_kprobes_stop(rb_up, rb_up_on, RB_UP);
}

/* Offset of @t from @t0 in us, or -1 if it did not happen. */
static long long rb_up_us(u64 t, u64 t0)
{
	return t >= t0 ? (long long)div_u64(t - t0, NSEC_PER_USEC) : -1;
}

/* A profiling window (prof_n): [@t0, @t1] in CLOCK_MONOTONIC seconds. */
static void rb_prof_window(const char *what, const char *stack, u64 t0,
			   u64 t1)
{
	u32 ns0, ns1;
	u64 s0, s1;

	if (!prof_n || !t0 || t1 < t0)
		return;
	s0 = div_u64_rem(t0, NSEC_PER_SEC, &ns0);
	s1 = div_u64_rem(t1, NSEC_PER_SEC, &ns1);
	pr_info("prof: window %s %s %llu.%09u %llu.%09u\n", what, stack,
		s0, ns0, s1, ns1);
}

/* The cost of one ktime_get_ns() here (prof_n), best of 3 x 10^5. */
static void rb_prof_clock(void)
{
	u64 best = U64_MAX, t0, t1, sink = 0;
	unsigned int i, k;

	for (k = 0; k < 3; k++) {
		t0 = ktime_get_ns();
		for (i = 0; i < 100000; i++)
			sink += ktime_get_ns();
		t1 = ktime_get_ns();
		best = min(best, t1 - t0);
	}
	pr_info("prof: ktime_get_ns %llu ns per call (best of 3 x 100000; %llu)\n",
		div_u64(best, 100000), sink & 1);
}

static void rb_kt_start(void)
{
	if (register_trace_kmad_send_hw_done(rb_kt_hw_done, NULL))
		return;
	if (register_trace_kmad_resp_match(rb_kt_resp_match, NULL))
		goto hw;
	if (register_trace_kmad_send_callback(rb_kt_callback, NULL))
		goto match;
	if (register_trace_kmad_recv(rb_kt_recv_mad, NULL))
		goto cb;
	rb_kt_on = true;
	return;
cb:
	unregister_trace_kmad_send_callback(rb_kt_callback, NULL);
match:
	unregister_trace_kmad_resp_match(rb_kt_resp_match, NULL);
hw:
	unregister_trace_kmad_send_hw_done(rb_kt_hw_done, NULL);
	tracepoint_synchronize_unregister();
}

static void rb_kt_stop(void)
{
	if (!rb_kt_on)
		return;
	unregister_trace_kmad_recv(rb_kt_recv_mad, NULL);
	unregister_trace_kmad_send_callback(rb_kt_callback, NULL);
	unregister_trace_kmad_resp_match(rb_kt_resp_match, NULL);
	unregister_trace_kmad_send_hw_done(rb_kt_hw_done, NULL);
	tracepoint_synchronize_unregister();
	rb_kt_on = false;
}

/* ---- common steps ---- */

/* Post a Get; on success it counts as outstanding. */
static void *rb_post(struct rb_req *r, u32 qpn, unsigned int timeout_ms,
		     enum rb_kind kind, void **wait_for)
{
	void *buf = r->ops->get(r, qpn, timeout_ms, &rb_kinds[kind]);
	int ret;

	if (!buf) {
		rb_error("%s: allocating a send failed", r->ops->name);
		return NULL;
	}
	atomic_inc(&r->outstanding);
	if (wait_for) {
		reinit_completion(&r->one);
		WRITE_ONCE(r->waited, buf);
		*wait_for = buf;
		if (r->ops == &rb_kmad) {
			struct kmad_send_buf *kb = buf;
			struct kmad_agent *ka = r->agent;

			/* kmad puts the agent's hi_tid in at post */
			rb_kt_tid = cpu_to_be64((u64)ka->hi_tid << 32 |
						(u32)be64_to_cpu(kb->mad->mad_hdr.tid));
			rb_kt_recv = 0;
			memset(rb_kp_t, 0, sizeof(rb_kp_t));
			rb_kt_hw = 0;
			rb_kt_match = 0;
			rb_kt_cb = 0;
			WRITE_ONCE(rb_kt_buf, buf);
		}
	}
	ret = r->ops->post(buf);
	if (ret) {
		WRITE_ONCE(r->waited, NULL);
		atomic_dec(&r->outstanding);
		r->ops->free(buf);
		rb_error("%s: post failed: %d", r->ops->name, ret);
		return NULL;
	}
	return buf;
}

static void rb_repost(struct rb_req *r)
{
	void *buf = r->ops->get(r, 1, RB_WAIT_MS, &rb_kinds[RB_RATE]);

	if (!buf) {
		atomic_inc(&r->bad);
		return;
	}
	atomic_inc(&r->outstanding);
	if (r->ops->post(buf)) {
		atomic_dec(&r->outstanding);
		atomic_inc(&r->bad);
		r->ops->free(buf);
	}
}

/*
 * Wait for the next tick to begin.  Both stacks start a send's timeout at
 * its send completion, in jiffies, and the timer that ends it fires a
 * tick after the deadline's (Linux rounds a timer's expiry up).  A post
 * late in a tick, whose completion is handled in the next one (0.4-3.4 ms
 * after the post over rxe here, either stack), expires a tick later: a
 * sample of 4 or 8 ms by the phase of the post.  Posting at the start of
 * a tick leaves that to a completion slower than a tick, so the figure is
 * the stacks' own lateness (Documentation/benchmarks.rst, "Timeout
 * expiry").
 */
static void rb_tick_start(void)
{
	unsigned long j = READ_ONCE(jiffies);
	u64 end = ktime_get_ns() + 2 * TICK_NSEC;	/* a stalled tick */

	while (READ_ONCE(jiffies) == j && ktime_get_ns() < end)
		cpu_relax();
}

/* Wait for the callback of the send rb_post() was told to watch. */
static bool rb_wait_one(struct rb_req *r, const char *what)
{
	if (wait_for_completion_timeout(&r->one, msecs_to_jiffies(RB_WAIT_MS)))
		return r->end_ok;
	WRITE_ONCE(r->waited, NULL);
	rb_error("%s: %s: no callback within %u ms", r->ops->name, what,
		 RB_WAIT_MS);
	return false;
}

/* A fence: its callback comes after those of every send before it. */
static bool rb_fence(struct rb_req *r)
{
	void *buf;

	if (!rb_post(r, RB_DEAD_QPN, 0, RB_FENCE, &buf))
		return false;
	return rb_wait_one(r, "fence");
}

/* Objects in use of a SLUB cache, from sysfs; 0 if it cannot be read. */
static long rb_slab_read(const char *cache, const char *file)
{
	char path[96], text[32] = "";
	struct file *f;
	loff_t pos = 0;
	long v = 0;
	ssize_t len;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", cache, file);
	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f))
		return 0;
	len = kernel_read(f, text, sizeof(text) - 1, &pos);
	filp_close(f, NULL);
	if (len <= 0)
		return 0;
	text[len] = 0;
	/* "<count> N0=<count>...\n": the first word */
	text[strcspn(text, "\n\t ")] = 0;
	if (kstrtol(text, 10, &v))
		return 0;
	return v;
}

/* The caches whose growth is counted as the stacks' memory per send. */
static const char *const rb_caches[] = {
	"kmad_send_wr", "kmalloc-64", "kmalloc-128", "kmalloc-192",
	"kmalloc-256", "kmalloc-512", "kmalloc-1k", "kmalloc-2k",
};

struct rb_mem {
	long objects[ARRAY_SIZE(rb_caches)];
	unsigned long slab_pages;
};

static void rb_mem_read(struct rb_mem *m)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rb_caches); i++)
		m->objects[i] = rb_slab_read(rb_caches[i], "objects");
	m->slab_pages = global_node_page_state_pages(NR_SLAB_UNRECLAIMABLE_B) +
			global_node_page_state_pages(NR_SLAB_RECLAIMABLE_B);
}

static int rb_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u64 rb_median(u64 *v, unsigned int n)
{
	sort(v, n, sizeof(*v), rb_cmp_u64, NULL);
	return n ? v[n / 2] : 0;
}

/* Wait until every send of @r has been called back. */
static bool rb_drain(struct rb_req *r)
{
	bool ok;

	reinit_completion(&r->drained);
	WRITE_ONCE(r->draining, true);
	ok = !atomic_read(&r->outstanding) ||
	     wait_for_completion_timeout(&r->drained,
					 msecs_to_jiffies(RB_WAIT_MS));
	WRITE_ONCE(r->draining, false);
	return ok || !atomic_read(&r->outstanding);
}

/* ---- scale: N outstanding ---- */

static int rb_scale_one(const struct rb_ops *ops, unsigned int n,
			unsigned int rep, u64 *tmp)
{
	unsigned int k = quick ? RB_PROBES_QUICK : RB_PROBES;
	unsigned int kc = quick ? RB_CANCELS_QUICK : RB_CANCELS;
	unsigned int ke = quick ? RB_EXPIRES_QUICK : RB_EXPIRES;
	const char *name = ops->name;
	struct rb_mem m0 = {}, m1 = {}, m2 = {};
	u64 (*kt)[RB_PROBES] = rb_kt_samples;
	struct rb_req *r;
	void **targets;
	long delta_b = 0;
	unsigned int i, j, got = 0, slow;
	unsigned int kp_sirq = 0, kp_post_cpu = 0, kp_drain_cpu = 0;
	int cpu0, cpu1;
	u64 t0, t1, fill = 0;
	int ret = -EIO;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	targets = kcalloc(kc, sizeof(*targets), GFP_KERNEL);
	if (!r || !targets) {
		kfree(r);
		kfree(targets);
		return -ENOMEM;
	}
	rb_req_init(r, ops);
	if (ops->open(r)) {
		rb_error("%s: registering the requester failed", name);
		goto out;
	}
	if (ops == &rb_kmad)
		rb_up_start();

	/* Fill. */
	rb_mem_read(&m0);
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++)
		if (!rb_post(r, RB_DEAD_QPN, RB_BG_MS, RB_BG, NULL))
			break;
	if (i < n || !rb_fence(r)) {
		rb_error("%s: N=%u: the fill failed after %u sends", name, n, i);
		goto close;
	}
	fill = ktime_get_ns() - t0;
	rb_mem_read(&m1);
	for (i = 0; i < ARRAY_SIZE(rb_caches); i++)
		delta_b += (m1.objects[i] - m0.objects[i]) *
			   rb_slab_read(rb_caches[i], "slab_size");
	rb_sample("fill", name, n, rep, div_u64(fill, n));
	/*
	 * Signed: other users of these caches and pages move them as well, by
	 * more than N sends at small N (the report shows no ratio then).
	 */
	rb_sample_signed("mem_caches", name, n, rep, delta_b / (long)n);
	rb_sample_signed("mem_slab", name, n, rep,
			 (long)(m1.slab_pages - m0.slab_pages) *
			 (long)PAGE_SIZE / (long)n);

	/*
	 * Round trips with N outstanding; for kmad, its tracepoints and the
	 * kprobes on only meanwhile (they would add to its other figures).
	 */
	if (ops == &rb_kmad) {
		rb_kt_start();
		rb_kp_start();
	}
	for (i = 0; i < k; i++) {
		void *buf;

		t0 = ktime_get_ns();
		if (!rb_post(r, 1, RB_PROBE_MS, RB_PROBE, &buf))
			goto close;
		if (!rb_wait_one(r, "probe")) {
			rb_error("%s: N=%u: probe %u not answered", name, n, i);
			goto close;
		}
		tmp[got++] = r->t_end - t0;
		if (ops == &rb_kmad && rb_kt_on) {
			WRITE_ONCE(rb_kt_buf, NULL);
			/* 0: the tracepoint did not fire for it */
			kt[0][i] = rb_kt_recv ? rb_kt_recv - t0 : 0;
			kt[1][i] = rb_kt_hw ? rb_kt_hw - t0 : 0;
			kt[2][i] = rb_kt_match ? rb_kt_match - t0 : 0;
			kt[3][i] = rb_kt_cb ? rb_kt_cb - t0 : 0;
			for (j = 0; j < RB_KP; j++)
				rb_kp_samples[j][i] = rb_kp_t[j] ?
						      rb_kp_t[j] - t0 : 0;
			/* 0: kmad_ib_post_send, 1: CQ event, 2: drain */
			if (rb_kp_t[1]) {
				kp_sirq += rb_kp_ksoftirqd[1];
				kp_post_cpu += rb_kp_t[0] &&
					       rb_kp_cpu[0] == rb_kp_cpu[1];
				kp_drain_cpu += rb_kp_t[2] &&
						rb_kp_cpu[2] == rb_kp_cpu[1];
			}
		}
	}
	if (ops == &rb_kmad && rb_kt_on && rb_kp_on[1])
		pr_info("rxe_bench: kmad N=%u rep %u: of %u probes, the CQ event ran in ksoftirqd for %u, on the CPU of kmad_ib_post_send for %u, and the drain on the CPU of the event for %u\n",
			n, rep, got, kp_sirq, kp_post_cpu, kp_drain_cpu);
	if (ops == &rb_kmad && rb_kt_on) {
		rb_sample("rtt_to_recv", name, n, rep, rb_median(kt[0], k));
		rb_sample("rtt_to_hw_done", name, n, rep, rb_median(kt[1], k));
		rb_sample("rtt_to_resp_match", name, n, rep, rb_median(kt[2], k));
		rb_sample("rtt_to_callback", name, n, rep, rb_median(kt[3], k));
		for (j = 0; j < RB_KP; j++)
			if (rb_kp_on[j])
				rb_sample(rb_kp_syms[j], name, n, rep,
					  rb_median(rb_kp_samples[j], k));
	}
	rb_kp_stop();
	rb_kt_stop();
	rb_sample("rtt", name, n, rep, rb_median(tmp, got));
	/* sorted now: the fastest, and the share that took 1 ms or more */
	rb_sample("rtt_min", name, n, rep, tmp[0]);
	for (i = 0, slow = 0; i < got; i++)
		slow += tmp[i] >= NSEC_PER_MSEC;
	rb_sample("rtt_slow_pct", name, n, rep, slow * 100 / got);

	/* Cancel of one send, with N (and the later targets) outstanding. */
	for (i = 0; i < kc; i++) {
		targets[i] = rb_post(r, RB_DEAD_QPN, RB_PROBE_MS, RB_TARGET,
				     NULL);
		if (!targets[i])
			goto close;
	}
	if (!rb_fence(r)) {
		rb_error("%s: N=%u: fence after the cancel targets", name, n);
		goto close;
	}
	for (i = 0; i < kc; i++) {
		reinit_completion(&r->one);
		WRITE_ONCE(r->waited, targets[i]);
		t0 = ktime_get_ns();
		ops->cancel(targets[i]);
		t1 = ktime_get_ns();
		if (!rb_wait_one(r, "cancel")) {
			rb_error("%s: N=%u: cancel %u did not end as canceled",
				 name, n, i);
			goto close;
		}
		tmp[i] = t1 - t0;
		tmp[kc + i] = r->t_end - t0;
	}
	rb_sample("cancel", name, n, rep, rb_median(tmp, kc));
	rb_sample("cancel_cb", name, n, rep, rb_median(tmp + kc, kc));

	/* Timeout expiry with N outstanding: post + timeout -> callback,
	 * each post at the start of a tick (rb_tick_start()).
	 */
	for (i = 0; i < ke; i++) {
		void *buf;

		rb_tick_start();
		t0 = ktime_get_ns();
		if (!rb_post(r, RB_DEAD_QPN, RB_EXPIRE_MS, RB_EXPIRE, &buf))
			goto close;
		if (!rb_wait_one(r, "expiry")) {
			rb_error("%s: N=%u: send %u did not time out", name,
				 n, i);
			goto close;
		}
		tmp[i] = r->t_end - t0 - RB_EXPIRE_MS * NSEC_PER_MSEC;
	}
	rb_sample("expire_late", name, n, rep, rb_median(tmp, ke));
	ret = 0;
close:
	rb_kp_stop();	/* if a probe failed */
	rb_kt_stop();
	/* Unregister with N outstanding. */
	memset(rb_up_t, 0, sizeof(rb_up_t));
	memset(rb_up_cpu, 0xff, sizeof(rb_up_cpu));
	WRITE_ONCE(r->unreg, true);
	cpu0 = raw_smp_processor_id();
	t0 = ktime_get_ns();
	WRITE_ONCE(rb_up_armed, ops == &rb_kmad);
	ops->close(r);
	t1 = ktime_get_ns();
	cpu1 = raw_smp_processor_id();
	WRITE_ONCE(rb_up_armed, false);
	WRITE_ONCE(r->unreg, false);
	if (!ret)
		rb_sample("unregister", name, n, rep, t1 - t0);
	/* Phases, in us from the call: -1 for what did not happen. */
	pr_info("unreg phases %s N=%u rep %u: flush %lld work %lld cb_first %lld cb_last %lld released %lld total %lld us\n",
		name, n, rep, rb_up_us(rb_up_t[0], t0),
		rb_up_us(rb_up_t[1], t0), rb_up_us(r->cb_first, t0),
		rb_up_us(r->cb_last, t0), rb_up_us(rb_up_t[2], t0),
		rb_up_us(t1, t0));
	pr_info("unreg cpus %s N=%u rep %u: call %d flush %d work %d released %d return %d\n",
		name, n, rep, cpu0, rb_up_cpu[0], rb_up_cpu[1], rb_up_cpu[2],
		cpu1);
	rb_prof_window("unreg", name, t0, t1);
	rb_prof_window("unreg-flush", name, rb_up_t[0],
		       rb_up_t[1] ? rb_up_t[1] : t1);
	rb_prof_window("unreg-work", name, rb_up_t[1], t1);
	rb_up_stop();
	rb_mem_read(&m2);
	if (atomic_read(&r->outstanding)) {
		rb_error("%s: N=%u: %d sends not called back by unregister",
			 name, n, atomic_read(&r->outstanding));
		ret = -EIO;
		goto leak;	/* their handlers may still run: keep @r */
	}
	if (!ret && atomic_read(&r->ended[RB_BG]) != n) {
		rb_error("%s: N=%u: %d of %u background sends called back",
			 name, n, atomic_read(&r->ended[RB_BG]), n);
		ret = -EIO;
	}
	if (atomic_read(&r->bad) || atomic_read(&r->bad_resp)) {
		rb_error("%s: N=%u: %d sends ended the wrong way, %d bad responses",
			 name, n, atomic_read(&r->bad),
			 atomic_read(&r->bad_resp));
		ret = -EIO;
	}
	if (atomic_read(&r->responses) != got) {
		rb_error("%s: N=%u: %d responses for %u probes", name, n,
			 atomic_read(&r->responses), got);
		ret = -EIO;
	}
	pr_info("%s N=%u rep %u: fill %llu ms, slab %lu -> %lu -> %lu pages\n",
		name, n, rep, div_u64(fill, NSEC_PER_MSEC), m0.slab_pages,
		m1.slab_pages, m2.slab_pages);
out:
	kfree(r);
leak:
	kfree(targets);
	return ret;
}

/*
 * Timeout arm in random order: a fresh agent fills N sends whose timeouts
 * are random in [RB_BG_MS, 2 * RB_BG_MS), to compare with the fill in
 * posting order (equal timeouts) of rb_scale_one().  Per send: post ->
 * its callback-free arrival on the wait list (the fence's callback).
 */
static int rb_fill_random(const struct rb_ops *ops, unsigned int n,
			  unsigned int rep)
{
	struct rb_req *r;
	unsigned int i;
	u64 t0, t;
	int ret = -EIO;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	rb_req_init(r, ops);
	if (ops->open(r)) {
		rb_error("%s: registering the requester failed", ops->name);
		kfree(r);
		return -EIO;
	}
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++)
		if (!rb_post(r, RB_DEAD_QPN,
			     RB_BG_MS + get_random_u32_below(RB_BG_MS),
			     RB_BG, NULL))
			break;
	if (i == n && rb_fence(r)) {
		t = ktime_get_ns() - t0;
		rb_sample("fill_random", ops->name, n, rep, div_u64(t, n));
		ret = 0;
	} else {
		rb_error("%s: N=%u: the random fill failed after %u sends",
			 ops->name, n, i);
	}
	ops->close(r);
	if (atomic_read(&r->outstanding)) {
		rb_error("%s: N=%u: %d sends not called back by unregister",
			 ops->name, n, atomic_read(&r->outstanding));
		return -EIO;	/* leak @r: handlers may still use it */
	}
	if (atomic_read(&r->bad)) {
		rb_error("%s: N=%u: random fill: %d sends ended the wrong way",
			 ops->name, n, atomic_read(&r->bad));
		ret = -EIO;
	}
	kfree(r);
	return ret;
}

/*
 * A reference for the unregister figures: one synchronize_rcu() in this
 * guest (kmad's unregister waits for an RCU grace period, ib_mad's does
 * not).
 */
static void rb_rcu_reference(unsigned int rep)
{
	u64 t0 = ktime_get_ns();

	synchronize_rcu();
	rb_sample("synchronize_rcu", "kernel", 0, rep, ktime_get_ns() - t0);
}

static void rb_scale(void)
{
	const unsigned int *ns = quick ? rb_ns_quick : rb_ns;
	unsigned int nn = quick ? ARRAY_SIZE(rb_ns_quick) : ARRAY_SIZE(rb_ns);
	unsigned int rep, i, s;
	u64 *tmp;

	if (prof_n) {
		ns = &prof_n;
		nn = 1;
	}

	tmp = kcalloc(2 * max(RB_PROBES, RB_CANCELS), sizeof(*tmp), GFP_KERNEL);
	if (!tmp) {
		rb_error("scale: no memory");
		return;
	}
	for (rep = 0; rep < repeats; rep++) {
		rb_rcu_reference(rep);
		for (i = 0; i < nn; i++)
			for (s = 0; s < ARRAY_SIZE(rb_stacks); s++) {
				/* alternate which stack goes first */
				const struct rb_ops *ops =
					rb_stacks[(s + rep + i) % 2];

				if (rb_scale_one(ops, ns[i], rep, tmp) &&
				    rb_errors > 20)
					goto out;
				if (ns[i] <= RB_RANDOM_MAX_N &&
				    rb_fill_random(ops, ns[i], rep) &&
				    rb_errors > 20)
					goto out;
			}
	}
out:
	kfree(tmp);
}

/* ---- rate: round trips per second, RB_WINDOW in flight per agent ---- */

static void rb_rate_one(const struct rb_ops *ops, unsigned int agents,
			unsigned int rep)
{
	unsigned int ms = quick ? RB_RATE_MS_QUICK : RB_RATE_MS;
	struct rb_req *r;
	u64 c0 = 0, c1 = 0, t0, t1;
	unsigned int i, j, open = 0;

	r = kcalloc(agents, sizeof(*r), GFP_KERNEL);
	if (!r) {
		rb_error("rate: no memory");
		return;
	}
	for (i = 0; i < agents; i++) {
		rb_req_init(&r[i], ops);
		if (ops->open(&r[i])) {
			rb_error("%s: rate: registering agent %u failed",
				 ops->name, i);
			goto close;
		}
		open++;
	}
	for (i = 0; i < agents; i++)
		for (j = 0; j < RB_WINDOW; j++)
			if (!rb_post(&r[i], 1, RB_WAIT_MS, RB_RATE, NULL))
				goto stop;
	msleep(RB_WARMUP_MS);
	t0 = ktime_get_ns();
	for (i = 0; i < agents; i++)
		c0 += atomic64_read(&r[i].rate_ok);
	msleep(ms);
	for (i = 0; i < agents; i++)
		c1 += atomic64_read(&r[i].rate_ok);
	t1 = ktime_get_ns();
	rb_sample("rate", ops->name, agents, rep,
		  div64_u64((c1 - c0) * NSEC_PER_SEC, t1 - t0));
	rb_prof_window("rate", ops->name, t0, t1);
stop:
	for (i = 0; i < agents; i++)
		WRITE_ONCE(r[i].rate_stop, true);
	for (i = 0; i < agents; i++)
		if (!rb_drain(&r[i]))
			rb_error("%s: rate: %d Gets of agent %u not called back",
				 ops->name, atomic_read(&r[i].outstanding), i);
close:
	for (i = 0; i < open; i++) {
		ops->close(&r[i]);
		if (atomic_read(&r[i].bad) || atomic_read(&r[i].bad_resp))
			rb_error("%s: rate: agent %u: %d Gets failed, %d bad responses",
				 ops->name, i, atomic_read(&r[i].bad),
				 atomic_read(&r[i].bad_resp));
	}
	for (i = 0; i < open; i++)
		if (atomic_read(&r[i].outstanding)) {
			rb_error("%s: rate: sends left after unregister",
				 ops->name);
			return;	/* leak @r: handlers may still use it */
		}
	kfree(r);
}

static void rb_rate(void)
{
	unsigned int rep, i, s;

	for (rep = 0; rep < repeats; rep++)
		for (i = 0; i < (prof_n ? 1 : ARRAY_SIZE(rb_agents)); i++)
			for (s = 0; s < ARRAY_SIZE(rb_stacks); s++)
				rb_rate_one(rb_stacks[(s + rep + i) % 2],
					    rb_agents[i], rep);
}

/* ---- setup ---- */

static bool rb_wanted(const char *what)
{
	return strstr(run, what);
}

static int rb_setup(void)
{
	struct ib_mad_agent *probe;
	union ib_gid gid;
	int ret;

	rb_ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	rb_peerdev = ib_device_get_by_name(peer, RDMA_DRIVER_UNKNOWN);
	if (!rb_ibdev || !rb_peerdev) {
		pr_info("error no ib_core device %s or %s\n", dev, peer);
		return -ENODEV;
	}
	ret = rdma_query_gid(rb_peerdev, 1, 0, &gid);
	if (ret) {
		pr_info("error %s's GID 0: %d\n", peer, ret);
		return ret;
	}
	memcpy(km_peer_gid.raw, gid.raw, sizeof(gid.raw));
	km_port = kmad_port_get(dev, 1);
	if (!km_port) {
		pr_info("error no kmad port %s 1 (is kmad_ib loaded?)\n", dev);
		return -ENODEV;
	}
	/* ib_mad's AH needs the PD of the port's MAD QP: a short-lived agent. */
	probe = ib_register_mad_agent(rb_ibdev, 1, IB_QPT_GSI, NULL, 0,
				      im_send_handler, im_recv_handler, NULL, 0);
	if (IS_ERR(probe)) {
		pr_info("error ib_register_mad_agent on %s: %ld\n", dev,
			PTR_ERR(probe));
		return PTR_ERR(probe);
	}
	ret = im_make_ah(probe->qp->pd);
	ib_unregister_mad_agent(probe);
	if (ret) {
		pr_info("error the AH to %s: %d\n", peer, ret);
		return ret;
	}
	ret = rs_start();
	if (ret)
		pr_info("error the responder on %s: %d\n", peer, ret);
	return ret;
}

static void rb_teardown(void)
{
	rs_stop();
	if (im_ah)
		rdma_destroy_ah(im_ah, RDMA_DESTROY_AH_SLEEPABLE);
	im_ah = NULL;
	if (km_port)
		kmad_port_put(km_port);
	km_port = NULL;
	if (rb_ibdev)
		ib_device_put(rb_ibdev);
	if (rb_peerdev)
		ib_device_put(rb_peerdev);
	rb_ibdev = NULL;
	rb_peerdev = NULL;
}

static int __init rxe_bench_init(void)
{
	int ret;

	pr_info("start run=%s quick=%d repeats=%u dev=%s peer=%s\n", run,
		quick, repeats, dev, peer);
	if (prof_n)
		rb_prof_clock();
	ret = rb_setup();
	if (ret) {
		rb_errors++;
	} else {
		if (rb_wanted("scale"))
			rb_scale();
		if (rb_wanted("rate"))
			rb_rate();
	}
	rb_teardown();
	pr_info("responder answered %d Gets, %d errors\n",
		atomic_read(&rs_answered), atomic_read(&rs_errors));
	if (atomic_read(&rs_errors))
		pr_info("responder errors: %d send completions (last status %s), %d address handles, %d allocations, %d posts\n",
			atomic_read(&rs_err_wc),
			ib_wc_status_msg(READ_ONCE(rs_err_status)),
			atomic_read(&rs_err_ah), atomic_read(&rs_err_alloc),
			atomic_read(&rs_err_post));
	if (atomic_read(&rs_errors))
		rb_errors++;
	pr_info("done, %d errors\n", rb_errors);
	return 0;	/* stays loaded: busybox insmod would run a failed init twice */
}

static void __exit rxe_bench_exit(void)
{
}

module_init(rxe_bench_init);
module_exit(rxe_bench_exit);
MODULE_DESCRIPTION("make bench: kmad against ib_mad over rxe");
MODULE_LICENSE("GPL");
